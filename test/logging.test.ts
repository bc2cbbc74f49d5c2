// The log a real server process writes for client mistakes: one access line each, at `info` (or
// `warn` for 401/403/429), with the request id, route and status title, and no stack; nothing at
// `error`. A fuzz run once wrote 335 `error` lines with stacks for 400s, 401s and 404s.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessLevel } from "../src/observability/requestLog.js";
import { type Child, killChildren, startServerProcess } from "./childProcess.js";
import { call, type Tenant, tenant } from "./helpers.js";

let server: { child: Child; url: string };
let t: Tenant;
beforeAll(async () => {
  t = await tenant("logging");
  server = await startServerProcess({ DATABASE_URL: process.env.DATABASE_URL! });
}, 90_000);
afterAll(() => killChildren());

const LEVEL = { info: 30, warn: 40, error: 50 };

describe("client errors in the log", () => {
  it("4xx on REST and GraphQL: info (warn for 401/403/429), no stack, request id, route and title; nothing at error", async () => {
    const a = `/api/v1/${t.accountId}`;
    const gql = (query: string, headers: Record<string, string> = t.headers) => ({ method: "POST", headers, body: { query } });
    const requests: [string, Parameters<typeof call>[1], number][] = [
      [`${a}/content?limit=abc`, { headers: t.headers }, 400],
      [`${a}/content?cursor=nonsense`, { headers: t.headers }, 400],
      [`${a}/content`, {}, 401],
      [`/api/v1/someone-else/content`, { headers: t.headers }, 403],
      [`${a}/content/c_missing`, { headers: t.headers }, 404],
      [`${a}/endUserSchema/%ED%A0%80`, { headers: t.headers }, 400],
      [`/v1/accounts/${t.accountId}/integrationAttributes/search`, { method: "PATCH", headers: t.headers }, 405],
      [`${a}/content`, { method: "POST", headers: { ...t.headers, "content-type": "application/json" }, raw: "{bad" }, 400],
      [`${a}/content`, { method: "POST", headers: { ...t.headers, "content-type": "text/plain" }, raw: "x" }, 415],
      [`/no/such/route`, {}, 404],
      ["/graphql", gql(`{ account(id: "someone-else") { id } }`), 403],
      ["/graphql", gql(`{ account(id: "${t.accountId}") { contents(first: 5, after: "nonsense") { nodes { id } } } }`), 400],
      ["/graphql", gql("{ viewer { email } }", {}), 401],
      ["/graphql", gql("{ nope"), 200], // application/json answers document errors with 200 (GraphQL over HTTP)
    ];
    const ids: string[] = [];
    for (const [path, init, status] of requests) {
      const id = `log-${ids.length}`;
      ids.push(id);
      const r = await call(server.url + path, { ...init, headers: { ...(init?.headers ?? {}), "x-request-id": id } });
      expect([path, JSON.stringify(init?.body), r.status]).toEqual([path, JSON.stringify(init?.body), status]);
    }
    await server.child.waitFor((l) => l.requestId === ids.at(-1) && l.res !== undefined, 10_000);
    const logs = server.child.logs();
    expect(logs.filter((l) => l.level >= LEVEL.error)).toEqual([]);
    expect(server.child.lines.join("\n")).not.toMatch(/stack/);
    requests.forEach(([path, , status], i) => {
      const lines = logs.filter((l) => l.requestId === ids[i]);
      const access = lines.filter((l) => l.res);
      expect(access, path).toHaveLength(1);
      expect(access[0]).toMatchObject({
        level: status === 401 || status === 403 || status === 429 ? LEVEL.warn : LEVEL.info,
        requestId: ids[i],
        route: expect.any(String),
        ...(status >= 400 ? { title: expect.any(String) } : {}),
        res: { statusCode: status },
      });
      expect(access[0]).not.toHaveProperty("err");
    });
  }, 60_000);

  it("5xx stay at error", () => {
    expect([accessLevel(500), accessLevel(503), accessLevel(404), accessLevel(429), accessLevel(200)]).toEqual(["error", "error", "info", "warn", "info"]);
  });
});
