// Content.tags is the same on every path that returns content: tags carried by the row (a content
// page and a segment's content order read them in the same statement, with only the columns the
// document selects) and tags read in one batch for rows that do not carry them (content(id:), a
// segment's contents, a write's reply). Every Tag field, in name order, JavaScript's order even
// where the databases' byte order differs (past U+FFFF), and one batch whatever the row count.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, gql, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";
import { AUTH, shape } from "./sql.js";

let server: Server;
let t: Tenant;
let tagged: string; // carries every tag
let bare: string; // carries none
let segmentId: string;

// In JavaScript's (UTF-16) order; UTF-8 byte order puts "\uFB01…" (EF AC 81) before "😀…" (F0 9F).
const NAMES = ["alpha", "beta", "😀 smile", "\uFB01 ligature"];
const TAG_FIELDS = "id name description type contentCount";

beforeAll(async () => {
  server = await startServer();
  t = await tenant("content-tags");
  const B = `${server.url}/v1/accounts/${t.accountId}`;
  expect((await call(`${B}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] })).status).toBe(200);
  expect((await call(`${B}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "gold", custom: { plan: "gold" } }] })).status).toBe(201);
  const tags = await call(`${B}/tags`, { method: "PUT", headers: t.headers, body: NAMES.toReversed().map((name) => ({ name, description: `about ${name}` })) });
  expect(tags.status).toBe(201);
  const made = await call(`${B}/content`, {
    method: "POST",
    headers: t.headers,
    body: [
      { title: "Tagged", type: "text", tags: [NAMES[2], NAMES[0], NAMES[3], NAMES[1]] },
      { title: "Bare", type: "text" },
    ],
  });
  expect(made.status).toBe(201);
  [tagged, bare] = made.body.data.map((c: { id: string }) => c.id);
  const segment = await gql(server, t, `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }`, {
    a: t.accountId,
    input: { name: "gold", rule: { field: "custom.plan", op: "eq", value: "gold" }, contentIds: [bare, tagged] },
  });
  expect(segment.errors).toBeUndefined();
  segmentId = segment.data.createSegment.id;
});
afterAll(() => server.close());

/** The tags every path must answer for the tagged content, from the tags route itself. */
async function expectedTags(): Promise<unknown[]> {
  const r = await gql(server, t, `query($a: String!) { account(id: $a) { tags(first: 100) { nodes { ${TAG_FIELDS} } } } }`, { a: t.accountId });
  const all = r.data.account.tags.nodes as { name: string; contentCount: number }[];
  expect(all.map((x) => x.contentCount)).toEqual([1, 1, 1, 1]);
  return [...all].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

describe("Content.tags", () => {
  it("is every Tag field in JavaScript's name order on every read path", async () => {
    const want = await expectedTags();
    expect(want.map((x) => (x as { name: string }).name)).toEqual(NAMES);
    const r = await gql(
      server,
      t,
      `query($a: String!, $s: String!, $c: String!) { account(id: $a) {
        page: contents(first: 10) { nodes { id tags { ${TAG_FIELDS} } } }
        edges: contents(first: 10) { edges { node { id ...T } } }
        one: content(id: $c) { id tags { ${TAG_FIELDS} } }
        segment(id: $s) { contentOrder(endUserId: "gold") { id tags { ${TAG_FIELDS} } } contents { id tags { ${TAG_FIELDS} } } } } }
      fragment T on Content { tags { ... on Tag { ${TAG_FIELDS} } } }`,
      { a: t.accountId, s: segmentId, c: tagged },
    );
    expect(r.errors).toBeUndefined();
    const account = r.data.account;
    const byId = (list: { id: string; tags: unknown[] }[]) => Object.fromEntries(list.map((c) => [c.id, c.tags]));
    const expected = { [tagged]: want, [bare]: [] };
    expect(byId(account.page.nodes)).toEqual(expected);
    expect(byId(account.edges.edges.map((e: { node: unknown }) => e.node))).toEqual(expected);
    expect(account.one.tags).toEqual(want);
    expect(byId(account.segment.contentOrder)).toEqual(expected);
    expect(byId(account.segment.contents)).toEqual(expected);
  });

  it("comes with the page in its one statement, with only the selected Tag columns", async () => {
    for (const fields of ["id", "name description", "type"]) {
      const { result, sql } = await sqlOf(() =>
        gql(server, t, `query($a: String!) { account(id: $a) { contents(first: 10) { nodes { id tags { ${fields} } } } } }`, { a: t.accountId }),
      );
      expect(result.errors).toBeUndefined();
      const want = (await expectedTags()).map((x) => Object.fromEntries(fields.split(" ").map((f) => [f, (x as Record<string, unknown>)[f]])));
      expect(Object.fromEntries(result.data.account.contents.nodes.map((c: { id: string; tags: unknown[] }) => [c.id, c.tags]))).toEqual({
        [tagged]: want,
        [bare]: [],
      });
      expect(shape(sql)).toEqual([...AUTH, "SELECT Content"]);
      expect(sql.at(-1)).toMatch(/json_(group_array|agg)/);
      for (const column of ["description", "type"]) expect(sql.at(-1)!.includes(`'${column}'`), column).toBe(fields.includes(column));
    }
  });

  it("is one batched read for rows that do not carry it, whatever their number", async () => {
    const ids = Array.from({ length: 12 }, (_, i) => (i % 2 ? tagged : bare));
    const aliases = ids.map((id, i) => `c${i}: content(id: "${id}") { id tags { name } }`).join(" ");
    const { result, sql } = await sqlOf(() => gql(server, t, `query($a: String!) { account(id: $a) { ${aliases} } }`, { a: t.accountId }));
    expect(result.errors).toBeUndefined();
    expect(Object.values(result.data.account).map((c) => (c as { tags: { name: string }[] }).tags.map((x) => x.name))).toEqual(
      ids.map((id) => (id === tagged ? NAMES : [])),
    );
    // The contents (one batched lookup), then their tags (the links and the tags: one batch).
    expect(shape(sql)).toEqual([...AUTH, "SELECT Content", "SELECT ContentTag", "SELECT Tag"]);
  });
});
