// End users and the end-user schema over REST: style A (/api/v1/{accountId}) and style B
// (/v1/accounts/{accountId}, B10–B15), statuses, typed custom fields, encryption at rest, what
// B13/B14 `fields` read, id types, bulk limits, tenant isolation and bad input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, prisma, sqlOf, startServer, tenant, type Reply, type Server, type Tenant } from "./helpers.js";

let server: Server;
let a: Tenant; // cookie account (the default identification method)
let b: Tenant; // another cookie account, for isolation
beforeAll(async () => {
  server = await startServer();
  a = await tenant("eua");
  b = await tenant("eub");
});
afterAll(() => server.close());

const A = (t: Tenant) => `${server.url}/api/v1/${t.accountId}`;
const B = (t: Tenant) => `${server.url}/v1/accounts/${t.accountId}`;
const put = (url: string, t: Tenant, body: unknown) => call(url, { method: "PUT", headers: t.headers, body });
const post = (url: string, t: Tenant, body: unknown) => call(url, { method: "POST", headers: t.headers, body });
const del = (url: string, t: Tenant) => call(url, { method: "DELETE", headers: t.headers });
const get = (url: string, t: Tenant) => call(url, { headers: t.headers });
const rawPut = (url: string, t: Tenant, raw: string, method = "PUT") =>
  call(url, { method, headers: { ...t.headers, "content-type": "application/json" }, raw });

/** Fields the tests below write to; `fresh` accounts get their own. */
const FIELDS = [
  { name: "plan", type: "string", description: "Plan name" },
  { name: "score", type: "double" },
  { name: "active", type: "boolean" },
  { name: "seenAt", type: "timestamp" },
  { name: "ssn", type: "encrypted_string" },
];
async function withFields(t: Tenant, fields: object[] = FIELDS) {
  const r = await put(`${A(t)}/endUserSchema`, t, fields);
  expect(r.status, r.text).toBe(200);
}
async function fresh(prefix: string, opts: { idMethod?: string } = {}) {
  const t = await tenant(prefix, opts);
  await withFields(t);
  return t;
}

const DEFAULT_NAMES = ["email", "name", "role", "locale", "signupTime"];
const tables = (sql: string[]) => ({
  actions: sql.some((q) => /[`"]EndUserAction[`"]/.test(q)),
  values: sql.some((q) => /[`"]EndUserValue[`"]/.test(q)),
});
const expectProblem = (r: Reply, status: number) => {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/application\/problem\+json/);
  expect(r.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
};

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
    expect((await put(`${A(u)}/endUsers`, u, users)).status).toBe(201);
    expect(await prisma.endUserValue.count({ where: { accountId: u.accountId, field: "doomed" } })).toBe(3);

    expect((await del(`${A(u)}/endUserSchema/doomed`, u)).status).toBe(204);
    expect(await prisma.endUserValue.count({ where: { accountId: u.accountId, field: "doomed" } })).toBe(0);
    expect(await prisma.endUserValue.count({ where: { accountId: u.accountId, field: "plan" } })).toBe(3);
    expect((await get(`${A(u)}/endUsers/u1`, u)).body.custom).toEqual({ plan: "p" });
    // Adding it again starts empty, with any type.
    expect((await put(`${A(u)}/endUserSchema`, u, [{ name: "doomed", type: "double" }])).status).toBe(200);
    expect((await put(`${A(u)}/endUsers/u1`, u, { doomed: 2.5 })).status).toBe(200);
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
  });

  it("both styles see the same schema", async () => {
    await put(`${A(t)}/endUserSchema`, t, [{ name: "viaA", type: "boolean" }]);
    expect((await get(`${B(t)}/endUserSchema/viaA`, t)).body).toEqual({ name: "viaA", type: "boolean", description: null, default: false });
  });
});

// ---- end users, style A ---------------------------------------------------------------------------

