// REST tag routes over real HTTP: PUT /v1/accounts/{accountId}/tags (B7) and its bad input, with the
// database checked after each call.
import { describe, expect, it } from "vitest";
import { makeTag } from "../factories/tags.js";
import { expectJson, expectProblem, prisma, tenant } from "../helpers.js";
import { contentTagNames, contentUpdatedHook, contentWithTags, createTags, dbState, dbTags, put, req, tags, withServer } from "./shared.js";

withServer();

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
    const page = await makeTag(t.accountId, "page-tag", "PAGE", "p");
    const role = await makeTag(t.accountId, "role-tag", "ROLE");
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

  it("a rename is a change of the contents carrying the tag (their style-B tags): lastUpdateTime bumped, audited, content.updated sent", async () => {
    const t = await tenant();
    await createTags(t, [{ name: "old" }, { name: "other" }]);
    const tagged = await contentWithTags(t, ["old"]);
    const untouched = await contentWithTags(t, ["other"]);
    const queued = await contentUpdatedHook(t.accountId);
    const before = await prisma.content.findUniqueOrThrow({ where: { id: tagged } });
    const untouchedBefore = await prisma.content.findUniqueOrThrow({ where: { id: untouched } });
    await new Promise((r) => setTimeout(r, 5));
    // A description alone changes no content.
    expectJson(
      await put(t, [
        { name: "other", description: "d" },
        { name: "old", newName: "new" },
      ]),
      200,
    );
    const after = new Map((await prisma.content.findMany({ where: { accountId: t.accountId } })).map((c) => [c.id, c]));
    expect(after.get(tagged)!.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    expect(after.get(untouched)!.updatedAt).toEqual(untouchedBefore.updatedAt);
    const audited = await prisma.auditLog.findMany({ where: { accountId: t.accountId, action: "update", resourceType: "content" } });
    expect(audited.map((e) => e.resourceId)).toEqual([tagged]);
    expect(await queued()).toEqual([expect.objectContaining({ id: tagged, tags: ["new"], lastUpdateTime: after.get(tagged)!.updatedAt.getTime() })]);
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

  it("all items failing with different statuses: 400 problem with each item's index, id, status and errors (a 2xx means something was applied)", async () => {
    const t = await tenant();
    const [p] = await createTags(t, [{ name: "p" }, { name: "q" }]);
    const before = await dbState(t.accountId);
    const r = await put(t, [
      { name: "nope", newName: "x" },
      { name: "p", newName: "q" },
    ]);
    expectProblem(r, 400, "All 2 items failed, with statuses 404, 409; see failure.");
    expect(r.body.failure).toEqual([
      { index: 0, id: null, statusCode: 404, errors: ["no tag named 'nope' to rename"] },
      { index: 1, id: p.id, statusCode: 409, errors: ["a tag named 'q' already exists"] },
    ]);
    expect(r.body.errors).toEqual([
      { path: "[0]", message: "no tag named 'nope' to rename" },
      { path: "[1]", message: "a tag named 'q' already exists" },
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
