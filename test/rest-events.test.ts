// Engagement events over REST (POST /v1/accounts/{accountId}/events) and GraphQL (recordEvents):
// statuses 202/207/400, per-item validation, end users created on first sight (audited), the
// latest userName kept, batched multi-row inserts, tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordEvents } from "../src/domains/events/schema.js";
import { catchUpRollups } from "../src/domains/reports/rollupWorker.js";
import { expectProblem, gql, prisma, requester, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";
import { AUTH, shape } from "./sql.js";

let server: Server;
let a: Tenant;
let b: Tenant;
const req = requester(() => server);
beforeAll(async () => {
  server = await startServer();
  a = await tenant("eva");
  b = await tenant("evb");
});
afterAll(() => server.close());

const T = Date.UTC(2024, 5, 1, 12);
const post = (t: Tenant, body: unknown) => req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body });
const eventsOf = (t: Tenant) => prisma.event.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } });

describe("POST /events", () => {
  it("stores every event of a valid request: 202, end users created on first sight (audited), userName kept", async () => {
    const t = await tenant("ev1");
    await req(`/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "known" }] });
    const r = await post(t, [
      { type: "flow_started", time: T, endUserId: "known", flowId: "f1", widget: "self_help", domain: "app.x.com", userName: "Kim" },
      { type: "selfhelp_search", time: T + 1, endUserId: "new-1", searchTerm: "  Reset PASSWORD ", resultCount: 2, contentId: "c1" },
      { type: "flow_feedback", time: T + 2, endUserId: "new-1", flowId: "f1", useful: false, comment: "too long", userName: "Neo" },
      { type: "user_action", time: T + 3, actionId: "export" },
    ]);
    expect(r.status, r.text).toBe(202);
    expect(r.body).toEqual({ accepted: 4, duplicates: 0 });
    const rows = await eventsOf(t);
    expect(rows.map((e) => ({ ...e, id: undefined, time: Number(e.time) }))).toEqual([
      expect.objectContaining({ type: "flow_started", time: T, endUserId: "known", flowId: "f1", widget: "self_help", domain: "app.x.com", userName: "Kim" }),
      expect.objectContaining({ type: "selfhelp_search", time: T + 1, endUserId: "new-1", searchTerm: "reset password", resultCount: 2, contentId: "c1" }),
      expect.objectContaining({ type: "flow_feedback", useful: false, comment: "too long", userName: "Neo" }),
      expect.objectContaining({ type: "user_action", endUserId: null, actionId: "export", domain: null }),
    ]);
    const users = await prisma.endUser.findMany({ where: { accountId: t.accountId }, orderBy: { externalId: "asc" } });
    expect(users.map((u) => u.externalId)).toEqual(["known", "new-1"]);
    const created = await prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType: "endUser", action: "create" } });
    expect(created.map((e) => [e.resourceId, e.userId])).toEqual(expect.arrayContaining([["new-1", t.email]]));
    expect(created.filter((e) => e.resourceId === "known")).toHaveLength(1); // from the PUT, not again from the events
    const names = await prisma.eventUserName.findMany({ where: { accountId: t.accountId }, orderBy: { endUserId: "asc" } });
    expect(names.map((n) => [n.endUserId, n.userName, Number(n.time)])).toEqual([
      ["known", "Kim", T],
      ["new-1", "Neo", T + 2],
    ]);
    // Events themselves are not audit entries (exempt: telemetry, not changes).
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId, resourceType: { notIn: ["endUser", "account", "membership"] } } })).toBe(0);
  });

  it("keeps the latest userName by event time, whatever the order requests arrive in", async () => {
    const t = await tenant("ev2");
    const e = (time: number, userName: string) => ({ type: "user_action", actionId: "x", endUserId: "u", time, userName });
    expect((await post(t, [e(T + 10, "Later"), e(T + 5, "Middle")])).status).toBe(202);
    expect((await post(t, [e(T, "Oldest")])).status).toBe(202);
    expect((await prisma.eventUserName.findUniqueOrThrow({ where: { accountId_endUserId: { accountId: t.accountId, endUserId: "u" } } })).userName).toBe(
      "Later",
    );
    expect((await post(t, [e(T + 10, "Same time, later item")])).status).toBe(202);
    expect((await prisma.eventUserName.findUniqueOrThrow({ where: { accountId_endUserId: { accountId: t.accountId, endUserId: "u" } } })).userName).toBe(
      "Same time, later item",
    );
  });

  it("some invalid: 207 with success and failure by index; the valid ones are stored", async () => {
    const t = await tenant("ev3");
    const now = Date.now();
    const items: unknown[] = [
      { type: "flow_started", time: T, flowId: "f", widget: "self_help" }, // 0 ok
      { type: "flow_started", time: T, flowId: "f" }, // 1 widget missing
      { type: "flow_started", time: T, flowId: "f", widget: "sidebar" }, // 2 unknown widget
      { type: "teleported", time: T }, // 3 unknown type
      { time: T, contentId: "c" }, // 4 no type
      { type: "popup_shown", contentId: "c" }, // 5 no time
      { type: "popup_shown", time: "yesterday", contentId: "c" }, // 6 bad time
      { type: "popup_shown", time: now + 6 * 60_000, contentId: "c" }, // 7 more than 5 minutes ahead
      { type: "popup_shown", time: now + 4 * 60_000, contentId: "c" }, // 8 ok: within 5 minutes
      { type: "flow_step", time: T, flowId: "f", step: 0 }, // 9 step < 1
      { type: "selfhelp_search", time: T, searchTerm: "x", resultCount: -1 }, // 10
      { type: "flow_feedback", time: T, flowId: "f", useful: "yes" }, // 11
      { type: "popup_shown", time: T, contentId: "c", colour: "red" }, // 12 unknown field
      { type: "popup_shown", time: T, contentId: "c", endUserId: "a,b" }, // 13 comma in the user id
      "not an object", // 14
      { type: "selfhelp_search", time: T, searchTerm: "x", resultCount: 0, contentId: "c" }, // 15 clicked without results
      { type: "user_action", time: T, actionId: "" }, // 16 empty actionId
      { type: "user_action", time: T, actionId: "go", endUserId: "fine" }, // 17 ok
      null, // 18 (refused the whole request before)
    ];
    const r = await post(t, items);
    expect(r.status, r.text).toBe(207);
    expect(r.body.success).toEqual([0, 8, 17].map((index) => ({ index, id: null, statusCode: 202, duplicate: false })));
    expect([r.body.accepted, r.body.duplicates]).toEqual([3, 0]);
    const errors = Object.fromEntries(r.body.failure.map((f: any) => [f.index, f.errors.join("; ")]));
    expect(r.body.failure.every((f: any) => f.statusCode === 400)).toBe(true);
    expect(errors).toEqual({
      1: "widget is required for flow_started events",
      2: expect.stringMatching(/^widget must be one of self_help, task_list/),
      3: expect.stringMatching(/^type must be one of flow_started, /),
      4: "type is required",
      5: "time is required (epoch milliseconds)",
      6: "time must be an integer of epoch milliseconds",
      7: "time is more than 5 minutes in the future",
      9: "step must be an integer from 1 to 2147483647",
      10: "resultCount must be an integer from 0 to 2147483647",
      11: "useful must be true or false",
      12: expect.stringMatching(/^unknown field\(s\): colour/),
      13: "endUserId must not contain a comma",
      14: "an event must be a JSON object",
      15: "a search with a clicked contentId must have resultCount ≥ 1",
      16: "actionId must be a non-empty string",
      18: "an event must be a JSON object",
    });
    const rows = await eventsOf(t);
    expect(rows.map((e) => e.type)).toEqual(["flow_started", "popup_shown", "user_action"]);
    expect((await prisma.endUser.findMany({ where: { accountId: t.accountId } })).map((u) => u.externalId)).toEqual(["fine"]);
  });

  it("an endUserId with white space at either end is a per-item failure, as end-user writes refuse it: such a user could never be updated or erased", async () => {
    const t = await tenant("evws");
    const ev = (endUserId: string) => ({ type: "user_action", time: T, actionId: "go", endUserId });
    const r = await post(t, [ev("fine"), ev("pgsp "), ev(" pgsp"), ev("tab\t"), ev("in side")]);
    expect(r.status, r.text).toBe(207);
    expect(r.body.success).toEqual([0, 4].map((index) => ({ index, id: null, statusCode: 202, duplicate: false })));
    expect(r.body.failure).toEqual(
      [1, 2, 3].map((index) => ({ index, id: null, statusCode: 400, errors: ["endUserId must not begin or end with white space"] })),
    );
    expect((await eventsOf(t)).map((e) => e.endUserId)).toEqual(["fine", "in side"]);
    const users = await prisma.endUser.findMany({ where: { accountId: t.accountId }, orderBy: { externalId: "asc" } });
    expect(users.map((u) => u.externalId)).toEqual(["fine", "in side"]);
    // What was stored can be erased by name.
    expect((await req(`/api/v1/${t.accountId}/endUsers/fine,in%20side`, { method: "DELETE", headers: t.headers })).status).toBe(204);
  });

  it("a userName without an endUserId is a per-item failure: a name no erasure could reach is not stored", async () => {
    const t = await tenant("evname");
    const r = await post(t, [
      { type: "user_action", time: T, actionId: "go", userName: "Ada Lovelace" },
      { type: "user_action", time: T, actionId: "go", endUserId: "ada", userName: "Ada Lovelace" },
      { type: "user_action", time: T, actionId: "go" },
    ]);
    expect(r.status, r.text).toBe(207);
    expect(r.body.failure).toEqual([
      { index: 0, id: null, statusCode: 400, errors: ["userName needs endUserId: a name is kept for its end user, and erased with them"] },
    ]);
    expect((await eventsOf(t)).map((e) => [e.endUserId, e.userName])).toEqual([
      ["ada", "Ada Lovelace"],
      [null, null],
    ]);
  });

  it('an endUserId "." or ".." is a per-item failure: no URL can name such an end user on its own', async () => {
    const t = await tenant("evdot");
    const ev = (endUserId: string) => ({ type: "user_action", time: T, actionId: "go", endUserId });
    const r = await post(t, [ev("."), ev(".."), ev(".x")]);
    expect(r.status, r.text).toBe(207);
    expect(r.body.failure.map((f: { index: number }) => f.index)).toEqual([0, 1]);
    expect((await eventsOf(t)).map((e) => e.endUserId)).toEqual([".x"]);
  });

  it("a 207 says which accepted items were duplicates (their `id` seen before) and counts them, as the 202 and recordEvents do", async () => {
    const t = await tenant("evdup");
    const ev = (id: string, actionId: string) => ({ id, type: "user_action", time: T, actionId, endUserId: "u1" });
    const first = await post(t, [ev("k1", "one")]);
    expect([first.status, first.body]).toEqual([202, { accepted: 1, duplicates: 0 }]);
    // k1 again (a duplicate), k2 new, an invalid item, k2 again within the request (a duplicate too)
    const r = await post(t, [ev("k1", "one again"), ev("k2", "two"), { id: "k3", type: "user_action", time: T }, ev("k2", "two again")]);
    expect(r.status, r.text).toBe(207);
    expect(r.body).toEqual({
      accepted: 1,
      duplicates: 2,
      success: [
        { index: 0, id: null, statusCode: 202, duplicate: true },
        { index: 1, id: null, statusCode: 202, duplicate: false },
        { index: 3, id: null, statusCode: 202, duplicate: true },
      ],
      failure: [{ index: 2, id: null, statusCode: 400, errors: ["actionId is required for user_action events"] }],
    });
    expect((await eventsOf(t)).map((e) => e.actionId)).toEqual(["one", "two"]);
    // The GraphQL mutation's results say the same.
    const g = await gql(
      server,
      t,
      `mutation($a: String!, $e: [EngagementEvent]!) { recordEvents(accountId: $a, events: $e) { results { index statusCode ... on EventResult { duplicate } } } }`,
      {
        a: t.accountId,
        e: [ev("k2", "x"), ev("k4", "four")],
      },
    );
    expect(g.data.recordEvents.results).toEqual([
      { index: 0, statusCode: 202, duplicate: true },
      { index: 1, statusCode: 202, duplicate: false },
    ]);
  });

  it("messages say what is allowed: the unknown-field list names id too, and step and resultCount give their whole range", async () => {
    const t = await tenant("evmsg");
    const r = await post(t, [
      { type: "popup_shown", time: T, contentId: "c", colour: "red" },
      { type: "flow_step", time: T, flowId: "f", step: 2 ** 31 },
      { type: "selfhelp_search", time: T, searchTerm: "x", resultCount: 2 ** 31 },
      { id: "k1", type: "flow_step", time: T, flowId: "f", step: 2 ** 31 - 1 },
    ]);
    expect(r.status, r.text).toBe(207);
    expect(r.body.failure).toEqual([
      {
        index: 0,
        id: null,
        statusCode: 400,
        errors: [
          "unknown field(s): colour (allowed: type, time, endUserId, flowId, contentId, widget, step, searchTerm, resultCount, useful, comment, actionId, domain, userName, id)",
        ],
      },
      { index: 1, id: null, statusCode: 400, errors: ["step must be an integer from 1 to 2147483647"] },
      { index: 2, id: null, statusCode: 400, errors: ["resultCount must be an integer from 0 to 2147483647"] },
    ]);
    expect((await eventsOf(t)).map((e) => e.step)).toEqual([2 ** 31 - 1]);
  });

  it("strings at their limits in the widest characters are stored and counted (PostgreSQL's 2,704-byte index entries); a byte more is a 400", async () => {
    const t = await tenant("evwide");
    // Characters outside the Basic Multilingual Plane (4 bytes each), from a fixed pseudo-random
    // sequence: text that does not compress, as PostgreSQL would compress a long index entry.
    let seed = 12345;
    const wide = (chars: number) =>
      Array.from({ length: chars }, () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return String.fromCodePoint(0x10000 + (seed % 0xf0000));
      }).join("");
    const id = () => wide(128); // 512 bytes
    const domain = wide(128);
    const comment = Array.from({ length: 4_000 }, () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return String.fromCharCode(0x21 + (seed % 94));
    }).join("");
    const user = id();
    const events = [
      { type: "flow_started", time: T, endUserId: user, flowId: id(), contentId: id(), widget: "guided_popup", domain },
      { type: "selfhelp_search", time: T + 1, endUserId: user, searchTerm: wide(250), resultCount: 0, domain },
      { type: "flow_feedback", time: T + 2, endUserId: user, flowId: id(), useful: false, comment, domain },
      { type: "user_action", time: T + 3, endUserId: user, actionId: id(), domain },
      { type: "flow_completed", time: T + 4, endUserId: user, flowId: id(), widget: "direct", domain },
    ];
    const r = await post(t, events);
    expect(r.status, r.text).toBe(202);
    expect(await catchUpRollups(t.accountId)).toBe(5);
    expect(await prisma.eventUserRollup.count({ where: { accountId: t.accountId } })).toBe(5);
    const since = new Date(T - 86_400_000).toISOString().slice(0, 10);
    const report = await req(`/v1/accounts/${t.accountId}/reports/negativeFeedbackComments?startDate=${since}&endDate=${since.slice(0, 4)}-12-31`, {
      headers: t.headers,
    });
    expect(report.status, report.text).toBe(200);
    expect(report.body.rows).toEqual([[T + 2, events[2]!.flowId, user, null, comment]]);

    const over = await post(t, [
      { type: "user_action", time: T, endUserId: user, actionId: `${wide(128)}x` },
      { type: "selfhelp_search", time: T, endUserId: user, searchTerm: `${wide(250)}x`, resultCount: 0 },
      // 668 bytes as sent, 1,002 once lower-cased (U+023A → U+2C65): the stored form is measured.
      { type: "selfhelp_search", time: T, endUserId: user, searchTerm: "\u023a".repeat(334), resultCount: 0 },
    ]);
    expectProblem(over, 400);
    expect(over.body.errors).toEqual([
      { path: "[0]", message: "actionId must be at most 512 bytes of UTF-8 (and 256 characters)" },
      { path: "[1]", message: "searchTerm must be at most 1000 bytes of UTF-8 (and 500 characters)" },
      { path: "[2]", message: "searchTerm must be at most 1000 bytes of UTF-8 (and 500 characters)" },
    ]);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(5);
  });

  it("none valid: 400 problem listing each item's errors; nothing stored", async () => {
    const t = await tenant("ev4");
    const r = await post(t, [{ type: "popup_shown", time: T }, { type: "nope" }]);
    expectProblem(r, 400);
    expect(r.body.errors).toEqual(
      expect.arrayContaining([
        { path: "[0]", message: "contentId is required for popup_shown events" },
        { path: "[1]", message: expect.stringMatching(/^type must be one of/) },
      ]),
    );
    expect(await eventsOf(t)).toEqual([]);
  });

  it("a body that is no array of 1 to 10,000 items is a 400; not JSON a 415", async () => {
    const t = await tenant("ev5");
    expectProblem(await post(t, { type: "popup_shown" }), 400);
    expectProblem(await post(t, []), 400);
    const many = Array.from({ length: 10_001 }, () => ({ type: "user_action", time: T, actionId: "x" }));
    expectProblem(await post(t, many), 400);
    expectProblem(await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: { ...t.headers, "content-type": "text/plain" }, raw: "[]" }), 415);
    expect(await eventsOf(t)).toEqual([]);
  });

  it("10,000 events (the maximum) are batched: a few multi-row INSERTs, not a statement per event", async () => {
    const t = await tenant("ev6");
    const body = Array.from({ length: 10_000 }, (_, i) => ({
      type: "flow_started",
      time: T + i,
      endUserId: `user-${i % 500}`,
      flowId: `f${i % 7}`,
      widget: "self_help",
      userName: `User ${i % 500}`,
    }));
    const { result, sql } = await sqlOf(() => post(t, body));
    expect(result.status, result.text).toBe(202);
    const statements = shape(sql).filter((s) => !(AUTH as readonly string[]).includes(s));
    // Both databases: the 10,000 rows as one JSON parameter, one statement.
    const pg = /^postgres/.test(process.env.DATABASE_URL ?? "");
    // 500 users: one lookup, one insert, one name upsert, one audit insert.
    expect(statements.filter((s) => s === "INSERT Event")).toHaveLength(1);
    expect(statements.filter((s) => s === "SELECT EndUser")).toHaveLength(1);
    expect(statements.filter((s) => s === "INSERT EndUser")).toHaveLength(1);
    expect(statements.filter((s) => s === "INSERT EventUserName")).toHaveLength(1);
    expect(statements.filter((s) => s === "INSERT AuditLog")).toHaveLength(1);
    // No foreign key on "Event": PostgreSQL locks the account row once instead of checking it per row.
    expect(statements.filter((s) => s === "LOCK Account")).toHaveLength(pg ? 1 : 0);
    // The reports' rollups are the rollup worker's, not the request's (src/domains/reports/rollupWorker.ts).
    expect(statements.filter((s) => /Rollup/.test(s))).toEqual([]);
    expect(statements.length).toBeLessThanOrEqual(11);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(10_000);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId } })).toBe(500);
  });

  it("an account that does not exist stores nothing (the insert's account lock stands in for a foreign key)", async () => {
    const before = await prisma.event.count();
    // Routes check the account first; this is the insert's own guard, for an account gone since.
    await expect(recordEvents("no-such-account", [{ type: "user_action", time: T, actionId: "x" }])).rejects.toMatchObject({ status: 404 });
    await expect(recordEvents("no-such-account", [{ type: "user_action", time: T, actionId: "x", endUserId: "u1" }])).rejects.toThrow();
    expect(await prisma.event.count()).toBe(before);
    expect(await prisma.event.count({ where: { accountId: "no-such-account" } })).toBe(0);
    expect(await prisma.endUser.count({ where: { accountId: "no-such-account" } })).toBe(0);
  });

  it("tenants: events go to the account of the path; another account's key is a 403, no key a 401", async () => {
    expect((await post(a, [{ type: "user_action", time: T, actionId: "mine", endUserId: "shared" }])).status).toBe(202);
    expect(
      (await req(`/v1/accounts/${a.accountId}/events`, { method: "POST", headers: b.headers, body: [{ type: "user_action", time: T, actionId: "x" }] })).status,
    ).toBe(403);
    expect((await req(`/v1/accounts/${a.accountId}/events`, { method: "POST", body: [{ type: "user_action", time: T, actionId: "x" }] })).status).toBe(401);
    expect((await eventsOf(a)).map((e) => e.actionId)).toEqual(["mine"]);
    expect(await eventsOf(b)).toEqual([]);
    expect(await prisma.endUser.count({ where: { accountId: b.accountId } })).toBe(0);
  });
});

describe("GraphQL recordEvents", () => {
  it("stores events with per-item results like the REST route", async () => {
    const t = await tenant("evg");
    const r = await gql(
      server,
      t,
      `mutation($id: String!, $events: [EngagementEvent!]!) { recordEvents(accountId: $id, events: $events) { results { index statusCode ok errors } } }`,
      {
        id: t.accountId,
        events: [
          { type: "beacon_shown", time: T, contentId: "b1", endUserId: "g1" },
          { type: "beacon_shown", time: T },
        ],
      },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.recordEvents.results).toEqual([
      { index: 0, statusCode: 202, ok: true, errors: [] },
      { index: 1, statusCode: 400, ok: false, errors: ["contentId is required for beacon_shown events"] },
    ]);
    expect((await eventsOf(t)).map((e) => [e.type, e.contentId, e.endUserId])).toEqual([["beacon_shown", "b1", "g1"]]);
  });
});
