// End users over REST: style B (B12-B15, what B13/B14 `fields` read), and the id types
// (useridType / userid-type).
import { beforeAll, describe, expect, it } from "vitest";
import { expectProblem, prisma, sqlOf, type Tenant } from "../helpers.js";
import { A, B, b, fresh, get, post, put, rawPut, tables, withServer } from "./shared.js";

withServer();

// ---- end users, style B -------------------------------------------------------------------------------

describe("end users, style B (B12–B15)", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await fresh("userb");
    const r = await put(`${B(t)}/endUsers`, t, [
      { id: "seg", custom: { plan: "gold", score: 7 }, userActionCount: { clicked: 4, viewed: 1 }, userActions: { clicked: 1_700_000_000_000 } },
    ]);
    expect(r.status, r.text).toBe(201);
  });

  it("B12 PUT /endUsers: 201 with userActionCount and userActions, then merges per action id (200)", async () => {
    const c = await put(`${B(t)}/endUsers`, t, [{ id: "hank", custom: { plan: "p" }, userActionCount: { a: 2, b: 5 }, userActions: { a: 10 } }]);
    expect(c.status).toBe(201);
    expect(c.body.data[0]).toEqual({
      id: "hank",
      creationTime: expect.any(Number),
      lastUpdateTime: expect.any(Number),
      custom: { plan: "p" },
      userActionCount: { a: 2, b: 5 },
      userActions: { a: 10 },
    });
    const u = await put(`${B(t)}/endUsers`, t, [{ id: "hank", userActionCount: { a: 3, c: 1 }, userActions: { b: -4 } }]);
    expect(u.status).toBe(200);
    expect(u.body.data[0]).toMatchObject({ custom: { plan: "p" }, userActionCount: { a: 3, b: 5, c: 1 }, userActions: { a: 10, b: -4 } });
    const rows = await prisma.endUserAction.findMany({ where: { endUser: { accountId: t.accountId, externalId: "hank" } }, orderBy: { actionId: "asc" } });
    expect(rows.map((r) => [r.actionId, r.count, r.value == null ? null : Number(r.value)])).toEqual([
      ["a", 3, 10],
      ["b", 5, -4],
      ["c", 1, null],
    ]);
  });

  it("B12: a created user's reply is what a read returns, built from what was written (no read-back); updated users are read back", async () => {
    const custom = { plan: "x".repeat(300), score: -1.5e300, active: false, seenAt: 253_402_300_799_999, ssn: "é✓ 𝄞" };
    await put(`${B(t)}/endUsers`, t, [{ id: "rb-old", custom: { plan: "before", score: 1 }, userActionCount: { kept: 9 } }]);
    const r = await put(`${B(t)}/endUsers`, t, [
      { id: "rb-new", custom, userActionCount: { a: 2, b: 0 }, userActions: { a: -7, c: Number.MAX_SAFE_INTEGER } },
      { id: "rb-bare" },
      { id: "rb-old", custom: { plan: "after", active: true }, userActions: { z: 1 } },
    ]);
    expect(r.status, r.text.slice(0, 300)).toBe(201);
    for (const [i, id] of ["rb-new", "rb-bare", "rb-old"].entries()) {
      const read = await post(`${B(t)}/endUsers/lookup`, t, { id });
      expect(read.status).toBe(200);
      expect(r.body.data[i], id).toEqual(read.body);
    }
    expect(r.body.data[0]).toMatchObject({ custom, userActionCount: { a: 2, b: 0, c: 0 }, userActions: { a: -7, c: Number.MAX_SAFE_INTEGER } });
    expect(r.body.data[1]).toMatchObject({ custom: {}, userActionCount: {}, userActions: {} });
    expect(r.body.data[2]).toMatchObject({ custom: { plan: "after", score: 1, active: true }, userActionCount: { kept: 9, z: 0 }, userActions: { z: 1 } });
    // A request that only creates reads neither values nor actions: nothing of a new user is stored yet.
    const created = await sqlOf(() => put(`${B(t)}/endUsers`, t, [{ id: "rb-new2", custom, userActionCount: { a: 1 }, userActions: { b: 2 } }]));
    expect(created.result.status).toBe(201);
    const reads = created.sql.filter((q) => /^\s*SELECT/i.test(q));
    expect(tables(reads), reads.join("\n")).toEqual({ actions: false, values: false });
    expect(created.result.body.data[0]).toEqual((await post(`${B(t)}/endUsers/lookup`, t, { id: "rb-new2" })).body);
  });

  it("B12: 207 mixed, 400 when all fail; bad action maps are item failures", async () => {
    const r = await put(`${B(t)}/endUsers`, t, [
      { id: "ivy", userActionCount: { a: 1 } },
      { id: "jack", userActionCount: { a: -1 } },
      { id: "kim", userActionCount: { a: 1.5 } },
      { id: "lee", userActions: { a: "soon" } },
      { id: "max", userActionCount: [1, 2] },
      { id: "ned", userActionCount: { a: 2 ** 31 } },
      { id: "oli", userActionCount: { ["q".repeat(129)]: 1 } },
    ]);
    expect(r.status).toBe(207);
    expect(r.body.success).toEqual([{ index: 0, id: "ivy", statusCode: 201 }]);
    expect(r.body.failure.map((f: any) => [f.id, f.statusCode, f.errors[0]])).toEqual([
      ["jack", 400, "userActionCount.a must be a non-negative integer"],
      ["kim", 400, "userActionCount.a must be a non-negative integer"],
      ["lee", 400, "userActions.a must be an integer"],
      ["max", 400, "userActionCount must be an object of user-action id → integer"],
      ["ned", 400, "userActionCount.a must be at most 2147483647"],
      ["oli", 400, "userActionCount: user-action ids must be 1-128 characters"],
    ]);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: { in: ["jack", "kim", "lee", "max", "ned", "oli"] } } })).toBe(0);
    expectProblem(await put(`${B(t)}/endUsers`, t, [{ id: "nina", custom: { score: "x" } }]), 400);
  });

  it("B12: custom, userActionCount or userActions null is an item failure naming the map (null clears a value, never a whole map); stored values stay", async () => {
    const before = await prisma.endUser.findFirstOrThrow({ where: { accountId: t.accountId, externalId: "seg" }, include: { values: true, actions: true } });
    const r = await put(`${B(t)}/endUsers`, t, [
      { id: "seg", custom: null },
      { id: "seg2", userActionCount: null },
      { id: "seg3", userActions: null },
      { id: "seg4", custom: { plan: null } },
    ]);
    expect(r.status, r.text).toBe(207);
    expect(r.body.success).toEqual([{ index: 3, id: "seg4", statusCode: 201 }]);
    expect(r.body.failure).toEqual([
      { index: 0, id: "seg", statusCode: 400, errors: ["custom cannot be null: give an object of field name → value (a field given as null is cleared)"] },
      { index: 1, id: "seg2", statusCode: 400, errors: ["userActionCount cannot be null: give an object of user-action id → integer"] },
      { index: 2, id: "seg3", statusCode: 400, errors: ["userActions cannot be null: give an object of user-action id → integer"] },
    ]);
    expect(await prisma.endUser.findFirstOrThrow({ where: { accountId: t.accountId, externalId: "seg" }, include: { values: true, actions: true } })).toEqual(
      before,
    );
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: { in: ["seg2", "seg3"] } } })).toBe(0);
  });

  it("B13 POST /endUsers/lookup: both field sets by default, 404 for an unknown id", async () => {
    const r = await post(`${B(t)}/endUsers/lookup`, t, { id: "seg" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: "seg",
      creationTime: expect.any(Number),
      lastUpdateTime: expect.any(Number),
      custom: { plan: "gold", score: 7 },
      userActionCount: { clicked: 4, viewed: 1 },
      userActions: { clicked: 1_700_000_000_000 },
    });
    expectProblem(await post(`${B(t)}/endUsers/lookup`, t, { id: "ghost" }), 404);
  });

  it("B13 fields: custom only reads no user actions; useraction only reads no custom values; neither reads both", async () => {
    const custom = await sqlOf(() => post(`${B(t)}/endUsers/lookup`, t, { id: "seg", fields: ["custom"] }));
    expect(custom.result.status).toBe(200);
    expect(custom.result.body.custom).toEqual({ plan: "gold", score: 7 });
    expect(custom.result.body).not.toHaveProperty("userActionCount");
    expect(custom.result.body).not.toHaveProperty("userActions");
    expect(tables(custom.sql)).toEqual({ actions: false, values: true });

    const actions = await sqlOf(() => post(`${B(t)}/endUsers/lookup`, t, { id: "seg", fields: ["useraction"] }));
    expect(actions.result.status).toBe(200);
    expect(actions.result.body).not.toHaveProperty("custom");
    expect(actions.result.body).toMatchObject({ userActionCount: { clicked: 4, viewed: 1 }, userActions: { clicked: 1_700_000_000_000 } });
    expect(tables(actions.sql)).toEqual({ actions: true, values: false });

    for (const fields of [undefined, ["custom", "useraction"]]) {
      const both = await sqlOf(() => post(`${B(t)}/endUsers/lookup`, t, { id: "seg", ...(fields ? { fields } : {}) }));
      expect(both.result.body).toHaveProperty("custom");
      expect(both.result.body).toHaveProperty("userActionCount");
      expect(tables(both.sql)).toEqual({ actions: true, values: true });
    }
  });

  it("B14 GET /endUsers/{id}?fields=: the same rules, 404 for an unknown id", async () => {
    const custom = await sqlOf(() => get(`${B(t)}/endUsers/seg?fields=custom`, t));
    expect(custom.result.status).toBe(200);
    expect(Object.keys(custom.result.body).sort()).toEqual(["creationTime", "custom", "id", "lastUpdateTime"]);
    expect(tables(custom.sql)).toEqual({ actions: false, values: true });

    const actions = await sqlOf(() => get(`${B(t)}/endUsers/seg?fields=useraction`, t));
    expect(Object.keys(actions.result.body).sort()).toEqual(["creationTime", "id", "lastUpdateTime", "userActionCount", "userActions"]);
    expect(tables(actions.sql)).toEqual({ actions: true, values: false });

    for (const q of ["", "?fields=custom,useraction", "?fields=custom&fields=useraction"]) {
      const both = await sqlOf(() => get(`${B(t)}/endUsers/seg${q}`, t));
      expect(both.result.status).toBe(200);
      expect(both.result.body).toMatchObject({ custom: { plan: "gold" }, userActionCount: { clicked: 4 } });
      expect(tables(both.sql)).toEqual({ actions: true, values: true });
    }
    expectProblem(await get(`${B(t)}/endUsers/ghost?fields=custom`, t), 404);
  });

  it("B13/B14: an unknown field set or a missing id is a 400", async () => {
    expectProblem(await post(`${B(t)}/endUsers/lookup`, t, { id: "seg", fields: ["custom", "everything"] }), 400);
    expectProblem(await post(`${B(t)}/endUsers/lookup`, t, { id: "seg", fields: [] }), 400);
    expectProblem(await post(`${B(t)}/endUsers/lookup`, t, { id: "seg", fields: [1] }), 400);
    expectProblem(await post(`${B(t)}/endUsers/lookup`, t, { fields: ["custom"] }), 400);
    expectProblem(await post(`${B(t)}/endUsers/lookup`, t, { id: 12 }), 400);
    expectProblem(await post(`${B(t)}/endUsers/lookup`, t, ["seg"]), 400);
    // A misspelt member is not read as absent.
    expectProblem(
      await post(`${B(t)}/endUsers/lookup`, t, { id: "seg", field: ["custom"] }),
      400,
      "body: unknown field(s) field (B13 takes id, fields, useridType)",
    );
    expectProblem(await get(`${B(t)}/endUsers/seg?fields=profile`, t), 400);
  });

  it("B15 PUT /endUsers/{id}: {errors:[], id, statusCode} with 201 then 200; failures in the same shape", async () => {
    const c = await put(`${B(t)}/endUsers/olga`, t, { plan: "trial", active: true });
    expect(c.status).toBe(201);
    expect(c.body).toEqual({ errors: [], id: "olga", statusCode: 201 });
    const u = await put(`${B(t)}/endUsers/olga`, t, { active: false });
    expect(u.status).toBe(200);
    expect(u.body).toEqual({ errors: [], id: "olga", statusCode: 200 });

    const bad = await put(`${B(t)}/endUsers/olga`, t, { active: "no", seenAt: -62_135_596_800_001, mystery: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      errors: [
        "custom.active must be true or false",
        "custom.seenAt must be an integer of epoch milliseconds from -62135596800000 (0001-01-01T00:00:00.000Z) to 253402300799999 (9999-12-31T23:59:59.999Z)",
        "unknown custom field 'mystery' (add it to the end-user schema first)",
      ],
      id: "olga",
      statusCode: 400,
    });
    const notObject = await put(`${B(t)}/endUsers/olga`, t, [{ plan: "x" }]);
    expect(notObject.status).toBe(400);
    expect(notObject.body).toEqual({ errors: ["body must be a JSON object of custom field name → value"], id: "olga", statusCode: 400 });
    const newBad = await put(`${B(t)}/endUsers/pete`, t, { score: "NaN" });
    expect(newBad.body).toEqual({ errors: ["custom.score must be a number"], id: "pete", statusCode: 400 });
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: "pete" } })).toBe(0);
    expect((await get(`${B(t)}/endUsers/olga?fields=custom`, t)).body.custom).toEqual({ plan: "trial", active: false });
  });

  // The contract: single end-user updates answer *failures* with {errors, id, statusCode}, so a
  // body that does not parse as a JSON object must get that shape too, not problem+json. (The JSON
  // parser's errors reach the app's error handler, past the route's errorBody: src/rest/router.ts.)
  it("B15 / style A single update: malformed JSON and non-object JSON fail in the same shape", async () => {
    for (const url of [`${B(t)}/endUsers/olga`, `${A(t)}/endUsers/olga`]) {
      for (const raw of ['{"plan": ', '"plan=x"', "42"]) {
        const r = await rawPut(url, t, raw);
        expect(r.status, `${url} ${raw}`).toBe(400);
        expect(r.body, `${url} ${raw}`).toEqual({ errors: [expect.any(String)], id: "olga", statusCode: 400 });
      }
    }
  });

  it("B15 on another account: 403 in the same shape", async () => {
    const r = await put(`${B(b)}/endUsers/olga`, t, { plan: "x" });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ errors: [expect.stringMatching(/no access/)], id: "olga", statusCode: 403 });
  });
});

