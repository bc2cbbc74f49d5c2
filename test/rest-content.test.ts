// REST content routes, both path styles, over real HTTP: every route of the content rows of
// src/rest/routes.ts and every status each can answer, with the database checked after each call.
import { STATUS_CODES } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, createUser, revokeKey } from "../src/admin.js";
import { withTransaction } from "../src/db/index.js";
import { newId } from "../src/ids.js";
import { gql, prisma, requester, startServer, tenant, type Reply, type Server, type Tenant } from "./helpers.js";

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

// ---- helpers ---------------------------------------------------------------------------------------

/** Direct database writes, for fixtures the REST layer cannot make (the shared client audits every change). */
const write = withTransaction;

const req = requester(() => server);

const pathA = (t: Tenant | string) => `/api/v1/${typeof t === "string" ? t : t.accountId}`;
const pathB = (t: Tenant | string) => `/v1/accounts/${typeof t === "string" ? t : t.accountId}`;

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

async function mkTag(t: Tenant, name: string, type: "USER" | "PAGE" | "ROLE" = "USER") {
  return write((tx) => tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name, type } }));
}

/** A content row written straight to the database (types and times the REST layer cannot write). */
async function mkContent(t: Tenant, data: { title?: string; type?: string; state?: string; createdAt?: Date; updatedAt?: Date } = {}) {
  const state = data.state ?? "draft";
  const createdAt = data.createdAt ?? new Date();
  return write((tx) =>
    tx.content.create({
      data: {
        id: newId("c"),
        accountId: t.accountId,
        title: data.title ?? "seeded",
        type: data.type ?? "text",
        state,
        stage: state === "production" ? "production" : "design",
        createdAt,
        updatedAt: data.updatedAt ?? createdAt,
      },
    }),
  );
}

/** Everything an account holds, for "nothing changed" assertions. */
async function dbState(accountId: string) {
  const contents = await prisma.content.findMany({ where: { accountId }, include: { tags: true }, orderBy: { id: "asc" } });
  const tags = await prisma.tag.findMany({ where: { accountId }, orderBy: { id: "asc" } });
  return {
    contents: contents.map(({ tags: links, ...c }) => ({ ...c, tags: links.map((l) => l.tagId).sort() })),
    tags,
  };
}

const contentCount = (t: Tenant) => prisma.content.count({ where: { accountId: t.accountId } });

/** The wire record of a content as the database holds it. */
async function dbRecord(id: string, style: "A" | "B") {
  const c = await prisma.content.findUniqueOrThrow({ where: { id }, include: { tags: { include: { tag: true } } } });
  const tags = c.tags.map((l) => l.tag).sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return {
    id: c.id,
    title: c.title,
    type: c.type,
    url: c.url,
    source: c.source,
    description: c.description,
    description_md: c.descriptionMd,
    tags: tags.map((tag) => (style === "A" ? tag.id : tag.name)),
    state: c.state,
    stage: c.stage,
    parentId: c.parentId,
    creationTime: c.createdAt.getTime(),
    lastUpdateTime: c.updatedAt.getTime(),
  };
}

async function createA(t: Tenant, items: object[]): Promise<any[]> {
  const r = await req(`${pathA(t)}/content`, { method: "POST", headers: t.headers, body: items });
  expectJson(r, 201);
  return r.body.data;
}

/** Follows cursors from the first page; `between(n)` runs after page n. */
async function walk(t: Tenant, path: string, limit: number, between?: (page: number) => Promise<void>) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  let page = 0;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const r: Reply = await req(`${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers: t.headers });
    expectJson(r, 200);
    ids.push(...r.body.data.map((d: { id: string }) => d.id));
    sizes.push(r.body.data.length);
    cursor = r.body.cursor;
    if (cursor !== null) expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    page++;
    if (between) await between(page);
    expect(page).toBeLessThan(100);
  } while (cursor);
  return { ids, sizes };
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

// ---- style A: list ------------------------------------------------------------------------------------

describe("GET /api/v1/{accountId}/content", () => {
  it("answers an empty page for an account without content", async () => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content`, { headers: t.headers });
    expectJson(r, 200);
    expect(r.body).toEqual({ data: [], cursor: null });
  });

  it("returns 10 rows by default, in creation order, with the full record shape", async () => {
    const t = await tenant();
    const tag = await mkTag(t, "alpha");
    const created = await createA(
      t,
      Array.from({ length: 11 }, (_, i) => ({ title: `t${i}`, type: "text", ...(i === 0 ? { tags: [tag.id] } : {}) })),
    );
    expect(created.map((c) => c.title)).toEqual(Array.from({ length: 11 }, (_, i) => `t${i}`));

    const r = await req(`${pathA(t)}/content`, { headers: t.headers });
    expectJson(r, 200);
    expect(r.body.data).toHaveLength(10);
    expect(r.body.data.map((c: any) => c.id)).toEqual(created.slice(0, 10).map((c) => c.id));
    expect(typeof r.body.cursor).toBe("string");
    expect(r.body.data[0]).toEqual(await dbRecord(created[0].id, "A"));
    expect(r.body.data[0]).toEqual({
      id: created[0].id,
      title: "t0",
      type: "text",
      url: null,
      source: null,
      description: null,
      description_md: null,
      tags: [tag.id],
      state: "draft",
      stage: "design",
      parentId: null,
      creationTime: expect.any(Number),
      lastUpdateTime: expect.any(Number),
    });
    expect(Object.keys(r.body.data[0]).sort()).toEqual([
      "creationTime",
      "description",
      "description_md",
      "id",
      "lastUpdateTime",
      "parentId",
      "source",
      "stage",
      "state",
      "tags",
      "title",
      "type",
      "url",
    ]);

    const next = await req(`${pathA(t)}/content?cursor=${encodeURIComponent(r.body.cursor)}`, { headers: t.headers });
    expectJson(next, 200);
    expect(next.body).toEqual({ data: [await dbRecord(created[10].id, "A")], cursor: null });
  });

  it("accepts limit 1 and the maximum 10000", async () => {
    const t = await tenant();
    const created = await createA(t, [
      { title: "a", type: "text" },
      { title: "b", type: "text" },
      { title: "c", type: "text" },
    ]);
    const one = await req(`${pathA(t)}/content?limit=1`, { headers: t.headers });
    expectJson(one, 200);
    expect(one.body.data.map((c: any) => c.id)).toEqual([created[0].id]);
    expect(one.body.cursor).not.toBeNull();
    const max = await req(`${pathA(t)}/content?limit=10000`, { headers: t.headers });
    expectJson(max, 200);
    expect(max.body.data.map((c: any) => c.id)).toEqual(created.map((c) => c.id));
    expect(max.body.cursor).toBeNull();
    const exact = await req(`${pathA(t)}/content?limit=3`, { headers: t.headers });
    expect(exact.body.cursor).toBeNull();
  });

  it.each([
    ["0", "limit must be between 1 and 10000"],
    ["10001", "limit must be between 1 and 10000"],
    ["-1", "limit must be between 1 and 10000"],
    ["abc", "limit must be an integer"],
    ["1.5", "limit must be an integer"],
    ["1e3", "limit must be an integer"],
    ["99999999999999999999", "limit is out of range"],
  ])("limit=%s is a 400 problem", async (limit, detail) => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content?limit=${limit}`, { headers: t.headers });
    expectProblem(r, 400, detail);
    expect(r.body.errors).toEqual([{ path: "limit", message: detail.replace(/^limit /, "") }]);
  });

  it("a repeated limit is a 400", async () => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content?limit=1&limit=2`, { headers: t.headers });
    expectProblem(r, 400);
    expect(r.body.errors[0].path).toBe("limit");
  });

  it("a cursor walk returns every row exactly once, across rows created in one request", async () => {
    const t = await tenant();
    const created = await createA(
      t,
      Array.from({ length: 10 }, (_, i) => ({ title: `w${i}`, type: "text" })),
    );
    const { ids, sizes } = await walk(t, `${pathA(t)}/content`, 3);
    expect(ids).toEqual(created.map((c) => c.id));
    expect(sizes).toEqual([3, 3, 3, 1]);
    const exact = await walk(t, `${pathA(t)}/content`, 5);
    expect(exact.sizes).toEqual([5, 5]);
    expect(exact.ids).toEqual(created.map((c) => c.id));
  });

  it("a cursor walk stays exact while rows are inserted between page fetches", async () => {
    const t = await tenant();
    const initial = await createA(
      t,
      Array.from({ length: 7 }, (_, i) => ({ title: `i${i}`, type: "link", url: `https://e.example/${i}` })),
    );
    const inserted: string[] = [];
    let backdated = "";
    const { ids } = await walk(t, `${pathA(t)}/content`, 3, async (page) => {
      if (page === 1)
        inserted.push(
          ...(
            await createA(t, [
              { title: "n1", type: "text" },
              { title: "n2", type: "text" },
            ])
          ).map((c) => c.id),
        );
      if (page === 2) {
        inserted.push(...(await createA(t, [{ title: "n3", type: "text" }])).map((c) => c.id));
        // A row sorting before the cursor is not seen by this walk, and nothing is repeated.
        backdated = (await mkContent(t, { title: "old", createdAt: new Date("2001-01-01T00:00:00Z") })).id;
      }
    });
    expect(ids).toEqual([...initial.map((c) => c.id), ...inserted]);
    expect(new Set(ids).size).toBe(ids.length);
    const again = await walk(t, `${pathA(t)}/content`, 4);
    expect(again.ids).toEqual([backdated, ...initial.map((c) => c.id), ...inserted]);
  });

  it.each([
    ["not base64url", "!!!"],
    ["not JSON", "Zm9v"],
    ["wrong shape", b64({ a: 1 })],
    ["wrong tuple", b64([1, 2])],
    ["a tag-list cursor", b64(["alpha", "t_1"])],
    ["a time out of range", b64([9e15, "c_1"])],
    ["a negative time out of range", b64([-9e15, "c_1"])],
  ])("a garbage cursor (%s) is a 400", async (_what, cursor) => {
    const t = await tenant();
    await createA(t, [{ title: "x", type: "text" }]);
    const r = await req(`${pathA(t)}/content?cursor=${encodeURIComponent(cursor)}`, { headers: t.headers });
    expectProblem(r, 400, /cursor/);
    expect(r.body.errors).toEqual([{ path: "cursor", message: expect.any(String) }]);
  });

  it("never lists another account's content", async () => {
    const a = await tenant();
    const b = await tenant();
    await createA(b, [{ title: "b-only", type: "text" }]);
    const mine = await createA(a, [{ title: "a-only", type: "text" }]);
    const r = await req(`${pathA(a)}/content?limit=10000`, { headers: a.headers });
    expect(r.body.data.map((c: any) => c.id)).toEqual([mine[0].id]);
  });
});