describe("end users, style A", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await fresh("usera");
  });

  it("PUT /endUsers: 201 when at least one is created, 200 when all existed; records have no user-action maps", async () => {
    const created = await put(`${A(t)}/endUsers`, t, [{ id: "alice", custom: { plan: "pro", score: 1.5 } }, { id: "bob" }]);
    expect(created.status).toBe(201);
    expect(created.body.data).toHaveLength(2);
    const [alice, bob] = created.body.data;
    expect(alice).toEqual({ id: "alice", creationTime: expect.any(Number), lastUpdateTime: expect.any(Number), custom: { plan: "pro", score: 1.5 } });
    expect(bob).toEqual({ id: "bob", creationTime: expect.any(Number), lastUpdateTime: expect.any(Number), custom: {} });
    expect(Math.abs(alice.creationTime - Date.now())).toBeLessThan(60_000);

    const updated = await put(`${A(t)}/endUsers`, t, [
      { id: "alice", custom: { score: 2 } },
      { id: "bob", custom: { active: true } },
    ]);
    expect(updated.status).toBe(200);
    expect(updated.body.data[0].custom).toEqual({ plan: "pro", score: 2 });
    expect(updated.body.data[0].creationTime).toBe(alice.creationTime);
    expect(updated.body.data[0].lastUpdateTime).toBeGreaterThanOrEqual(alice.lastUpdateTime);

    const mixed = await put(`${A(t)}/endUsers`, t, [{ id: "alice" }, { id: "carol" }]);
    expect(mixed.status).toBe(201);
  });

  it("PUT /endUsers: 207 for a mixed outcome, 400 problem listing errors when all fail", async () => {
    const r = await put(`${A(t)}/endUsers`, t, [{ id: "dave", custom: { score: 3 } }, { id: "erin", custom: { score: "high" } }, { custom: { plan: "x" } }]);
    expect(r.status).toBe(207);
    expect(r.body).toEqual({
      success: [{ index: 0, id: "dave", statusCode: 201 }],
      failure: [
        { index: 1, id: "erin", statusCode: 400, errors: ["custom.score must be a number"] },
        { index: 2, id: null, statusCode: 400, errors: ["id is required (a non-empty string)"] },
      ],
    });
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: "erin" } })).toBe(0);

    const all = await put(`${A(t)}/endUsers`, t, [
      { id: "x", custom: { nope: 1 } },
      { id: "y", custom: { active: "yes" } },
    ]);
    expectProblem(all, 400);
    expect(all.body.errors).toEqual([
      { path: "[0]", message: "unknown custom field 'nope' (add it to the end-user schema first)" },
      { path: "[1]", message: "custom.active must be true or false" },
    ]);
  });

  it("a repeated id in one request fails the repeat", async () => {
    const r = await put(`${A(t)}/endUsers`, t, [
      { id: "rep", custom: { plan: "a" } },
      { id: "rep", custom: { plan: "b" } },
    ]);
    expect(r.status).toBe(207);
    expect(r.body.failure[0]).toMatchObject({ index: 1, id: "rep", errors: [expect.stringMatching(/more than once/)] });
    expect((await get(`${A(t)}/endUsers/rep`, t)).body.custom).toEqual({ plan: "a" });
  });

  it("GET /endUsers/{id}: 200 without user-action maps; 404 for an unknown id", async () => {
    await put(`${B(t)}/endUsers`, t, [{ id: "withActions", custom: { plan: "p" }, userActionCount: { a1: 3 } }]);
    const r = await get(`${A(t)}/endUsers/withActions`, t);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: "withActions", creationTime: expect.any(Number), lastUpdateTime: expect.any(Number), custom: { plan: "p" } });
    expectProblem(await get(`${A(t)}/endUsers/nobody`, t), 404);
  });

  it("GET /endUsers: pages in creation order with limit and cursor; bad limit or cursor is a 400", async () => {
    const l = await tenant("list");
    const ids = Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, "0")}`);
    // Created one by one so creation order is the id order.
    for (const id of ids) await put(`${A(l)}/endUsers/${id}`, l, {});
    const first = await get(`${A(l)}/endUsers`, l);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(10); // default limit
    expect(first.body.cursor).toEqual(expect.any(String));
    expect(first.body.data[0]).not.toHaveProperty("userActionCount");

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Reply = await get(`${A(l)}/endUsers?limit=7${cursor ? `&cursor=${cursor}` : ""}`, l);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((u: any) => u.id));
      cursor = page.body.cursor;
    } while (cursor);
    expect(seen).toEqual(ids);

    expectProblem(await get(`${A(l)}/endUsers?limit=0`, l), 400);
    expectProblem(await get(`${A(l)}/endUsers?limit=10001`, l), 400);
    expectProblem(await get(`${A(l)}/endUsers?limit=ten`, l), 400);
    expectProblem(await get(`${A(l)}/endUsers?cursor=not-a-cursor!`, l), 400);
  });

  it("PUT /endUsers/{id}: {errors:[], id, statusCode} with 201 created, 200 updated", async () => {
    const c = await put(`${A(t)}/endUsers/frank`, t, { plan: "basic" });
    expect(c.status).toBe(201);
    expect(c.body).toEqual({ errors: [], id: "frank", statusCode: 201 });
    const u = await put(`${A(t)}/endUsers/frank`, t, { score: 9 });
    expect(u.status).toBe(200);
    expect(u.body).toEqual({ errors: [], id: "frank", statusCode: 200 });
    expect((await get(`${A(t)}/endUsers/frank`, t)).body.custom).toEqual({ plan: "basic", score: 9 });
  });

  it("PUT /endUsers/{id}: failures keep the {errors, id, statusCode} shape", async () => {
    const bad = await put(`${A(t)}/endUsers/frank`, t, { score: "x", ghost: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      errors: ["custom.score must be a number", "unknown custom field 'ghost' (add it to the end-user schema first)"],
      id: "frank",
      statusCode: 400,
    });
    const arr = await put(`${A(t)}/endUsers/frank`, t, [{ plan: "x" }]);
    expect(arr.status).toBe(400);
    expect(arr.body).toEqual({ errors: [expect.stringMatching(/JSON object/)], id: "frank", statusCode: 400 });
    const comma = await put(`${A(t)}/endUsers/a,b`, t, { plan: "x" });
    expect(comma.status).toBe(400);
    expect(comma.body).toEqual({ errors: ["id must not contain a comma"], id: "a,b", statusCode: 400 });
    expect((await get(`${A(t)}/endUsers/frank`, t)).body.custom).toEqual({ plan: "basic", score: 9 });
  });

  it("DELETE /endUsers/{ids}: 204 all (values and actions go too), 207 some, 404 none", async () => {
    const d = await fresh("dele");
    await put(
      `${B(d)}/endUsers`,
      d,
      ["g1", "g2", "g3"].map((id) => ({ id, custom: { plan: id }, userActionCount: { act: 1 } })),
    );
    const rowIds = (await prisma.endUser.findMany({ where: { accountId: d.accountId, externalId: { in: ["g1", "g2"] } } })).map((r) => r.id);
    const all = await del(`${A(d)}/endUsers/g1,g2`, d);
    expect(all.status).toBe(204);
    expect(all.text).toBe("");
    expect(await prisma.endUser.count({ where: { id: { in: rowIds } } })).toBe(0);
    expect(await prisma.endUserValue.count({ where: { endUserId: { in: rowIds } } })).toBe(0);
    expect(await prisma.endUserAction.count({ where: { endUserId: { in: rowIds } } })).toBe(0);

    const some = await del(`${A(d)}/endUsers/g1,g3`, d);
    expect(some.status).toBe(207);
    expect(some.body).toEqual({
      success: [{ index: 1, id: "g3", statusCode: 204 }],
      failure: [{ index: 0, id: "g1", statusCode: 404, errors: ["no end user with id 'g1'"] }],
    });
    expectProblem(await del(`${A(d)}/endUsers/g1,g2`, d), 404);
    expectProblem(await del(`${A(d)}/endUsers/g1,,g2`, d), 400);
    expect(await prisma.endUser.count({ where: { accountId: d.accountId } })).toBe(0);
  });
});

// ---- typed custom values ------------------------------------------------------------------------------

describe("typed custom fields", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await fresh("typed");
  });

  it.each([
    ["string", "plan", "enterprise", [42, true, { a: 1 }, ["x"], "x".repeat(10_001)]],
    ["double", "score", -12.25, ["1.5", true, { n: 1 }]],
    ["boolean", "active", false, ["true", 0, 1, "false"]],
    ["timestamp", "seenAt", 1_700_000_000_123, [-1, 1.5, "2024-01-01", true, 253_402_300_800_000, 8.64e15 + 1]],
    ["encrypted_string", "ssn", "123-45-6789", [123, false, { s: "x" }]],
  ] as const)("%s: the right value is stored and read back, wrong ones fail (207 item / 400)", async (type, field, good, bads) => {
    const r = await put(`${A(t)}/endUsers`, t, [
      { id: `ok-${type}`, custom: { [field]: good } },
      ...bads.map((bad, i) => ({ id: `bad-${type}-${i}`, custom: { [field]: bad } })),
    ]);
    expect(r.status, r.text).toBe(207);
    expect(r.body.success).toEqual([{ index: 0, id: `ok-${type}`, statusCode: 201 }]);
    expect(r.body.failure).toHaveLength(bads.length);
    for (const f of r.body.failure) {
      expect(f).toMatchObject({ statusCode: 400, errors: [expect.stringMatching(new RegExp(`^custom\\.${field} must be `))] });
    }
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: { startsWith: `bad-${type}` } } })).toBe(0);
    const back = await get(`${A(t)}/endUsers/ok-${type}`, t);
    expect(back.body.custom).toEqual({ [field]: good });
    expect(typeof back.body.custom[field]).toBe(typeof good);
    // The same through B15: a wrong value is a 400 in the single-update shape.
    const one = await put(`${B(t)}/endUsers/ok-${type}`, t, { [field]: bads[0] });
    expect(one.status).toBe(400);
    expect(one.body).toEqual({ errors: [expect.stringMatching(new RegExp(`^custom\\.${field} must be `))], id: `ok-${type}`, statusCode: 400 });
  });

  it("extreme values of each type are stored and read back", async () => {
    const custom = { plan: "x".repeat(10_000), score: -1e300, active: true, seenAt: 253_402_300_799_999, ssn: "é✓ 𝄞" }; // seenAt: 9999-12-31T23:59:59.999Z
    const r = await put(`${A(t)}/endUsers`, t, [
      { id: "extremes", custom },
      { id: "zeroes", custom: { plan: "", score: 0, active: false, seenAt: 0, ssn: "" } },
    ]);
    expect(r.status, r.text.slice(0, 300)).toBe(201);
    expect((await get(`${A(t)}/endUsers/extremes`, t)).body.custom).toEqual(custom);
    expect((await get(`${A(t)}/endUsers/zeroes`, t)).body.custom).toEqual({ plan: "", score: 0, active: false, seenAt: 0, ssn: "" });
    const counts = await put(`${B(t)}/endUsers`, t, [
      { id: "extremes", userActionCount: { a: 2 ** 31 - 1 }, userActions: { a: Number.MAX_SAFE_INTEGER, b: Number.MIN_SAFE_INTEGER } },
    ]);
    expect(counts.status).toBe(200);
    expect(counts.body.data[0]).toMatchObject({
      userActionCount: { a: 2 ** 31 - 1, b: 0 },
      userActions: { a: Number.MAX_SAFE_INTEGER, b: Number.MIN_SAFE_INTEGER },
    });
  });

  it("an unknown custom field is rejected", async () => {
    const r = await put(`${A(t)}/endUsers`, t, [{ id: "unk", custom: { favouriteColour: "blue" } }]);
    expectProblem(r, 400);
    expect(r.body.detail).toMatch(/unknown custom field 'favouriteColour'/);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: "unk" } })).toBe(0);
  });

  it("default fields take values of their type", async () => {
    const r = await put(`${A(t)}/endUsers`, t, [
      { id: "dflt", custom: { email: "d@example.com", signupTime: 1_600_000_000_000 } },
      { id: "dflt2", custom: { signupTime: "yesterday" } },
    ]);
    expect(r.status).toBe(207);
    expect((await get(`${A(t)}/endUsers/dflt`, t)).body.custom).toEqual({ email: "d@example.com", signupTime: 1_600_000_000_000 });
  });

  it("merge semantics: absent fields stay, null clears a value", async () => {
    await put(`${A(t)}/endUsers/merge`, t, { plan: "pro", score: 1, active: true, seenAt: 5, ssn: "s" });
    await put(`${A(t)}/endUsers/merge`, t, { score: 2 });
    expect((await get(`${A(t)}/endUsers/merge`, t)).body.custom).toEqual({ plan: "pro", score: 2, active: true, seenAt: 5, ssn: "s" });

    const cleared = await put(`${A(t)}/endUsers`, t, [{ id: "merge", custom: { plan: null, ssn: null } }]);
    expect(cleared.status).toBe(200);
    expect(cleared.body.data[0].custom).toEqual({ score: 2, active: true, seenAt: 5 });
    const row = await prisma.endUser.findUniqueOrThrow({
      where: { accountId_externalId: { accountId: t.accountId, externalId: "merge" } },
      include: { values: true },
    });
    expect(row.values.map((v) => v.field).sort()).toEqual(["active", "score", "seenAt"]);

    // Clearing an absent value is fine; an item without `custom` changes no value.
    expect((await put(`${A(t)}/endUsers/merge`, t, { plan: null })).status).toBe(200);
    expect((await put(`${A(t)}/endUsers`, t, [{ id: "merge" }])).status).toBe(200);
    expect((await get(`${A(t)}/endUsers/merge`, t)).body.custom).toEqual({ score: 2, active: true, seenAt: 5 });
  });

  it("encrypted_string: decrypted over REST, ciphertext at rest", async () => {
    const secret = "tax-id 987-65-4321";
    const w = await put(`${A(t)}/endUsers`, t, [
      { id: "enc1", custom: { ssn: secret } },
      { id: "enc2", custom: { ssn: secret } },
    ]);
    expect(w.body.data.map((u: any) => u.custom.ssn)).toEqual([secret, secret]);
    expect((await get(`${A(t)}/endUsers/enc1`, t)).body.custom.ssn).toBe(secret);
    expect((await get(`${B(t)}/endUsers/enc2?fields=custom`, t)).body.custom.ssn).toBe(secret);
    expect((await post(`${B(t)}/endUsers/lookup`, t, { id: "enc2" })).body.custom.ssn).toBe(secret);

    const rows = await prisma.endUserValue.findMany({ where: { accountId: t.accountId, field: "ssn", endUser: { externalId: { in: ["enc1", "enc2"] } } } });
    expect(rows).toHaveLength(2);
    for (const v of rows) {
      expect(v.type).toBe("encrypted_string");
      expect(v.text).not.toContain(secret);
      expect(v.text).not.toContain("987-65-4321");
      expect(v.text).not.toContain(Buffer.from(secret).toString("base64"));
      expect(v.text).toMatch(/^v1:/);
    }
    expect(rows[0]!.text).not.toBe(rows[1]!.text); // a fresh IV per value
  });
});

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
    expectProblem(await get(`${B(t)}/endUsers/seg?fields=profile`, t), 400);
  });

  it("B15 PUT /endUsers/{id}: {errors:[], id, statusCode} with 201 then 200; failures in the same shape", async () => {
    const c = await put(`${B(t)}/endUsers/olga`, t, { plan: "trial", active: true });
    expect(c.status).toBe(201);
    expect(c.body).toEqual({ errors: [], id: "olga", statusCode: 201 });
    const u = await put(`${B(t)}/endUsers/olga`, t, { active: false });
    expect(u.status).toBe(200);
    expect(u.body).toEqual({ errors: [], id: "olga", statusCode: 200 });

    const bad = await put(`${B(t)}/endUsers/olga`, t, { active: "no", seenAt: -5, mystery: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      errors: [
        "custom.active must be true or false",
        "custom.seenAt must be an integer of epoch milliseconds",
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
