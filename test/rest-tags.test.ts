// REST tag routes (style B: PUT /tags = B7, GET /tags, DELETE /tags/{names}) over real HTTP: every
// status each can answer, with the database checked after each call.
import { STATUS_CODES } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../src/admin.js";
import { withTransaction } from "../src/db/index.js";
import { newId } from "../src/ids.js";
import { prisma, requester, startServer, tenant, type Reply, type Server, type Tenant } from "./helpers.js";

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

// ---- helpers ---------------------------------------------------------------------------------------

/** Direct database writes, for fixtures the REST layer cannot make (the shared client audits every change). */
const write = withTransaction;

const req = requester(() => server);

const tags = (t: Tenant | string) => `/v1/accounts/${typeof t === "string" ? t : t.accountId}/tags`;

function expectJson(r: Reply, status: number) {
  expect(r.status, r.text.slice(0, 500)).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/json(;|$)/);
}

function expectProblem(r: Reply, status: number, detail?: string | RegExp) {
  expect(r.status, r.text.slice(0, 500)).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json(;|$)/);
  expect(r.body.type).toBe("about:blank");
  expect(r.body.title).toBe(STATUS_CODES[status]);
  expect(r.body.status).toBe(status);
  expect(typeof r.body.detail).toBe("string");
  if (typeof detail === "string") expect(r.body.detail).toBe(detail);
  else if (detail) expect(r.body.detail).toMatch(detail);
}

const put = (t: Tenant, body: unknown) => req(tags(t), { method: "PUT", headers: t.headers, body });

/** The account's tags as the database holds them, in name order, as wire records. */
async function dbTags(accountId: string) {
  const rows = await prisma.tag.findMany({ where: { accountId }, orderBy: [{ name: "asc" }, { id: "asc" }] });
  return rows.map((r) => ({ id: r.id, name: r.name, description: r.description, type: r.type }));
}

async function dbState(accountId: string) {
  const contents = await prisma.content.findMany({ where: { accountId }, include: { tags: true }, orderBy: { id: "asc" } });
  return {
    tags: await prisma.tag.findMany({ where: { accountId }, orderBy: { id: "asc" } }),
    contents: contents.map(({ tags: links, ...c }) => ({ ...c, tags: links.map((l) => l.tagId).sort() })),
  };
}

async function mkTag(t: Tenant, name: string, type: "USER" | "PAGE" | "ROLE", description: string | null = null) {
  return write((tx) => tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name, type, description } }));
}

/** Creates tags through PUT /tags (201) and returns their records. */
async function createTags(t: Tenant, items: object[]): Promise<any[]> {
  const r = await put(t, items);
  expectJson(r, 201);
  return r.body.data;
}

/** A text content carrying the named tags (style B create). */
async function contentWithTags(t: Tenant, names: string[]): Promise<string> {
  const r = await req(`/v1/accounts/${t.accountId}/content`, { method: "POST", headers: t.headers, body: [{ title: "tagged", type: "text", tags: names }] });
  expectJson(r, 201);
  return r.body.data[0].id;
}

const contentTagNames = async (t: Tenant, id: string) =>
  (await req(`/v1/accounts/${t.accountId}/content/createdAfter?fromTime=0&limit=10000`, { headers: t.headers })).body.data.find((c: any) => c.id === id).tags;

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

// ---- PUT /tags (B7) ---------------------------------------------------------------------------------------