// ---- style A: create -----------------------------------------------------------------------------------

describe("POST /api/v1/{accountId}/content", () => {
  it("201: creates links, videos and text in request order, tags given as tag ids", async () => {
    const t = await tenant();
    const alpha = await mkTag(t, "alpha");
    const beta = await mkTag(t, "beta", "PAGE");
    const before = Date.now();
    const r = await req(`${pathA(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [
        { title: "Link", type: "link", url: "https://docs.example/a", description: "about a", tags: [beta.id, alpha.id, alpha.id] },
        { title: "Video", type: "video", url: "https://video.example/v" },
        { title: "Text", type: "text", description_md: "# hi", state: "ready" },
        { title: "KB", type: "link", url: "http://kb.example/x", source: "knowledgebase", state: "production" },
      ],
    });
    expectJson(r, 201);
    expect(Object.keys(r.body)).toEqual(["data"]);
    const [link, video, text, kb] = r.body.data;
    for (const c of r.body.data) {
      expect(c.id).toMatch(/^c_/);
      expect(c.creationTime).toBeGreaterThanOrEqual(before - 5);
      expect(c.lastUpdateTime).toBe(c.creationTime);
      expect(c).toEqual(await dbRecord(c.id, "A"));
    }
    expect(link).toMatchObject({
      title: "Link",
      type: "link",
      url: "https://docs.example/a",
      source: "default",
      description: "about a",
      description_md: null,
      tags: [alpha.id, beta.id],
      state: "draft",
      stage: "design",
      parentId: null,
    });
    expect(video).toMatchObject({
      title: "Video",
      type: "video",
      url: "https://video.example/v",
      source: null,
      description: null,
      tags: [],
      state: "draft",
      stage: "design",
    });
    expect(text).toMatchObject({ title: "Text", type: "text", url: null, description_md: "# hi", tags: [], state: "ready", stage: "design" });
    expect(kb).toMatchObject({ title: "KB", source: "knowledgebase", state: "production", stage: "production" });

    const rows = await prisma.content.findMany({ where: { accountId: t.accountId }, include: { tags: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    expect(rows.map((c) => c.id)).toEqual([link.id, video.id, text.id, kb.id]);
    expect(rows[0]!.tags.map((l) => l.tagId).sort()).toEqual([alpha.id, beta.id].sort());
    expect(rows[2]!.descriptionMd).toBe("# hi");
  });

  it("207: mixed outcome lists each item once with its index, and writes only the valid items", async () => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [
        { title: "ok1", type: "text" },
        { type: "text" },
        { title: "ok2", type: "link", url: "https://x.example" },
        { title: "vid", type: "video", url: "https://v.example", description: "no" },
      ],
    });
    expectJson(r, 207);
    expect(r.body).toEqual({
      success: [
        { index: 0, id: expect.stringMatching(/^c_/), statusCode: 201 },
        { index: 2, id: expect.stringMatching(/^c_/), statusCode: 201 },
      ],
      failure: [
        { index: 1, id: null, statusCode: 400, errors: ["title is required"] },
        { index: 3, id: null, statusCode: 400, errors: ["description is not allowed on video content"] },
      ],
    });
    const rows = await prisma.content.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } });
    expect(rows.map((c) => c.id)).toEqual([r.body.success[0].id, r.body.success[1].id]);
    expect(rows.map((c) => c.title)).toEqual(["ok1", "ok2"]);
  });

  it("all items failing with one status answer that status with a problem listing every item", async () => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [{ type: "text" }, { title: "no url", type: "link" }],
    });
    expectProblem(r, 400, "All 2 items failed; see errors.");
    expect(r.body.errors).toEqual([
      { path: "[0]", message: "title is required" },
      { path: "[1]", message: "url is required for link content" },
    ]);
    expect(await contentCount(t)).toBe(0);
  });

  it.each([
    ["an unknown tag id", { title: "x", type: "text", tags: ["t_nope"] }, ["unknown tag id 't_nope'"]],
    ["a video with a description", { title: "v", type: "video", url: "https://v.example", description: "d" }, ["description is not allowed on video content"]],
    ["a flow (not a static type)", { title: "f", type: "flow" }, ["type 'flow' cannot be written here (allowed: link, video, text)"]],
    ["a folder", { title: "f", type: "folder" }, ["type 'folder' cannot be written here (allowed: link, video, text)"]],
    ["an id", { id: "c_mine", title: "x", type: "text" }, ["id must not be given when creating (it is assigned)"]],
    ["no type", { title: "x" }, ["type is required (one of link, video, text)"]],
    ["a blank title", { title: "   ", type: "text" }, ["title is required"]],
    ["a non-http url", { title: "x", type: "link", url: "ftp://files.example/a" }, ["url must be an absolute http(s) URL"]],
    ["source on a video", { title: "x", type: "video", url: "https://v.example", source: "default" }, ["source is allowed on link content only"]],
    [
      "description_md on a link",
      { title: "x", type: "link", url: "https://l.example", description_md: "m" },
      ["description_md is allowed on text content only"],
    ],
    ["an unknown parent", { title: "x", type: "text", parentId: "c_nope" }, ["unknown parent 'c_nope'"]],
  ])("400 for %s, nothing written", async (_what, item, errors) => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content`, { method: "POST", headers: t.headers, body: [item] });
    expectProblem(r, 400, errors.join("; "));
    expect(r.body.errors).toEqual(errors.map((message) => ({ path: "[0]", message })));
    expect(await contentCount(t)).toBe(0);
  });

  it("an unknown tag id fails its own item only (207)", async () => {
    const t = await tenant();
    const tag = await mkTag(t, "known");
    const r = await req(`${pathA(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [
        { title: "a", type: "text", tags: [tag.id] },
        { title: "b", type: "text", tags: [tag.id, "t_unknown"] },
      ],
    });
    expectJson(r, 207);
    expect(r.body.failure).toEqual([{ index: 1, id: null, statusCode: 400, errors: ["unknown tag id 't_unknown'"] }]);
    const rows = await prisma.content.findMany({ where: { accountId: t.accountId }, include: { tags: true } });
    expect(rows.map((c) => [c.title, c.tags.map((l) => l.tagId)])).toEqual([["a", [tag.id]]]);
  });

  it("tag names are not tag ids in style A", async () => {
    const t = await tenant();
    await mkTag(t, "byname");
    const r = await req(`${pathA(t)}/content`, { method: "POST", headers: t.headers, body: [{ title: "a", type: "text", tags: ["byname"] }] });
    expectProblem(r, 400, "unknown tag id 'byname'");
    expect(await contentCount(t)).toBe(0);
  });

  it("places content in a folder of the account", async () => {
    const t = await tenant();
    const folder = await mkContent(t, { type: "folder", title: "F" });
    const notFolder = await mkContent(t, { type: "text", title: "T" });
    const r = await req(`${pathA(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [
        { title: "in", type: "text", parentId: folder.id },
        { title: "bad", type: "text", parentId: notFolder.id },
      ],
    });
    expectJson(r, 207);
    expect(r.body.failure).toEqual([{ index: 1, id: null, statusCode: 400, errors: [`parent '${notFolder.id}' is not a folder`] }]);
    const child = await prisma.content.findUniqueOrThrow({ where: { id: r.body.success[0].id } });
    expect(child.parentId).toBe(folder.id);
  });
});

// ---- style A: update ----------------------------------------------------------------------------------

describe("PUT /api/v1/{accountId}/content", () => {
  it("200: updates the given fields, replaces tags, leaves the rest as it was", async () => {
    const t = await tenant();
    const [x, y, z] = [await mkTag(t, "x"), await mkTag(t, "y"), await mkTag(t, "z")];
    const [link] = await createA(t, [{ title: "Old", type: "link", url: "https://old.example", description: "keep", tags: [x.id, y.id] }]);
    await new Promise((r) => setTimeout(r, 5));
    const r = await req(`${pathA(t)}/content`, {
      method: "PUT",
      headers: t.headers,
      body: [{ id: link.id, title: "New", tags: [z.id, y.id], state: "production" }],
    });
    expectJson(r, 200);
    expect(r.body.data).toHaveLength(1);
    const rec = r.body.data[0];
    expect(rec).toEqual(await dbRecord(link.id, "A"));
    expect(rec).toMatchObject({
      id: link.id,
      title: "New",
      type: "link",
      url: "https://old.example",
      source: "default",
      description: "keep",
      tags: [y.id, z.id],
      state: "production",
      stage: "production",
      creationTime: link.creationTime,
    });
    expect(rec.lastUpdateTime).toBeGreaterThan(link.lastUpdateTime);
    const links = await prisma.contentTag.findMany({ where: { contentId: link.id } });
    expect(links.map((l) => l.tagId).sort()).toEqual([y.id, z.id].sort());
  });

  it("200 for several items, in request order; tags: [] clears, null clears a field", async () => {
    const t = await tenant();
    const tag = await mkTag(t, "only");
    const [a, b] = await createA(t, [
      { title: "a", type: "text", tags: [tag.id], description: "d" },
      { title: "b", type: "link", url: "https://b.example", description: "bd" },
    ]);
    const r = await req(`${pathA(t)}/content`, {
      method: "PUT",
      headers: t.headers,
      body: [
        { id: b.id, description: null },
        { id: a.id, tags: [] },
      ],
    });
    expectJson(r, 200);
    expect(r.body.data.map((c: any) => c.id)).toEqual([b.id, a.id]);
    expect(r.body.data[0].description).toBeNull();
    expect(r.body.data[1].tags).toEqual([]);
    expect((await prisma.content.findUniqueOrThrow({ where: { id: b.id } })).description).toBeNull();
    expect(await prisma.contentTag.count({ where: { contentId: a.id } })).toBe(0);
    expect((await prisma.content.findUniqueOrThrow({ where: { id: a.id } })).description).toBe("d");
  });

  it("404 for an unknown id", async () => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: "c_nope", title: "x" }] });
    expectProblem(r, 404, "no content with id 'c_nope'");
    expect(r.body.errors).toEqual([{ path: "[0]", message: "no content with id 'c_nope'" }]);
    expect(await contentCount(t)).toBe(0);
  });

  it("207 for a mix of updated, unknown and invalid items; only the valid one is written", async () => {
    const t = await tenant();
    const [a, b, c] = await createA(t, [
      { title: "a", type: "text" },
      { title: "b", type: "video", url: "https://v.example" },
      { title: "c", type: "link", url: "https://c.example" },
    ]);
    const before = await dbState(t.accountId);
    const r = await req(`${pathA(t)}/content`, {
      method: "PUT",
      headers: t.headers,
      body: [
        { id: a.id, title: "a2" },
        { id: "c_missing", title: "m" },
        { id: b.id, description: "videos have none" },
        { title: "no id" },
        { id: a.id, title: "twice" },
        { id: c.id, type: "text" },
      ],
    });
    expectJson(r, 207);
    expect(r.body).toEqual({
      success: [{ index: 0, id: a.id, statusCode: 200 }],
      failure: [
        { index: 1, id: "c_missing", statusCode: 404, errors: ["no content with id 'c_missing'"] },
        { index: 2, id: b.id, statusCode: 400, errors: ["description is not allowed on video content"] },
        { index: 3, id: null, statusCode: 400, errors: ["id is required to update"] },
        { index: 4, id: a.id, statusCode: 400, errors: [`id '${a.id}' appears more than once in this request`] },
        { index: 5, id: c.id, statusCode: 400, errors: ["type cannot be changed (it is 'link')"] },
      ],
    });
    const after = await dbState(t.accountId);
    expect(after.contents.find((c) => c.id === a.id)!.title).toBe("a2");
    for (const id of [b.id, c.id]) expect(after.contents.find((x) => x.id === id)).toEqual(before.contents.find((x) => x.id === id));
  });

  it("400 when updating a flow through REST (allowed types), row unchanged", async () => {
    const t = await tenant();
    const flow = await mkContent(t, { type: "flow", title: "Flow" });
    const before = await dbState(t.accountId);
    const r = await req(`${pathA(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: flow.id, title: "Hacked" }] });
    expectProblem(r, 400, "type 'flow' cannot be written here (allowed: link, video, text)");
    expect(await dbState(t.accountId)).toEqual(before);
  });

  it("400 for an unknown tag id on update; tags untouched", async () => {
    const t = await tenant();
    const tag = await mkTag(t, "keep");
    const [c] = await createA(t, [{ title: "c", type: "text", tags: [tag.id] }]);
    const before = await dbState(t.accountId);
    const r = await req(`${pathA(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, tags: ["t_nope"] }] });
    expectProblem(r, 400, "unknown tag id 't_nope'");
    expect(await dbState(t.accountId)).toEqual(before);
  });
});

