// Configuration: validated once, defaults for everything, and an error that names each bad variable.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";

describe("loadConfig", () => {
  it("has a default for everything", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 4000, GRAPHIQL: true, INTROSPECTION: true, GRAPHQL_MAX_DEPTH: 10, SHUTDOWN_DELAY_MS: 0 });
    expect(c.TEST_SLOW_ROUTE_MS).toBeUndefined();
    expect(c.ROLLUP_SHARE_WHILE_INGESTING).toBe(0.25);
    expect(loadConfig({ ROLLUP_SHARE_WHILE_INGESTING: "0.5" }).ROLLUP_SHARE_WHILE_INGESTING).toBe(0.5);
  });

  it("METRICS_TOKEN: unset by default (GET /metrics open); a token of 16 or more visible characters", () => {
    expect(loadConfig({}).METRICS_TOKEN).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: "0123456789abcdef" }).METRICS_TOKEN).toBe("0123456789abcdef");
  });

  it("parses numbers and booleans from strings", () => {
    const c = loadConfig({ PORT: "8080", GRAPHIQL: "false", INTROSPECTION: "0", GRAPHQL_MAX_COST: "100", TEST_SLOW_ROUTE_MS: "250" });
    expect(c).toMatchObject({ PORT: 8080, GRAPHIQL: false, INTROSPECTION: false, GRAPHQL_MAX_COST: 100, TEST_SLOW_ROUTE_MS: 250 });
  });

  it.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["DATABASE_URL", "mysql://localhost/x"],
    ["GRAPHIQL", "yes"],
    ["GRAPHQL_MAX_DEPTH", "0"],
    ["GRAPHQL_MAX_TOKENS", "1.5"],
    ["SHUTDOWN_TIMEOUT_MS", "-1"],
    ["LOG_LEVEL", "loud"],
    ["ROLLUP_SHARE_WHILE_INGESTING", "0"],
    ["ROLLUP_SHARE_WHILE_INGESTING", "1.5"],
    ["METRICS_TOKEN", ""],
    ["METRICS_TOKEN", "short-token"],
    ["METRICS_TOKEN", "a token with spaces in it"],
  ])("names %s when it is %s", (name, bad) => {
    expect(() => loadConfig({ [name]: bad })).toThrow(new RegExp(`Invalid configuration:\\n\\s+${name}: `));
  });

  it("lists every bad variable at once", () => {
    let message = "";
    try {
      loadConfig({ PORT: "x", GRAPHQL_MAX_ALIASES: "-3" });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/PORT: /);
    expect(message).toMatch(/GRAPHQL_MAX_ALIASES: /);
  });
});