describe("PUT /v1/accounts/{accountId}/tags", () => {
  it("201: creates tags of type USER, in request order", async () => {
    const t = await tenant();
    const r = await put(t, [{ name: "zeta", description: "last letter" }, { name: "alpha" }]);
    expectJson(r, 201);
    expect(r.body).toEqual({
      data: [
        { id: expect.stringMatching(/^t_/), name: "zeta", description: "last letter", type: "USER" },
        { id: expect.stringMatching(/^t_/), name: "alpha", description: null, type: "USER" },
      ],
    });
    expect(await dbTags(t.accountId)).toEqual([r.body.data[1], r.body.data[0]]);
  });

  it("trims names", async () => {
    const t = await tenant();
    const [tag] = await createTags(t, [{ name: "  spaced  " }]);
    expect(tag.name).toBe("spaced");
    expect((await dbTags(t.accountId)).map((x) => x.name)).toEqual(["spaced"]);
  });

  it("200: updates the description of an existing tag; id and type unchanged", async () => {
    const t = await tenant();
    const [tag] = await createTags(t, [{ name: "docs", description: "old" }]);
    const r = await put(t, [{ name: "docs", description: "new" }]);
    expectJson(r, 200);
    expect(r.body).toEqual({ data: [{ id: tag.id, name: "docs", description: "new", type: "USER" }] });
    expect(await dbTags(t.accountId)).toEqual([{ id: tag.id, name: "docs", description: "new", type: "USER" }]);
  });

  it("200: an update without description keeps it; null clears it", async () => {
    const t = await tenant();
    const [tag] = await createTags(t, [{ name: "keep", description: "kept" }]);
    const same = await put(t, [{ name: "keep" }]);
    expectJson(same, 200);
    expect(same.body.data[0].description).toBe("kept");
    const cleared = await put(t, [{ name: "keep", description: null }]);
    expectJson(cleared, 200);
    expect(cleared.body.data[0]).toEqual({ id: tag.id, name: "keep", description: null, type: "USER" });
    expect((await dbTags(t.accountId))[0]!.description).toBeNull();
  });

  it("200: updates and renames tags of any type (PAGE, ROLE); the type is kept", async () => {
    const t = await tenant();
    const page = await mkTag(t, "page-tag", "PAGE", "p");
    const role = await mkTag(t, "role-tag", "ROLE");
    const r = await put(t, [
      { name: "page-tag", description: "pp" },
      { name: "role-tag", newName: "admins" },
    ]);
    expectJson(r, 200);
    expect(r.body.data).toEqual([
      { id: page.id, name: "page-tag", description: "pp", type: "PAGE" },
      { id: role.id, name: "admins", description: null, type: "ROLE" },
    ]);
    expect(await dbTags(t.accountId)).toEqual([r.body.data[1], r.body.data[0]]);
  });

  it("200: renames via newName; the database and the content carrying it show the new name", async () => {
    const t = await tenant();
    const [tag] = await createTags(t, [{ name: "before", description: "d" }]);
    const contentId = await contentWithTags(t, ["before"]);
    const r = await put(t, [{ name: "before", newName: "after" }]);
    expectJson(r, 200);
    expect(r.body.data).toEqual([{ id: tag.id, name: "after", description: "d", type: "USER" }]);
    expect(await dbTags(t.accountId)).toEqual([{ id: tag.id, name: "after", description: "d", type: "USER" }]);
    expect(await prisma.tag.count({ where: { accountId: t.accountId, name: "before" } })).toBe(0);
    expect(await contentTagNames(t, contentId)).toEqual(["after"]);
    const viaA = await req(`/api/v1/${t.accountId}/content/${contentId}`, { headers: t.headers });
    expect(viaA.body.tags).toEqual([tag.id]);
  });

  it("200: rename and description in one item; renaming to the same name is a no-op", async () => {
    const t = await tenant();
    const [tag] = await createTags(t, [{ name: "x1" }]);
    const r = await put(t, [{ name: "x1", newName: "x2", description: "both" }]);
    expectJson(r, 200);
    expect(r.body.data).toEqual([{ id: tag.id, name: "x2", description: "both", type: "USER" }]);
    const same = await put(t, [{ name: "x2", newName: "x2" }]);
    expectJson(same, 200);
    expect(await dbTags(t.accountId)).toEqual([{ id: tag.id, name: "x2", description: "both", type: "USER" }]);
  });

  it("201 when one item creates and another updates", async () => {
    const t = await tenant();
    const [old] = await createTags(t, [{ name: "old" }]);
    const r = await put(t, [{ name: "old", description: "upd" }, { name: "fresh" }]);
    expectJson(r, 201);
    expect(r.body.data).toEqual([
      { id: old.id, name: "old", description: "upd", type: "USER" },
      { id: expect.stringMatching(/^t_/), name: "fresh", description: null, type: "USER" },
    ]);
    expect((await dbTags(t.accountId)).map((x) => x.name)).toEqual(["fresh", "old"]);
  });

  it("items see the items before them: create then update the same name, and a three-way swap", async () => {
    const t = await tenant();
    const r = await put(t, [
      { name: "dup", description: "first" },
      { name: "dup", description: "second" },
    ]);
    expectJson(r, 201);
    expect(r.body.data[0].id).toBe(r.body.data[1].id);
    expect(await dbTags(t.accountId)).toEqual([{ id: r.body.data[0].id, name: "dup", description: "second", type: "USER" }]);

    const [a, b] = await createTags(t, [{ name: "a" }, { name: "b" }]);
    const swap = await put(t, [
      { name: "a", newName: "tmp" },
      { name: "b", newName: "a" },
      { name: "tmp", newName: "b" },
    ]);
    expectJson(swap, 200);
    expect(swap.body.data.map((x: any) => [x.id, x.name])).toEqual([
      [a.id, "b"],
      [b.id, "a"],
      [a.id, "b"],
    ]);
    const after = await dbTags(t.accountId);
    expect(after.map((x) => [x.name, x.id])).toEqual([
      ["a", b.id],
      ["b", a.id],
      ["dup", r.body.data[0].id],
    ]);
  });

  it("409: renaming to a taken name; nothing changes", async () => {
    const t = await tenant();
    await createTags(t, [{ name: "one" }, { name: "two" }]);
    const before = await dbState(t.accountId);
    const r = await put(t, [{ name: "one", newName: "two" }]);
    expectProblem(r, 409, "a tag named 'two' already exists");
    expect(r.body.errors).toEqual([{ path: "[0]", message: "a tag named 'two' already exists" }]);
    expect(await dbState(t.accountId)).toEqual(before);
  });

  it("409: renaming to a name an earlier item of the request created", async () => {
    const t = await tenant();
    const [one] = await createTags(t, [{ name: "one" }]);
    const r = await put(t, [{ name: "new" }, { name: "one", newName: "new" }]);
    expectJson(r, 207);
    expect(r.body).toEqual({
      success: [{ index: 0, id: expect.stringMatching(/^t_/), statusCode: 201 }],
      failure: [{ index: 1, id: one.id, statusCode: 409, errors: ["a tag named 'new' already exists"] }],
    });
    expect((await dbTags(t.accountId)).map((x) => x.name)).toEqual(["new", "one"]);
  });

  it("404: renaming a tag that does not exist; nothing created", async () => {
    const t = await tenant();
    const r = await put(t, [{ name: "ghost", newName: "real" }]);
    expectProblem(r, 404, "no tag named 'ghost' to rename");
    expect(r.body.errors).toEqual([{ path: "[0]", message: "no tag named 'ghost' to rename" }]);
    expect(await dbTags(t.accountId)).toEqual([]);
  });

  it.each([
    [{ name: "a,b" }, "name must not contain a comma"],
    [{ name: "ok", newName: "x,y" }, "newName must not contain a comma"],
    [{ description: "no name" }, "name is required"],
    [{ name: "" }, "name is required"],
    [{ name: "   " }, "name is required"],
    [{ name: null }, "name is required"],
    [{ name: "n".repeat(101) }, "name must be at most 100 characters"],
    [{ name: "ok", newName: "n".repeat(101) }, "newName must be at most 100 characters"],
    [{ name: "ok", newName: " " }, "newName is required"],
    [{ name: "ok", description: "d".repeat(2001) }, "description must be at most 2000 characters"],
  ])("400 for %j; nothing written", async (item, message) => {
    const t = await tenant();
    await createTags(t, [{ name: "ok", description: "orig" }]);
    const before = await dbState(t.accountId);
    const r = await put(t, [item]);
    expectProblem(r, 400, message);
    expect(r.body.errors).toEqual([{ path: "[0]", message }]);
    expect(await dbState(t.accountId)).toEqual(before);
  });

  it("accepts the longest name (100) and description (2000)", async () => {
    const t = await tenant();
    const [tag] = await createTags(t, [{ name: "n".repeat(100), description: "d".repeat(2000) }]);
    expect(tag.name).toHaveLength(100);
    expect((await prisma.tag.findUniqueOrThrow({ where: { id: tag.id } })).description).toHaveLength(2000);
  });

  it("207: a mix of created, updated, invalid, missing and conflicting items", async () => {
    const t = await tenant();
    const [existing, other] = await createTags(t, [{ name: "existing" }, { name: "other" }]);
    const r = await put(t, [
      { name: "created" },
      { name: "bad,name" },
      { name: "existing", description: "updated" },
      { name: "missing", newName: "whatever" },
      { name: "other", newName: "existing" },
    ]);
    expectJson(r, 207);
    expect(r.body).toEqual({
      success: [
        { index: 0, id: expect.stringMatching(/^t_/), statusCode: 201 },
        { index: 2, id: existing.id, statusCode: 200 },
      ],
      failure: [
        { index: 1, id: null, statusCode: 400, errors: ["name must not contain a comma"] },
        { index: 3, id: null, statusCode: 404, errors: ["no tag named 'missing' to rename"] },
        { index: 4, id: other.id, statusCode: 409, errors: ["a tag named 'existing' already exists"] },
      ],
    });
    expect(await dbTags(t.accountId)).toEqual([
      { id: r.body.success[0].id, name: "created", description: null, type: "USER" },
      { id: existing.id, name: "existing", description: "updated", type: "USER" },
      { id: other.id, name: "other", description: null, type: "USER" },
    ]);
  });

  it("207 with no success when all items fail with different statuses", async () => {
    const t = await tenant();
    await createTags(t, [{ name: "p" }, { name: "q" }]);
    const before = await dbState(t.accountId);
    const r = await put(t, [
      { name: "nope", newName: "x" },
      { name: "p", newName: "q" },
    ]);
    expectJson(r, 207);
    expect(r.body.success).toEqual([]);
    expect(r.body.failure.map((f: any) => [f.index, f.statusCode])).toEqual([
      [0, 404],
      [1, 409],
    ]);
    expect(await dbState(t.accountId)).toEqual(before);
  });

  it("all items failing alike: that status, one error per item", async () => {
    const t = await tenant();
    const r = await put(t, [{ name: "a,1" }, { name: "b,2" }]);
    expectProblem(r, 400, "All 2 items failed; see errors.");
    expect(r.body.errors).toEqual([
      { path: "[0]", message: "name must not contain a comma" },
      { path: "[1]", message: "name must not contain a comma" },
    ]);
    expect(await dbTags(t.accountId)).toEqual([]);
  });
});