// ---- style A: delete and get ----------------------------------------------------------------------------

describe("DELETE /api/v1/{accountId}/content/{ids}", () => {
  it("204 when all are deleted; rows and tag links gone", async () => {
    const t = await tenant();
    const tag = await mkTag(t, "tg");
    const [a, b, c, keep] = await createA(t, [
      { title: "a", type: "text", tags: [tag.id] },
      { title: "b", type: "text" },
      { title: "c", type: "text" },
      { title: "keep", type: "text" },
    ]);
    const r = await req(`${pathA(t)}/content/${a.id},${b.id},${c.id}`, { method: "DELETE", headers: t.headers });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    const rows = await prisma.content.findMany({ where: { accountId: t.accountId } });
    expect(rows.map((x) => x.id)).toEqual([keep.id]);
    expect(await prisma.contentTag.count({ where: { contentId: a.id } })).toBe(0);
    expect(await prisma.tag.count({ where: { id: tag.id } })).toBe(1);
  });

  it("204 for a single id", async () => {
    const t = await tenant();
    const [a] = await createA(t, [{ title: "a", type: "text" }]);
    const r = await req(`${pathA(t)}/content/${a.id}`, { method: "DELETE", headers: t.headers });
    expect(r.status).toBe(204);
    expect(await contentCount(t)).toBe(0);
  });

  it("404 when none is found; nothing deleted", async () => {
    const t = await tenant();
    await createA(t, [{ title: "a", type: "text" }]);
    const r = await req(`${pathA(t)}/content/c_x,c_y`, { method: "DELETE", headers: t.headers });
    expectProblem(r, 404, "All 2 items failed; see errors.");
    expect(r.body.errors).toEqual([
      { path: "[0]", message: "no content with id 'c_x'" },
      { path: "[1]", message: "no content with id 'c_y'" },
    ]);
    expect(await contentCount(t)).toBe(1);
  });

  it("207 when some are found", async () => {
    const t = await tenant();
    const [a, b] = await createA(t, [
      { title: "a", type: "text" },
      { title: "b", type: "text" },
    ]);
    const r = await req(`${pathA(t)}/content/${a.id},c_gone,${b.id}`, { method: "DELETE", headers: t.headers });
    expectJson(r, 207);
    expect(r.body).toEqual({
      success: [
        { index: 0, id: a.id, statusCode: 204 },
        { index: 2, id: b.id, statusCode: 204 },
      ],
      failure: [{ index: 1, id: "c_gone", statusCode: 404, errors: ["no content with id 'c_gone'"] }],
    });
    expect(await contentCount(t)).toBe(0);
  });

  it("deletes content of any type (a flow seeded in the database)", async () => {
    const t = await tenant();
    const flow = await mkContent(t, { type: "flow" });
    const r = await req(`${pathA(t)}/content/${flow.id}`, { method: "DELETE", headers: t.headers });
    expect(r.status).toBe(204);
    expect(await contentCount(t)).toBe(0);
  });

  it("400 for an empty entry in the list; nothing deleted", async () => {
    const t = await tenant();
    const [a, b] = await createA(t, [
      { title: "a", type: "text" },
      { title: "b", type: "text" },
    ]);
    const r = await req(`${pathA(t)}/content/${a.id},,${b.id}`, { method: "DELETE", headers: t.headers });
    expectProblem(r, 400, "id must be a comma-separated list without empty entries");
    expect(await contentCount(t)).toBe(2);
  });
});

