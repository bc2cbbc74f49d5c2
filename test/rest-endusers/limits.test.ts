// End users over REST: bulk limits, tenant isolation and bad input.
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectProblem, prisma, type Reply, type Tenant } from "../helpers.js";
import { A, a, B, b, del, fresh, get, post, put, rawPut, withFields, withServer } from "./shared.js";

withServer();

// ---- bulk limits -------------------------------------------------------------------------------------------

describe("bulk limits", () => {
  it("PUT of 10,000 end users in one request: 201, all stored with their values", async () => {
    const t = await fresh("bulk");
    const users = Array.from({ length: 10_000 }, (_, i) => ({ id: `bulk-${i}`, custom: { score: i, plan: i % 2 ? "odd" : "even" } }));
    const r = await put(`${A(t)}/endUsers`, t, users);
    expect(r.status, r.text.slice(0, 500)).toBe(201);
    expect(r.body.data).toHaveLength(10_000);
    expect(r.body.data[9_999]).toMatchObject({ id: "bulk-9999", custom: { score: 9_999, plan: "odd" } });
    expect(await prisma.endUser.count({ where: { accountId: t.accountId } })).toBe(10_000);
    expect(await prisma.endUserValue.count({ where: { accountId: t.accountId } })).toBe(20_000);

    // Updating a thousand of them with actions (style B): all existed → 200, values merged.
    const some = users.slice(0, 1_000).map((u, i) => ({ id: u.id, custom: { active: true }, userActionCount: { [`act${i % 3}`]: 1 } }));
    const again = await put(`${B(t)}/endUsers`, t, some);
    expect(again.status, again.text.slice(0, 500)).toBe(200);
    expect(again.body.data[1]).toMatchObject({ id: "bulk-1", custom: { score: 1, plan: "odd", active: true }, userActionCount: { act1: 1 } });
    expect(await prisma.endUserValue.count({ where: { accountId: t.accountId } })).toBe(21_000);
    expect(await prisma.endUserAction.count({ where: { endUser: { accountId: t.accountId } } })).toBe(1_000);
  }, 120_000);

  it("PUT of 10,001 end users is a 400 and writes nothing", async () => {
    const t = await fresh("bulk2");
    const users = Array.from({ length: 10_001 }, (_, i) => ({ id: `over-${i}` }));
    for (const url of [`${A(t)}/endUsers`, `${B(t)}/endUsers`]) {
      const r = await put(url, t, users);
      expectProblem(r, 400);
      expect(r.body.detail).toMatch(/at most 10000/);
    }
    expect(await prisma.endUser.count({ where: { accountId: t.accountId } })).toBe(0);
  }, 60_000);

  it("an empty array is a 400", async () => {
    expectProblem(await put(`${A(a)}/endUsers`, a, []), 400);
    expectProblem(await put(`${A(a)}/endUserSchema`, a, []), 400);
  });
});

// ---- tenant isolation --------------------------------------------------------------------------------------

describe("tenant isolation", () => {
  it("account A's key cannot read, write or delete account B's end users or schema (403); B is unchanged", async () => {
    await withFields(b);
    expect((await put(`${B(b)}/endUsers`, b, [{ id: "bu1", custom: { plan: "b-plan" }, userActionCount: { x: 1 } }])).status).toBe(201);
    const snapshot = async () => ({
      users: await prisma.endUser.findMany({ where: { accountId: b.accountId }, include: { values: true, actions: true }, orderBy: { id: "asc" } }),
      fields: await prisma.endUserField.findMany({ where: { accountId: b.accountId }, orderBy: { name: "asc" } }),
    });
    const before = await snapshot();

    const attempts: [string, Promise<Reply>][] = [
      ["GET A list", get(`${A(b)}/endUsers`, a)],
      ["GET A one", get(`${A(b)}/endUsers/bu1`, a)],
      ["PUT A list", put(`${A(b)}/endUsers`, a, [{ id: "bu1", custom: { plan: "hacked" } }])],
      ["PUT A one", put(`${A(b)}/endUsers/bu1`, a, { plan: "hacked" })],
      ["DELETE A", del(`${A(b)}/endUsers/bu1`, a)],
      ["GET A schema", get(`${A(b)}/endUserSchema`, a)],
      ["GET A schema field", get(`${A(b)}/endUserSchema/plan`, a)],
      [
        "PUT A schema",
        put(`${A(b)}/endUserSchema`, a, [
          { name: "plan", description: "hacked" },
          { name: "evil", type: "string" },
        ]),
      ],
      ["DELETE A schema", del(`${A(b)}/endUserSchema/plan`, a)],
      ["B10", get(`${B(b)}/endUserSchema?fieldName=plan`, a)],
      ["B11", put(`${B(b)}/endUserSchema`, a, [{ name: "evil", type: "string" }])],
      ["DELETE B schema", del(`${B(b)}/endUserSchema/plan`, a)],
      ["B12", put(`${B(b)}/endUsers`, a, [{ id: "bu1", userActionCount: { x: 99 } }])],
      ["B13", post(`${B(b)}/endUsers/lookup`, a, { id: "bu1" })],
      ["B14", get(`${B(b)}/endUsers/bu1?fields=custom`, a)],
      ["B15", put(`${B(b)}/endUsers/bu1`, a, { plan: "hacked" })],
    ];
    for (const [what, p] of attempts) {
      const r = await p;
      expect(r.status, `${what}: ${r.text}`).toBe(403);
      expect(r.text).not.toContain("b-plan");
    }
    expect(await snapshot()).toEqual(before);
    // Without credentials: 401.
    expect((await call(`${A(b)}/endUsers`)).status).toBe(401);
  });
});

