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

  it("INGEST_RATE_LIMIT_PER_MINUTE: 6000 by default, a whole number of at least 1", () => {
    expect(loadConfig({}).INGEST_RATE_LIMIT_PER_MINUTE).toBe(6_000);
    expect(loadConfig({ INGEST_RATE_LIMIT_PER_MINUTE: "120" }).INGEST_RATE_LIMIT_PER_MINUTE).toBe(120);
    for (const bad of ["0", "-5", "1.5", "lots"]) {
      expect(() => loadConfig({ INGEST_RATE_LIMIT_PER_MINUTE: bad })).toThrow(/Invalid configuration:\n\s+INGEST_RATE_LIMIT_PER_MINUTE: /);
    }
  });
});
