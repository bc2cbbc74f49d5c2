// REST content routes over real HTTP, style B (B1-B5): state/stage filters, tags as names,
// createdAfter / updatedAfter.
import { beforeAll, describe, expect, it } from "vitest";
import { makeContent } from "../factories/content.js";
import { makeTag } from "../factories/tags.js";
import { expectJson, expectProblem, pathA, pathB, prisma, type Reply, type Tenant, tenant } from "../helpers.js";
import { contentCount, createA, dbRecord, req, walk, withServer } from "./shared.js";

withServer();

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
    const alpha = await makeTag(t.accountId, "alpha");
    const beta = await makeTag(t.accountId, "beta", "ROLE");
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

  it("style B sets description on link content only (the spec's variant B; text takes description_md); style A allows it on text", async () => {
    const t = await tenant();
    const refused = "description is allowed on link content only (text content takes description_md)";
    const r = await req(`${pathB(t)}/content`, { method: "POST", headers: t.headers, body: [{ title: "T", type: "text", description: "d" }] });
    expectProblem(r, 400, refused);
    expect(await contentCount(t)).toBe(0);
    const viaA = await req(`${pathA(t)}/content`, { method: "POST", headers: t.headers, body: [{ title: "T", type: "text", description: "from A" }] });
    expectJson(viaA, 201);
    const text = viaA.body.data[0].id;
    const link = await req(`${pathB(t)}/content`, {
      method: "POST",
      headers: t.headers,
      body: [{ title: "L", type: "link", url: "https://l.example", description: "ok" }],
    });
    expectJson(link, 201);
    const update = await req(`${pathB(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: text, description: "changed" }] });
    expectProblem(update, 400, refused);
    // A description stored through style A is not refused when a style-B update leaves it alone.
    const retitle = await req(`${pathB(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: text, title: "T2" }] });
    expectJson(retitle, 200);
    expect(await prisma.content.findUniqueOrThrow({ where: { id: text } })).toMatchObject({ title: "T2", description: "from A" });
    expect(link.body.data[0]).toMatchObject({ type: "link", description: "ok" });
  });

  it("B3 400 for an unknown tag name, or a tag id given as a name; nothing written", async () => {
    const t = await tenant();
    const tag = await makeTag(t.accountId, "known");
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
    await makeTag(t.accountId, "one");
    const two = await makeTag(t.accountId, "two");
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

describe("B2 nulls", () => {
  it("tags: null clears the tags (audited); state: null is a 400 naming state; nothing else changes", async () => {
    const t = await tenant();
    await makeTag(t.accountId, "one");
    const made = await req(`${pathB(t)}/content`, { method: "POST", headers: t.headers, body: [{ title: "c", type: "text", tags: ["one"] }] });
    expectJson(made, 201);
    const id = made.body.data[0].id as string;
    const r = await req(`${pathB(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id, tags: null }] });
    expectJson(r, 200);
    expect(r.body.data).toEqual([await dbRecord(id, "B")]);
    expect(r.body.data[0].tags).toEqual([]);
    expect(await prisma.contentTag.count({ where: { contentId: id } })).toBe(0);
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId, action: "update", resourceId: id } })).toBe(1);

    const before = await dbRecord(id, "B");
    const state = await req(`${pathB(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id, state: null }] });
    expectProblem(state, 400, "state cannot be cleared (one of draft, ready, production)");
    expect(await dbRecord(id, "B")).toEqual(before);
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId, action: "update", resourceId: id } })).toBe(1);
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
      const c = await makeContent(t.accountId, { title, type, createdAt: new Date(created), updatedAt: new Date(updated) });
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

  it("a cursor of one order (B4's creation, B5's update) is a 400 in the other, not a position read there", async () => {
    const created = await req(`${pathB(t)}/content/createdAfter?fromTime=0&limit=2`, { headers: t.headers });
    const updated = await req(`${pathB(t)}/content/updatedAfter?fromTime=0&limit=2`, { headers: t.headers });
    expect([titles(created), titles(updated)]).toEqual([
      ["l0", "t1"],
      ["t5", "v4"],
    ]);
    // Each resumes its own walk...
    expect(titles(await req(`${pathB(t)}/content/createdAfter?fromTime=0&limit=2&cursor=${created.body.cursor}`, { headers: t.headers }))).toEqual([
      "f2",
      "t3",
    ]);
    expect(titles(await req(`${pathB(t)}/content/updatedAfter?fromTime=0&limit=2&cursor=${updated.body.cursor}`, { headers: t.headers }))).toEqual([
      "t3",
      "f2",
    ]);
    // ...and is refused by the other.
    for (const path of [`createdAfter?fromTime=0&cursor=${updated.body.cursor}`, `updatedAfter?fromTime=0&cursor=${created.body.cursor}`]) {
      const r = await req(`${pathB(t)}/content/${path}`, { headers: t.headers });
      expectProblem(r, 400, "cursor does not belong to this list");
      expect(r.body.errors).toEqual([{ path: "cursor", message: "cursor from another list" }]);
    }
  });

  it("B4: type filter", async () => {
    const r = await req(`${pathB(t)}/content/createdAfter?fromTime=0&type=text`, { headers: t.headers });
    expectJson(r, 200);
    expect(titles(r)).toEqual(["t1", "t3", "t5"]);
    const flows = await req(`${pathB(t)}/content/createdAfter?fromTime=0&type=flow`, { headers: t.headers });
    expect(titles(flows)).toEqual(["f2"]);
    expectProblem(await req(`${pathB(t)}/content/createdAfter?fromTime=0&type=podcast`, { headers: t.headers }), 400);
    // The problem names the query parameter the caller sent (`type`), not the GraphQL variable it fills (`filter`).
    for (const route of ["createdAfter", "updatedAfter"]) {
      const upper = await req(`${pathB(t)}/content/${route}?fromTime=1&type=FLOW`, { headers: t.headers });
      expectProblem(upper, 400, /^type: Value "FLOW" does not exist in "ContentType" enum/);
      expect(upper.body.errors).toEqual([{ path: "type", message: expect.stringMatching(/^Value "FLOW" does not exist/) }]);
    }
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
    expectProblem(await req(`${base}?fromTime=`, { headers: t.headers }), 400, "fromTime must not be empty (leave the parameter out instead)");
    expectProblem(await req(`${base}?fromTime=yesterday`, { headers: t.headers }), 400, "fromTime must be an integer");
    expectProblem(await req(`${base}?fromTime=-1`, { headers: t.headers }), 400, "fromTime must be between 0 and 253402300799999");
    expectProblem(await req(`${base}?fromTime=9000000000000000`, { headers: t.headers }), 400, /Timestamp|fromTime/);
    expectProblem(await req(`${base}?fromTime=0&limit=10001`, { headers: t.headers }), 400, "limit must be between 1 and 10000");
    expectProblem(await req(`${base}?fromTime=0&cursor=abc`, { headers: t.headers }), 400, /cursor/);
  });
});
