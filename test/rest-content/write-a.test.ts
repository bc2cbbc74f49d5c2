// REST content routes over real HTTP, style A: POST, PUT and DELETE /api/v1/{accountId}/content and
// GET /content/{id}, with the database checked after each call.
import { describe, expect, it } from "vitest";
import { makeContent } from "../factories/content.js";
import { makeTag } from "../factories/tags.js";
import { expectJson, expectProblem, pathA, prisma, tenant } from "../helpers.js";
import { contentCount, createA, dbRecord, dbState, req, withServer } from "./shared.js";

withServer();

// ---- style A: create -----------------------------------------------------------------------------------

describe("POST /api/v1/{accountId}/content", () => {
  it("201: creates links, videos and text in request order, tags given as tag ids", async () => {
    const t = await tenant();
    const alpha = await makeTag(t.accountId, "alpha");
    const beta = await makeTag(t.accountId, "beta", "PAGE");
    const before = Date.now();
    const r = await req(`${pathA(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [
        { title: "Link", type: "link", url: "https://docs.example/a", description: "about a", tags: [beta.id, alpha.id, alpha.id] },
        { title: "Video", type: "video", url: "https://video.example/v" },
        { title: "Text", type: "text", description: "hi", state: "ready" },
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
    expect(text).toMatchObject({ title: "Text", type: "text", url: null, description: "hi", description_md: null, tags: [], state: "ready", stage: "design" });
    expect(kb).toMatchObject({ title: "KB", source: "knowledgebase", state: "production", stage: "production" });

    const rows = await prisma.content.findMany({ where: { accountId: t.accountId }, include: { tags: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    expect(rows.map((c) => c.id)).toEqual([link.id, video.id, text.id, kb.id]);
    expect(rows[0]!.tags.map((l) => l.tagId).sort()).toEqual([alpha.id, beta.id].sort());
    expect([rows[2]!.description, rows[2]!.descriptionMd]).toEqual(["hi", null]);
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
    ["an unknown parent", { title: "x", type: "text", parentId: "c_nope" }, ["unknown parent 'c_nope'"]],
  ])("400 for %s, nothing written", async (_what, item, errors) => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content`, { method: "POST", headers: t.headers, body: [item] });
    expectProblem(r, 400, errors.join("; "));
    expect(r.body.errors).toEqual(errors.map((message) => ({ path: "[0]", message })));
    expect(await contentCount(t)).toBe(0);
  });

  it("description_md is an unknown field of style A writes (the spec's variant A has none), create and update; style B writes it; reads show it", async () => {
    const t = await tenant();
    const [c] = await createA(t, [{ title: "c", type: "text" }]);
    const before = await dbState(t.accountId);
    for (const [method, item] of [
      ["POST", { title: "x", type: "text", description_md: "m" }],
      ["POST", { title: "x", type: "link", url: "https://l.example", description_md: null }],
      ["PUT", { id: c.id, description_md: "m" }],
    ] as const) {
      const r = await req(`${pathA(t)}/content`, { method, headers: t.headers, body: [{ title: "fine", type: "text" }, item] });
      expectProblem(r, 400, "body[1]: unknown field(s) description_md");
      expect(r.body.errors).toEqual([{ path: "[1]", message: "unknown field(s) description_md" }]);
    }
    expect(await dbState(t.accountId)).toEqual(before);
    const b = await req(`/v1/accounts/${t.accountId}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, description_md: "# B" }] });
    expectJson(b, 200);
    const read = await req(`${pathA(t)}/content/${c.id}`, { headers: t.headers });
    expect(read.body).toEqual(await dbRecord(c.id, "A"));
    expect(read.body.description_md).toBe("# B");
  });

  it("an unknown tag id fails its own item only (207)", async () => {
    const t = await tenant();
    const tag = await makeTag(t.accountId, "known");
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
    await makeTag(t.accountId, "byname");
    const r = await req(`${pathA(t)}/content`, { method: "POST", headers: t.headers, body: [{ title: "a", type: "text", tags: ["byname"] }] });
    expectProblem(r, 400, "unknown tag id 'byname'");
    expect(await contentCount(t)).toBe(0);
  });

  it("places content in a folder of the account", async () => {
    const t = await tenant();
    const folder = await makeContent(t.accountId, { type: "folder", title: "F" });
    const notFolder = await makeContent(t.accountId, { type: "text", title: "T" });
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
    const [x, y, z] = [await makeTag(t.accountId, "x"), await makeTag(t.accountId, "y"), await makeTag(t.accountId, "z")];
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
    const tag = await makeTag(t.accountId, "only");
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

  it("tags: null clears the tags (audited as an update); state or type null is a 400 naming the field, nothing written", async () => {
    const t = await tenant();
    const tag = await makeTag(t.accountId, "gone");
    const [c] = await createA(t, [{ title: "c", type: "link", url: "https://c.example", tags: [tag.id], state: "ready" }]);
    const r = await req(`${pathA(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, tags: null }] });
    expectJson(r, 200);
    expect(r.body.data).toEqual([await dbRecord(c.id, "A")]);
    expect(r.body.data[0]).toMatchObject({ tags: [], state: "ready", title: "c" });
    expect(await prisma.contentTag.count({ where: { contentId: c.id } })).toBe(0);
    const entries = await prisma.auditLog.findMany({ where: { accountId: t.accountId, action: "update", resourceId: c.id } });
    expect(entries).toHaveLength(1);
    expect(JSON.parse(entries[0]!.details).tagIds).toEqual([]);

    const before = await dbState(t.accountId);
    const audits = await prisma.auditLog.count({ where: { accountId: t.accountId } });
    const state = await req(`${pathA(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, state: null, title: "no" }] });
    expectProblem(state, 400, "state cannot be cleared (one of draft, ready, production)");
    expect(state.body.failure).toEqual([{ index: 0, id: c.id, statusCode: 400, errors: ["state cannot be cleared (one of draft, ready, production)"] }]);
    const type = await req(`${pathA(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, type: null }] });
    expectProblem(type, 400, "type cannot be cleared (it is 'link')");
    expect(await dbState(t.accountId)).toEqual(before);
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId } })).toBe(audits);
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

  it("no item succeeded, with different statuses: 400 problem listing each item's index, id, status and errors (never a 207 with no success)", async () => {
    const t = await tenant();
    const [b] = await createA(t, [{ title: "b", type: "video", url: "https://v.example" }]);
    const before = await dbState(t.accountId);
    const audits = await prisma.auditLog.count({ where: { accountId: t.accountId } });
    const r = await req(`${pathA(t)}/content`, {
      method: "PUT",
      headers: t.headers,
      body: [
        { id: "c_missing", title: "m" },
        { id: b.id, description: "videos have none" },
      ],
    });
    expectProblem(r, 400, "All 2 items failed, with statuses 400, 404; see failure.");
    expect(r.body.errors).toEqual([
      { path: "[0]", message: "no content with id 'c_missing'" },
      { path: "[1]", message: "description is not allowed on video content" },
    ]);
    expect(r.body.failure).toEqual([
      { index: 0, id: "c_missing", statusCode: 404, errors: ["no content with id 'c_missing'"] },
      { index: 1, id: b.id, statusCode: 400, errors: ["description is not allowed on video content"] },
    ]);
    expect(await dbState(t.accountId)).toEqual(before);
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId } })).toBe(audits);
    // All alike: that status, the same body shape.
    const alike = await req(`${pathA(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: "c_x" }, { id: "c_y" }] });
    expectProblem(alike, 404, "All 2 items failed; see errors.");
    expect(alike.body.failure).toEqual([
      { index: 0, id: "c_x", statusCode: 404, errors: ["no content with id 'c_x'"] },
      { index: 1, id: "c_y", statusCode: 404, errors: ["no content with id 'c_y'"] },
    ]);
  });

  it("400 when updating a flow through REST (allowed types), row unchanged", async () => {
    const t = await tenant();
    const flow = await makeContent(t.accountId, { type: "flow", title: "Flow" });
    const before = await dbState(t.accountId);
    const r = await req(`${pathA(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: flow.id, title: "Hacked" }] });
    expectProblem(r, 400, "type 'flow' cannot be written here (allowed: link, video, text)");
    expect(await dbState(t.accountId)).toEqual(before);
  });

  it("400 for an unknown tag id on update; tags untouched", async () => {
    const t = await tenant();
    const tag = await makeTag(t.accountId, "keep");
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
    const tag = await makeTag(t.accountId, "tg");
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

  it("deleting a folder moves its contents to the top level as their own update: audited, lastUpdateTime bumped, found by updatedAfter", async () => {
    const t = await tenant();
    const folder = await makeContent(t.accountId, { type: "folder", title: "F" });
    const made = await req(`${pathA(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [
        { title: "in-1", type: "text", parentId: folder.id },
        { title: "in-2", type: "text", parentId: folder.id },
        { title: "outside", type: "text" },
      ],
    });
    expect(made.status, made.text).toBe(201);
    const [in1, in2, outside] = made.body.data.map((d: { id: string }) => d.id);
    const before = await prisma.content.findUniqueOrThrow({ where: { id: in1 } });
    await new Promise((r) => setTimeout(r, 5));
    const r = await req(`${pathA(t)}/content/${folder.id}`, { method: "DELETE", headers: t.headers });
    expect(r.status, r.text).toBe(204);
    const rows = await prisma.content.findMany({ where: { accountId: t.accountId }, orderBy: { title: "asc" } });
    expect(rows.map((x) => [x.title, x.parentId])).toEqual([
      ["in-1", null],
      ["in-2", null],
      ["outside", null],
    ]);
    expect(rows[0]!.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    const moved = await prisma.auditLog.findMany({ where: { accountId: t.accountId, action: "update", resourceType: "content" } });
    expect(moved.map((e) => e.resourceId).sort()).toEqual([in1, in2].sort());
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId, action: "update", resourceId: outside } })).toBe(0);
    const since = await req(`/v1/accounts/${t.accountId}/content/updatedAfter?fromTime=${before.updatedAt.getTime() + 1}`, { headers: t.headers });
    expect(since.body.data.map((d: { id: string }) => d.id).sort()).toEqual([in1, in2].sort());
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
    const flow = await makeContent(t.accountId, { type: "flow" });
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
    const tag = await makeTag(t.accountId, "g");
    const [c] = await createA(t, [{ title: "one", type: "link", url: "https://one.example", tags: [tag.id] }]);
    const r = await req(`${pathA(t)}/content/${c.id}`, { headers: t.headers });
    expectJson(r, 200);
    expect(r.body).toEqual(c);
    expect(r.body).toEqual(await dbRecord(c.id, "A"));
  });

  it("200 for content of a type the write routes cannot create", async () => {
    const t = await tenant();
    const flow = await makeContent(t.accountId, { type: "flow", state: "production", title: "F" });
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
