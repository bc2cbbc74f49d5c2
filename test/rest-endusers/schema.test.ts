// End users over REST: the end-user schema, style A and style B (B10, B11 and the contract's GET/DELETE).
import { beforeAll, describe, expect, it } from "vitest";
import { expectProblem, gql, prisma, type Tenant, tenant } from "../helpers.js";
import { A, B, DEFAULT_NAMES, del, fresh, get, put, server, withServer } from "./shared.js";

withServer();

// ---- end-user schema ----------------------------------------------------------------------------

describe("end-user schema, style A", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant("schema");
  });

  it("GET /endUserSchema lists the default fields first, marked default, then custom fields by name", async () => {
    const before = await get(`${A(t)}/endUserSchema`, t);
    expect(before.status).toBe(200);
    expect(before.body.data.map((f: any) => f.name)).toEqual(DEFAULT_NAMES);
    expect(before.body.data.every((f: any) => f.default === true)).toBe(true);

    const r = await put(`${A(t)}/endUserSchema`, t, [
      { name: "zeta", type: "string" },
      { name: "alpha", type: "double", description: "A" },
    ]);
    expect(r.status).toBe(200); // schema PUTs answer 200 even when fields were added
    expect(r.body.data).toEqual([
      { name: "zeta", type: "string", description: null, default: false },
      { name: "alpha", type: "double", description: "A", default: false },
    ]);
    const after = await get(`${A(t)}/endUserSchema`, t);
    expect(after.body.data.map((f: any) => f.name)).toEqual([...DEFAULT_NAMES, "alpha", "zeta"]);
  });

  it("accepts every field type and rejects an unknown one (400)", async () => {
    const types = ["string", "double", "boolean", "timestamp", "encrypted_string"];
    const r = await put(
      `${A(t)}/endUserSchema`,
      t,
      types.map((type) => ({ name: `t_${type}`, type })),
    );
    expect(r.status).toBe(200);
    expect(r.body.data.map((f: any) => f.type)).toEqual(types);
    const bad = await put(`${A(t)}/endUserSchema`, t, [{ name: "t_int", type: "integer" }]);
    expectProblem(bad, 400);
    expect(await prisma.endUserField.count({ where: { accountId: t.accountId, name: "t_int" } })).toBe(0);
  });

  it("PUT updates the description of an existing field (200) and rejects a type change (400)", async () => {
    await put(`${A(t)}/endUserSchema`, t, [{ name: "tier", type: "string", description: "old" }]);
    const upd = await put(`${A(t)}/endUserSchema`, t, [{ name: "tier", description: "new" }]);
    expect(upd.status).toBe(200);
    expect(upd.body.data[0]).toEqual({ name: "tier", type: "string", description: "new", default: false });
    const same = await put(`${A(t)}/endUserSchema`, t, [{ name: "tier", type: "string", description: "newer" }]);
    expect(same.status).toBe(200);

    const change = await put(`${A(t)}/endUserSchema`, t, [{ name: "tier", type: "double" }]);
    expectProblem(change, 400);
    expect(change.body.detail).toMatch(/type of 'tier' is string and cannot change/);
    const row = await prisma.endUserField.findUniqueOrThrow({ where: { accountId_name: { accountId: t.accountId, name: "tier" } } });
    expect(row).toMatchObject({ type: "string", description: "newer" });
  });

  it("requires a type to add a field (400)", async () => {
    const r = await put(`${A(t)}/endUserSchema`, t, [{ name: "untyped" }]);
    expectProblem(r, 400);
    expect(r.body.detail).toMatch(/type is required/);
  });

  it.each([
    ["digit first", "1field"],
    ["dash", "my-field"],
    ["65 characters", "f".repeat(65)],
    ["empty", ""],
    ["space", "my field"],
  ])("rejects a bad field name (%s) with 400", async (_what, name) => {
    const r = await put(`${A(t)}/endUserSchema`, t, [{ name, type: "string" }]);
    expectProblem(r, 400);
    expect(r.body.errors[0]).toMatchObject({ path: "[0]" });
    expect(await prisma.endUserField.count({ where: { accountId: t.accountId, name } })).toBe(0);
  });

  it("accepts a 64-character name; a bad name next to a good one is a 207 failure item", async () => {
    const long = `x${"y".repeat(63)}`;
    const r = await put(`${A(t)}/endUserSchema`, t, [
      { name: long, type: "boolean" },
      { name: "bad-name", type: "string" },
    ]);
    expect(r.status).toBe(207);
    expect(r.body.success).toEqual([{ index: 0, id: long, statusCode: 201 }]);
    expect(r.body.failure).toEqual([{ index: 1, id: null, statusCode: 400, errors: [expect.stringMatching(/name 'bad-name' is invalid/)] }]);
  });

  it("default fields cannot be changed: a 207 failure item names the reason", async () => {
    const r = await put(`${A(t)}/endUserSchema`, t, [
      { name: "email", type: "double", description: "mine" },
      { name: "okField", type: "string" },
    ]);
    expect(r.status).toBe(207);
    expect(r.body.failure).toEqual([{ index: 0, id: "email", statusCode: 400, errors: ["'email' is a default field and cannot be changed"] }]);
    expect(r.body.success).toEqual([{ index: 1, id: "okField", statusCode: 201 }]);
    const email = await get(`${A(t)}/endUserSchema/email`, t);
    expect(email.body).toEqual({ name: "email", type: "string", description: "E-mail address of the end user.", default: true });
  });

  it("GET ?fieldName narrows to one field; an unknown fieldName is a 404", async () => {
    const one = await get(`${A(t)}/endUserSchema?fieldName=tier`, t);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual([{ name: "tier", type: "string", description: "newer", default: false }]);
    const dflt = await get(`${A(t)}/endUserSchema?fieldName=signupTime`, t);
    expect(dflt.body.data).toEqual([expect.objectContaining({ name: "signupTime", type: "timestamp", default: true })]);
    expectProblem(await get(`${A(t)}/endUserSchema?fieldName=nope`, t), 404);
  });

  it("GET /endUserSchema/{fieldName}: 200 with the field, 404 when unknown", async () => {
    const r = await get(`${A(t)}/endUserSchema/tier`, t);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name: "tier", type: "string", description: "newer", default: false });
    expectProblem(await get(`${A(t)}/endUserSchema/nope`, t), 404);
  });

  it("DELETE /endUserSchema/{names}: 204 all, 207 some (404 item), 404 none", async () => {
    await put(`${A(t)}/endUserSchema`, t, [
      { name: "d1", type: "string" },
      { name: "d2", type: "string" },
      { name: "d3", type: "string" },
    ]);
    const all = await del(`${A(t)}/endUserSchema/d1,d2`, t);
    expect(all.status).toBe(204);
    expect(all.text).toBe("");
    const some = await del(`${A(t)}/endUserSchema/ghost,d3`, t);
    expect(some.status).toBe(207);
    expect(some.body).toEqual({
      success: [{ index: 1, id: "d3", statusCode: 204 }],
      failure: [{ index: 0, id: "ghost", statusCode: 404, errors: ["no custom field named 'ghost'"] }],
    });
    expectProblem(await del(`${A(t)}/endUserSchema/ghost,phantom`, t), 404);
    expect(await prisma.endUserField.count({ where: { accountId: t.accountId, name: { in: ["d1", "d2", "d3"] } } })).toBe(0);
  });

  it("default fields cannot be deleted: 207 failure item naming the reason, 400 when alone", async () => {
    await put(`${A(t)}/endUserSchema`, t, [{ name: "gone", type: "string" }]);
    const r = await del(`${A(t)}/endUserSchema/role,gone`, t);
    expect(r.status).toBe(207);
    expect(r.body.failure).toEqual([{ index: 0, id: "role", statusCode: 400, errors: ["'role' is a default field and cannot be deleted"] }]);
    expect(r.body.success).toEqual([{ index: 1, id: "gone", statusCode: 204 }]);
    const alone = await del(`${A(t)}/endUserSchema/email`, t);
    expectProblem(alone, 400);
    expect(alone.body.detail).toMatch(/default field and cannot be deleted/);
    expect((await get(`${A(t)}/endUserSchema/email`, t)).status).toBe(200);
  });

  it("deleting a field deletes every end user's value of it, and nothing else", async () => {
    const u = await fresh("fdel");
    await put(`${A(u)}/endUserSchema`, u, [{ name: "doomed", type: "string" }]);
    const users = ["u1", "u2", "u3"].map((id) => ({ id, custom: { doomed: `v-${id}`, plan: "p" } }));
    expect((await put(`${A(u)}/endUsers`, u, [...users, { id: "u4", custom: { plan: "p" } }])).status).toBe(201);
    expect(await prisma.endUserValue.count({ where: { accountId: u.accountId, field: "doomed" } })).toBe(3);
    await new Promise((r) => setTimeout(r, 5));
    const t0 = Date.now();

    expect((await del(`${A(u)}/endUserSchema/doomed`, u)).status).toBe(204);
    // Each user who lost a value changed (a sync by updatedSince sees it); u4 did not. The field's
    // deletion entry is the audit's record of it (no entry per user).
    const since = await get(`${A(u)}/endUsers?updatedSince=${t0}&limit=100`, u);
    expect(since.body.data.map((e: { id: string }) => e.id).sort()).toEqual(["u1", "u2", "u3"]);
    const lastUpdate = since.body.data[0].lastUpdateTime;
    expect(lastUpdate).toBeGreaterThanOrEqual(t0);
    expect(lastUpdate).toBeLessThanOrEqual(Date.now());
    expect(await prisma.auditLog.count({ where: { accountId: u.accountId, resourceType: "endUser", action: "update" } })).toBe(0);
    expect(await prisma.endUserValue.count({ where: { accountId: u.accountId, field: "doomed" } })).toBe(0);
    expect(await prisma.endUserValue.count({ where: { accountId: u.accountId, field: "plan" } })).toBe(4);
    expect((await get(`${A(u)}/endUsers/u1`, u)).body.custom).toEqual({ plan: "p" });
    // Adding it again starts empty, with any type.
    expect((await put(`${A(u)}/endUserSchema`, u, [{ name: "doomed", type: "double" }])).status).toBe(200);
    expect((await put(`${A(u)}/endUsers/u1`, u, { doomed: 2.5 })).status).toBe(200);
  });

  it("a field a segment's rule reads cannot be deleted (409 naming the segments); others go in the same call", async () => {
    const u = await fresh("fseg");
    await put(`${A(u)}/endUserSchema`, u, [
      { name: "tier", type: "double" },
      { name: "company", type: "string" },
      { name: "spare", type: "string" },
    ]);
    expect(
      (
        await put(`${B(u)}/integrationAttributeSchema`, u, [
          { name: "company", type: "string" },
          { name: "region", type: "string" },
        ])
      ).status,
    ).toBe(200);
    const CREATE = `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }`;
    for (const [name, rule] of [
      ["big", { field: "custom.tier", op: "gt", value: 5 }],
      ["emea", { not: { field: "attribute.company.region", op: "eq", value: "emea" } }],
      [
        "also-big",
        {
          or: [
            { field: "custom.tier", op: "gte", value: 9 },
            { field: "custom.tier", op: "exists" },
          ],
        },
      ],
    ] as const) {
      const r = await gql(server, u, CREATE, { a: u.accountId, input: { name, rule, contentIds: [] } });
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    }
    const r = await del(`${A(u)}/endUserSchema/tier,company,spare`, u);
    expect(r.status, r.text).toBe(207);
    expect(r.body).toEqual({
      success: [{ index: 2, id: "spare", statusCode: 204 }],
      failure: [
        {
          index: 0,
          id: "tier",
          statusCode: 409,
          errors: ["custom field 'tier' is used by the rule of segments 'also-big', 'big': change or delete them first"],
        },
        { index: 1, id: "company", statusCode: 409, errors: ["custom field 'company' is used by the rule of segment 'emea': change or delete it first"] },
      ],
    });
    const left = (await prisma.endUserField.findMany({ where: { accountId: u.accountId } })).map((f) => f.name);
    expect(left).toEqual(expect.arrayContaining(["company", "tier"]));
    expect(left).not.toContain("spare");
    expectProblem(await del(`${A(u)}/endUserSchema/tier`, u), 409);
  });

  it("at most 50 custom fields: the 51st fails while the first 50 stay", async () => {
    const c = await tenant("fifty");
    const fields = Array.from({ length: 51 }, (_, i) => ({ name: `f${String(i).padStart(2, "0")}`, type: "string" }));
    const r = await put(`${A(c)}/endUserSchema`, c, fields);
    expect(r.status).toBe(207);
    expect(r.body.success).toHaveLength(50);
    expect(r.body.success.every((s: any) => s.statusCode === 201)).toBe(true);
    expect(r.body.failure).toEqual([{ index: 50, id: "f50", statusCode: 400, errors: [expect.stringMatching(/already has 50 custom fields/)] }]);
    expect(await prisma.endUserField.count({ where: { accountId: c.accountId } })).toBe(50);

    const more = await put(`${A(c)}/endUserSchema`, c, [{ name: "extra", type: "boolean" }]);
    expectProblem(more, 400);
    expect(await prisma.endUserField.count({ where: { accountId: c.accountId } })).toBe(50);
    // Updating one of the 50 is still allowed; deleting one makes room again.
    expect((await put(`${A(c)}/endUserSchema`, c, [{ name: "f00", description: "kept" }])).status).toBe(200);
    expect((await del(`${A(c)}/endUserSchema/f49`, c)).status).toBe(204);
    expect((await put(`${A(c)}/endUserSchema`, c, [{ name: "extra", type: "boolean" }])).status).toBe(200);
    expect(await prisma.endUserField.count({ where: { accountId: c.accountId } })).toBe(50);
    // The schema lists the 5 defaults and the 50 custom fields.
    expect((await get(`${A(c)}/endUserSchema`, c)).body.data).toHaveLength(55);
  });
});

