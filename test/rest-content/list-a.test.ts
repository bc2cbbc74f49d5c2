// REST content routes over real HTTP: GET /api/v1/{accountId}/content, its pages, cursors and limits.
import { describe, expect, it } from "vitest";
import { makeContent } from "../factories/content.js";
import { makeTag } from "../factories/tags.js";
import { expectJson, expectProblem, pathA, tenant } from "../helpers.js";
import { b64, createA, dbRecord, req, walk, withServer } from "./shared.js";

withServer();

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
    const tag = await makeTag(t.accountId, "alpha");
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
        backdated = (await makeContent(t.accountId, { title: "old", createdAt: new Date("2001-01-01T00:00:00Z") })).id;
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
