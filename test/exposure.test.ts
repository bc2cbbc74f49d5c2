// Headers and exposure (issue #31, item 9): every answer carries X-Content-Type-Options: nosniff and
// refuses framing and referrers (the HTML pages above all: /docs, GraphiQL, /reports); /metrics
// can require a bearer token (METRICS_TOKEN); the GraphQL `viewer` answers only keys that may read
// accounts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../src/admin.js";
import { call, costExtensions, expectProblem, pathB, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;

beforeAll(async () => {
  server = await startServer();
  t = await tenant("expo");
});
afterAll(() => server.close());

const graphql = (query: string, headers: Record<string, string>, url = server.url) =>
  call(`${url}/graphql`, { method: "POST", headers: { accept: "application/json", ...headers }, body: { query } });

describe("security headers", () => {
  it("every answer, whatever its route and status, carries X-Content-Type-Options: nosniff", async () => {
    const answers = await Promise.all([
      call(`${server.url}/healthz`),
      call(`${server.url}/readyz`),
      call(`${server.url}/metrics`),
      call(`${server.url}/openapi.json`),
      call(`${server.url}/docs/init.js`),
      call(`${server.url}/no/such/route`),
      call(`${server.url}${pathB(t)}/content`, { headers: t.headers }),
      call(`${server.url}${pathB(t)}/content`),
      call(`${server.url}${pathB(t)}/content`, { method: "PATCH", headers: t.headers }),
      call(`${server.url}/reports/catalog.json`),
      graphql("{ __typename }", t.headers),
      graphql("{ __typename }", {}),
      call(`${server.url}/segment/v1/batch`, { method: "POST", body: { batch: [] } }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 404, 200, 401, 405, 200, 200, 401, 401]);
    for (const r of answers) expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it.each([
    ["/docs", "text/html"],
    ["/graphql", "text/html"],
    ["/reports", "text/html"],
  ])("the page %s cannot be framed by another site and sends no referrer", async (path, type) => {
    const page = await call(`${server.url}${path}`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain(type);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("content-security-policy")).toMatch(/(^|;\s*)frame-ancestors 'none'(;|$)/);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("the report viewer keeps its own, stricter policy", async () => {
    const csp = (await call(`${server.url}/reports`)).headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
  });
});

describe("GET /metrics with METRICS_TOKEN", () => {
  const token = "metrics-token-0123456789abcdef";
  let guarded: Server;
  beforeAll(async () => {
    guarded = await startServer({ METRICS_TOKEN: token });
  });
  afterAll(() => guarded.close());

  it("unset: open, as before", async () => {
    const r = await call(`${server.url}/metrics`);
    expect(r.status).toBe(200);
    expect(r.text).toContain("http_requests_total");
  });

  it("set: 401 problem without the token, a wrong one or another scheme; the metrics with it", async () => {
    for (const authorization of [undefined, "Bearer wrong", `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token]) {
      const r = await call(`${guarded.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expectProblem(r, 401, "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.");
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      expect(r.text).not.toContain("http_requests_total");
    }
    const r = await call(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(r.text).toContain("http_requests_total");
    // The scheme is case-insensitive (RFC 9110).
    expect((await call(`${guarded.url}/metrics`, { headers: { authorization: `bearer ${token}` } })).status).toBe(200);
  });
});

describe("GraphQL viewer", () => {
  it("answers an integration key", async () => {
    const r = await graphql("{ viewer { email scope accountIds } }", t.headers);
    // No account touched: nothing charged (throttleStatus null).
    expect([r.status, r.body]).toEqual([
      200,
      { data: { viewer: { email: t.email, scope: "integration", accountIds: [t.accountId] } }, extensions: costExtensions(1, null) },
    ]);
  });

  it.each(["ingest", "auditlogs"])("a key of scope %s with its user's e-mail learns nothing: 403 FORBIDDEN, as on account(id)", async (scope) => {
    const { key } = await createKey(t.email, scope === "ingest" ? { scope, accountId: t.accountId } : { scope });
    const headers = { "x-service-integration-key": key, "x-service-user": t.email };
    const r = await graphql("{ viewer { email scope accountIds } }", headers);
    expect(r.status).toBe(403);
    // A write key is refused before its document is read (src/graphql/requireCredentials.ts); an
    // auditlogs key runs the auditLogs query alone, so its refusal is the field's.
    expect(r.body.data ?? null).toBeNull();
    expect(r.body.errors).toEqual([
      {
        message:
          scope === "ingest"
            ? "An API key of scope 'ingest' (a write key) works on /segment/v1/* only, not on GraphQL."
            : `An API key of scope '${scope}' cannot be used here (it needs scope 'integration').`,
        extensions: { code: "FORBIDDEN" },
        // The field's refusal says where; the write key's is refused before any field.
        ...(scope === "ingest" ? {} : { path: ["viewer"] }),
      },
    ]);
    expect(r.text).not.toContain(t.accountId);
    // The same refusal as reading the account itself.
    const account = await graphql(`{ account(id: "${t.accountId}") { id } }`, headers);
    expect([account.status, account.body.errors[0].extensions.code]).toEqual([403, "FORBIDDEN"]);
  });
});
