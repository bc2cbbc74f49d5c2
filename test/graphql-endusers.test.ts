// End users over GraphQL: the endUsers connection (filters, batching of custom values and user
// actions), endUser with idType, what a selection makes the database read, encryption at rest,
// the end-user mutations and tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../src/db/index.js";
import { call, gql, prisma, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const FIELDS = [
  { name: "plan", type: "string" },
  { name: "score", type: "double" },
  { name: "active", type: "boolean" },
  { name: "seenAt", type: "timestamp" },
  { name: "ssn", type: "encrypted_string" },
];
async function withFields(t: Tenant) {
  const r = await gql(
    server,
    t,
    `mutation($a: String!, $in: [SchemaFieldInput!]!) { upsertEndUserFields(accountId: $a, input: $in) { results { statusCode errors } } }`,
    { a: t.accountId, in: FIELDS },
  );
  expect(r.errors).toBeUndefined();
  expect(r.data.upsertEndUserFields.results.map((x: any) => x.statusCode)).toEqual(FIELDS.map(() => 201));
}

/**
 * "VERB Table" per statement, the same on SQLite (`main`.`T`) and PostgreSQL ("public"."T").
 * The timer that batches API-key use times (src/auth/keyUsage.ts) may fire inside a capture: left out.
 */
const shape = (sql: string[]) =>
  sql
    .map((q) => `${q.trim().split(/\s+/, 1)[0]!.toUpperCase()} ${/(?:FROM|INTO|UPDATE)\s+[`"]\w+[`"]\.[`"](\w+)[`"]/i.exec(q)?.[1] ?? "?"}`)
    .filter((s) => s !== "UPDATE ApiKey");
const touches = (sql: string[], table: string) => sql.some((q) => new RegExp(`[\`"]${table}[\`"]`).test(q));

const PAGE = `query Page($a: String!, $first: Int, $after: String, $filter: EndUserFilter, $orderBy: EndUserOrder) {
  account(id: $a) { endUsers(first: $first, after: $after, filter: $filter, orderBy: $orderBy) {
    nodes { id creationTime lastUpdateTime custom userActionCount userActions } pageInfo { hasNextPage endCursor } } } }`;
const ONE = `query One($a: String!, $id: String!, $idType: EndUserIdType) { account(id: $a) { endUser(id: $id, idType: $idType) { id custom userActionCount userActions } } }`;

// ---- batching --------------------------------------------------------------------------------------

describe("endUsers connection: custom values and user actions are batched", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant("n1");
    await withFields(t);
    // 1,000 end users, each with two custom values and two user-action counts, through B12.
    const users = Array.from({ length: 1_000 }, (_, i) => ({
      id: `u${String(i).padStart(4, "0")}`,
      custom: { plan: i % 2 ? "odd" : "even", score: i },
      userActionCount: { opened: i % 7, closed: 1 },
    }));
    const r = await call(`${server.url}/v1/accounts/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: users });
    expect(r.status, r.text.slice(0, 300)).toBe(201);
  }, 120_000);

  it("returns custom values and user-action maps per end user", async () => {
    const r = await gql(server, t, PAGE, { a: t.accountId, first: 3 });
    expect(r.errors).toBeUndefined();
    expect(r.data.account.endUsers.nodes.map((n: any) => [n.id, n.custom, n.userActionCount, n.userActions])).toEqual([
      ["u0000", { plan: "even", score: 0 }, { opened: 0, closed: 1 }, {}],
      ["u0001", { plan: "odd", score: 1 }, { opened: 1, closed: 1 }, {}],
      ["u0002", { plan: "even", score: 2 }, { opened: 2, closed: 1 }, {}],
    ]);
  });

  // On SQLite this needs the adapter to declare better-sqlite3's real parameter limit (32,766):
  // undeclared, Prisma assumes 999 and splits the 1,000-id `in` lists in two (9 statements).
  it("a page of 10 and a page of 1,000 cost the same 7 statements", async () => {
    const run = async (first: number) => {
      const { result, sql } = await sqlOf(() =>
        gql(server, t, `query($a: String!, $first: Int) { account(id: $a) { endUsers(first: $first) { nodes { id custom userActionCount } } } }`, {
          a: t.accountId,
          first,
        }),
      );
      expect(result.errors).toBeUndefined();
      expect(result.data.account.endUsers.nodes).toHaveLength(first);
      const last = result.data.account.endUsers.nodes[first - 1];
      expect(last.custom).toEqual({ plan: (first - 1) % 2 ? "odd" : "even", score: first - 1 });
      expect(last.userActionCount).toEqual({ opened: (first - 1) % 7, closed: 1 });
      return shape(sql);
    };
    const ten = await run(10);
    const thousand = await run(1_000);
    expect(ten).toEqual([
      "SELECT ApiKey",
      "SELECT User",
      "SELECT Membership", // authentication
      "SELECT Account",
      "SELECT EndUser",
      "SELECT EndUserValue",
      "SELECT EndUserAction",
    ]);
    expect(thousand).toEqual(ten);
  });

  it("userActions and userActionCount share one query", async () => {
    const { sql } = await sqlOf(() =>
      gql(server, t, `query($a: String!) { account(id: $a) { endUsers(first: 50) { nodes { userActionCount userActions } } } }`, { a: t.accountId }),
    );
    expect(shape(sql).filter((s) => s.endsWith("EndUserAction"))).toHaveLength(1);
    expect(touches(sql, "EndUserValue")).toBe(false);
  });

  it("a selection without custom or user actions reads neither table", async () => {
    const { sql } = await sqlOf(() =>
      gql(server, t, `query($a: String!) { account(id: $a) { endUsers(first: 100) { nodes { id creationTime } } } }`, { a: t.accountId }),
    );
    expect(touches(sql, "EndUserValue")).toBe(false);
    expect(touches(sql, "EndUserAction")).toBe(false);
  });

  it("pages walk every end user once", async () => {
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const r: any = await gql(
        server,
        t,
        `query($a: String!, $first: Int, $after: String) { account(id: $a) { endUsers(first: $first, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } } }`,
        { a: t.accountId, first: 300, after },
      );
      expect(r.errors).toBeUndefined();
      const conn = r.data.account.endUsers;
      seen.push(...conn.nodes.map((n: any) => n.id));
      after = conn.pageInfo.hasNextPage ? conn.pageInfo.endCursor : null;
    } while (after);
    expect(seen).toHaveLength(1_000);
    expect(new Set(seen).size).toBe(1_000);
  });
});

// ---- what a single read asks the database for (B13/B14's `fields`) ---------------------------------------

describe("endUser: the selection decides what is read", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant("sel");
    await withFields(t);
    const r = await gql(
      server,
      t,
      `mutation($a: String!) { upsertEndUsers(accountId: $a, input: [{ id: "s1", custom: { plan: "p" }, userActionCount: { x: 2 } }]) { results { statusCode errors } } }`,
      { a: t.accountId },
    );
    expect(r.data.upsertEndUsers.results).toEqual([{ statusCode: 201, errors: [] }]);
  });

  it("custom only: no EndUserAction query", async () => {
    const { result, sql } = await sqlOf(() => gql(server, t, `query($a: String!) { account(id: $a) { endUser(id: "s1") { id custom } } }`, { a: t.accountId }));
    expect(result.data.account.endUser).toEqual({ id: "s1", custom: { plan: "p" } });
    expect(touches(sql, "EndUserValue")).toBe(true);
    expect(touches(sql, "EndUserAction")).toBe(false);
  });

  it("user actions only: no EndUserValue query", async () => {
    const { result, sql } = await sqlOf(() =>
      gql(server, t, `query($a: String!) { account(id: $a) { endUser(id: "s1") { id userActionCount userActions } } }`, { a: t.accountId }),
    );
    expect(result.data.account.endUser).toEqual({ id: "s1", userActionCount: { x: 2 }, userActions: {} });
    expect(touches(sql, "EndUserValue")).toBe(false);
    expect(touches(sql, "EndUserAction")).toBe(true);
  });

  it("both: both tables", async () => {
    const { result, sql } = await sqlOf(() => gql(server, t, ONE, { a: t.accountId, id: "s1" }));
    expect(result.data.account.endUser).toEqual({ id: "s1", custom: { plan: "p" }, userActionCount: { x: 2 }, userActions: {} });
    expect(touches(sql, "EndUserValue")).toBe(true);
    expect(touches(sql, "EndUserAction")).toBe(true);
  });

  it("an unknown id is null", async () => {
    const r = await gql(server, t, ONE, { a: t.accountId, id: "nobody" });
    expect(r.errors).toBeUndefined();
    expect(r.data.account.endUser).toBeNull();
  });

  it("idType must match the account's identification method", async () => {
    expect((await gql(server, t, ONE, { a: t.accountId, id: "s1", idType: "COOKIE" })).data.account.endUser.id).toBe("s1");
    const bad = await gql(server, t, ONE, { a: t.accountId, id: "s1", idType: "APP" });
    expect(bad.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
    expect(bad.errors?.[0]?.message).toMatch(/identification method \(cookie\)/);
    // GraphQL callers are told the argument they gave (REST routes name their own parameter).
    expect(bad.errors?.[0]?.extensions?.errors).toEqual([{ path: "idType", message: "account uses cookie" }]);
    const unknown = await gql(server, t, ONE, { a: t.accountId, id: "s1", idType: "EMAIL" });
    expect(unknown.status).toBe(400);
    expect(unknown.errors).toBeDefined();

    const app = await tenant("selapp", { idMethod: "app_user_id" });
    await gql(server, app, `mutation($a: String!) { upsertEndUser(accountId: $a, id: "a1", custom: {}) { statusCode } }`, { a: app.accountId });
    expect((await gql(server, app, ONE, { a: app.accountId, id: "a1", idType: "APP" })).data.account.endUser.id).toBe("a1");
    expect((await gql(server, app, ONE, { a: app.accountId, id: "a1", idType: "COOKIE" })).errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
    const crm = await tenant("selcrm", { idMethod: "crm_user_id" });
    expect((await gql(server, crm, ONE, { a: crm.accountId, id: "none", idType: "APP" })).errors).toBeUndefined();
  });
});

// ---- encryption at rest ---------------------------------------------------------------------------------

describe("encrypted_string over GraphQL", () => {
  it("reads back decrypted; the stored column holds no clear text", async () => {
    const t = await tenant("enc");
    await withFields(t);
    const secret = "passport X1234567";
    const w = await gql(
      server,
      t,
      `mutation($a: String!, $c: CustomValues!) { upsertEndUser(accountId: $a, id: "e1", custom: $c) { statusCode endUser { custom } } }`,
      { a: t.accountId, c: { ssn: secret, plan: "visible" } },
    );
    expect(w.errors).toBeUndefined();
    expect(w.data.upsertEndUser).toEqual({ statusCode: 201, endUser: { custom: { ssn: secret, plan: "visible" } } });
    const r = await gql(server, t, ONE, { a: t.accountId, id: "e1" });
    expect(r.data.account.endUser.custom).toEqual({ ssn: secret, plan: "visible" });
    const page = await gql(server, t, PAGE, { a: t.accountId });
    expect(page.data.account.endUsers.nodes[0].custom.ssn).toBe(secret);

    const rows = await prisma.endUserValue.findMany({ where: { accountId: t.accountId } });
    const ssn = rows.find((v) => v.field === "ssn")!;
    expect(ssn.text).toMatch(/^v1:/);
    expect(ssn.text).not.toContain(secret);
    expect(ssn.text).not.toContain("X1234567");
    expect(rows.find((v) => v.field === "plan")!.text).toBe("visible");
  });
});

// ---- filters ----------------------------------------------------------------------------------------------

describe("endUsers filters", () => {
  const T0 = Date.UTC(2024, 0, 1);
  const MIN = 60_000;
  let t: Tenant;
  const ids = (r: any) => r.data.account.endUsers.nodes.map((n: any) => n.id);
  const page = (filter: unknown, orderBy?: string) => gql(server, t, PAGE, { a: t.accountId, first: 100, filter, ...(orderBy ? { orderBy } : {}) });

  beforeAll(async () => {
    t = await tenant("filt");
    await withFields(t);
    // Ten end users with known times: created a minute apart, updated in the reverse order.
    const users = Array.from({ length: 10 }, (_, i) => ({
      id: `f${i}`,
      accountId: t.accountId,
      externalId: `f${i}`,
      createdAt: new Date(T0 + i * MIN),
      updatedAt: new Date(T0 + (100 - i) * MIN),
    }));
    await withTransaction(async (tx) => {
      await tx.endUser.createMany({ data: users.map(({ id, ...u }) => ({ ...u, id: `${t.accountId}-${id}` })) });
    });
    // Values through the API (so they are typed and encrypted as the service stores them).
    const r = await call(`${server.url}/api/v1/${t.accountId}/endUsers`, {
      method: "PUT",
      headers: t.headers,
      body: users.map((u, i) => ({
        id: u.externalId,
        custom: { plan: i % 2 ? "odd" : "even", score: i * 1.5, active: i % 3 === 0, seenAt: T0 + i, ssn: `s${i}` },
      })),
    });
    expect(r.status, r.text).toBe(200);
    // The PUT touched every updatedAt; put the known ones back.
    await withTransaction(async (tx) => {
      for (const u of users) await tx.endUser.update({ where: { id: `${t.accountId}-${u.id}` }, data: { updatedAt: u.updatedAt } });
    });
  });

  it("no filter: all, in creation order", async () => {
    expect(ids(await page(null))).toEqual(["f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"]);
  });

  it("createdAfter is strict", async () => {
    expect(ids(await page({ createdAfter: T0 + 6 * MIN }))).toEqual(["f7", "f8", "f9"]);
    expect(ids(await page({ createdAfter: T0 + 6 * MIN - 1 }))).toEqual(["f6", "f7", "f8", "f9"]);
    expect(ids(await page({ createdAfter: T0 + 9 * MIN }))).toEqual([]);
  });

  it("updatedAfter is strict, and orderBy UPDATED sorts by update time", async () => {
    expect(ids(await page({ updatedAfter: T0 + 96 * MIN }))).toEqual(["f0", "f1", "f2", "f3"]);
    expect(ids(await page({ updatedAfter: T0 + 96 * MIN }, "UPDATED"))).toEqual(["f3", "f2", "f1", "f0"]);
  });

  it("custom equality per type", async () => {
    expect(ids(await page({ custom: [{ field: "plan", equals: "odd" }] }))).toEqual(["f1", "f3", "f5", "f7", "f9"]);
    expect(ids(await page({ custom: [{ field: "score", equals: 3 }] }))).toEqual(["f2"]);
    expect(ids(await page({ custom: [{ field: "score", equals: 0 }] }))).toEqual(["f0"]);
    expect(ids(await page({ custom: [{ field: "active", equals: true }] }))).toEqual(["f0", "f3", "f6", "f9"]);
    expect(ids(await page({ custom: [{ field: "active", equals: false }] }))).toEqual(["f1", "f2", "f4", "f5", "f7", "f8"]);
    expect(ids(await page({ custom: [{ field: "seenAt", equals: T0 + 4 }] }))).toEqual(["f4"]);
    expect(ids(await page({ custom: [{ field: "plan", equals: "none" }] }))).toEqual([]);
  });

  it("filters combine (all must match)", async () => {
    expect(
      ids(
        await page({
          custom: [
            { field: "plan", equals: "odd" },
            { field: "active", equals: true },
          ],
        }),
      ),
    ).toEqual(["f3", "f9"]);
    expect(ids(await page({ createdAfter: T0 + 4 * MIN, custom: [{ field: "plan", equals: "even" }] }))).toEqual(["f6", "f8"]);
    expect(ids(await page({ createdAfter: T0 + 2 * MIN, updatedAfter: T0 + 94 * MIN }))).toEqual(["f3", "f4", "f5"]);
  });

  it("filtered pages paginate", async () => {
    const first = await gql(server, t, PAGE, { a: t.accountId, first: 2, filter: { custom: [{ field: "plan", equals: "odd" }] } });
    expect(ids(first)).toEqual(["f1", "f3"]);
    const next = await gql(server, t, PAGE, {
      a: t.accountId,
      first: 10,
      after: first.data.account.endUsers.pageInfo.endCursor,
      filter: { custom: [{ field: "plan", equals: "odd" }] },
    });
    expect(ids(next)).toEqual(["f5", "f7", "f9"]);
  });

  it("a cursor names its order: one of the other order is a BAD_REQUEST; one without (issued before) is a creation cursor", async () => {
    const at = (orderBy: string, after: string) => gql(server, t, PAGE, { a: t.accountId, first: 2, after, orderBy });
    const created = (await gql(server, t, PAGE, { a: t.accountId, first: 2 })).data.account.endUsers.pageInfo.endCursor;
    const updated = (await gql(server, t, PAGE, { a: t.accountId, first: 2, orderBy: "UPDATED" })).data.account.endUsers.pageInfo.endCursor;
    expect(ids(await at("CREATED", created))).toEqual(["f2", "f3"]);
    expect(ids(await at("UPDATED", updated))).toEqual(["f7", "f6"]);
    // Read in the other order, f1's creation time would skip f9…f2 by update, and f8's update time
    // would skip every user by creation: both are refused.
    for (const [orderBy, after] of [
      ["UPDATED", created],
      ["CREATED", updated],
    ] as const) {
      const r = await at(orderBy, after);
      expect([r.status, r.errors?.[0]?.extensions?.code, r.errors?.[0]?.message], orderBy).toEqual([400, "BAD_REQUEST", "cursor does not belong to this list"]);
      expect(r.data).toBeNull();
    }
    // An untagged cursor, as every cursor was before: a position by creation; refused by update.
    const legacy = Buffer.from(JSON.stringify([T0 + MIN, `${t.accountId}-f1`])).toString("base64url");
    expect(ids(await at("CREATED", legacy))).toEqual(["f2", "f3"]);
    expect((await at("UPDATED", legacy)).errors?.[0]?.message).toBe("cursor does not belong to this list");
  });

  it("an encrypted field cannot be filtered on: BAD_REQUEST", async () => {
    const r = await page({ custom: [{ field: "ssn", equals: "s1" }] });
    expect(r.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
    expect(r.errors?.[0]?.message).toMatch(/'ssn' is encrypted/);
  });

  it("an unknown field or a value of the wrong type: BAD_REQUEST", async () => {
    const unknown = await page({ custom: [{ field: "nope", equals: 1 }] });
    expect(unknown.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
    expect(unknown.errors?.[0]?.message).toMatch(/unknown custom field 'nope'/);
    for (const [field, equals] of [
      ["score", "3"],
      ["active", "true"],
      ["seenAt", -62_135_596_800_001], // before 0001-01-01
      ["seenAt", 9e15],
      ["seenAt", 253_402_300_800_000],
      ["plan", 5],
    ] as const) {
      const r = await page({ custom: [{ field, equals }] });
      expect(r.errors?.[0]?.extensions?.code, `${field}=${JSON.stringify(equals)}`).toBe("BAD_REQUEST");
    }
    const badTime = await page({ createdAfter: "yesterday" });
    expect(badTime.status).toBe(400);
  });
});

// ---- mutations ---------------------------------------------------------------------------------------------

describe("end-user mutations", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant("mut");
    await withFields(t);
  });
  const UPSERT = `mutation($a: String!, $in: [EndUserInput!]!) { upsertEndUsers(accountId: $a, input: $in) { results { index statusCode id errors ok endUser { id custom userActionCount } } } }`;

  it("upsertEndUsers: per-item 201 / 200 / 400 with the records", async () => {
    await gql(server, t, UPSERT, { a: t.accountId, in: [{ id: "m1" }] });
    const r = await gql(server, t, UPSERT, {
      a: t.accountId,
      in: [
        { id: "m1", custom: { score: 1 } },
        { id: "m2", custom: { active: true }, userActionCount: { a: 1 } },
        { id: "m3", custom: { active: 1 } },
      ],
    });
    expect(r.errors).toBeUndefined();
    expect(r.data.upsertEndUsers.results).toEqual([
      { index: 0, statusCode: 200, id: "m1", errors: [], ok: true, endUser: { id: "m1", custom: { score: 1 }, userActionCount: {} } },
      { index: 1, statusCode: 201, id: "m2", errors: [], ok: true, endUser: { id: "m2", custom: { active: true }, userActionCount: { a: 1 } } },
      { index: 2, statusCode: 400, id: "m3", errors: ["custom.active must be true or false"], ok: false, endUser: null },
    ]);
  });

  it("upsertEndUsers takes at most 10,000 items and at least one", async () => {
    const over = await gql(server, t, UPSERT, { a: t.accountId, in: Array.from({ length: 10_001 }, (_, i) => ({ id: `o${i}` })) });
    expect(over.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: { startsWith: "o" } } })).toBe(0);
    expect((await gql(server, t, UPSERT, { a: t.accountId, in: [] })).errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
  });

  it("deleteEndUsers: per-item 204 / 404", async () => {
    const r = await gql(server, t, `mutation($a: String!) { deleteEndUsers(accountId: $a, ids: ["m1", "ghost"]) { results { index statusCode id errors } } }`, {
      a: t.accountId,
    });
    expect(r.data.deleteEndUsers.results).toEqual([
      { index: 0, statusCode: 204, id: "m1", errors: [] },
      { index: 1, statusCode: 404, id: "ghost", errors: ["no end user with id 'ghost'"] },
    ]);
    expect((await gql(server, t, ONE, { a: t.accountId, id: "m1" })).data.account.endUser).toBeNull();
  });

  it("schema mutations: per-item statuses, defaults protected", async () => {
    const up = await gql(
      server,
      t,
      `mutation($a: String!) { upsertEndUserFields(accountId: $a, input: [{ name: "extra", type: timestamp }, { name: "plan", type: double }, { name: "email", description: "x" }]) { results { index statusCode errors field { name type default } } } }`,
      { a: t.accountId },
    );
    expect(up.data.upsertEndUserFields.results).toEqual([
      { index: 0, statusCode: 201, errors: [], field: { name: "extra", type: "timestamp", default: false } },
      { index: 1, statusCode: 400, errors: [expect.stringMatching(/cannot change/)], field: null },
      { index: 2, statusCode: 400, errors: ["'email' is a default field and cannot be changed"], field: null },
    ]);
    const del = await gql(
      server,
      t,
      `mutation($a: String!) { deleteEndUserFields(accountId: $a, names: ["extra", "email", "ghost"]) { results { statusCode } } }`,
      { a: t.accountId },
    );
    expect(del.data.deleteEndUserFields.results.map((x: any) => x.statusCode)).toEqual([204, 400, 404]);
    const schema = await gql(server, t, `query($a: String!) { account(id: $a) { endUserSchema { name default } } }`, { a: t.accountId });
    expect(schema.data.account.endUserSchema.map((f: any) => f.name)).toEqual([
      "email",
      "name",
      "role",
      "locale",
      "signupTime",
      "active",
      "plan",
      "score",
      "seenAt",
      "ssn",
    ]);
  });
});

// ---- tenant isolation ---------------------------------------------------------------------------------------

describe("tenant isolation over GraphQL", () => {
  it("a key of account A gets FORBIDDEN on account B, and B is unchanged", async () => {
    const a = await tenant("isoa");
    const b = await tenant("isob");
    await withFields(b);
    await gql(server, b, `mutation($a: String!) { upsertEndUser(accountId: $a, id: "b1", custom: { plan: "mine" }) { statusCode } }`, { a: b.accountId });
    const before = await prisma.endUser.findMany({ where: { accountId: b.accountId }, include: { values: true } });

    const attempts = [
      gql(server, a, PAGE, { a: b.accountId }),
      gql(server, a, ONE, { a: b.accountId, id: "b1" }),
      gql(server, a, `query($a: String!) { account(id: $a) { endUserSchema { name } } }`, { a: b.accountId }),
      gql(server, a, `mutation($a: String!) { upsertEndUsers(accountId: $a, input: [{ id: "b1", custom: { plan: "stolen" } }]) { results { statusCode } } }`, {
        a: b.accountId,
      }),
      gql(server, a, `mutation($a: String!) { upsertEndUser(accountId: $a, id: "b1", custom: { plan: "stolen" }) { statusCode } }`, { a: b.accountId }),
      gql(server, a, `mutation($a: String!) { deleteEndUsers(accountId: $a, ids: ["b1"]) { results { statusCode } } }`, { a: b.accountId }),
      gql(server, a, `mutation($a: String!) { upsertEndUserFields(accountId: $a, input: [{ name: "evil", type: string }]) { results { statusCode } } }`, {
        a: b.accountId,
      }),
      gql(server, a, `mutation($a: String!) { deleteEndUserFields(accountId: $a, names: ["plan"]) { results { statusCode } } }`, { a: b.accountId }),
    ];
    for (const r of await Promise.all(attempts)) {
      expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
      expect(JSON.stringify(r.data ?? null)).not.toContain("mine");
    }
    expect(await prisma.endUser.findMany({ where: { accountId: b.accountId }, include: { values: true } })).toEqual(before);
    expect(await prisma.endUserField.count({ where: { accountId: b.accountId } })).toBe(FIELDS.length);
  });
});
