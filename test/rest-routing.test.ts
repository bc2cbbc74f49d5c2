// Routing edges found from outside with a method prober and a URL fuzzer: an unsupported method is a
// 405 whose Allow names exactly the methods the route table declares for that path (a literal path
// wins over a pattern, in routing and in Allow), and a URL that does not percent-decode is a 400
// naming the parameter, on every route, REST and GraphQL GET, never a 500.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allowHeader } from "../src/rest/router.js";
import { routes } from "../src/rest/routes.js";
import { call, prisma, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
beforeAll(async () => {
  server = await startServer();
  t = await tenant("routing");
});
afterAll(() => server.close());

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
const byPath = new Map<string, Set<string>>();
for (const r of routes) (byPath.get(r.path) ?? byPath.set(r.path, new Set()).get(r.path)!).add(r.method);
// A literal that is also a parameter's value (B13's endUsers/lookup) serves the parameter path's methods too.
for (const r of routes.filter((r) => r.literalIsAlsoParam))
  for (const p of routes.filter((p) => p.path === r.path.replace(/\/[^/:]+$/, "/:id"))) byPath.get(r.path)!.add(p.method);
const concrete = (path: string, value = "x1") => path.replace(/:accountId/, t.accountId).replace(/:\w+/g, value);

describe("405 names the methods the table declares for the path", () => {
  it("every path of the route table, with every method it does not serve", async () => {
    expect(byPath.size).toBeGreaterThanOrEqual(30);
    for (const [path, declared] of byPath) {
      for (const method of METHODS.filter((m) => !declared.has(m))) {
        const r = await call(server.url + concrete(path), { method: method.toUpperCase(), headers: t.headers });
        expect([path, method, r.status]).toEqual([path, method, 405]);
        expect([path, method, r.headers.get("allow")]).toEqual([path, method, allowHeader([...declared])]);
        expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      }
    }
  });

  it("PATCH /integrationAttributes/search: Allow is POST, OPTIONS (the literal path, not the record pattern)", async () => {
    const r = await call(`${server.url}/v1/accounts/${t.accountId}/integrationAttributes/search`, { method: "PATCH", headers: t.headers });
    expect([r.status, r.headers.get("allow")]).toEqual([405, "POST, OPTIONS"]);
  });

  it("a literal path wins in routing too: DELETE /integrationAttributes/search is a 405, not the deletion of a record named 'search'", async () => {
    const r = await call(`${server.url}/v1/accounts/${t.accountId}/integrationAttributes/search`, { method: "DELETE", headers: t.headers });
    expect([r.status, r.headers.get("allow")]).toEqual([405, "POST, OPTIONS"]);
  });

  it("but `lookup` is also an end user's id: GET and PUT /endUsers/lookup reach that end user (B14, B15), POST is B13; Allow names all three", async () => {
    const B = `${server.url}/v1/accounts/${t.accountId}/endUsers`;
    expect((await call(`${server.url}/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "lookup" }] })).status).toBe(201);
    const read = await call(`${B}/lookup`, { headers: t.headers });
    expect([read.status, read.body.id]).toEqual([200, "lookup"]);
    const head = await call(`${B}/lookup`, { method: "HEAD", headers: t.headers });
    expect(head.status).toBe(200);
    const write = await call(`${B}/lookup`, { method: "PUT", headers: t.headers, body: { name: "Look Up" } });
    expect(write.status, write.text).toBe(200);
    const asked = await call(`${B}/lookup`, { method: "POST", headers: t.headers, body: { id: "lookup" } });
    expect([asked.status, asked.body.id]).toEqual([200, "lookup"]);
    const patch = await call(`${B}/lookup`, { method: "PATCH", headers: t.headers });
    expect([patch.status, patch.headers.get("allow")]).toEqual([405, "POST, GET, PUT, HEAD, OPTIONS"]);
  });
});

describe("405 on the unauthenticated paths too (the contract's common rule), never a 404", () => {
  it.each([
    ["POST", "/healthz"],
    ["POST", "/readyz"],
    ["POST", "/metrics"],
    ["POST", "/openapi.json"],
    ["PUT", "/docs"],
    ["DELETE", "/docs/init.js"],
    ["POST", "/reports"],
    ["PUT", "/reports/catalog.json"],
  ])("%s %s: 405, Allow: GET, HEAD, OPTIONS", async (method, path) => {
    const r = await call(server.url + path, { method });
    expect([r.status, r.headers.get("allow")]).toEqual([405, "GET, HEAD, OPTIONS"]);
    expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(r.body).toMatchObject({ status: 405, title: "Method Not Allowed" });
    expect((await call(server.url + path)).status).toBe(200);
  });
});

describe("undecodable percent-encoding is a 400 naming the parameter", () => {
  const BAD = ["%", "%E0%A4%A", "%ED%A0%80", "%FF"];

  it("the two URLs the fuzzer found (500 before)", async () => {
    const schema = await call(`${server.url}/api/v1/${t.accountId}/endUserSchema/%ED%A0%80`, { headers: t.headers });
    expect(schema.status).toBe(400);
    expect(schema.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(schema.body).toEqual({
      type: "about:blank",
      title: "Bad Request",
      status: 400,
      detail: "Path parameter fieldName is not valid percent-encoded UTF-8.",
      errors: [{ path: "fieldName", message: "is not valid percent-encoded UTF-8" }],
    });
    const order = await call(`${server.url}/v1/accounts/${t.accountId}/segments/%ED%A0%80/contentOrder?id=x`, { headers: t.headers });
    expect([order.status, order.body.detail]).toEqual([400, "Path parameter segmentId is not valid percent-encoded UTF-8."]);
  });

  it("every path parameter of every route, and a query value, with each bad sequence", async () => {
    const before = await prisma.auditLog.count();
    for (const [path, declared] of byPath) {
      const method = [...declared][0]!.toUpperCase();
      for (const bad of BAD) {
        const params = path.match(/:\w+/g) ?? [];
        for (const param of params) {
          const url = path.replace(/:accountId/, param === ":accountId" ? bad : t.accountId).replace(/:\w+/g, (p) => (p === param ? bad : "x1"));
          const r = await call(server.url + url, { method, headers: t.headers });
          expect([method, url, r.status, r.body?.errors?.[0]?.path]).toEqual([method, url, 400, param.slice(1)]);
        }
        const q = await call(`${server.url}${concrete(path)}?limit=${bad}`, { method, headers: t.headers });
        expect([method, path, q.status, q.body?.detail]).toEqual([method, path, 400, "Query parameter limit is not valid percent-encoded UTF-8."]);
      }
    }
    expect(await prisma.auditLog.count()).toBe(before); // nothing was changed
  });

  it("GraphQL GET: a query string that does not decode is a 400 naming it", async () => {
    const r = await call(`${server.url}/graphql?query=%E0%A4%A`, { headers: t.headers });
    expect([r.status, r.body.detail]).toEqual([400, "Query parameter query is not valid percent-encoded UTF-8."]);
    const name = await call(`${server.url}/graphql?query=%7Bviewer%7Bemail%7D%7D&%FF=1`, { headers: t.headers });
    expect([name.status, name.body.detail]).toEqual([400, "Query parameter %FF is not valid percent-encoded UTF-8."]);
  });

  it("well-formed encoding still decodes (a field name with an é and a space)", async () => {
    const r = await call(`${server.url}/api/v1/${t.accountId}/endUserSchema/caf%C3%A9%20au%20lait`, { headers: t.headers });
    expect(r.status).toBe(404);
    expect(r.body.detail).toContain("café au lait");
  });
});