describe("end-user schema, style B (B10, B11 and the contract's GET/DELETE)", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant("schemab");
  });

  it("B11 PUT: 200 when all succeed, 207 mixed, 400 when all fail", async () => {
    const ok = await put(`${B(t)}/endUserSchema`, t, [{ name: "region", type: "string", description: "R" }]);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual([{ name: "region", type: "string", description: "R", default: false }]);
    const mixed = await put(`${B(t)}/endUserSchema`, t, [
      { name: "region", description: "R2" },
      { name: "locale", description: "x" },
    ]);
    expect(mixed.status).toBe(207);
    expect(mixed.body.success).toEqual([{ index: 0, id: "region", statusCode: 200 }]);
    expect(mixed.body.failure[0]).toMatchObject({ index: 1, id: "locale", statusCode: 400, errors: [expect.stringMatching(/default field/)] });
    expectProblem(await put(`${B(t)}/endUserSchema`, t, [{ name: "9lives", type: "string" }]), 400);
  });

  it("B10 GET: the whole schema, or one field with fieldName (404 when unknown)", async () => {
    const all = await get(`${B(t)}/endUserSchema`, t);
    expect(all.status).toBe(200);
    expect(all.body.data.map((f: any) => f.name)).toEqual([...DEFAULT_NAMES, "region"]);
    const one = await get(`${B(t)}/endUserSchema?fieldName=region`, t);
    expect(one.body.data).toEqual([{ name: "region", type: "string", description: "R2", default: false }]);
    expectProblem(await get(`${B(t)}/endUserSchema?fieldName=missing`, t), 404);
  });

  it("GET /endUserSchema/{fieldName}: 200, 404", async () => {
    expect((await get(`${B(t)}/endUserSchema/region`, t)).body).toMatchObject({ name: "region", default: false });
    expectProblem(await get(`${B(t)}/endUserSchema/missing`, t), 404);
  });

  it("DELETE /endUserSchema/{names}: 204, 207, 404", async () => {
    await put(`${B(t)}/endUserSchema`, t, [
      { name: "x1", type: "double" },
      { name: "x2", type: "double" },
    ]);
    expect((await del(`${B(t)}/endUserSchema/x1`, t)).status).toBe(204);
    const some = await del(`${B(t)}/endUserSchema/x2,x1,name`, t);
    expect(some.status).toBe(207);
    expect(some.body.success).toEqual([{ index: 0, id: "x2", statusCode: 204 }]);
    expect(some.body.failure).toEqual([
      { index: 1, id: "x1", statusCode: 404, errors: ["no custom field named 'x1'"] },
      { index: 2, id: "name", statusCode: 400, errors: ["'name' is a default field and cannot be deleted"] },
    ]);
    expectProblem(await del(`${B(t)}/endUserSchema/x1`, t), 404);
    // Nothing deleted, for different reasons: a 400 problem with each item's outcome, not a 207 without success.
    const fields = await prisma.endUserField.count({ where: { accountId: t.accountId } });
    const none = await del(`${B(t)}/endUserSchema/x1,name`, t);
    expectProblem(none, 400, "All 2 items failed, with statuses 400, 404; see failure.");
    expect(none.body.failure).toEqual([
      { index: 0, id: "x1", statusCode: 404, errors: ["no custom field named 'x1'"] },
      { index: 1, id: "name", statusCode: 400, errors: ["'name' is a default field and cannot be deleted"] },
    ]);
    expect(none.body.errors).toEqual([
      { path: "[0]", message: "no custom field named 'x1'" },
      { path: "[1]", message: "'name' is a default field and cannot be deleted" },
    ]);
    expect(await prisma.endUserField.count({ where: { accountId: t.accountId } })).toBe(fields);
  });

  it("both styles see the same schema", async () => {
    await put(`${A(t)}/endUserSchema`, t, [{ name: "viaA", type: "boolean" }]);
    expect((await get(`${B(t)}/endUserSchema/viaA`, t)).body).toEqual({ name: "viaA", type: "boolean", description: null, default: false });
  });
});