describe("bad input on PUT /tags", () => {
  it("malformed JSON, non-array bodies and non-object items are 400s; nothing written", async () => {
    const t = await tenant();
    const json = { ...t.headers, "content-type": "application/json" };
    expectProblem(await req(tags(t), { method: "PUT", headers: json, raw: '[{"name": "x"' }), 400, /^Malformed JSON body/);
    expectProblem(
      await req(tags(t), { method: "PUT", headers: json, raw: '{"name": "x"}' }),
      400,
      "body must be a JSON array of objects (send Content-Type: application/json)",
    );
    expectProblem(await req(tags(t), { method: "PUT", headers: json, raw: '"x"' }), 400);
    expectProblem(await req(tags(t), { method: "PUT", headers: json, raw: "[]" }), 400, "body must hold at least one item");
    expectProblem(await req(tags(t), { method: "PUT", headers: json, raw: '[{"name": "x"}, "y"]' }), 400, "body[1] must be an object");
    expectProblem(await req(tags(t), { method: "PUT", headers: json, raw: '[{"name": "x"}, null]' }), 400, "body[1] must be an object");
    expect(await dbTags(t.accountId)).toEqual([]);
  });

  it.each([
    [{ name: 5 }, /^body\[1\]\.name: String cannot represent a non string value: 5$/],
    [{ name: "x", description: true }, /^body\[1\]\.description: String cannot represent a non string value: true$/],
    [{ name: "x", newName: ["y"] }, /^body\[1\]\.newName: /],
    [{ name: "x", colour: "red" }, /colour/],
    [{ name: "x", type: "PAGE" }, /type/],
    [{ name: "x", id: "t_1" }, /\bid\b/],
  ])("item %j is a 400; nothing written", async (item, detail) => {
    const t = await tenant();
    const r = await put(t, [{ name: "fine" }, item]);
    expectProblem(r, 400, detail);
    expect(r.body.detail).not.toMatch(/\$input|Variable/);
    expect(await dbTags(t.accountId)).toEqual([]);
  });

  it("10,001 items is a 400 and nothing is written; 10,000 is accepted", async () => {
    const t = await tenant();
    const items = Array.from({ length: 10_001 }, (_, i) => ({ name: `bulk${String(i).padStart(5, "0")}` }));
    expectProblem(await put(t, items), 400, "body must hold at most 10000 items");
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(0);
    const ok = await put(t, items.slice(0, 10_000));
    expectJson(ok, 201);
    expect(ok.body.data).toHaveLength(10_000);
    expect(ok.body.data[9_999].name).toBe("bulk09999");
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(10_000);
  }, 120_000);

  it("a 200 KB name or description is a 400 and nothing is written", async () => {
    const t = await tenant();
    const big = "x".repeat(200 * 1024);
    expectProblem(await put(t, [{ name: big }]), 400, "name must be at most 100 characters");
    expectProblem(await put(t, [{ name: "ok", description: big }]), 400, "description must be at most 2000 characters");
    expectProblem(await put(t, [{ name: "ok", newName: big }]), 400, "newName must be at most 100 characters");
    expect(await dbTags(t.accountId)).toEqual([]);
  });

  it("a body over 10 MiB is a 413; nothing written", async () => {
    const t = await tenant();
    const raw = JSON.stringify([{ name: "x", description: "y".repeat(10 * 1024 * 1024 + 10) }]);
    expectProblem(
      await req(tags(t), { method: "PUT", headers: { ...t.headers, "content-type": "application/json" }, raw }),
      413,
      "Request body larger than the limit (10 MiB for JSON).",
    );
    expect(await dbTags(t.accountId)).toEqual([]);
  });

  it("a missing or non-JSON content-type is a 415; nothing written", async () => {
    const t = await tenant();
    const raw = JSON.stringify([{ name: "x" }]);
    expectProblem(await req(tags(t), { method: "PUT", headers: t.headers, raw }), 415, "Send the body as JSON with Content-Type: application/json.");
    expectProblem(await req(tags(t), { method: "PUT", headers: { ...t.headers, "content-type": "text/plain" }, raw }), 415);
    expectProblem(await req(tags(t), { method: "PUT", headers: { ...t.headers, "content-type": "application/x-www-form-urlencoded" }, raw: "name=x" }), 415);
    expect(await dbTags(t.accountId)).toEqual([]);
  });

  it("POST and PATCH on /tags are not allowed (405 with Allow)", async () => {
    const t = await tenant();
    for (const method of ["POST", "PATCH"]) {
      const r = await req(tags(t), { method, headers: t.headers, body: [{ name: "x" }] });
      expectProblem(r, 405);
      expect(r.headers.get("allow")).toBe("PUT, GET, HEAD, OPTIONS");
    }
    expect(await dbTags(t.accountId)).toEqual([]);
  });
});

