// Raw-event upkeep: monthly partitions made ahead (PostgreSQL) and EVENTS_RETENTION_DAYS, which
// removes old raw events (whole partitions on PostgreSQL, a DELETE on SQLite) while the reports'
// rollups, and so the reports over whole days of those months, stay.
import pgClient from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dbKind } from "../src/db/index.js";
import { applyEventRetention, ensureEventPartitions, removeCountedEvents } from "../src/domains/events/partitions.js";
import { prisma, requester, type Server, startServer, type Tenant, tenant, until } from "./helpers.js";

let server: Server;
let t: Tenant;
const req = requester(() => server);
const DAY = 86_400_000;
const pg = () => dbKind() === "postgres";

// Fixed "now" for the upkeep, in the middle of a month so month edges are not an accident.
const NOW = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 15, 12);
const dayStart = (ms: number) => Math.floor(ms / DAY) * DAY;
const OLD = dayStart(NOW - 200 * DAY) + 10 * 3_600_000; // in a month that ends long before the cutoff
const OLDEST = dayStart(NOW - 400 * DAY) + 10 * 3_600_000;
const RECENT = dayStart(NOW - 10 * DAY) + 10 * 3_600_000;
const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function partitions(): Promise<string[]> {
  const rows = await prisma.$queryRawUnsafe<{ name: string }[]>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"Event"'::regclass ORDER BY 1`,
  );
  return rows.map((r) => r.name);
}

beforeAll(async () => {
  server = await startServer();
  t = await tenant("ret");
  // A partition for the old month before its events arrive (as the service would have made it then).
  if (pg()) expect(await ensureEventPartitions(OLD)).toContain(`Event_${ymd(OLD).slice(0, 7).replace("-", "_")}`);
  const events = [OLDEST, OLD, OLD + 1, RECENT].map((time, i) => ({ type: "user_action", time, actionId: "export", endUserId: `u${i}` }));
  const r = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events });
  expect(r.status, r.text).toBe(202);
});
afterAll(() => server.close());

describe("event upkeep", () => {
  it("PostgreSQL: Event is partitioned by month; the coming months' partitions are made ahead", async () => {
    if (!pg()) return;
    const later = Date.UTC(new Date(NOW).getUTCFullYear(), new Date(NOW).getUTCMonth() + 5, 3);
    const made = await ensureEventPartitions(later);
    expect(made.length).toBeGreaterThan(0);
    const names = await partitions();
    expect(names).toContain("Event_default");
    for (const m of made) expect(names).toContain(m);
    expect(await ensureEventPartitions(later)).toEqual([]); // idempotent
    const where = await prisma.$queryRawUnsafe<{ part: string }[]>(`SELECT tableoid::regclass::text AS part FROM "Event" WHERE "time" = $1`, OLD);
    expect(where[0]!.part).toBe(`"Event_${ymd(OLD).slice(0, 7).replace("-", "_")}"`);
  });

  it("EVENTS_RETENTION_DAYS removes older raw events; the rollups and the reports over whole days stay", async () => {
    const window = `startDate=${ymd(OLDEST - DAY)}&endDate=${ymd(RECENT)}`;
    const before = await req(`/v1/accounts/${t.accountId}/reports/userActions?${window}`, { headers: t.headers });
    expect(before.body.rows).toEqual([["export", 4, 4]]);
    const r = await applyEventRetention(90, NOW);
    if (pg()) {
      expect(r.dropped).toContain(`Event_${ymd(OLD).slice(0, 7).replace("-", "_")}`);
      expect(await partitions()).not.toContain(`Event_${ymd(OLD).slice(0, 7).replace("-", "_")}`);
      expect(r.deleted).toBe(1); // OLDEST, from the default partition
    } else expect(r.deleted).toBe(3);
    const left = await prisma.event.findMany({ where: { accountId: t.accountId }, select: { time: true } });
    expect(left.map((e) => Number(e.time))).toEqual([RECENT]);
    const after = await req(`/v1/accounts/${t.accountId}/reports/userActions?${window}`, { headers: t.headers });
    expect(after.body.rows).toEqual(before.body.rows);
    // New events still go in.
    const more = await req(`/v1/accounts/${t.accountId}/events`, {
      method: "POST",
      headers: t.headers,
      body: [{ type: "user_action", time: Date.now() - 1_000, actionId: "x" }],
    });
    expect(more.status, more.text).toBe(202);
  });
});

