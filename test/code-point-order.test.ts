// Lists the contract sorts by name come out in code-point order ('B' < 'Z' < '_x' < 'a' < 'c') on
// every database, whatever its default collation: the test databases on PostgreSQL are created with
// ICU's en-US (test/setup/database.ts), which would sort them 'a' < 'B' < 'c' < 'Z', punctuation first.
// Names are chosen so that the two orders differ; lists are also walked a page at a time, since the
// keyset cursor compares names in the database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, gql, pathB, type Reply, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const B = (t: Tenant) => server.url + pathB(t);
const put = (path: string, t: Tenant, body: unknown) => call(`${B(t)}${path}`, { method: "PUT", headers: t.headers, body });
const get = (path: string, t: Tenant) => call(`${B(t)}${path}`, { headers: t.headers });

const NAMES = ["a", "B", "c", "_x", "Z", "ab", "aB"];
const codePoint = (xs: string[]) => [...xs].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
// Field and attribute names are a letter first, then letters, digits, `_`.
const FIELD_NAMES = ["a", "B", "c", "Z", "a_b", "aZ", "ab"];

/** Every page of a REST list, one row at a time (the cursor carries the last name). */
async function walk(path: string, t: Tenant, pick: (row: any) => string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const r = await get(`${path}${path.includes("?") ? "&" : "?"}limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, t);
    expect(r.status, r.text).toBe(200);
    seen.push(...r.body.data.map(pick));
    cursor = r.body.cursor;
  } while (cursor);
  return seen;
}

describe("lists by name are in code-point order on every database", () => {
  it("tags (GET /tags), on one page and walked page by page", async () => {
    const t = await tenant("cp-tags");
    const made = await put(
      "/tags",
      t,
      NAMES.map((name) => ({ name })),
    );
    expect(made.status, made.text).toBe(201);
    const all = await get("/tags?limit=100", t);
    expect(all.body.data.map((r: { name: string }) => r.name)).toEqual(codePoint(NAMES));
    expect(await walk("/tags", t, (r) => r.name)).toEqual(codePoint(NAMES));
  });

  it("custom fields of the end-user schema (after the default fields) and the integration-attribute schema", async () => {
    const t = await tenant("cp-fields");
    const fields = FIELD_NAMES.map((name) => ({ name, type: "string" }));
    expect((await put("/endUserSchema", t, fields)).status).toBe(200);
    const schema = await get("/endUserSchema", t);
    const custom = schema.body.data.filter((f: { default: boolean }) => !f.default).map((f: { name: string }) => f.name);
    expect(custom).toEqual(codePoint(FIELD_NAMES));

    expect((await put("/integrationAttributeSchema", t, fields)).status).toBe(200);
    const attributes = await get("/integrationAttributeSchema", t);
    expect(attributes.body.data.map((f: { name: string }) => f.name)).toEqual(codePoint(FIELD_NAMES));
  });

  it("integration-attribute records (GET /integrationAttributes), by primary value, walked page by page", async () => {
    const t = await tenant("cp-attrs");
    expect((await put("/integrationAttributeSchema", t, [{ name: "company", type: "string" }])).status).toBe(200);
    const r = await put(
      "/integrationAttributes",
      t,
      NAMES.map((attributeValue) => ({ attributeName: "company", attributeValue, additionalAttributes: {} })),
    );
    expect(r.status, r.text).toBe(201);
    const all = await get("/integrationAttributes?primaryAttrName=company&limit=100", t);
    expect(all.body.data.map((x: { attributeValue: string }) => x.attributeValue)).toEqual(codePoint(NAMES));
    expect(await walk("/integrationAttributes?primaryAttrName=company", t, (x) => x.attributeValue)).toEqual(codePoint(NAMES));
  });

  it("an end user's custom values and user actions (B14, and a bulk update's reply), whatever order they were stored in", async () => {
    const t = await tenant("cp-values");
    expect(
      (
        await put(
          "/endUserSchema",
          t,
          FIELD_NAMES.map((name) => ({ name, type: "string" })),
        )
      ).status,
    ).toBe(200);
    // Stored in reverse code point order, one request each: their rows' order is not the answer's.
    for (const [i, name] of [...codePoint(FIELD_NAMES)].reverse().entries()) {
      const r = await put("/endUsers", t, [{ id: "u1", custom: { [name]: name }, userActionCount: { [[...codePoint(NAMES)].reverse()[i]!]: i } }]);
      expect(r.status, r.text).toBe(i === 0 ? 201 : 200);
    }
    const one = await get("/endUsers/u1?fields=custom,useraction", t);
    expect(one.status, one.text).toBe(200);
    expect(Object.keys(one.body.custom)).toEqual(codePoint(FIELD_NAMES));
    expect(Object.keys(one.body.userActionCount)).toEqual(codePoint(NAMES));
    // A bulk update's reply reads the users it updated back (src/domains/endUsers/read.ts).
    const again = await put("/endUsers", t, [{ id: "u1", custom: { c: "again" } }]);
    expect(again.status, again.text).toBe(200);
    expect(Object.keys(again.body.data[0].custom)).toEqual(codePoint(FIELD_NAMES));
    expect(Object.keys(again.body.data[0].userActionCount)).toEqual(codePoint(NAMES));
  });

  it("a long list of user actions (past the insertion sort's length) in code-point order too", async () => {
    const t = await tenant("cp-actions");
    const ids = Array.from({ length: 60 }, (_, i) => `${i % 2 ? "A" : "a"}${String(i).padStart(2, "0")}_${NAMES[i % NAMES.length]}`);
    const r = await put("/endUsers", t, [{ id: "u1", userActionCount: Object.fromEntries([...ids].reverse().map((id, i) => [id, i])) }]);
    expect(r.status, r.text).toBe(201);
    const one = await get("/endUsers/u1?fields=useraction", t);
    expect(one.status, one.text).toBe(200);
    expect(Object.keys(one.body.userActionCount)).toEqual(codePoint(ids));
  });

  it("segment names, as a field's deletion lists the segments whose rules read it", async () => {
    const t = await tenant("cp-segments");
    expect((await put("/endUserSchema", t, [{ name: "plan", type: "string" }])).status).toBe(200);
    for (const name of NAMES) {
      const made = await gql(server, t, `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }`, {
        a: t.accountId,
        input: { name, rule: { field: "custom.plan", op: "exists" }, contentIds: [] },
      });
      expect(made.errors, JSON.stringify(made.errors)).toBeUndefined();
    }
    const r = await call(`${B(t)}/endUserSchema/plan`, { method: "DELETE", headers: t.headers });
    expect(r.status, r.text).toBe(409);
    const listed = codePoint(NAMES)
      .map((s) => `'${s}'`)
      .join(", ");
    expect(r.text).toContain(listed);
  });
  it("end users changed since a time (updatedSince) by (lastUpdateTime, id): the users of one bulk write, one time, by id, page by page", async () => {
    const t = await tenant("cp-updated");
    const since = Date.now() - 1;
    // One request: one lastUpdateTime for all; given in an order that is neither code-point nor linguistic.
    const made = await call(`${server.url}/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: NAMES.map((id) => ({ id })) });
    expect(made.status, made.text).toBe(201);
    const seen: { id: string; lastUpdateTime: number }[] = [];
    let cursor: string | null = null;
    do {
      const r: Reply = await call(
        `${server.url}/api/v1/${t.accountId}/endUsers?updatedSince=${since}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        {
          headers: t.headers,
        },
      );
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.data);
      cursor = r.body.cursor;
    } while (cursor);
    expect(new Set(seen.map((u) => u.lastUpdateTime)).size).toBe(1);
    expect(seen.map((u) => u.id)).toEqual(codePoint(NAMES));
  });
});