describe("GET /api/v1/{accountId}/content/{id}", () => {
  it("200 with the record", async () => {
    const t = await tenant();
    const tag = await mkTag(t, "g");
    const [c] = await createA(t, [{ title: "one", type: "link", url: "https://one.example", tags: [tag.id] }]);
    const r = await req(`${pathA(t)}/content/${c.id}`, { headers: t.headers });
    expectJson(r, 200);
    expect(r.body).toEqual(c);
    expect(r.body).toEqual(await dbRecord(c.id, "A"));
  });

  it("200 for content of a type the write routes cannot create", async () => {
    const t = await tenant();
    const flow = await mkContent(t, { type: "flow", state: "production", title: "F" });
    const r = await req(`${pathA(t)}/content/${flow.id}`, { headers: t.headers });
    expectJson(r, 200);
    expect(r.body).toMatchObject({ id: flow.id, type: "flow", state: "production", stage: "production", title: "F" });
  });

  it("404 for an unknown id", async () => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content/c_unknown`, { headers: t.headers });
    expectProblem(r, 404, "No content with id 'c_unknown'.");
  });
});

// ---- style B -----------------------------------------------------------------------------------------

describe("B1 GET /v1/accounts/{accountId}/content (state/stage)", () => {
  let t: Tenant;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await tenant();
    const made = await createA(t, [
      { title: "draft", type: "text", state: "draft" },
      { title: "ready", type: "text", state: "ready" },
      { title: "prod", type: "text", state: "production" },
      { title: "draft2", type: "text" },
    ]);
    for (const c of made) ids[c.title] = c.id;
  });

  it.each([
    ["draft", "design", ["draft", "draft2"]],
    ["ready", "design", ["ready"]],
    ["default", "production", ["prod"]],
    ["DRAFT:READY:PRODUCTION", "ALL", ["draft", "ready", "prod", "draft2"]],
    ["READY:PRODUCTION", "ALL", ["ready", "prod"]],
  ])("state=%s&stage=%s", async (state, stage, titles) => {
    const r = await req(`${pathB(t)}/content?state=${encodeURIComponent(state)}&stage=${stage}`, { headers: t.headers });
    expectJson(r, 200);
    expect(r.body.data.map((c: any) => c.id)).toEqual(titles.map((x) => ids[x]));
    expect(r.body.cursor).toBeNull();
  });

  it("neither state nor stage: all content", async () => {
    const r = await req(`${pathB(t)}/content`, { headers: t.headers });
    expectJson(r, 200);
    expect(r.body.data.map((c: any) => c.title)).toEqual(["draft", "ready", "prod", "draft2"]);
  });

  it.each([
    ["state=draft", "state only"],
    ["stage=design", "stage only"],
    ["state=draft&stage=production", "draft in production"],
    ["state=default&stage=design", "default in design"],
    ["state=ready&stage=ALL", "ready with ALL"],
    ["state=production&stage=production", "production is not a filter value"],
    ["state=DRAFT&stage=design", "upper-case draft"],
    ["state=draft&stage=DESIGN", "upper-case design"],
    ["state=DRAFT:READY:PRODUCTION&stage=all", "lower-case all"],
    ["state=draft&state=ready&stage=design", "repeated state"],
  ])("400 for %s (%s)", async (query) => {
    const r = await req(`${pathB(t)}/content?${query.replace(/:/g, "%3A")}`, { headers: t.headers });
    expectProblem(r, 400);
    expect(r.body.errors[0].path).toBe("state");
  });

  it("paginates with the default limit 10 and limit validation", async () => {
    const u = await tenant();
    const made = await createA(
      u,
      Array.from({ length: 12 }, (_, i) => ({ title: `p${i}`, type: "text", state: "ready" })),
    );
    const first = await req(`${pathB(u)}/content?state=ready&stage=design`, { headers: u.headers });
    expect(first.body.data).toHaveLength(10);
    const { ids: all } = await walk(u, `${pathB(u)}/content?state=ready&stage=design`, 5);
    expect(all).toEqual(made.map((c) => c.id));
    expectProblem(await req(`${pathB(u)}/content?limit=0`, { headers: u.headers }), 400, "limit must be between 1 and 10000");
    expectProblem(await req(`${pathB(u)}/content?cursor=%25%25`, { headers: u.headers }), 400, /cursor/);
  });
});

describe("style B tags are tag names (B1, B2, B3)", () => {
  it("B3 201: creates with tags by name; style A shows the same content with tag ids", async () => {
    const t = await tenant();
    const alpha = await mkTag(t, "alpha");
    const beta = await mkTag(t, "beta", "ROLE");
    const r = await req(`${pathB(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [
        { title: "B", type: "link", url: "https://b.example", tags: ["beta", "alpha"] },
        { title: "T", type: "text", description_md: "**md**" },
      ],
    });
    expectJson(r, 201);
    const [b, text] = r.body.data;
    expect(b).toEqual(await dbRecord(b.id, "B"));
    expect(b).toMatchObject({
      title: "B",
      type: "link",
      url: "https://b.example",
      source: "default",
      tags: ["alpha", "beta"],
      state: "draft",
      stage: "design",
    });
    expect(text).toMatchObject({ title: "T", type: "text", description_md: "**md**", tags: [] });
    const links = await prisma.contentTag.findMany({ where: { contentId: b.id } });
    expect(links.map((l) => l.tagId).sort()).toEqual([alpha.id, beta.id].sort());

    const viaA = await req(`${pathA(t)}/content/${b.id}`, { headers: t.headers });
    expect(viaA.body.tags).toEqual([alpha.id, beta.id]);
    const list = await req(`${pathB(t)}/content`, { headers: t.headers });
    expect(list.body.data.map((c: any) => c.tags)).toEqual([["alpha", "beta"], []]);
  });

  it("B3 400 for an unknown tag name, or a tag id given as a name; nothing written", async () => {
    const t = await tenant();
    const tag = await mkTag(t, "known");
    const r = await req(`${pathB(t)}/content`, { method: "POST", headers: t.headers, body: [{ title: "x", type: "text", tags: ["known", "nope"] }] });
    expectProblem(r, 400, "unknown tag 'nope' (create it with PUT /tags first)");
    const r2 = await req(`${pathB(t)}/content`, { method: "POST", headers: t.headers, body: [{ title: "x", type: "text", tags: [tag.id] }] });
    expectProblem(r2, 400, `unknown tag '${tag.id}' (create it with PUT /tags first)`);
    expect(await contentCount(t)).toBe(0);
  });

  it("B3 207 mixed, 400 for a flow", async () => {
    const t = await tenant();
    const r = await req(`${pathB(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [
        { title: "ok", type: "text" },
        { title: "f", type: "flow" },
      ],
    });
    expectJson(r, 207);
    expect(r.body.failure).toEqual([{ index: 1, id: null, statusCode: 400, errors: ["type 'flow' cannot be written here (allowed: link, video, text)"] }]);
    expect(r.body.success).toEqual([{ index: 0, id: expect.any(String), statusCode: 201 }]);
    expect(await contentCount(t)).toBe(1);
  });

  it("B2 200: replaces tags by name; 404 unknown id; 207 mixed", async () => {
    const t = await tenant();
    await mkTag(t, "one");
    const two = await mkTag(t, "two");
    const [c, d] = await createA(t, [
      { title: "c", type: "text" },
      { title: "d", type: "text" },
    ]);
    const ok = await req(`${pathB(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, tags: ["two"], title: "c2" }] });
    expectJson(ok, 200);
    expect(ok.body.data).toEqual([await dbRecord(c.id, "B")]);
    expect(ok.body.data[0]).toMatchObject({ title: "c2", tags: ["two"] });
    expect((await prisma.contentTag.findMany({ where: { contentId: c.id } })).map((l) => l.tagId)).toEqual([two.id]);

    const missing = await req(`${pathB(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: "c_nope", title: "x" }] });
    expectProblem(missing, 404, "no content with id 'c_nope'");

    const mixed = await req(`${pathB(t)}/content`, {
      method: "PUT",
      headers: t.headers,
      body: [
        { id: d.id, tags: ["one", "two"] },
        { id: c.id, tags: ["three"] },
      ],
    });
    expectJson(mixed, 207);
    expect(mixed.body).toEqual({
      success: [{ index: 0, id: d.id, statusCode: 200 }],
      failure: [{ index: 1, id: c.id, statusCode: 400, errors: ["unknown tag 'three' (create it with PUT /tags first)"] }],
    });
    expect((await dbRecord(d.id, "B")).tags).toEqual(["one", "two"]);
    expect((await dbRecord(c.id, "B")).tags).toEqual(["two"]);
  });
});

describe("B4/B5 createdAfter / updatedAfter", () => {
  let t: Tenant;
  const T0 = Date.UTC(2024, 0, 1);
  const rows: { id: string; title: string; type: string; created: number; updated: number }[] = [];
  beforeAll(async () => {
    t = await tenant();
    // created at T0 + i s; updated in the reverse order
    const spec = [
      ["l0", "link"],
      ["t1", "text"],
      ["f2", "flow"],
      ["t3", "text"],
      ["v4", "video"],
      ["t5", "text"],
    ] as const;
    for (const [i, [title, type]] of spec.entries()) {
      const created = T0 + i * 1000;
      const updated = T0 + 100_000 - i * 1000;
      const c = await mkContent(t, { title, type, createdAt: new Date(created), updatedAt: new Date(updated) });
      rows.push({ id: c.id, title, type, created, updated });
    }
  });
  const titles = (r: Reply) => r.body.data.map((c: any) => c.title);

  it("B4: content created strictly after fromTime, oldest first", async () => {
    const r = await req(`${pathB(t)}/content/createdAfter?fromTime=${T0 + 2000}`, { headers: t.headers });
    expectJson(r, 200);
    expect(titles(r)).toEqual(["t3", "v4", "t5"]);
    expect(r.body.cursor).toBeNull();
    expect(r.body.data[0]).toEqual(await dbRecord(rows[3]!.id, "B"));
    const all = await req(`${pathB(t)}/content/createdAfter?fromTime=0`, { headers: t.headers });
    expect(titles(all)).toEqual(["l0", "t1", "f2", "t3", "v4", "t5"]);
    const none = await req(`${pathB(t)}/content/createdAfter?fromTime=${T0 + 5000}`, { headers: t.headers });
    expect(none.body).toEqual({ data: [], cursor: null });
  });

  it("B4: type filter", async () => {
    const r = await req(`${pathB(t)}/content/createdAfter?fromTime=0&type=text`, { headers: t.headers });
    expectJson(r, 200);
    expect(titles(r)).toEqual(["t1", "t3", "t5"]);
    const flows = await req(`${pathB(t)}/content/createdAfter?fromTime=0&type=flow`, { headers: t.headers });
    expect(titles(flows)).toEqual(["f2"]);
    expectProblem(await req(`${pathB(t)}/content/createdAfter?fromTime=0&type=podcast`, { headers: t.headers }), 400);
  });

  it("B4: pagination with cursors", async () => {
    const { ids, sizes } = await walk(t, `${pathB(t)}/content/createdAfter?fromTime=0`, 4);
    expect(sizes).toEqual([4, 2]);
    expect(ids).toEqual(rows.map((r) => r.id));
    const typed = await walk(t, `${pathB(t)}/content/createdAfter?fromTime=0&type=text`, 1);
    expect(typed.ids).toEqual(rows.filter((r) => r.type === "text").map((r) => r.id));
  });

  it("B5: content updated strictly after fromTime, in update order", async () => {
    const r = await req(`${pathB(t)}/content/updatedAfter?fromTime=${T0 + 100_000 - 3000}`, { headers: t.headers });
    expectJson(r, 200);
    expect(titles(r)).toEqual(["f2", "t1", "l0"]);
    const typed = await req(`${pathB(t)}/content/updatedAfter?fromTime=0&type=text`, { headers: t.headers });
    expect(titles(typed)).toEqual(["t5", "t3", "t1"]);
    const { ids, sizes } = await walk(t, `${pathB(t)}/content/updatedAfter?fromTime=0`, 5);
    expect(sizes).toEqual([5, 1]);
    expect(ids).toEqual([...rows].reverse().map((r) => r.id));
  });

  it("B5: an update through REST moves the content past fromTime", async () => {
    const u = await tenant();
    const [a, b] = await createA(u, [
      { title: "a", type: "text" },
      { title: "b", type: "text" },
    ]);
    await new Promise((r) => setTimeout(r, 5));
    const upd = await req(`${pathB(u)}/content`, { method: "PUT", headers: u.headers, body: [{ id: a.id, title: "a2" }] });
    expectJson(upd, 200);
    const r = await req(`${pathB(u)}/content/updatedAfter?fromTime=${b.lastUpdateTime}`, { headers: u.headers });
    expect(r.body.data.map((c: any) => c.id)).toEqual([a.id]);
    expect(r.body.data[0].lastUpdateTime).toBe((await prisma.content.findUniqueOrThrow({ where: { id: a.id } })).updatedAt.getTime());
  });

  it("defaults to 10 rows a page", async () => {
    const u = await tenant();
    await createA(
      u,
      Array.from({ length: 11 }, (_, i) => ({ title: `d${i}`, type: "text" })),
    );
    for (const route of ["createdAfter", "updatedAfter"]) {
      const r = await req(`${pathB(u)}/content/${route}?fromTime=0`, { headers: u.headers });
      expect(r.body.data).toHaveLength(10);
      expect(r.body.cursor).not.toBeNull();
    }
  });

  it.each(["createdAfter", "updatedAfter"])("%s: fromTime is required and validated", async (route) => {
    const base = `${pathB(t)}/content/${route}`;
    const missing = await req(base, { headers: t.headers });
    expectProblem(missing, 400, "fromTime is required");
    expect(missing.body.errors).toEqual([{ path: "fromTime", message: "is required" }]);
    expectProblem(await req(`${base}?fromTime=`, { headers: t.headers }), 400, "fromTime is required");
    expectProblem(await req(`${base}?fromTime=yesterday`, { headers: t.headers }), 400, "fromTime must be an integer");
    expectProblem(await req(`${base}?fromTime=-1`, { headers: t.headers }), 400, "fromTime must be between 0 and 253402300799999");
    expectProblem(await req(`${base}?fromTime=9000000000000000`, { headers: t.headers }), 400, /Timestamp|fromTime/);
    expectProblem(await req(`${base}?fromTime=0&limit=10001`, { headers: t.headers }), 400, "limit must be between 1 and 10000");
    expectProblem(await req(`${base}?fromTime=0&cursor=abc`, { headers: t.headers }), 400, /cursor/);
  });
});

// ---- bad input ------------------------------------------------------------------------------------------

describe("bad input on the content write routes", () => {
  const writes = [
    ["POST", "A", pathA],
    ["PUT", "A", pathA],
    ["POST", "B", pathB],
    ["PUT", "B", pathB],
  ] as const;

  it.each(writes)("%s style %s: malformed JSON is a 400, nothing written", async (method, _s, p) => {
    const t = await tenant();
    const r = await req(`${p(t)}/content`, { method, headers: { ...t.headers, "content-type": "application/json" }, raw: '[{"title": "x", "type": "text"' });
    expectProblem(r, 400, /^Malformed JSON body/);
    expect(await contentCount(t)).toBe(0);
  });

  it.each(writes)("%s style %s: a body that is not an array of objects is a 400", async (method, _s, p) => {
    const t = await tenant();
    for (const body of [{ title: "x", type: "text" }, "text", 5, null, []]) {
      const r = await req(`${p(t)}/content`, { method, headers: { ...t.headers, "content-type": "application/json" }, raw: JSON.stringify(body) });
      expectProblem(r, 400);
    }
    const obj = await req(`${p(t)}/content`, { method, headers: t.headers, body: { title: "x", type: "text" } });
    expectProblem(obj, 400, "body must be a JSON array of objects (send Content-Type: application/json)");
    const empty = await req(`${p(t)}/content`, { method, headers: t.headers, body: [] });
    expectProblem(empty, 400, "body must hold at least one item");
    const scalar = await req(`${p(t)}/content`, { method, headers: t.headers, body: [{ title: "x", type: "text" }, 1] });
    expectProblem(scalar, 400, "body[1] must be an object");
    expect(await contentCount(t)).toBe(0);
  });

  it.each(writes)("%s style %s: wrong types, unknown fields and unknown enum values are 400s", async (method, _s, p) => {
    const t = await tenant();
    const cases: [object, RegExp][] = [
      [{ title: 5, type: "text" }, /^body\[1\]\.title: String cannot represent a non string value: 5$/],
      [{ title: "x", type: "text", colour: "red" }, /colour/],
      [{ title: "x", type: "podcast" }, /podcast/],
      [{ title: "x", type: "link", url: "https://l.example", source: "wiki" }, /wiki/],
      [{ title: "x", type: "text", state: "published" }, /published/],
      [{ title: "x", type: "text", tags: "alpha" }, /^body\[1\]\.tags must be an array of strings$/],
      [{ title: "x", type: "text", tags: [1] }, /^body\[1\]\.tags\[0\]: String cannot represent a non string value: 1$/],
      [{ title: "x", type: "text", description_md: 7 }, /^body\[1\]\.description_md: String cannot represent a non string value: 7$/],
      [{ title: ["x"], type: "text" }, /^body\[1\]\.title: /],
    ];
    for (const [item, detail] of cases) {
      const r = await req(`${p(t)}/content`, { method, headers: t.headers, body: [{ title: "fine", type: "text" }, item] });
      expectProblem(r, 400, detail);
      expect(r.body.detail).not.toMatch(/\$input|Variable/);
    }
    expect(await contentCount(t)).toBe(0);
  });

  it("GraphQL-only input fields are not REST fields (style A tagNames, style B tagIds, descriptionMd)", async () => {
    const t = await tenant();
    const tag = await mkTag(t, "n");
    for (const [p, item, field] of [
      [pathA, { title: "x", type: "text", tagNames: ["n"] }, "tagNames"],
      [pathB, { title: "x", type: "text", tagIds: [tag.id] }, "tagIds"],
      [pathA, { title: "x", type: "text", descriptionMd: "m" }, "descriptionMd"],
      [pathB, { title: "x", type: "text", tags: ["n"], tagNames: ["n"] }, "tagNames"],
    ] as const) {
      const r = await req(`${p(t)}/content`, { method: "POST", headers: t.headers, body: [item] });
      expectProblem(r, 400, `body[0]: unknown field(s) ${field}`);
      const u = await req(`${p(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: "c_x", ...item }] });
      expectProblem(u, 400, `body[0]: unknown field(s) ${field}`);
    }
    expect(await contentCount(t)).toBe(0);
  });

  it("10,001 items is a 400 and nothing is written; 10,000 is accepted", async () => {
    const t = await tenant();
    const items = Array.from({ length: 10_001 }, (_, i) => ({ title: `bulk${i}`, type: "text" }));
    for (const [method, p] of [
      ["POST", pathA],
      ["PUT", pathA],
      ["POST", pathB],
      ["PUT", pathB],
    ] as const) {
      const r = await req(`${p(t)}/content`, { method, headers: t.headers, body: items });
      expectProblem(r, 400, "body must hold at most 10000 items");
    }
    expect(await contentCount(t)).toBe(0);
    const ok = await req(`${pathA(t)}/content`, { method: "POST", headers: t.headers, body: items.slice(0, 10_000) });
    expectJson(ok, 201);
    expect(ok.body.data).toHaveLength(10_000);
    expect(ok.body.data[9_999].title).toBe("bulk9999");
    expect(await contentCount(t)).toBe(10_000);
  }, 120_000);

  it("bulk requests with 1,000+ ids or tag references answer per item, never a 5xx", async () => {
    const t = await tenant();
    const tag = await mkTag(t, "bulk-tag");
    const made = await createA(
      t,
      Array.from({ length: 1_000 }, (_, i) => ({ title: `m${i}`, type: "text" })),
    );
    // PUT: 1,000 existing ids (SQLite binds at most 999 values a statement), each with a tag id; then 1,000 distinct unknown tag ids on create
    const upd = await req(`${pathA(t)}/content`, {
      method: "PUT",
      headers: t.headers,
      body: made.map((c) => ({ id: c.id, title: `${c.title}!`, tags: [tag.id] })),
    });
    expectJson(upd, 200);
    expect(upd.body.data).toHaveLength(1_000);
    expect(upd.body.data[999]).toMatchObject({ id: made[999].id, title: "m999!", tags: [tag.id] });
    expect(await prisma.contentTag.count({ where: { tagId: tag.id } })).toBe(1_000);
    for (const list of [`${pathA(t)}/content?limit=10000`, `${pathB(t)}/content/updatedAfter?fromTime=0&limit=10000`]) {
      const page = await req(list, { headers: t.headers });
      expectJson(page, 200);
      expect(page.body.data).toHaveLength(1_000);
      expect(page.body.data.every((c: any) => c.tags.length === 1)).toBe(true);
      expect(page.body.cursor).toBeNull();
    }
    const unknown = await req(`${pathA(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: Array.from({ length: 1_000 }, (_, i) => ({ title: "u", type: "text", tags: [`t_unknown${i}`] })),
    });
    expectProblem(unknown, 400, "All 1000 items failed; see errors.");
    expect(unknown.body.errors[999]).toEqual({ path: "[999]", message: "unknown tag id 't_unknown999'" });
    const byName = await req(`${pathB(t)}/content`, {
      method: "PUT",
      headers: t.headers,
      body: made.map((c, i) => ({ id: c.id, tags: i % 2 ? ["bulk-tag"] : [`nope${i}`] })),
    });
    expectJson(byName, 207);
    expect(byName.body.success).toHaveLength(500);
    expect(byName.body.failure).toHaveLength(500);
    // DELETE: 1,000 ids in one path (short ids keep the URL small)
    const pfx = newId("q").slice(-6);
    const short = Array.from({ length: 1_000 }, (_, i) => `${pfx}${i}`);
    await write((tx) => tx.content.createMany({ data: short.map((id) => ({ id, accountId: t.accountId, title: id, type: "text" })) }));
    const del = await req(`${pathA(t)}/content/${short.join(",")}`, { method: "DELETE", headers: t.headers });
    expect(del.status, del.text.slice(0, 300)).toBe(204);
    expect(await contentCount(t)).toBe(1_000);
    const delMixed = await req(`${pathA(t)}/content/${[...short.slice(0, 999), made[0].id].join(",")}`, { method: "DELETE", headers: t.headers });
    expectJson(delMixed, 207);
    expect(delMixed.body.success).toEqual([{ index: 999, id: made[0].id, statusCode: 204 }]);
    expect(await contentCount(t)).toBe(999);
  }, 120_000);

  it("a 200 KB title or description is a 400 and nothing is written", async () => {
    const t = await tenant();
    const big = "x".repeat(200 * 1024);
    const cases: [string, object, string][] = [
      ["POST", { title: big, type: "text" }, "title must be at most 500 characters"],
      ["POST", { title: "t", type: "text", description: big }, "description must be at most 10000 characters"],
      ["POST", { title: "t", type: "text", description_md: big }, "description_md must be at most 100000 characters"],
      ["POST", { title: "t", type: "link", url: `https://x.example/${big}` }, "url must be at most 2048 characters"],
    ];
    for (const [method, item, detail] of cases) {
      for (const p of [pathA, pathB]) {
        const r = await req(`${p(t)}/content`, { method, headers: t.headers, body: [item] });
        expectProblem(r, 400, detail);
      }
    }
    expect(await contentCount(t)).toBe(0);
    const [c] = await createA(t, [{ title: "small", type: "text" }]);
    const before = await dbState(t.accountId);
    for (const p of [pathA, pathB]) {
      const r = await req(`${p(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, title: big }] });
      expectProblem(r, 400, "title must be at most 500 characters");
      const r2 = await req(`${p(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, description: big }] });
      expectProblem(r2, 400, "description must be at most 10000 characters");
    }
    expect(await dbState(t.accountId)).toEqual(before);
  });

  it("a body over 10 MiB is a 413 and nothing is written", async () => {
    const t = await tenant();
    const raw = JSON.stringify([{ title: "x", type: "text", description: "y".repeat(10 * 1024 * 1024 + 10) }]);
    for (const [method, p] of [
      ["POST", pathA],
      ["PUT", pathA],
      ["POST", pathB],
      ["PUT", pathB],
    ] as const) {
      const r = await req(`${p(t)}/content`, { method, headers: { ...t.headers, "content-type": "application/json" }, raw });
      expectProblem(r, 413, "Request body larger than the limit (10 MiB for JSON).");
    }
    expect(await contentCount(t)).toBe(0);
  });

  it("a missing or non-JSON content-type is a 415 and nothing is written", async () => {
    const t = await tenant();
    const raw = JSON.stringify([{ title: "x", type: "text" }]);
    for (const [method, p] of [
      ["POST", pathA],
      ["PUT", pathA],
      ["POST", pathB],
      ["PUT", pathB],
    ] as const) {
      expectProblem(await req(`${p(t)}/content`, { method, headers: t.headers, raw }), 415, /Content-Type: application\/json/);
      expectProblem(await req(`${p(t)}/content`, { method, headers: { ...t.headers, "content-type": "text/plain" }, raw }), 415);
      expectProblem(await req(`${p(t)}/content`, { method, headers: t.headers }), 415);
    }
    expect(await contentCount(t)).toBe(0);
    const ok = await req(`${pathA(t)}/content`, { method: "POST", headers: { ...t.headers, "content-type": "application/json; charset=utf-8" }, raw });
    expectJson(ok, 201);
  });

  it("an unknown route under the prefix is a 404 problem", async () => {
    const t = await tenant();
    expectProblem(await req(`${pathA(t)}/contents`, { headers: t.headers }), 404);
    expectProblem(await req(`${pathA(t)}/content/a/b`, { headers: t.headers }), 404);
  });
});