describe("retention removes only what the rollups have counted", () => {
  const SECOND_OLD = dayStart(NOW - 250 * DAY) + 10 * 3_600_000;
  const THIRD_OLD = dayStart(NOW - 310 * DAY) + 10 * 3_600_000;
  const month = (ms: number) => `Event_${ymd(ms).slice(0, 7).replace("-", "_")}`;
  const window = (from: number) => `startDate=${ymd(from - DAY)}&endDate=${ymd(RECENT)}`;
  const store = async (u: Tenant, times: number[]) => {
    const events = times.map((time, i) => ({ type: "user_action", time, actionId: "export", endUserId: `u${i}` }));
    const r = await req(`/v1/accounts/${u.accountId}/events`, { method: "POST", headers: u.headers, body: events });
    expect(r.status, r.text).toBe(202);
  };
  const userActions = async (u: Tenant, from: number) =>
    (await req(`/v1/accounts/${u.accountId}/reports/userActions?${window(from)}`, { headers: u.headers })).body.rows;
  const left = async (u: Tenant) => (await prisma.event.findMany({ where: { accountId: u.accountId }, select: { time: true } })).map((e) => Number(e.time));

  it.runIf(pg())(
    "PostgreSQL: a worker holding an account's rollup lock makes retention wait for it, then count, then remove",
    async () => {
      const u = await tenant("ret-held");
      await ensureEventPartitions(SECOND_OLD);
      await store(u, [SECOND_OLD, SECOND_OLD + 1, RECENT]);
      const before = await userActions(u, SECOND_OLD);
      expect(before).toEqual([["export", 3, 3]]);
      // Another worker's batch: a session holding the account's rollup lock.
      const client = new pgClient.Client({ connectionString: process.env.DATABASE_DIRECT_URL ?? process.env.DATABASE_URL });
      await client.connect();
      let retention: Promise<unknown> | undefined;
      try {
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock(hashtext('guidegate.rollups:' || $1))::text", [u.accountId]);
        const run = applyEventRetention(90, NOW);
        retention = run.catch(() => undefined);
        const state = { done: false };
        void retention.then(() => void (state.done = true));
        const waiting = async () =>
          Number(
            (
              await client.query(
                `SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
              )
            ).rows[0].n,
          );
        // Before the fix retention took the held account as counted and went on at once.
        await until("retention waiting for the rollup lock", async () => state.done || (await waiting()) === 1);
        expect(state.done, "retention must wait for the worker holding the account").toBe(false);
        await client.query("COMMIT");
        const r = await run;
        expect(r.dropped).toContain(month(SECOND_OLD));
        expect(r.kept).toEqual([]);
      } finally {
        await client.query("ROLLBACK").catch(() => undefined);
        await client.end();
        await retention;
      }
      expect(await left(u)).toEqual([RECENT]);
      expect(await userActions(u, SECOND_OLD)).toEqual(before);
    },
    60_000,
  );

  it("events not counted yet (stored after the catch-up) stay until a later run; then they go, counted", async () => {
    const u = await tenant("ret-late");
    if (pg()) await ensureEventPartitions(THIRD_OLD);
    // One in a monthly partition (PostgreSQL), one in the default partition, one recent.
    await store(u, [OLDEST - 30 * DAY, THIRD_OLD, RECENT]);
    const before = await userActions(u, OLDEST - 30 * DAY);
    expect(before).toEqual([["export", 3, 3]]);
    const cutoff = NOW - 90 * DAY;
    // The removal alone, as it runs when these events arrive after retention's catch-up.
    const early = await removeCountedEvents(cutoff);
    expect(early.deleted).toBe(0);
    expect(early.pending).toBe(2);
    if (pg()) {
      expect(early.kept).toEqual([month(THIRD_OLD)]);
      expect(early.dropped).not.toContain(month(THIRD_OLD)); // (empty older months go)
      expect(await partitions()).toContain(month(THIRD_OLD));
    }
    expect((await left(u)).sort()).toEqual([OLDEST - 30 * DAY, THIRD_OLD, RECENT]);
    expect(await userActions(u, OLDEST - 30 * DAY)).toEqual(before);
    // A later run counts them first, then removes them.
    const later = await applyEventRetention(90, NOW);
    expect(later.pending).toBe(0);
    if (pg()) {
      expect(later.dropped).toContain(month(THIRD_OLD));
      expect(later.deleted).toBe(1);
    } else expect(later.deleted).toBe(2);
    expect(await left(u)).toEqual([RECENT]);
    expect(await userActions(u, OLDEST - 30 * DAY)).toEqual(before);
  }, 60_000);
});

describe("answers over days past retention", () => {
  // Two whole days in a month long past the cutoff, and an event since: the window ends before the
  // account's latest counted event.
  const D = dayStart(NOW - 150 * DAY);
  const H = 3_600_000;
  const EVENTS = [
    { type: "user_action", time: D + 10 * H, actionId: "export", endUserId: "u1" },
    { type: "user_action", time: D + 11 * H, actionId: "export", endUserId: "u2" },
    { type: "popup_shown", time: D + DAY + 9 * H, contentId: "p1", endUserId: "u1" },
    { type: "popup_shown", time: D + DAY + 12 * H, contentId: "p1", endUserId: "u3" },
    { type: "user_action", time: RECENT, actionId: "export", endUserId: "u4" },
  ];
  const window = { startDate: ymd(D), endDate: ymd(D + DAY) };

  it("Explore's query from the rollups: its totals count the end users its rows count, before and after the events are removed", async () => {
    const u = await tenant("ret-explore");
    const r = await req(`/v1/accounts/${u.accountId}/events`, { method: "POST", headers: u.headers, body: EVENTS });
    expect(r.status, r.text).toBe(202);
    const questions = [
      { metrics: ["events", "users"], interval: "day" },
      { metrics: ["users", "eventsPerUser"] },
      { metrics: ["events", "users"], dimensions: ["event:type"], interval: "day", filters: [["is", "event:type", ["user_action", "popup_shown"]]] },
    ];
    const ask = async () => {
      const out = [];
      for (const q of questions) {
        const a = await req(`/v1/accounts/${u.accountId}/analytics/query`, { method: "POST", headers: u.headers, body: { ...q, ...window } });
        expect(a.status, a.text).toBe(200);
        out.push(a.body);
      }
      return out;
    };
    const before = await ask();
    expect(before.map((a) => a.totals)).toEqual([
      [4, 3],
      [3, 4 / 3],
      [4, 3],
    ]);
    expect(before[0].rows).toEqual([
      [ymd(D), 2, 2],
      [ymd(D + DAY), 2, 2],
    ]);
    await applyEventRetention(90, NOW);
    expect(await prisma.event.count({ where: { accountId: u.accountId } })).toBe(1);
    // The rows came from the rollups before too; the totals now do as well.
    expect(await ask()).toEqual(before);
  });
});

describe("reports over days past retention, as docs/reports.md says", () => {
  const D = dayStart(NOW - 160 * DAY);
  const H = 3_600_000;
  const hm = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace("T", " ");

  it("event counts keep the whole hours of a partial edge day; distinct users lose the partial day's end users", async () => {
    const u = await tenant("ret-edges");
    const events = [
      { type: "user_action", time: D + 11 * H, actionId: "export", endUserId: "u1" },
      { type: "user_action", time: D + DAY + 9 * H, actionId: "export", endUserId: "u2" },
      { type: "user_action", time: RECENT, actionId: "export", endUserId: "u3" },
    ];
    expect((await req(`/v1/accounts/${u.accountId}/events`, { method: "POST", headers: u.headers, body: events })).status).toBe(202);
    // From 10:30 on the first day (a partial day, and a partial hour before 11:00) through the second day.
    const report = async () =>
      (
        await req(`/v1/accounts/${u.accountId}/reports/userActions?startDate=${encodeURIComponent(hm(D + 10.5 * H))}&endDate=${ymd(D + DAY)}`, {
          headers: u.headers,
        })
      ).body.rows;
    expect(await report()).toEqual([["export", 2, 2]]);
    await applyEventRetention(90, NOW);
    // u1's event is in a whole hour (11:00) of the partial first day: counted; u1 is not a user of it any more.
    expect(await report()).toEqual([["export", 2, 1]]);
  });
});