// ---- GET /tags ------------------------------------------------------------------------------------------

describe("GET /v1/accounts/{accountId}/tags", () => {
  const names = Array.from({ length: 12 }, (_, i) => `tag${String(i).padStart(2, "0")}`);

  it("an account without tags: empty page", async () => {
    const t = await tenant();
    const r = await req(tags(t), { headers: t.headers });
    expectJson(r, 200);
    expect(r.body).toEqual({ data: [], cursor: null });
  });

  it("10 tags by default, ordered by name whatever the creation order, with the full record", async () => {
    const t = await tenant();
    const shuffled = [5, 11, 0, 7, 3, 9, 1, 10, 2, 8, 4, 6].map((i) => names[i]!);
    await createTags(
      t,
      shuffled.map((name) => ({ name, description: `d-${name}` })),
    );
    const page = await mkTag(t, "tag99", "PAGE");
    const all = await dbTags(t.accountId);
    const r = await req(tags(t), { headers: t.headers });
    expectJson(r, 200);
    expect(r.body.data).toEqual(all.slice(0, 10));
    expect(r.body.data.map((x: any) => x.name)).toEqual(names.slice(0, 10));
    expect(r.body.data[0]).toEqual({ id: expect.stringMatching(/^t_/), name: "tag00", description: "d-tag00", type: "USER" });
    expect(typeof r.body.cursor).toBe("string");
    const next = await req(`${tags(t)}?cursor=${encodeURIComponent(r.body.cursor)}`, { headers: t.headers });
    expectJson(next, 200);
    expect(next.body).toEqual({ data: [...all.slice(10, 12), { id: page.id, name: "tag99", description: null, type: "PAGE" }], cursor: null });
  });

  it("a cursor walk returns every tag once, in name order, also with tags created between pages", async () => {
    const t = await tenant();
    await createTags(
      t,
      names.map((name) => ({ name })),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const r: Reply = await req(`${tags(t)}?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers: t.headers });
      expectJson(r, 200);
      seen.push(...r.body.data.map((x: any) => x.name));
      cursor = r.body.cursor;
      page++;
      // after page 1 (tag00..tag04): one tag sorting after the cursor, one before it
      if (page === 1) await createTags(t, [{ name: "tag05b" }, { name: "tag00b" }]);
      expect(page).toBeLessThan(20);
    } while (cursor);
    expect(seen).toEqual([...names.slice(0, 6), "tag05b", ...names.slice(6)]);
    expect(new Set(seen).size).toBe(seen.length);
    const full = await req(`${tags(t)}?limit=10000`, { headers: t.headers });
    expect(full.body.data.map((x: any) => x.name)).toEqual(["tag00", "tag00b", ...names.slice(1, 6), "tag05b", ...names.slice(6)]);
    expect(full.body.cursor).toBeNull();
  });

  it.each([
    ["limit=0", "limit must be between 1 and 10000"],
    ["limit=10001", "limit must be between 1 and 10000"],
    ["limit=abc", "limit must be an integer"],
    ["cursor=!!!", /^cursor is malformed/],
    [`cursor=${b64({ x: 1 })}`, /^cursor is malformed/],
    [`cursor=${b64([1700000000000, "c_1"])}`, "cursor does not belong to this list"],
  ])("%s is a 400", async (query, detail) => {
    const t = await tenant();
    await createTags(t, [{ name: "a" }]);
    const r = await req(`${tags(t)}?${query}`, { headers: t.headers });
    expectProblem(r, 400, detail);
  });

  it("a content-list cursor is refused, a tag cursor from another account only positions the walk", async () => {
    const a = await tenant();
    const b = await tenant();
    await createTags(a, [{ name: "a1" }, { name: "a2" }, { name: "a3" }]);
    await createTags(b, [{ name: "a1" }, { name: "b2" }]);
    const bPage = await req(`${tags(b)}?limit=1`, { headers: b.headers });
    const r = await req(`${tags(a)}?cursor=${encodeURIComponent(bPage.body.cursor)}`, { headers: a.headers });
    expectJson(r, 200);
    expect(r.body.data.map((x: any) => x.name)).toEqual(["a2", "a3"]);
  });
});

// ---- DELETE /tags/{names} ---------------------------------------------------------------------------------

describe("DELETE /v1/accounts/{accountId}/tags/{names}", () => {
  it("204 when all are deleted: rows gone, content keeps existing without the tags", async () => {
    const t = await tenant();
    const [, , keep] = await createTags(t, [{ name: "d1" }, { name: "d2" }, { name: "keep" }]);
    const contentId = await contentWithTags(t, ["d1", "d2", "keep"]);
    const r = await req(`${tags(t)}/d1,d2`, { method: "DELETE", headers: t.headers });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(await dbTags(t.accountId)).toEqual([keep]);
    expect((await prisma.contentTag.findMany({ where: { contentId } })).map((l) => l.tagId)).toEqual([keep.id]);
    expect(await contentTagNames(t, contentId)).toEqual(["keep"]);
  });

  it("204 for tags of any type, and for names that need URL encoding", async () => {
    const t = await tenant();
    await mkTag(t, "a page", "PAGE");
    await mkTag(t, "rôle/x", "ROLE");
    await createTags(t, [{ name: "50% off" }]);
    const r = await req(`${tags(t)}/${encodeURIComponent("a page")},${encodeURIComponent("rôle/x")},${encodeURIComponent("50% off")}`, {
      method: "DELETE",
      headers: t.headers,
    });
    expect(r.status, r.text).toBe(204);
    expect(await dbTags(t.accountId)).toEqual([]);
  });

  it("404 when none is found; nothing deleted", async () => {
    const t = await tenant();
    const created = await createTags(t, [{ name: "stay" }]);
    const r = await req(`${tags(t)}/nope`, { method: "DELETE", headers: t.headers });
    expectProblem(r, 404, "no tag named 'nope'");
    expect(r.body.errors).toEqual([{ path: "[0]", message: "no tag named 'nope'" }]);
    const two = await req(`${tags(t)}/x,y`, { method: "DELETE", headers: t.headers });
    expectProblem(two, 404, "All 2 items failed; see errors.");
    expect(await dbTags(t.accountId)).toEqual(created);
  });

  it("207 when some are found", async () => {
    const t = await tenant();
    const [gone, stay] = await createTags(t, [{ name: "gone" }, { name: "stay" }]);
    const r = await req(`${tags(t)}/missing,gone`, { method: "DELETE", headers: t.headers });
    expectJson(r, 207);
    expect(r.body).toEqual({
      success: [{ index: 1, id: gone.id, statusCode: 204 }],
      failure: [{ index: 0, id: "missing", statusCode: 404, errors: ["no tag named 'missing'"] }],
    });
    expect(await dbTags(t.accountId)).toEqual([stay]);
  });

  it("1,000 names in one path: 204, then 404, then 207", async () => {
    const t = await tenant();
    const names = Array.from({ length: 1_000 }, (_, i) => `n${String(i).padStart(3, "0")}`);
    await createTags(
      t,
      names.map((name) => ({ name })),
    );
    const keep = await createTags(t, [{ name: "zz-keep" }]);
    const r = await req(`${tags(t)}/${names.join(",")}`, { method: "DELETE", headers: t.headers });
    expect(r.status, r.text.slice(0, 300)).toBe(204);
    expect(await dbTags(t.accountId)).toEqual(keep);
    const none = await req(`${tags(t)}/${names.join(",")}`, { method: "DELETE", headers: t.headers });
    expectProblem(none, 404, "All 1000 items failed; see errors.");
    const some = await req(`${tags(t)}/${[...names, "zz-keep"].join(",")}`, { method: "DELETE", headers: t.headers });
    expectJson(some, 207);
    expect(some.body.success).toEqual([{ index: 1_000, id: keep[0].id, statusCode: 204 }]);
    expect(some.body.failure).toHaveLength(1_000);
    expect(await dbTags(t.accountId)).toEqual([]);
  }, 60_000);

  it("400 for an empty entry; nothing deleted", async () => {
    const t = await tenant();
    const created = await createTags(t, [{ name: "a" }, { name: "b" }]);
    expectProblem(await req(`${tags(t)}/a,,b`, { method: "DELETE", headers: t.headers }), 400, "names must be a comma-separated list without empty entries");
    expectProblem(await req(`${tags(t)}/a,`, { method: "DELETE", headers: t.headers }), 400);
    expect(await dbTags(t.accountId)).toEqual(created);
  });
});

// ---- auth and tenant isolation ---------------------------------------------------------------------------

describe("auth on the tag routes", () => {
  let owner: Tenant;
  let other: Tenant;
  beforeAll(async () => {
    owner = await tenant("town");
    other = await tenant("toth");
    await createTags(owner, [{ name: "secret", description: "owner's" }, { name: "shared" }]);
    await contentWithTags(owner, ["secret"]);
  });

  const routesFor = (acc: string): [string, string, string, unknown][] => [
    ["list", "GET", tags(acc), undefined],
    ["upsert", "PUT", tags(acc), [{ name: "secret", newName: "pwned", description: "x" }, { name: "planted" }]],
    ["delete", "DELETE", `${tags(acc)}/secret,shared`, undefined],
  ];

  async function expectAllRoutes(headers: Record<string, string>, status: number, acc = owner.accountId) {
    const before = await dbState(owner.accountId);
    for (const [name, method, path, body] of routesFor(acc)) {
      const r = await req(path, { method, headers, body });
      expect(r.status, `${name}: ${r.text}`).toBe(status);
      expectProblem(r, status);
    }
    expect(await dbState(owner.accountId)).toEqual(before);
  }

  it("401 without headers", () => expectAllRoutes({}, 401));

  it("401 with a wrong key", () =>
    expectAllRoutes({ "x-service-integration-key": "ggk_wrongwrongwrongwrongwrongwrongwrongwrongwro", "x-service-user": owner.email }, 401));

  it("401 when the e-mail is not the key owner's", () => expectAllRoutes({ "x-service-integration-key": owner.key, "x-service-user": other.email }, 401));

  it("401 with a revoked key", async () => {
    const { key } = await createKey(owner.email);
    await revokeKey(key.slice(0, 12));
    await expectAllRoutes({ "x-service-integration-key": key, "x-service-user": owner.email }, 401);
  });

  it("401 with an expired key", async () => {
    const { key } = await createKey(owner.email, { ttlSeconds: 60 });
    await write((tx) => tx.apiKey.update({ where: { prefix: key.slice(0, 12) }, data: { expiresAt: new Date(Date.now() - 1) } }));
    await expectAllRoutes({ "x-service-integration-key": key, "x-service-user": owner.email }, 401);
  });

  it("403 for another account's valid key; the account is unchanged", async () => {
    await expectAllRoutes(other.headers, 403);
    await expectAllRoutes(other.headers, 403, "missing-account");
  });

  it("A's tag routes never touch B's tags of the same names", async () => {
    const a = await tenant("ta");
    const b = await tenant("tb");
    const bTags = await createTags(b, [{ name: "common", description: "b's" }, { name: "b-only" }]);
    const bContent = await contentWithTags(b, ["common", "b-only"]);
    const before = await dbState(b.accountId);

    // Same name in A: a new tag of A's, not an update of B's.
    const created = await put(a, [{ name: "common", description: "a's" }]);
    expectJson(created, 201);
    expect(created.body.data[0].id).not.toBe(bTags[0].id);
    // Renaming or deleting B's names through A's path finds nothing.
    expectProblem(await put(a, [{ name: "b-only", newName: "stolen" }]), 404, "no tag named 'b-only' to rename");
    expectProblem(await req(`${tags(a)}/b-only`, { method: "DELETE", headers: a.headers }), 404);
    // A may take a name B uses.
    const renamed = await put(a, [{ name: "common", newName: "b-only" }]);
    expectJson(renamed, 200);
    const list = await req(tags(a), { headers: a.headers });
    expect(list.body.data).toEqual([{ id: created.body.data[0].id, name: "b-only", description: "a's", type: "USER" }]);
    expect((await req(`${tags(a)}/b-only`, { method: "DELETE", headers: a.headers })).status).toBe(204);

    expect(await dbState(b.accountId)).toEqual(before);
    expect(await contentTagNames(b, bContent)).toEqual(["b-only", "common"]);
    expect(await dbTags(a.accountId)).toEqual([]);
  });
});

describe("CORS on the tag routes", () => {
  it.each(["GET", "PUT", "DELETE"])("preflight for %s", async (method) => {
    const res = await fetch(`${server.url}${tags("x")}${method === "DELETE" ? "/a,b" : ""}`, {
      method: "OPTIONS",
      headers: {
        origin: "https://dash.example",
        "access-control-request-method": method,
        "access-control-request-headers": "x-service-integration-key, x-service-user",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["x-service-integration-key", "x-service-user"]));
  });
});
