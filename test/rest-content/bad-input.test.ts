// REST content routes over real HTTP: bad input on the write routes, every 4xx, and nothing written.
import { describe, expect, it } from "vitest";
import { newId } from "../../src/ids.js";
import { makeTag } from "../factories/tags.js";
import { expectJson, expectProblem, pathA, pathB, prisma, tenant } from "../helpers.js";
import { contentCount, createA, dbState, req, withServer, write } from "./shared.js";

withServer();

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
      [
        { title: "x", type: "text", description_md: 7 },
        p === pathA ? /^body\[1\]: unknown field\(s\) description_md$/ : /^body\[1\]\.description_md: String cannot represent a non string value: 7$/,
      ],
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
    const tag = await makeTag(t.accountId, "n");
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
    const tag = await makeTag(t.accountId, "bulk-tag");
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
      ["POST", { title: "t", type: "link", url: "https://x.example", description: big }, "description must be at most 10000 characters"],

      ["POST", { title: "t", type: "link", url: `https://x.example/${big}` }, "url must be at most 2048 characters"],
    ];
    for (const [method, item, detail] of cases) {
      for (const p of [pathA, pathB]) {
        const r = await req(`${p(t)}/content`, { method, headers: t.headers, body: [item] });
        expectProblem(r, 400, detail);
      }
    }
    expectProblem(
      await req(`${pathB(t)}/content`, { method: "POST", headers: t.headers, body: [{ title: "t", type: "text", description_md: big }] }),
      400,
      "description_md must be at most 100000 characters",
    );
    expect(await contentCount(t)).toBe(0);
    const [c] = await createA(t, [{ title: "small", type: "text" }]);
    const before = await dbState(t.accountId);
    for (const p of [pathA, pathB]) {
      const r = await req(`${p(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, title: big }] });
      expectProblem(r, 400, "title must be at most 500 characters");
      const r2 = await req(`${p(t)}/content`, { method: "PUT", headers: t.headers, body: [{ id: c.id, description: big }] });
      // (Style B sets no description on text content at all.)
      expectProblem(
        r2,
        400,
        p === pathA ? "description must be at most 10000 characters" : "description is allowed on link content only (text content takes description_md)",
      );
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