// ---- identification method ------------------------------------------------------------------------------

describe("useridType / userid-type", () => {
  let cookie: Tenant;
  let app: Tenant;
  beforeAll(async () => {
    cookie = await fresh("idc");
    app = await fresh("ida", { idMethod: "app_user_id" });
    expect((await put(`${B(cookie)}/endUsers/c1`, cookie, { plan: "c" })).status).toBe(201);
    expect((await put(`${B(app)}/endUsers/a1`, app, { plan: "a" })).status).toBe(201);
  });

  it("a matching id type is a 200", async () => {
    const c13 = await post(`${B(cookie)}/endUsers/lookup`, cookie, { id: "c1", useridType: "svc-cookie-user-id" });
    expect(c13.status).toBe(200);
    expect(c13.body.custom).toEqual({ plan: "c" });
    expect((await get(`${B(cookie)}/endUsers/c1?userid-type=svc-cookie-user-id`, cookie)).status).toBe(200);
    const a13 = await post(`${B(app)}/endUsers/lookup`, app, { id: "a1", useridType: "svc-app-user-id", fields: ["custom"] });
    expect(a13.status).toBe(200);
    expect(a13.body.custom).toEqual({ plan: "a" });
    expect((await get(`${B(app)}/endUsers/a1?userid-type=svc-app-user-id&fields=useraction`, app)).status).toBe(200);
  });

  it("a mismatched id type is a 400", async () => {
    const m1 = await post(`${B(cookie)}/endUsers/lookup`, cookie, { id: "c1", useridType: "svc-app-user-id" });
    expectProblem(m1, 400);
    expect(m1.body.detail).toMatch(/does not match the account's identification method \(cookie\)/);
    expectProblem(await get(`${B(cookie)}/endUsers/c1?userid-type=svc-app-user-id`, cookie), 400);
    expectProblem(await post(`${B(app)}/endUsers/lookup`, app, { id: "a1", useridType: "svc-cookie-user-id" }), 400);
    const m4 = await get(`${B(app)}/endUsers/a1?userid-type=svc-cookie-user-id`, app);
    expectProblem(m4, 400);
    expect(m4.body.detail).toMatch(/app_user_id/);
    // Each names the input its caller sent: B13's body field, B14's query parameter.
    expect(m1.body.errors).toEqual([{ path: "useridType", message: "account uses cookie" }]);
    expect(m4.body.errors).toEqual([{ path: "userid-type", message: "account uses app_user_id" }]);
  });

  it("a mismatch is a 400 even for an unknown id (the type is checked first)", async () => {
    expectProblem(await get(`${B(app)}/endUsers/nobody?userid-type=svc-cookie-user-id`, app), 400);
  });

  it("an unknown id type is a 400", async () => {
    const r = await post(`${B(cookie)}/endUsers/lookup`, cookie, { id: "c1", useridType: "svc-email" });
    expectProblem(r, 400);
    expect(r.body.errors).toEqual([{ path: "useridType", message: "unknown id type" }]);
    expectProblem(await post(`${B(cookie)}/endUsers/lookup`, cookie, { id: "c1", useridType: 3 }), 400);
    const q = await get(`${B(cookie)}/endUsers/c1?userid-type=cookie`, cookie);
    expectProblem(q, 400);
    expect(q.body.errors).toEqual([{ path: "userid-type", message: "unknown id type" }]);
  });
});
