// Raw-event upkeep: monthly partitions made ahead (PostgreSQL) and EVENTS_RETENTION_DAYS, which
// removes old raw events (whole partitions on PostgreSQL, a DELETE on SQLite) while the reports'
// rollups, and so the reports over whole days of those months, stay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dbKind } from "../src/db/index.js";
import { applyEventRetention, ensureEventPartitions } from "../src/domains/events/partitions.js";
import { prisma, requester, type Server, startServer, type Tenant, tenant } from "./helpers.js";

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
