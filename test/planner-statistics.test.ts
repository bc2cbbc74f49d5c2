// The rollup worker keeps the event and rollup tables' planner statistics fresh on PostgreSQL
// (src/domains/reports/statistics.ts): a table that has doubled since its last ANALYZE is analyzed
// at once, "Event" as a whole (its partitions with it). Without it, reports over a fresh burst ran
// on the empty tables' estimates (nested loops: minutes).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dbKind, prisma } from "../src/db/index.js";
import { RollupWorker } from "../src/domains/reports/rollupWorker.js";
import { refreshPlannerStatistics } from "../src/domains/reports/statistics.js";
import { call, type Server, startServer, type Tenant, tenant, until } from "./helpers.js";

let server: Server;
let t: Tenant;
const postgres = dbKind() === "postgres";
const HOUR = 3_600_000;

beforeAll(async () => {
  server = await startServer();
  t = await tenant("stats");
});
afterAll(() => server.close());

async function ingest(n: number) {
  const now = Date.now();
  const body = Array.from({ length: n }, (_, i) => ({
    type: "flow_started",
    time: now - (i % 48) * HOUR,
    endUserId: `u${i % 97}`,
    flowId: `f${i % 7}`,
    widget: "self_help",
  }));
  const r = await call(`${server.url}/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body });
  expect(r.status, r.text).toBe(202);
}

/**
 * Waits until the statistics system shows `rows` changes of `table` (its partitions summed) since
 * its last ANALYZE: each backend reports its counts when it goes idle, up to seconds later.
 */
const changed = (table: string, rows: number) =>
  until(
    `${rows} changes of ${table} counted`,
    async () => {
      const [row] = await prisma.$queryRawUnsafe<{ n: number }[]>(
        `SELECT COALESCE(SUM("n_mod_since_analyze"), 0)::float8 AS "n" FROM "pg_stat_user_tables"
       WHERE "relid" = $1::regclass OR "relid" IN (SELECT "inhrelid" FROM "pg_inherits" WHERE "inhparent" = $1::regclass)`,
        `"${table}"`,
      );
      return row!.n >= rows;
    },
    30_000,
  );

/** Rows of table (its partitions summed) ANALYZE last saw, and whether the planner has column statistics of it as a whole. */
async function analyzed(table: string) {
  const [row] = await prisma.$queryRawUnsafe<{ tuples: number; inherited: boolean; own: boolean }[]>(
    `SELECT (SELECT COALESCE(SUM(GREATEST(c."reltuples", 0)), 0)::float8 FROM "pg_class" c WHERE c."oid" = $1::regclass
              OR c."oid" IN (SELECT "inhrelid" FROM "pg_inherits" WHERE "inhparent" = $1::regclass)) AS "tuples",
            EXISTS (SELECT 1 FROM "pg_statistic" WHERE "starelid" = $1::regclass AND "stainherit") AS "inherited",
            EXISTS (SELECT 1 FROM "pg_statistic" WHERE "starelid" = $1::regclass AND NOT "stainherit") AS "own"`,
    `"${table}"`,
  );
  return row!;
}

describe.runIf(postgres)("planner statistics (PostgreSQL)", () => {
  it("a table analyzed once it has changed by as many rows as it held (at least minRows), Event as a whole", async () => {
    // Whatever migrations and the tenant's set-up left behind: settled first.
    await refreshPlannerStatistics({ minRows: 1 });
    expect(await refreshPlannerStatistics({ minRows: 1 })).toEqual([]);

    await ingest(1_000);
    await changed("Event", 1_000);
    expect(await refreshPlannerStatistics({ minRows: 2_000 }), "below minRows").toEqual([]);
    expect(await refreshPlannerStatistics({ minRows: 500 })).toEqual(["Event"]);
    const event = await analyzed("Event");
    // The parent's own (inherited) statistics, which autovacuum never gathers, and its partitions' row counts.
    expect(event.inherited).toBe(true);
    expect(event.tuples).toBeGreaterThanOrEqual(1_000);
    expect(await refreshPlannerStatistics({ minRows: 500 }), "nothing changed since").toEqual([]);

    // Doubling: 600 more of ≥ 1,000 is not enough, 600 + 600 is.
    await ingest(600);
    await changed("Event", 600);
    expect(await refreshPlannerStatistics({ minRows: 500 })).toEqual([]);
    await ingest(600);
    await changed("Event", 1_200);
    expect(await refreshPlannerStatistics({ minRows: 500 })).toEqual(["Event"]);
  });

  it("the rollup worker analyzes the rollups it grew, beside its batches", async () => {
    const before = await analyzed("EventRollup");
    expect(before.own).toBe(false);
    const worker = new RollupWorker({ quietMs: 0, statisticsEveryMs: 0, statisticsMinRows: 100 });
    expect(await worker.pass()).toBe(2_200);
    // Its next look (every pass, and after each batch) sees the rows it wrote once they are counted.
    await changed("EventRollup", 100);
    await until("the rollups analyzed", async () => {
      await worker.pass();
      await worker.stop(); // waits for the ANALYZE it started beside the pass
      return (await analyzed("EventRollup")).own;
    });
    expect((await analyzed("EventRollup")).tuples).toBeGreaterThan(100);
    expect((await analyzed("EventUserRollup")).own).toBe(true);
  });
});

describe.runIf(!postgres)("planner statistics (SQLite)", () => {
  it("are left to SQLite's own assumptions: nothing is analyzed", async () => {
    await ingest(100);
    expect(await refreshPlannerStatistics({ minRows: 1 })).toEqual([]);
  });
});
