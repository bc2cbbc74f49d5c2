import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, gql, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let a: Tenant;
beforeAll(async () => {
  server = await startServer();
  a = await tenant();
});
afterAll(() => server.close());

describe("smoke", () => {
  it("creates and lists content", async () => {
    const r = await call(`${server.url}/api/v1/${a.accountId}/content`, { method: "POST", headers: a.headers, body: [{ title: "T", type: "text" }] });
    expect(r.status).toBe(201);
    const l = await call(`${server.url}/api/v1/${a.accountId}/content`, { headers: a.headers });
    expect(l.body.data).toHaveLength(1);
    const q = await sqlOf(() =>
      gql(server, a, `query($id: String!) { account(id: $id) { contents(first: 50) { nodes { id tags { name contentCount } } } } }`, { id: a.accountId }),
    );
    expect(q.result.errors).toBeUndefined();
    console.log(q.sql);
  });
});