// ---- auth and tenant isolation --------------------------------------------------------------------------

describe("auth on the content routes", () => {
  /** Every content route, as [name, method, path, body] for a given account and a content id. */
  const routesFor = (acc: string, id: string): [string, string, string, unknown][] => [
    ["A list", "GET", `${pathA(acc)}/content`, undefined],
    ["A create", "POST", `${pathA(acc)}/content`, [{ title: "intruder", type: "text" }]],
    ["A update", "PUT", `${pathA(acc)}/content`, [{ id, title: "intruder" }]],
    ["A delete", "DELETE", `${pathA(acc)}/content/${id}`, undefined],
    ["A get", "GET", `${pathA(acc)}/content/${id}`, undefined],
    ["B1 list", "GET", `${pathB(acc)}/content?state=draft&stage=design`, undefined],
    ["B2 update", "PUT", `${pathB(acc)}/content`, [{ id, title: "intruder" }]],
    ["B3 create", "POST", `${pathB(acc)}/content`, [{ title: "intruder", type: "text" }]],
    ["B4 createdAfter", "GET", `${pathB(acc)}/content/createdAfter?fromTime=0`, undefined],
    ["B5 updatedAfter", "GET", `${pathB(acc)}/content/updatedAfter?fromTime=0`, undefined],
  ];

  let owner: Tenant;
  let other: Tenant;
  let victimId: string;
  beforeAll(async () => {
    owner = await tenant("own");
    other = await tenant("oth");
    const tag = await mkTag(owner, "secret");
    victimId = (await createA(owner, [{ title: "victim", type: "text", tags: [tag.id] }]))[0].id;
  });

  async function expectAllRoutes(headers: Record<string, string>, status: number, acc = owner.accountId) {
    const before = await dbState(owner.accountId);
    for (const [name, method, path, body] of routesFor(acc, victimId)) {
      const r = await req(path, { method, headers, body });
      expect(r.status, `${name}: ${r.text}`).toBe(status);
      expectProblem(r, status);
    }
    expect(await dbState(owner.accountId)).toEqual(before);
  }

  it("401 without headers", async () => {
    await expectAllRoutes({}, 401);
  });

  it("401 with only one of the two headers", async () => {
    await expectAllRoutes({ "x-service-integration-key": owner.key }, 401);
    await expectAllRoutes({ "x-service-user": owner.email }, 401);
  });

  it("401 with a wrong key (unknown, or a known prefix with a wrong secret)", async () => {
    await expectAllRoutes({ "x-service-integration-key": "ggk_not-a-real-key-at-all-xxxxxxxxxxxxxxxxxx", "x-service-user": owner.email }, 401);
    await expectAllRoutes(
      { "x-service-integration-key": owner.key.slice(0, -2) + (owner.key.endsWith("AA") ? "BB" : "AA"), "x-service-user": owner.email },
      401,
    );
  });

  it("401 when x-service-user is not the key's owner", async () => {
    await expectAllRoutes({ "x-service-integration-key": owner.key, "x-service-user": other.email }, 401);
  });

  it("the owner's e-mail matches case-insensitively", async () => {
    const r = await req(`${pathA(owner)}/content/${victimId}`, {
      headers: { "x-service-integration-key": owner.key, "x-service-user": owner.email.toUpperCase() },
    });
    expectJson(r, 200);
  });

  it("401 with a revoked key", async () => {
    const { key } = await createKey(owner.email);
    const headers = { "x-service-integration-key": key, "x-service-user": owner.email };
    expectJson(await req(`${pathA(owner)}/content/${victimId}`, { headers }), 200);
    await revokeKey(key.slice(0, 12));
    await expectAllRoutes(headers, 401);
    expect((await req(`${pathA(owner)}/content/${victimId}`, { headers })).body.detail).toBe("The API key has been revoked.");
  });

  it("401 with an expired key", async () => {
    const { key } = await createKey(owner.email, { ttlSeconds: 3600 });
    const headers = { "x-service-integration-key": key, "x-service-user": owner.email };
    expectJson(await req(`${pathA(owner)}/content/${victimId}`, { headers }), 200);
    await write((tx) => tx.apiKey.update({ where: { prefix: key.slice(0, 12) }, data: { expiresAt: new Date(Date.now() - 1000) } }));
    await expectAllRoutes(headers, 401);
    expect((await req(`${pathA(owner)}/content/${victimId}`, { headers })).body.detail).toBe("The API key has expired.");
  });

  it("403 for a valid key on another account; that account is unchanged", async () => {
    await expectAllRoutes(other.headers, 403);
    const r = await req(`${pathA(owner)}/content`, { headers: other.headers });
    expect(r.body.detail).toBe(`The API key has no access to account '${owner.accountId}'.`);
  });

  it("403 for an account that does not exist (no existence leak)", async () => {
    await expectAllRoutes(other.headers, 403, "no-such-account");
  });

  it("403 for an auditlogs-scoped key on content routes", async () => {
    const { key } = await createKey(owner.email, { scope: "auditlogs" });
    await expectAllRoutes({ "x-service-integration-key": key, "x-service-user": owner.email }, 403);
  });

  it("a user with access to two accounts reaches both", async () => {
    const both = await tenant("both");
    await createUser(both.email, [owner.accountId]);
    const r = await req(`${pathA(owner)}/content/${victimId}`, { headers: both.headers });
    expectJson(r, 200);
    expect(r.body.title).toBe("victim");
  });

  it("A cannot read or write B's content or tags through A's own path", async () => {
    const a = await tenant("ia");
    const b = await tenant("ib");
    const bTag = await mkTag(b, "b-tag");
    const [bContent] = await createA(b, [{ title: "b content", type: "text", tags: [bTag.id] }]);
    const bFolder = await mkContent(b, { type: "folder", title: "b folder" });
    const [aContent] = await createA(a, [{ title: "a content", type: "text" }]);
    const before = await dbState(b.accountId);

    expectProblem(await req(`${pathA(a)}/content/${bContent.id}`, { headers: a.headers }), 404);
    expectProblem(await req(`${pathA(a)}/content`, { method: "PUT", headers: a.headers, body: [{ id: bContent.id, title: "pwned" }] }), 404);
    expectProblem(await req(`${pathB(a)}/content`, { method: "PUT", headers: a.headers, body: [{ id: bContent.id, title: "pwned" }] }), 404);
    expectProblem(await req(`${pathA(a)}/content/${bContent.id}`, { method: "DELETE", headers: a.headers }), 404);
    const mixedDelete = await req(`${pathA(a)}/content/${bContent.id},${aContent.id}`, { method: "DELETE", headers: a.headers });
    expectJson(mixedDelete, 207);
    expect(mixedDelete.body.failure).toEqual([{ index: 0, id: bContent.id, statusCode: 404, errors: [`no content with id '${bContent.id}'`] }]);
    expectProblem(
      await req(`${pathA(a)}/content`, { method: "POST", headers: a.headers, body: [{ title: "x", type: "text", tags: [bTag.id] }] }),
      400,
      `unknown tag id '${bTag.id}'`,
    );
    expectProblem(
      await req(`${pathB(a)}/content`, { method: "POST", headers: a.headers, body: [{ title: "x", type: "text", tags: ["b-tag"] }] }),
      400,
      "unknown tag 'b-tag' (create it with PUT /tags first)",
    );
    expectProblem(
      await req(`${pathA(a)}/content`, { method: "POST", headers: a.headers, body: [{ title: "x", type: "text", parentId: bFolder.id }] }),
      400,
      `unknown parent '${bFolder.id}'`,
    );
    const [a2] = await createA(a, [{ title: "a2", type: "text" }]);
    expectProblem(
      await req(`${pathA(a)}/content`, { method: "PUT", headers: a.headers, body: [{ id: a2.id, tags: [bTag.id] }] }),
      400,
      `unknown tag id '${bTag.id}'`,
    );
    expectProblem(
      await req(`${pathA(a)}/content`, { method: "PUT", headers: a.headers, body: [{ id: a2.id, parentId: bFolder.id }] }),
      400,
      `unknown parent '${bFolder.id}'`,
    );
    const list = await req(`${pathB(a)}/content/createdAfter?fromTime=0`, { headers: a.headers });
    expect(list.body.data.map((c: any) => c.id)).toEqual([a2.id]);

    expect(await dbState(b.accountId)).toEqual(before);
    expect(await prisma.content.count({ where: { accountId: a.accountId } })).toBe(1);
  });
});

