// /metrics (Prometheus text format) and request ids. Log lines of a real process are checked in
// test/shutdown.test.ts, which reads a child's stdout.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rateLimitRejected, setJobQueueDepth } from "../src/observability/metrics.js";
import { acceptRequestId } from "../src/observability/requestLog.js";
import { call, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
beforeAll(async () => {
  server = await startServer();
  t = await tenant("obs");
});
afterAll(() => server.close());

async function metrics(): Promise<string> {
  const r = await fetch(`${server.url}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.text();
}

/** The value of one series, 0 when absent. Labels must be given in full, in any order. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (JSON.stringify(Object.entries(got).sort()) === JSON.stringify(Object.entries(labels).sort())) return Number(m[3]);
  }
  return 0;
}

describe("GET /metrics", () => {
  it("counts HTTP requests by REST row name and status, never by raw URL", async () => {
    const before = await metrics();
    const ok = await call(`${server.url}/api/v1/${t.accountId}/content`, { headers: t.headers });
    expect(ok.status).toBe(200);
    const bad = await call(`${server.url}/api/v1/${t.accountId}/content?limit=0`, { headers: t.headers });
    expect(bad.status).toBe(400);
    await call(`${server.url}/no/such/${t.accountId}`);
    const after = await metrics();
    const series = (status: string) => ({ route: "listContentA", method: "GET", status });
    expect(value(after, "http_requests_total", series("200")) - value(before, "http_requests_total", series("200"))).toBe(1);
    expect(value(after, "http_requests_total", series("400")) - value(before, "http_requests_total", series("400"))).toBe(1);
    expect(value(after, "http_requests_total", { route: "unmatched", method: "GET", status: "404" })).toBeGreaterThan(0);
    expect(value(after, "http_request_duration_seconds_count", series("200"))).toBeGreaterThan(0);
    expect(after).not.toContain(t.accountId); // ids in paths must not become label values
  });

  it("counts GraphQL operations by name, type and outcome (REST routes run theirs too)", async () => {
    const before = await metrics();
    await call(`${server.url}/graphql`, { method: "POST", headers: t.headers, body: { query: "query WhoAmI { viewer { email } }" } });
    await call(`${server.url}/graphql`, {
      method: "POST",
      headers: t.headers,
      body: { query: `query WhoAmI { viewer { email } account(id: "someone-else") { id } }` },
    });
    await call(`${server.url}/graphql`, { method: "POST", headers: {}, body: { query: "query WhoAmI { viewer { email } }" } });
    await call(`${server.url}/v1/accounts/${t.accountId}/tags`, { headers: t.headers });
    await call(`${server.url}/graphql`, { method: "POST", headers: t.headers, body: { query: "{ nope" } });
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(delta("graphql_operations_total", { operation: "WhoAmI", type: "query", outcome: "ok" })).toBe(1);
    expect(delta("graphql_operations_total", { operation: "WhoAmI", type: "query", outcome: "error" })).toBe(1);
    expect(delta("graphql_operations_total", { operation: "TagPage", type: "query", outcome: "ok" })).toBe(1);
    expect(delta("graphql_rejected_documents_total", { reason: "parse" })).toBe(1);
    expect(delta("graphql_rejected_documents_total", { reason: "unauthenticated" })).toBe(1);
    expect(delta("http_requests_total", { route: "graphql", method: "POST", status: "200" })).toBeGreaterThanOrEqual(1);
  });

  it("counts SQL statements", async () => {
    const before = value(await metrics(), "db_queries_total", { kind: "select" });
    await call(`${server.url}/api/v1/${t.accountId}/endUsers`, { headers: t.headers });
    expect(value(await metrics(), "db_queries_total", { kind: "select" })).toBeGreaterThan(before);
  });

  it("counts the rate limiter's 429s per account", async () => {
    const limited = await startServer({ RATE_LIMIT_PER_MINUTE: "2" });
    const u = await tenant("limited");
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(`${limited.url}/v1/accounts/${u.accountId}/tags`, { headers: u.headers })).status);
      expect(statuses).toEqual([200, 200, 429]);
      expect(value(await metrics(), "rate_limit_rejections_total", { account: u.accountId })).toBe(1);
    } finally {
      await limited.close();
    }
  });

  it("exposes the job queue depth and rate-limit rejections that other modules report", async () => {
    expect(await metrics()).toMatch(/^job_queue_depth 0$/m);
    setJobQueueDepth(5, "copy");
    rateLimitRejected("acct-limited");
    rateLimitRejected("acct-limited");
    const text = await metrics();
    expect(value(text, "job_queue_depth", { queue: "copy" })).toBe(5);
    expect(value(text, "rate_limit_rejections_total", { account: "acct-limited" })).toBe(2);
    expect(text).toMatch(/^rollup_lag_seconds 0$/m); // the rollup worker's lag, 0 until a pass finds one
    expect(text).toContain("# TYPE http_requests_in_flight gauge");
    expect(text).toContain("process_cpu_seconds_total"); // default process metrics
  });
});

describe("request ids", () => {
  it("echoes a well-formed x-request-id and replaces a malformed one", async () => {
    const given = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "abc-123.x:y" } });
    expect(given.headers.get("x-request-id")).toBe("abc-123.x:y");
    const made = await fetch(`${server.url}/healthz`);
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const injected = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": 'a b"}{' } });
    expect(injected.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(acceptRequestId("x".repeat(129))).toBeUndefined();
  });
});
