// REST tag routes over real HTTP: GET /tags, DELETE /tags/{names}, and auth, tenant isolation and
// CORS on the tag routes.
import { beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../../src/admin.js";
import { makeTag } from "../factories/tags.js";
import { expectJson, expectProblem, prisma, type Reply, type Tenant, tenant } from "../helpers.js";
import { b64, contentTagNames, contentUpdatedHook, contentWithTags, createTags, dbState, dbTags, put, req, server, tags, withServer, write } from "./shared.js";

withServer();

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
    const page = await makeTag(t.accountId, "tag99", "PAGE");
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
    // Text with NUL would reach the database, which refuses it (a 500 on PostgreSQL).
    [`cursor=${b64(["t\u0000", "x"])}`, /^cursor is malformed/],
    [`cursor=${b64([1700000000000, "c_1"])}`, "cursor does not belong to this list"],
  ])("%s is a 400", async (query, detail) => {
    const t = await tenant();
    await createTags(t, [{ name: "a" }]);
    const r = await req(`${tags(t)}?${query}`, { headers: t.headers });
    expectProblem(r, 400, detail);
  });

  it("a tag cursor from another account is refused (it positioned the walk, skipping rows); one of an older release, without the account, still positions it", async () => {
    const a = await tenant();
    const b = await tenant();
    await createTags(a, [{ name: "a1" }, { name: "a2" }, { name: "a3" }]);
    await createTags(b, [{ name: "a1" }, { name: "b2" }]);
    const bPage = await req(`${tags(b)}?limit=1`, { headers: b.headers });
    const r = await req(`${tags(a)}?cursor=${encodeURIComponent(bPage.body.cursor)}`, { headers: a.headers });
    expectProblem(r, 400, "cursor belongs to another account's list");
    const legacy = Buffer.from(JSON.stringify(["a1", "x"])).toString("base64url");
    const resumed = await req(`${tags(a)}?cursor=${legacy}`, { headers: a.headers });
    expectJson(resumed, 200);
    expect(resumed.body.data.map((x: any) => x.name)).toEqual(["a2", "a3"]);
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

  it("a deleted tag is a change of the contents that carried it: lastUpdateTime bumped, audited, content.updated sent", async () => {
    const t = await tenant();
    await createTags(t, [{ name: "gone" }, { name: "stays" }]);
    const tagged = await contentWithTags(t, ["gone", "stays"]);
    const untouched = await contentWithTags(t, ["stays"]);
    const queued = await contentUpdatedHook(t.accountId);
    const before = await prisma.content.findUniqueOrThrow({ where: { id: tagged } });
    const untouchedBefore = await prisma.content.findUniqueOrThrow({ where: { id: untouched } });
    await new Promise((r) => setTimeout(r, 5));
    const r = await req(`${tags(t)}/gone`, { method: "DELETE", headers: t.headers });
    expect(r.status, r.text).toBe(204);
    const after = await prisma.content.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } });
    const byId = new Map(after.map((c) => [c.id, c]));
    expect(byId.get(tagged)!.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    expect(byId.get(untouched)!.updatedAt).toEqual(untouchedBefore.updatedAt);
    const audited = await prisma.auditLog.findMany({ where: { accountId: t.accountId, action: "update", resourceType: "content" } });
    expect(audited.map((e) => e.resourceId)).toEqual([tagged]);
    expect(await queued()).toEqual([expect.objectContaining({ id: tagged, tags: ["stays"], lastUpdateTime: byId.get(tagged)!.updatedAt.getTime() })]);
    const since = await req(`/v1/accounts/${t.accountId}/content/updatedAfter?fromTime=${untouchedBefore.updatedAt.getTime() + 1}`, { headers: t.headers });
    expect(since.body.data.map((d: { id: string }) => d.id)).toEqual([tagged]);
  });

  it("204 for tags of any type, and for names that need URL encoding", async () => {
    const t = await tenant();
    await makeTag(t.accountId, "a page", "PAGE");
    await makeTag(t.accountId, "rôle/x", "ROLE");
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
