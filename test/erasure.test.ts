// Deleting an end user erases them everywhere: no report (JSON or CSV, all 37), GraphQL field or
// audit entry carries their id, name or words afterwards, while report totals and distinct-user
// counts stay what they were (their events are kept under a random pseudonym). The audit log
// records the erasure without repeating the personal data; bulk deletes stay set-based.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../src/admin.js";
import { dbKind } from "../src/db/index.js";
import { REPORTS } from "../src/domains/reports/registry.js";
import { catchUpRollups } from "../src/domains/reports/rollupWorker.js";
import { gql, prisma, requester, type Server, sqlOf, startServer, type Tenant, tenant, until } from "./helpers.js";

let server: Server;
const req = requester(() => server);
beforeAll(async () => {
  // A webhook endpoint on this machine: its delivery log shows the messages' bodies.
  server = await startServer({ WEBHOOKS_ALLOW_PRIVATE: "true" });
});
afterAll(() => server.close());

const ID = "alice.erasable@example.com";
const NAME = "Alice Erasable";
const WORDS = "Alice says the export broke her week";
const SECRET_VALUE = "alice-plan-platinum-77";
const DAY = 86_400_000;
const now = Date.now();
const start = new Date(now - 3 * DAY).toISOString().slice(0, 10);

async function seed(t: Tenant) {
  const fields = await req(`/api/v1/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] });
  expect(fields.status).toBeLessThan(300);
  const users = await req(`/api/v1/${t.accountId}/endUsers`, {
    method: "PUT",
    headers: t.headers,
    body: [
      { id: ID, custom: { plan: SECRET_VALUE } },
      { id: "bob", custom: { plan: "basic" } },
    ],
  });
  expect(users.status).toBeLessThan(300);
  const at = (h: number) => now - DAY + h * 3_600_000;
  const mine = { endUserId: ID, domain: "app.x.com" };
  const events = [
    { type: "flow_started", time: at(1), ...mine, flowId: "f1", widget: "self_help", userName: NAME },
    { type: "flow_step", time: at(1) + 1, ...mine, flowId: "f1", step: 1 },
    { type: "flow_completed", time: at(1) + 2, ...mine, flowId: "f1", widget: "self_help" },
    { type: "flow_feedback", time: at(1) + 3, ...mine, flowId: "f1", useful: false, comment: WORDS },
    { type: "flow_feedback", time: at(1) + 4, ...mine, flowId: "f1", useful: true, comment: `${WORDS} (later)` },
    { type: "flow_failed", time: at(1) + 5, ...mine, flowId: "f1", widget: "self_help" },
    { type: "task_started", time: at(2), ...mine, flowId: "f1" },
    { type: "selfhelp_search", time: at(3), ...mine, searchTerm: "refund", resultCount: 0 },
    { type: "popup_shown", time: at(4), ...mine, contentId: "p1" },
    { type: "popup_clicked", time: at(4) + 1, ...mine, contentId: "p1" },
    { type: "smarttip_played", time: at(5), ...mine, contentId: "s1" },
    { type: "beacon_shown", time: at(6), ...mine, contentId: "b1" },
    { type: "beacon_clicked", time: at(6) + 1, ...mine, contentId: "b1" },
    { type: "user_action", time: at(7), ...mine, actionId: "export" },
    { type: "flow_started", time: at(8), endUserId: "bob", flowId: "f1", widget: "self_help", userName: "Bob" },
    { type: "flow_feedback", time: at(8) + 1, endUserId: "bob", flowId: "f1", useful: false, comment: "bob's words" },
  ];
  const posted = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events });
  expect(posted.status).toBe(202);
}

/** Every report, JSON and CSV, as text. */
async function allReports(t: Tenant): Promise<Record<string, { json: any; csv: string }>> {
  const out: Record<string, { json: any; csv: string }> = {};
  for (const r of REPORTS) {
    const q = `startDate=${start}${r.flow ? "&flowId=f1" : ""}`;
    const json = await req(`/v1/accounts/${t.accountId}/reports/${r.name}?${q}`, { headers: t.headers });
    const csv = await req(`/v1/accounts/${t.accountId}/reports/${r.name}?${q}&format=csv`, { headers: t.headers });
    expect([r.name, json.status, csv.status]).toEqual([r.name, 200, 200]);
    out[r.name] = { json: json.body, csv: csv.text };
  }
  return out;
}

const personal = (text: string) => [ID, NAME, WORDS, SECRET_VALUE].filter((p) => text.includes(p));

/** Every (table.column, text) of the database whose value contains one of the texts: all tables, all schemas, text and JSON columns. */
async function databaseHolding(texts: string[]): Promise<string[]> {
  const columns =
    dbKind() === "postgres"
      ? await prisma.$queryRawUnsafe<{ t: string; c: string }[]>(
          `SELECT CASE WHEN table_schema = 'public' THEN format('%I', table_name) ELSE format('%I.%I', table_schema, table_name) END AS t, format('%I', column_name) AS c FROM information_schema.columns
           WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND data_type IN ('text', 'character varying', 'json', 'jsonb', 'bytea', 'ARRAY', 'USER-DEFINED')
             AND (table_schema, table_name) IN (SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')`,
        )
      : (
          await Promise.all(
            (
              await prisma.$queryRawUnsafe<{ name: string }[]>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
            ).map(async ({ name }) =>
              (
                await prisma.$queryRawUnsafe<{ name: string; type: string }[]>(`SELECT name, type FROM pragma_table_info('${name}')`)
              )
                .filter((c) => /TEXT|CHAR|JSON|BLOB|^$/i.test(c.type))
                .map((c) => ({ t: `"${name}"`, c: `"${c.name}"` })),
            ),
          )
        ).flat();
  expect(columns.length).toBeGreaterThan(30);
  const found: string[] = [];
  for (const { t, c } of columns) {
    const asText = `CAST(${c} AS TEXT)`;
    for (const text of texts) {
      const contains = dbKind() === "postgres" ? `strpos(${asText}, $1) > 0` : `instr(${asText}, ?) > 0`;
      const [row] = await prisma.$queryRawUnsafe<{ n: bigint | number }[]>(`SELECT COUNT(*) AS n FROM ${t} WHERE ${contains}`, text);
      if (Number(row!.n)) found.push(`${t}.${c}: ${text}`.replaceAll('"', ""));
    }
  }
  return found;
}

describe("DELETE /api/v1/{accountId}/endUsers/{id}", () => {
  it("erases the end user from every report (JSON and CSV), GraphQL and the audit log; totals stay", async () => {
    const t = await tenant("erase");
    await seed(t);
    const before = await allReports(t);
    expect(personal(JSON.stringify(before))).toEqual([ID, NAME, WORDS]); // they were there
    const audit = () => req(`/v1/accounts/${t.accountId}/auditlogs`, { method: "POST", headers: t.headers, body: {} });
    expect(personal((await audit()).text)).toEqual([ID, SECRET_VALUE]);

    const row = await prisma.endUser.findFirstOrThrow({ where: { accountId: t.accountId, externalId: ID } });
    const bob = await prisma.endUser.findFirstOrThrow({ where: { accountId: t.accountId, externalId: "bob" } });
    const actions = await req(`/v1/accounts/${t.accountId}/endUsers`, {
      method: "PUT",
      headers: t.headers,
      body: [{ id: ID, userActionCount: { export: 3 } }],
    });
    expect(actions.status).toBeLessThan(300);
    const children = async (endUserId: string) => [
      await prisma.endUserValue.count({ where: { endUserId } }),
      await prisma.endUserAction.count({ where: { endUserId } }),
    ];
    expect(await children(row.id)).toEqual([1, 1]);

    // Where they are before, their per-user rollups counted (the scan below finds them).
    await catchUpRollups(t.accountId);
    const held = await databaseHolding([ID, NAME, WORDS, SECRET_VALUE]);
    for (const place of [
      `EndUserValue.text: ${SECRET_VALUE}`,
      `Event.comment: ${WORDS}`,
      `EventUserName.userName: ${NAME}`,
      `EventUserRollup.endUserId: ${ID}`,
    ])
      expect(held).toContain(place);
    const del = await req(`/api/v1/${t.accountId}/endUsers/${encodeURIComponent(ID)}`, { method: "DELETE", headers: t.headers });
    expect(del.status).toBe(204);
    // Their values and actions went with them (explicitly: no foreign key cascades them on PostgreSQL); Bob's stay.
    expect(await children(row.id)).toEqual([0, 0]);
    expect(await children(bob.id)).toEqual([1, 0]);

    const after = await allReports(t);
    for (const r of REPORTS)
      expect([r.name, personal(after[r.name]!.json ? JSON.stringify(after[r.name]!.json) : ""), personal(after[r.name]!.csv)]).toEqual([r.name, [], []]);
    // Totals and distinct-user counts are unchanged: the events are still counted, under a pseudonym.
    for (const name of ["summary", "flowViews", "flowCompletion", "allFlowsFeedback", "beacons", "userActions", "searchSuccessVsFailure", "flowDropOff"]) {
      expect([name, after[name]!.json.rows]).toEqual([name, before[name]!.json.rows]);
    }
    // Per-user rows stay, under one pseudonym with no name; the comment reports lose the erased words.
    const engagement = after.endUserEngagement!.json.rows as unknown[][];
    const erasedRow = engagement.find((row) => String(row[0]).startsWith("erased_"))!;
    expect(erasedRow.slice(1, 7)).toEqual([null, 1, 1, 1, 1, 1]);
    expect(after.negativeFeedbackComments!.json.rows.map((r: unknown[]) => r[4])).toEqual(["bob's words"]);

    // GraphQL: the end user is gone, and the reports say nothing of them.
    const g = await gql(server, t, `query($a: String!, $id: String!) { account(id: $a) { endUser(id: $id) { id } } }`, { a: t.accountId, id: ID });
    expect(g.errors ?? []).toEqual([]);
    expect(g.data.account.endUser).toBeNull();

    // The audit log: the erasure is recorded under the pseudonym, no entry names the user or their values.
    const log = await audit();
    expect(personal(log.text)).toEqual([]);
    const entries = log.body.data as { action: string; resourceType: string; resourceId: string; details: unknown }[];
    const mine = entries.filter((e) => e.resourceType === "endUser" && e.resourceId.startsWith("erased_"));
    expect(mine.map((e) => e.action).sort()).toEqual(["create", "delete", "update"]);
    expect(new Set(mine.map((e) => e.resourceId)).size).toBe(1);
    for (const e of mine) expect(e.details).toEqual({ erased: true });
    // Not the events' pseudonym: the deletion's entry is written with the end_user.deleted message,
    // which names the user; one pseudonym for both would tie the user to their history.
    expect(String(erasedRow[0])).not.toBe(mine[0]!.resourceId);

    // The database: nothing left that names them.
    expect(await prisma.event.count({ where: { accountId: t.accountId, endUserId: ID } })).toBe(0);
    expect(await prisma.event.count({ where: { accountId: t.accountId, userName: NAME } })).toBe(0);
    expect(await prisma.event.count({ where: { accountId: t.accountId, comment: { contains: "Alice" } } })).toBe(0);
    expect(await prisma.eventUserName.count({ where: { accountId: t.accountId, endUserId: ID } })).toBe(0);
    expect(await prisma.event.count({ where: { accountId: t.accountId, endUserId: "bob" } })).toBe(2); // others untouched
    // And every text column of every table (job queues included): none holds their id, name, words or values.
    expect(await databaseHolding([ID, NAME, WORDS, SECRET_VALUE])).toEqual([]);
  }, 60_000);

  it("the webhook delivery log no longer names them: engagement messages carry the pseudonym", async () => {
    const t = await tenant("erase-hook");
    const hook = await req(`/v1/accounts/${t.accountId}/webhooks`, {
      method: "POST",
      headers: t.headers,
      body: { url: "http://127.0.0.1:9/hook", events: ["engagement.flow_started", "engagement.flow_feedback", "end_user.deleted"] },
    });
    expect(hook.status).toBe(201);
    await seed(t);
    const log = () => req(`/v1/accounts/${t.accountId}/webhooks/${hook.body.id}/deliveries?limit=100`, { headers: t.headers });
    expect(personal((await log()).text)).toEqual([ID, NAME, WORDS]);
    expect((await req(`/api/v1/${t.accountId}/endUsers/${encodeURIComponent(ID)}`, { method: "DELETE", headers: t.headers })).status).toBe(204);
    const after = await log();
    const bodies = after.body.data.map((d: { type: string; payload: { data: Record<string, unknown> } }) => [d.type, d.payload.data]);
    // The end_user.deleted message names the user: telling the customer's systems whom to forget is its purpose.
    expect(bodies.filter(([type]: [string]) => type === "end_user.deleted")).toEqual([["end_user.deleted", { id: ID }]]);
    const engagement = bodies.filter(([type]: [string]) => type.startsWith("engagement."));
    expect(personal(JSON.stringify(engagement))).toEqual([]);
    const mine = engagement.filter(([, d]: [string, Record<string, unknown>]) => String(d.endUserId).startsWith("erased_"));
    expect(mine.length).toBe(3); // Alice's flow_started and two flow_feedback
    expect(new Set(mine.map(([, d]: [string, Record<string, unknown>]) => d.endUserId)).size).toBe(1);
    for (const [, d] of mine) expect(d).not.toHaveProperty("userName");
    // In the whole database only that message's delivery names them.
    expect(await databaseHolding([ID, NAME, WORDS, SECRET_VALUE])).toEqual([`WebhookDelivery.payload: ${ID}`]);
  }, 60_000);

  it("the GraphQL mutation erases the same way; a missing id is a 404 that changes nothing", async () => {
    const t = await tenant("erase-gql");
    await seed(t);
    const events = await prisma.event.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } });
    const missing = await req(`/api/v1/${t.accountId}/endUsers/nobody`, { method: "DELETE", headers: t.headers });
    expect(missing.status).toBe(404);
    expect(await prisma.event.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } })).toEqual(events);
    const g = await gql(server, t, `mutation($a: String!, $ids: [String!]!) { deleteEndUsers(accountId: $a, ids: $ids) { results { statusCode } } }`, {
      a: t.accountId,
      ids: [ID],
    });
    expect(g.data.deleteEndUsers.results).toEqual([{ statusCode: 204 }]);
    expect(await prisma.event.count({ where: { accountId: t.accountId, endUserId: ID } })).toBe(0);
    expect(await prisma.event.count({ where: { accountId: t.accountId, endUserId: { startsWith: "erased_" } } })).toBe(14);
  }, 60_000);

  it("a bulk delete of 10,000 end users with events stays set-based", async () => {
    const t = await tenant("erase-bulk");
    const ids = Array.from({ length: 10_000 }, (_, i) => `bulk-${i}`);
    const put = await req(`/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: ids.map((id) => ({ id })) });
    expect(put.status).toBeLessThan(300);
    const events = ids.map((id, i) => ({ type: "flow_started", time: now - DAY + i, endUserId: id, flowId: "f1", widget: "self_help", userName: `name ${i}` }));
    expect((await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events })).status).toBe(202);
    // 10,000 ids do not fit in a URL: the GraphQL mutation the REST route runs takes them.
    const mutation = `mutation($a: String!, $ids: [String!]!) { deleteEndUsers(accountId: $a, ids: $ids) { results { statusCode } } }`;
    const { result, sql } = await sqlOf(() => gql(server, t, mutation, { a: t.accountId, ids }));
    expect(result.data.deleteEndUsers.results.every((r: { statusCode: number }) => r.statusCode === 204)).toBe(true);
    expect(sql.length).toBeLessThan(160); // ten chunks of 1,000: at most 16 statements each, whatever the events
    expect(await prisma.event.count({ where: { accountId: t.accountId, userName: { not: null } } })).toBe(0);
    expect(await prisma.event.count({ where: { accountId: t.accountId, endUserId: { startsWith: "erased_" } } })).toBe(10_000);
    const flowViews = await req(`/v1/accounts/${t.accountId}/reports/flowViews?startDate=${start}`, { headers: t.headers });
    expect(flowViews.body.rows).toEqual([["f1", 10_000, 10_000]]);
  }, 120_000);
});

describe("erasure and ingest of the same end user at once", () => {
  // PostgreSQL runs them side by side: both take the account's event-order lock (ingest before it
  // looks up the end users, erasure before it reads whom to erase), so one runs wholly before the
  // other. The test holds that lock itself, queues the two requests behind it in a chosen order,
  // and lets them go: deterministic, whatever the timing. (SQLite has one writer: nothing to race.)
  const pgOnly = it.runIf(dbKind() === "postgres");
  const lockKey = "hashtext('guidegate.events:' || $1)";
  const X = "xavier.racing@example.com";
  const XNAME = "Xavier Racing";
  const eventsOf = (n: number, at: number) =>
    Array.from({ length: n }, (_, i) => ({ type: "flow_started", time: at + i, endUserId: X, flowId: "f1", widget: "self_help", userName: XNAME }));

  /** A session holding the account's event-order lock until release(); waiting() counts the sessions queued behind it. */
  async function holdEventOrder(accountId: string) {
    const client = new pg.Client({ connectionString: process.env.DATABASE_DIRECT_URL ?? process.env.DATABASE_URL });
    await client.connect();
    await client.query("BEGIN");
    await client.query(`SELECT pg_advisory_xact_lock(${lockKey})::text`, [accountId]);
    const [{ objid }] = (await client.query(`SELECT (${lockKey}::bigint & 4294967295)::oid AS objid`, [accountId])).rows;
    return {
      waiting: async () =>
        Number(
          (
            await client.query(
              `SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
              [objid],
            )
          ).rows[0].n,
        ),
      release: async () => {
        await client.query("COMMIT");
        await client.end();
      },
    };
  }
  const settled = (p: Promise<unknown>) => {
    const s = { done: false };
    void p.then(
      () => void (s.done = true),
      () => void (s.done = true),
    );
    return s;
  };
  const realIdLeft = async (accountId: string) => ({
    events: await prisma.event.count({ where: { accountId, endUserId: X } }),
    named: await prisma.event.count({ where: { accountId, userName: XNAME } }),
    names: await prisma.eventUserName.count({ where: { accountId, endUserId: X } }),
    userRollups: await prisma.eventUserRollup.count({ where: { accountId, endUserId: X } }),
    lastSeen: await prisma.eventUserLastSeen.count({ where: { accountId, endUserId: X } }),
  });
  const none = { events: 0, named: 0, names: 0, userRollups: 0, lastSeen: 0 };

  pgOnly(
    "an erasure asked while an ingest request of the user's events waits: it runs after it and anonymises those events too",
    async () => {
      const t = await tenant("erase-race1");
      const first = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: eventsOf(3, now - DAY) });
      expect(first.status).toBe(202);
      await catchUpRollups(t.accountId);
      const lock = await holdEventOrder(t.accountId);
      let released = false;
      try {
        const ingest = req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: eventsOf(200, now - DAY + 1_000) });
        await until("the ingest request waiting for the lock", async () => (await lock.waiting()) === 1);
        const erase = req(`/api/v1/${t.accountId}/endUsers/${encodeURIComponent(X)}`, { method: "DELETE", headers: t.headers });
        const erased = settled(erase);
        // Queued behind the ingest request (before the fix the erasure did not wait, and answered at once).
        await until("the erasure waiting behind it", async () => erased.done || (await lock.waiting()) === 2);
        await lock.release();
        released = true;
        expect((await ingest).status).toBe(202);
        expect((await erase).status).toBe(204);
      } finally {
        if (!released) await lock.release();
      }
      await catchUpRollups(t.accountId);
      expect(await realIdLeft(t.accountId)).toEqual(none);
      expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: X } })).toBe(0);
      const pseudonyms = await prisma.event.groupBy({ by: ["endUserId"], where: { accountId: t.accountId }, _count: true });
      expect(pseudonyms).toEqual([{ endUserId: expect.stringMatching(/^erased_/), _count: 203 }]);
      const flowViews = await req(`/v1/accounts/${t.accountId}/reports/flowViews?startDate=${start}`, { headers: t.headers });
      expect(flowViews.body.rows).toEqual([["f1", 203, 1]]);
      const engagement = await req(`/v1/accounts/${t.accountId}/reports/endUserEngagement?startDate=${start}&format=csv`, { headers: t.headers });
      expect(engagement.text).not.toContain(X);
      expect(engagement.text).not.toContain(XNAME);
    },
    60_000,
  );

  pgOnly(
    "an ingest request waiting behind an erasure: its events name a new end user of that id, erasable in turn",
    async () => {
      const t = await tenant("erase-race2");
      expect((await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: eventsOf(3, now - DAY) })).status).toBe(202);
      const lock = await holdEventOrder(t.accountId);
      let released = false;
      try {
        const erase = req(`/api/v1/${t.accountId}/endUsers/${encodeURIComponent(X)}`, { method: "DELETE", headers: t.headers });
        const erased = settled(erase);
        await until("the erasure waiting for the lock", async () => erased.done || (await lock.waiting()) === 1);
        const ingest = req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: eventsOf(5, now - DAY + 1_000) });
        // The ingest request queues behind the erasure, before it looks up its end users.
        await until("the ingest request waiting", async () => (await lock.waiting()) === (erased.done ? 1 : 2));
        await lock.release();
        released = true;
        expect((await erase).status).toBe(204);
        expect((await ingest).status).toBe(202);
      } finally {
        if (!released) await lock.release();
      }
      // The three earlier events are anonymised; the five later ones belong to a new end user X.
      expect(await prisma.event.count({ where: { accountId: t.accountId, endUserId: { startsWith: "erased_" }, userName: null } })).toBe(3);
      expect(await prisma.event.count({ where: { accountId: t.accountId, endUserId: X, userName: XNAME } })).toBe(5);
      const again = await req(`/api/v1/${t.accountId}/endUsers/${encodeURIComponent(X)}`, { headers: t.headers });
      expect(again.status, again.text).toBe(200);
      // And the new one can be erased like any other.
      expect((await req(`/api/v1/${t.accountId}/endUsers/${encodeURIComponent(X)}`, { method: "DELETE", headers: t.headers })).status).toBe(204);
      await catchUpRollups(t.accountId);
      expect(await realIdLeft(t.accountId)).toEqual(none);
    },
    60_000,
  );
});