// ---- CORS ------------------------------------------------------------------------------------------------

describe("CORS", () => {
  it.each([
    ["POST", "/api/v1/x/content"],
    ["PUT", "/v1/accounts/x/content"],
    ["DELETE", "/api/v1/x/content/c_1,c_2"],
    ["GET", "/v1/accounts/x/content/createdAfter"],
  ])("preflight for %s %s", async (method, path) => {
    const res = await fetch(server.url + path, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": method,
        "access-control-request-headers": "x-service-integration-key,x-service-user,content-type",
      },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["x-service-integration-key", "x-service-user", "content-type"]));
    expect((res.headers.get("access-control-allow-methods") ?? "").split(",")).toContain(method);
  });

  it("actual responses carry the CORS headers and expose x-request-id", async () => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content`, { headers: { ...t.headers, origin: "https://app.example", "x-request-id": "req-123" } });
    expectJson(r, 200);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("x-request-id")).toBe("req-123");
    expect((r.headers.get("access-control-expose-headers") ?? "").toLowerCase()).toContain("x-request-id");
    const err = await req(`${pathA(t)}/content?limit=0`, { headers: { origin: "https://app.example" } });
    expect(err.headers.get("access-control-allow-origin")).toBe("*");
  });
});

// ---- GraphQL lookups behind GET /content/{id} ---------------------------------------------------------------

describe("content(id:) lookups", () => {
  it("resolve per account when one document reads two accounts", async () => {
    const a = await tenant("ga");
    const b = await tenant("gb");
    await createUser(a.email, [b.accountId]);
    const [ac] = await createA(a, [{ title: "in a", type: "text" }]);
    const [bc] = await createA(b, [{ title: "in b", type: "text" }]);
    const r = await gql(
      server,
      a,
      `query($a: String!, $b: String!, $ac: String!, $bc: String!) {
      x: account(id: $a) { mine: content(id: $ac) { title } theirs: content(id: $bc) { title } }
      y: account(id: $b) { mine: content(id: $bc) { title } theirs: content(id: $ac) { title } } }`,
      { a: a.accountId, b: b.accountId, ac: ac.id, bc: bc.id },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({ x: { mine: { title: "in a" }, theirs: null }, y: { mine: { title: "in b" }, theirs: null } });
  });
});