// ---- bad input -------------------------------------------------------------------------------------------

describe("bad input", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await fresh("badin");
  });

  it.each([
    ["an object", { id: "x" }],
    ["a string", "x"],
    ["a number", 5],
    ["null", null],
    ["an array of non-objects", [1, "x"]],
    ["an array with null", [{ id: "x" }, null]],
  ])("PUT /endUsers with a body that is %s: 400", async (_what, body) => {
    for (const url of [`${A(t)}/endUsers`, `${B(t)}/endUsers`, `${A(t)}/endUserSchema`, `${B(t)}/endUserSchema`]) {
      expectProblem(await put(url, t, body), 400);
    }
  });

  it("wrong JSON types in end-user items are per-item 400s", async () => {
    const r = await put(`${A(t)}/endUsers`, t, [
      { id: "" },
      { id: "ok1", custom: ["plan", "x"] },
      { id: "ok2", custom: "plan=x" },
      { id: "x".repeat(257) },
      { id: "ok3", custom: { plan: { nested: true } } },
    ]);
    expectProblem(r, 400);
    expect(r.body.errors.map((e: any) => e.path)).toEqual(["[0]", "[1]", "[2]", "[3]", "[4]"]);
    expect(r.body.errors[1].message).toMatch(/custom must be an object/);
    expect(r.body.errors[4].message).toBe("custom.plan must be a string");
    // A non-string id is a type error of the whole request (GraphQL input coercion): 400, nothing written.
    const typed = await put(`${A(t)}/endUsers`, t, [{ id: "fine" }, { id: 5 }]);
    expectProblem(typed, 400);
    expect(typed.body.detail).toMatch(/body\[1\]\.id/);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("wrong JSON types in schema fields are a 400", async () => {
    expectProblem(await put(`${A(t)}/endUserSchema`, t, [{ name: 5, type: "string" }]), 400);
    expectProblem(await put(`${A(t)}/endUserSchema`, t, [{ name: "n", type: 3 }]), 400);
    expectProblem(await put(`${A(t)}/endUserSchema`, t, [{ name: "n", type: "string", description: ["d"] }]), 400);
    expectProblem(await put(`${A(t)}/endUserSchema`, t, [{ name: "n", type: "string", unique: true }]), 400);
    expect(await prisma.endUserField.count({ where: { accountId: t.accountId, name: "n" } })).toBe(0);
  });

  it("style A items cannot carry userActionCount or userActions (400); unknown keys are a 400 in both styles", async () => {
    const r1 = await put(`${A(t)}/endUsers`, t, [{ id: "sa", userActionCount: { a: 1 } }]);
    expectProblem(r1, 400);
    expect(r1.body.detail).toMatch(/unknown field\(s\) userActionCount/);
    expectProblem(await put(`${A(t)}/endUsers`, t, [{ id: "sa", userActions: { a: 1 } }]), 400);
    expectProblem(await put(`${B(t)}/endUsers`, t, [{ id: "sa", nickname: "x" }]), 400);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: "sa" } })).toBe(0);
    // Read-only fields of a record may be sent back unchanged.
    const round = await put(`${A(t)}/endUsers`, t, [{ id: "sa", creationTime: 1, lastUpdateTime: 2, custom: {} }]);
    expect(round.status).toBe(201);
    expect(round.body.data[0].creationTime).not.toBe(1);
  });

  it("malformed JSON is a 400 on every route with a body", async () => {
    for (const url of [
      `${A(t)}/endUsers`,
      `${B(t)}/endUsers`,
      `${A(t)}/endUserSchema`,
      `${B(t)}/endUserSchema`,
      `${A(t)}/endUsers/m1`,
      `${B(t)}/endUsers/m1`,
    ]) {
      const r = await rawPut(url, t, '[{"id": "m1",');
      expect(r.status, url).toBe(400);
    }
    expect((await rawPut(`${B(t)}/endUsers/lookup`, t, "{id:", "POST")).status).toBe(400);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: "m1" } })).toBe(0);
  });

  it("no JSON content type on a body route is a 415", async () => {
    const r = await call(`${A(t)}/endUsers`, { method: "PUT", headers: { ...t.headers, "content-type": "text/plain" }, raw: '[{"id":"x"}]' });
    expectProblem(r, 415);
  });
});