describe("the pseudonym prefix `erased_` is reserved for end-user ids", () => {
  it("an event, a Segment call or an end-user write naming an `erased_…` id is refused per item (400 naming the field); nothing is named again", async () => {
    const t = await tenant("erase-reserved");
    const time = Date.now() - 60_000;
    const posted = await req(`/v1/accounts/${t.accountId}/events`, {
      method: "POST",
      headers: t.headers,
      body: [{ type: "user_action", time, endUserId: "carol", actionId: "export", userName: "Carol" }],
    });
    expect(posted.status, posted.text).toBe(202);
    expect((await req(`/api/v1/${t.accountId}/endUsers/carol`, { method: "DELETE", headers: t.headers })).status).toBe(204);
    const [erased] = await prisma.event.findMany({ where: { accountId: t.accountId } });
    const pseudonym = erased!.endUserId!;
    expect(pseudonym).toMatch(/^erased_/);
    const before = { events: await prisma.event.count({ where: { accountId: t.accountId } }) };
    const reserved = (what: string) => `${what} must not begin with 'erased_': that prefix is reserved for the pseudonyms of erased end users`;

    // POST /events: the item naming the pseudonym fails alone; the other is stored.
    const events = await req(`/v1/accounts/${t.accountId}/events`, {
      method: "POST",
      headers: t.headers,
      body: [
        { type: "user_action", time, endUserId: pseudonym, actionId: "export", userName: "Carol Again" },
        { type: "user_action", time, endUserId: "dave", actionId: "export" },
      ],
    });
    expect(events.status, events.text).toBe(207);
    expect(events.body.failure).toEqual([expect.objectContaining({ index: 0, statusCode: 400, errors: [reserved("endUserId")] })]);

    // Segment: track and identify, by userId or anonymousId.
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const segment = await req("/segment/v1/batch", {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}` },
      body: {
        batch: [
          { type: "track", event: "Export", userId: pseudonym, context: { traits: { name: "Carol Again" } }, messageId: "r-1" },
          { type: "track", event: "Export", anonymousId: "erased_made_up", properties: { userName: "Someone" }, messageId: "r-2" },
          { type: "identify", userId: pseudonym, traits: { name: "Carol Again" }, messageId: "r-3" },
        ],
      },
    });
    expect(segment.status, segment.text).toBe(200);
    expect(segment.body).toEqual({
      success: true,
      accepted: 0,
      duplicates: 0,
      rejected: [
        { index: 0, errors: [reserved("userId")] },
        { index: 1, errors: [reserved("anonymousId")] },
        { index: 2, errors: [reserved("userId")] },
      ],
      ignoredTraits: 0,
    });

    // End-user writes: the bulk PUT and the GraphQL mutation.
    const users = await req(`/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: pseudonym }] });
    expect(users.status, users.text).toBe(400);
    expect(JSON.stringify(users.body)).toContain(reserved("id"));
    const g = await gql(server, t, `mutation($a: String!) { upsertEndUsers(accountId: $a, input: [{id: "erased_x"}]) { results { statusCode errors } } }`, {
      a: t.accountId,
    });
    expect(g.data.upsertEndUsers.results).toEqual([{ statusCode: 400, errors: [reserved("id")] }]);

    // Nothing names the pseudonym, no end user has a reserved id; only dave's event was added.
    expect(await prisma.eventUserName.count({ where: { accountId: t.accountId } })).toBe(0);
    expect(await prisma.event.count({ where: { accountId: t.accountId, userName: { not: null } } })).toBe(0);
    expect((await prisma.endUser.findMany({ where: { accountId: t.accountId } })).map((u) => u.externalId)).toEqual(["dave"]);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(before.events + 1);
  }, 60_000);
});
