// Contract rules of the REST layer as a whole (src/rest/router.ts), over real HTTP: who may call is
// decided before what was sent is checked, unsupported methods on known paths are a 405 with
// Allow, and a trailing slash is not the list.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, prisma, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  server = await startServer();
  [a, b] = [await tenant("contract"), await tenant("contract")];
});
afterAll(() => server.close());

const url = (path: string) => server.url + path;

describe("authentication and authorisation come before input validation", () => {
  it.each([
    ["GET", (t: Tenant) => `/api/v1/${t.accountId}/content?limit=abc`, undefined],
    ["GET", (t: Tenant) => `/v1/accounts/${t.accountId}/tags?limit=0`, undefined],
    ["POST", (t: Tenant) => `/api/v1/${t.accountId}/content`, "{not json"],
    ["PUT", (t: Tenant) => `/v1/accounts/${t.accountId}/tags`, '[{"name": 1}]'],
    ["POST", (t: Tenant) => `/v1/accounts/${t.accountId}/auditlogs`, '{"startDate": "yesterday"}'],
  ])("%s %s: no key → 401, another account's key → 403, own key → 400", async (method, path, raw) => {
    const headers: Record<string, string> = raw ? { "content-type": "application/json" } : {};
    const none = await call(url(path(a)), { method, headers, raw });
    expect([none.status, none.headers.get("content-type")]).toEqual([401, "application/problem+json; charset=utf-8"]);
    const foreign = await call(url(path(a)), { method, headers: { ...headers, ...b.headers }, raw });
    expect(foreign.status).toBe(403);
    const own = await call(url(path(a)), { method, headers: { ...headers, ...a.headers }, raw });
    expect(own.status).toBe(400);
  });

  it("a wrong content type is a 415 only for a caller who may write there", async () => {
    const path = url(`/api/v1/${a.accountId}/content`);
    expect((await call(path, { method: "POST", headers: { "content-type": "text/plain" }, raw: "x" })).status).toBe(401);
    expect((await call(path, { method: "POST", headers: { "content-type": "text/plain", ...a.headers }, raw: "x" })).status).toBe(415);
    expect(await prisma.content.count({ where: { accountId: a.accountId } })).toBe(0);
  });
});

describe("methods and paths", () => {
  it("an unsupported method on a known path is a 405 naming the allowed methods", async () => {
    const r = await call(url(`/api/v1/${a.accountId}/content`), { method: "PATCH", headers: a.headers, body: [] });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, PUT, POST, HEAD, OPTIONS");
    expect(r.body).toMatchObject({ status: 405, title: "Method Not Allowed" });
    const tags = await call(url(`/v1/accounts/${a.accountId}/tags/x`), { method: "GET", headers: a.headers });
    expect([tags.status, tags.headers.get("allow")]).toEqual([405, "DELETE, OPTIONS"]);
  });

  it("an unknown path is still a 404, and an empty id is not the list", async () => {
    expect((await call(url(`/api/v1/${a.accountId}/nothing`), { headers: a.headers })).status).toBe(404);
    const slash = await call(url(`/api/v1/${a.accountId}/content/`), { headers: a.headers });
    expect(slash.status).toBe(404);
    expect(slash.body).toMatchObject({ status: 404 });
  });
});
