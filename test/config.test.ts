// Configuration: validated once, defaults for everything, and an error that names each bad variable.
import pino from "pino";
import { describe, expect, it } from "vitest";
import { loadConfig, sessionDatabaseUrl, tracingEnabled } from "../src/config.js";

describe("loadConfig", () => {
  it("has a default for everything", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 4000, GRAPHIQL: true, INTROSPECTION: true, GRAPHQL_MAX_DEPTH: 10, SHUTDOWN_DELAY_MS: 0 });
    expect(c.TEST_SLOW_ROUTE_MS).toBeUndefined();
    expect(c.ROLLUP_SHARE_WHILE_INGESTING).toBe(0.25);
    expect(loadConfig({ ROLLUP_SHARE_WHILE_INGESTING: "0.5" }).ROLLUP_SHARE_WHILE_INGESTING).toBe(0.5);
    expect(c).toMatchObject({
      DATABASE_POOL_SIZE: 10,
      DATABASE_POOL_TIMEOUT_MS: 5000,
      JOB_QUEUE_POOL_SIZE: 3,
      DATABASE_PREPARED_STATEMENTS: true,
      DATABASE_READ_FUNCTIONS: true,
      HEAP_RELEASE_AFTER_BYTES: 1_000_000,
      HEAP_RELEASE_MIN_INTERVAL_MS: 1_000,
    });
    expect(c.DATABASE_DIRECT_URL).toBeUndefined();
    expect(loadConfig({ DATABASE_DIRECT_URL: "postgresql://db:5432/x", DATABASE_PREPARED_STATEMENTS: "false" })).toMatchObject({
      DATABASE_DIRECT_URL: "postgresql://db:5432/x",
      DATABASE_PREPARED_STATEMENTS: false,
    });
    const pooled = { DATABASE_URL: "postgresql://pooler:6432/x", DATABASE_DIRECT_URL: "postgresql://db:5432/x" };
    expect(sessionDatabaseUrl(loadConfig(pooled))).toBe("postgresql://db:5432/x");
    expect(sessionDatabaseUrl(loadConfig({ DATABASE_URL: "postgresql://db:5432/x" }))).toBe("postgresql://db:5432/x");
    // Beside a SQLite file a direct URL is ignored: the file's migrations stay in the file.
    expect(sessionDatabaseUrl(loadConfig({ DATABASE_URL: "file:./data/x.db", DATABASE_DIRECT_URL: "postgresql://db:5432/x" }))).toBe("file:./data/x.db");
    expect(loadConfig({ HEAP_RELEASE_AFTER_BYTES: "0" }).HEAP_RELEASE_AFTER_BYTES).toBe(0);
    expect(loadConfig({ DATABASE_POOL_SIZE: "25", JOB_QUEUE_POOL_SIZE: "1" })).toMatchObject({ DATABASE_POOL_SIZE: 25, JOB_QUEUE_POOL_SIZE: 1 });
    expect(c).toMatchObject({ GRAPHQL_CACHE_ENTRIES: 500, GRAPHQL_CACHE_BYTES: 1_048_576 });
    expect(loadConfig({ GRAPHQL_CACHE_ENTRIES: "50", GRAPHQL_CACHE_BYTES: "65536" })).toMatchObject({ GRAPHQL_CACHE_ENTRIES: 50, GRAPHQL_CACHE_BYTES: 65536 });
  });

  it("METRICS_TOKEN: unset by default (GET /metrics open); a token of 16 or more visible characters", () => {
    expect(loadConfig({}).METRICS_TOKEN).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: "0123456789abcdef" }).METRICS_TOKEN).toBe("0123456789abcdef");
  });

  it("OTEL_*: off by default; an endpoint turns traces on; the sampler and its ratio are checked", () => {
    const c = loadConfig({});
    expect(tracingEnabled(c)).toBe(false);
    expect(c).toMatchObject({ OTEL_SERVICE_NAME: "guidegate", OTEL_TRACES_SAMPLER: "parentbased_always_on", OTEL_BSP_SCHEDULE_DELAY: 5000 });
    expect(loadConfig({ OTEL_BSP_SCHEDULE_DELAY: "200" }).OTEL_BSP_SCHEDULE_DELAY).toBe(200);
    expect(c.OTEL_TRACES_SAMPLER_ARG).toBeUndefined();
    expect(tracingEnabled(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }))).toBe(true);
    expect(tracingEnabled(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" }))).toBe(true);
    expect(loadConfig({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25", OTEL_SERVICE_NAME: "api-eu" })).toMatchObject({
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: 0.25,
      OTEL_SERVICE_NAME: "api-eu",
    });
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
    ["DATABASE_POOL_SIZE", "0"],
    ["DATABASE_POOL_TIMEOUT_MS", "soon"],
    ["JOB_QUEUE_POOL_SIZE", "0"],
    ["DATABASE_DIRECT_URL", "file:./x.db"],
    ["DATABASE_PREPARED_STATEMENTS", "no"],
    ["DATABASE_READ_FUNCTIONS", "yes"],
    ["HEAP_RELEASE_AFTER_BYTES", "-1"],
    ["HEAP_RELEASE_AFTER_BYTES", "2MB"],
    ["HEAP_RELEASE_MIN_INTERVAL_MS", "0.5"],
    ["GRAPHQL_CACHE_ENTRIES", "0"],
    ["GRAPHQL_CACHE_ENTRIES", "many"],
    ["GRAPHQL_CACHE_BYTES", "1000"],
    ["GRAPHQL_CACHE_BYTES", "1.5e6x"],
    ["METRICS_TOKEN", ""],
    ["METRICS_TOKEN", "short-token"],
    ["METRICS_TOKEN", "a token with spaces in it"],
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318 "],
    ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "not a url"],
    ["OTEL_TRACES_SAMPLER", "sometimes"],
    ["OTEL_TRACES_SAMPLER_ARG", "1.5"],
    ["OTEL_SERVICE_NAME", ""],
    ["OTEL_BSP_SCHEDULE_DELAY", "0"],
    ["LOG_LEVEL", "verbose"],
    ["DATABASE_URL", "file:"],
    ["DATABASE_URL", "file: "],
  ])("names %s when it is %s", (name, bad) => {
    expect(() => loadConfig({ [name]: bad })).toThrow(new RegExp(`Invalid configuration:\\n\\s+${name}: `));
  });

  it("webhook delivery bounds: defaults, a valid value, and bad ones named", () => {
    expect(loadConfig({})).toMatchObject({
      WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: 4,
      WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: 16,
      WEBHOOK_MAX_PENDING_PER_ENDPOINT: 10_000,
    });
    expect(
      loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: "1", WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: "50", WEBHOOK_MAX_PENDING_PER_ENDPOINT: "500" }),
    ).toMatchObject({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: 1, WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: 50, WEBHOOK_MAX_PENDING_PER_ENDPOINT: 500 });
    const bads: [string, string][] = [
      ["WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT", "0"],
      ["WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT", "2.5"],
      ["WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT", "many"],
      ["WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT", "101"],
      ["WEBHOOK_MAX_PENDING_PER_ENDPOINT", "0"],
      ["WEBHOOK_MAX_PENDING_PER_ENDPOINT", "-5"],
    ];
    for (const [name, bad] of bads) expect(() => loadConfig({ [name]: bad }), `${name}=${bad}`).toThrow(new RegExp(`Invalid configuration:\\n\\s+${name}: `));
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

  it("RATE_LIMIT_MAX_REQUEST_POINTS: 10000 by default, a whole number of at least 1", () => {
    expect(loadConfig({}).RATE_LIMIT_MAX_REQUEST_POINTS).toBe(10_000);
    expect(loadConfig({ RATE_LIMIT_MAX_REQUEST_POINTS: "80" }).RATE_LIMIT_MAX_REQUEST_POINTS).toBe(80);
    for (const bad of ["0", "-5", "1.5", "lots"]) {
      expect(() => loadConfig({ RATE_LIMIT_MAX_REQUEST_POINTS: bad })).toThrow(/Invalid configuration:\n\s+RATE_LIMIT_MAX_REQUEST_POINTS: /);
    }
  });

  it("INGEST_RATE_LIMIT_PER_MINUTE: 6000 by default, a whole number of at least 1", () => {
    expect(loadConfig({}).INGEST_RATE_LIMIT_PER_MINUTE).toBe(6_000);
    expect(loadConfig({ INGEST_RATE_LIMIT_PER_MINUTE: "120" }).INGEST_RATE_LIMIT_PER_MINUTE).toBe(120);
    for (const bad of ["0", "-5", "1.5", "lots"]) {
      expect(() => loadConfig({ INGEST_RATE_LIMIT_PER_MINUTE: bad })).toThrow(/Invalid configuration:\n\s+INGEST_RATE_LIMIT_PER_MINUTE: /);
    }
  });

  it("EXPLORE_TIMEOUT_MS: 10000 by default, a whole number of ms from 100 to 600000", () => {
    expect(loadConfig({}).EXPLORE_TIMEOUT_MS).toBe(10_000);
    expect(loadConfig({ EXPLORE_TIMEOUT_MS: "2500" }).EXPLORE_TIMEOUT_MS).toBe(2_500);
    for (const bad of ["0", "99", "600001", "1.5", "soon"]) {
      expect(() => loadConfig({ EXPLORE_TIMEOUT_MS: bad })).toThrow(/Invalid configuration:\n\s+EXPLORE_TIMEOUT_MS: /);
    }
  });

  it("EXPLORE_MAX_ROWS: 100000 by default, a whole number from 1 to 10000000", () => {
    expect(loadConfig({}).EXPLORE_MAX_ROWS).toBe(100_000);
    expect(loadConfig({ EXPLORE_MAX_ROWS: "500" }).EXPLORE_MAX_ROWS).toBe(500);
    for (const bad of ["0", "10000001", "2.5", "many"]) {
      expect(() => loadConfig({ EXPLORE_MAX_ROWS: bad })).toThrow(/Invalid configuration:\n\s+EXPLORE_MAX_ROWS: /);
    }
  });

  it("LOG_LEVEL: pino's levels and silent", () => {
    for (const level of [...Object.keys(pino.levels.values), "silent"]) expect(loadConfig({ LOG_LEVEL: level }).LOG_LEVEL).toBe(level);
  });

  it("an empty value is refused for every variable, never read as 0 or as the default", () => {
    for (const name of ["PORT", "GRAPHQL_MAX_ALIASES", "RATE_LIMIT_PER_MINUTE", "SMTP_URL", "S3_PREFIX", "CORS_ORIGINS", "GRAPHIQL", "HOST", "LOG_LEVEL"]) {
      for (const empty of ["", "  "]) {
        expect(() => loadConfig({ [name]: empty }), `${name}=${JSON.stringify(empty)}`).toThrow(
          new RegExp(`Invalid configuration:\\n\\s+${name}: is empty; unset it to use the default$`),
        );
      }
    }
    // Every empty variable is named at once, beside the other problems.
    expect(() => loadConfig({ PORT: "", GRAPHQL_MAX_DEPTH: "0" })).toThrow(/PORT: is empty[\s\S]*GRAPHQL_MAX_DEPTH: /);
    // NODE_ENV is the ecosystem's, not ours: left as it comes.
    expect(loadConfig({ NODE_ENV: "" }).NODE_ENV).toBe("");
  });

  it("CORS_ORIGINS: * alone, or a list of origins (a trailing slash dropped, as browsers send them)", () => {
    expect(loadConfig({}).CORS_ORIGINS).toBe("*");
    expect(loadConfig({ CORS_ORIGINS: " * " }).CORS_ORIGINS).toBe("*");
    expect(loadConfig({ CORS_ORIGINS: "http://a.com/" }).CORS_ORIGINS).toEqual(["http://a.com"]);
    expect(loadConfig({ CORS_ORIGINS: "https://App.Example.com:443, http://b.com:8080/,capacitor://localhost" }).CORS_ORIGINS).toEqual([
      "https://app.example.com",
      "http://b.com:8080",
      "capacitor://localhost",
    ]);
    for (const bad of [
      "*,http://a.com",
      "http://a.com,*",
      "http://a.com/app",
      "a.com",
      "http://a.com?x=1",
      "http://a.com,,http://b.com",
      "http://u:p@a.com",
      ",",
    ]) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/Invalid configuration:\n\s+CORS_ORIGINS: /);
    }
  });

  it("S3: credentials both or neither; the other S3 settings only with S3_BUCKET", () => {
    const full = { S3_BUCKET: "b", S3_ENDPOINT: "http://127.0.0.1:9000", S3_ACCESS_KEY_ID: "id", S3_SECRET_ACCESS_KEY: "secret", S3_PREFIX: "gg/" };
    expect(loadConfig(full)).toMatchObject(full);
    expect(loadConfig({ S3_BUCKET: "b" }).S3_BUCKET).toBe("b"); // the SDK's usual credential chain
    expect(() => loadConfig({ S3_BUCKET: "b", S3_ACCESS_KEY_ID: "id" })).toThrow(
      /Invalid configuration:\n\s+S3_SECRET_ACCESS_KEY: is not set, but S3_ACCESS_KEY_ID is/,
    );
    expect(() => loadConfig({ S3_BUCKET: "b", S3_SECRET_ACCESS_KEY: "s" })).toThrow(
      /Invalid configuration:\n\s+S3_ACCESS_KEY_ID: is not set, but S3_SECRET_ACCESS_KEY is/,
    );
    for (const name of ["S3_ENDPOINT", "S3_REGION", "S3_PREFIX", "S3_FORCE_PATH_STYLE"]) {
      const value = name === "S3_ENDPOINT" ? "http://127.0.0.1:9000" : name === "S3_FORCE_PATH_STYLE" ? "false" : "x";
      expect(() => loadConfig({ [name]: value }), name).toThrow(new RegExp(`Invalid configuration:\\n\\s+S3_BUCKET: is not set, but ${name} is`));
    }
  });
});
