// A list's cursor is the account's: another account's cursor is a 400 on every keyset list, not a
// position read in this account's list (row ids and sort values alone would let it through, and
// skip the rows before it: a sync loop that mixed up its accounts would lose rows without a word).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, expectJson, expectProblem, pathA, pathB, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  server = await startServer();
  a = await tenant("cura");
  b = await tenant("curb");
  for (const t of [a, b]) {
    const write = (method: string, path: string, body: unknown) => call(`${server.url}${path}`, { method, headers: t.headers, body });
    expect(
      (
        await write(
          "POST",
          `${pathA(t)}/content`,
          [1, 2, 3].map((i) => ({ title: `c${i}`, type: "text", description: "d" })),
        )
      ).status,
    ).toBe(201);
    expect((await write("PUT", `${pathA(t)}/endUsers`, [{ id: "u1" }, { id: "u2" }, { id: "u3" }])).status).toBe(201);
    expect((await write("PUT", `${pathB(t)}/tags`, [{ name: "t1" }, { name: "t2" }, { name: "t3" }])).status).toBeLessThan(300);
  }
});
afterAll(async () => server.close());

const LISTS: [string, (t: Tenant) => string, string?][] = [
  ["content (style A)", (t) => `${pathA(t)}/content?limit=1`],
  ["end users by creation", (t) => `${pathA(t)}/endUsers?limit=1`],
  ["end users updatedSince (the sync list)", (t) => `${pathA(t)}/endUsers?updatedSince=0&limit=1`],
  ["tags", (t) => `${pathB(t)}/tags?limit=1`],
  ["audit log (B25, a POST)", (t) => `${pathB(t)}/auditlogs?limit=1`, "POST"],
];

describe.each(LISTS)("%s", (_name, list, method = "GET") => {
  it("resumes its own account's walk; another account's cursor is a 400 naming the cursor", async () => {
    const first = await call(`${server.url}${list(a)}`, { method, headers: a.headers });
    expectJson(first, 200);
    const cursor = first.body.cursor as string;
    expect(cursor).toEqual(expect.any(String));
    const next = await call(`${server.url}${list(a)}&cursor=${cursor}`, { method, headers: a.headers });
    expectJson(next, 200);
    expect(next.body.data).toHaveLength(1);
    expect(next.body.data[0]).not.toEqual(first.body.data[0]);
    const foreign = await call(`${server.url}${list(b)}&cursor=${cursor}`, { method, headers: b.headers });
    expectProblem(foreign, 400, "cursor belongs to another account's list");
    expect(foreign.body.errors).toEqual([{ path: "cursor", message: "cursor from another account" }]);
  });
});

it("GraphQL connections too: another account's endCursor is a BAD_REQUEST", async () => {
  const q = "query($a: String!, $after: String) { account(id: $a) { tags(first: 1, after: $after) { pageInfo { endCursor } } } }";
  const gql = (t: Tenant, after?: string) =>
    call(`${server.url}/graphql`, { method: "POST", headers: t.headers, body: { query: q, variables: { a: t.accountId, after } } });
  const cursor = (await gql(a)).body.data.account.tags.pageInfo.endCursor;
  expect((await gql(a, cursor)).body.data.account.tags.pageInfo.endCursor).toEqual(expect.any(String));
  const foreign = await gql(b, cursor);
  expect(foreign.body.errors?.[0]).toMatchObject({ message: "cursor belongs to another account's list", extensions: { code: "BAD_REQUEST" } });
});
