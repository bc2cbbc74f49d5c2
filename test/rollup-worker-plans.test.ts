// The rollup worker's statements read the rollup tables by index whatever their statistics say
// (PostgreSQL). With the statistics of empty tables (ANALYZE before the first events, a restore, a
// truncate) the planner costed a sequential scan of a rollup table at nothing and ran one per group
// of the batch, in the statement that was filling that table: each scan read every row inserted so
// far. A first batch of 50,000 events took 82 s instead of 4 (src/domains/reports/rollupWorker.ts,
// workerSettings). The plans are read with EXPLAIN (no timing), then the batch is counted and checked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dbKind, prisma, withTransaction } from "../src/db/index.js";
import { ROLLUP_TABLES, rollupStatements } from "../src/domains/reports/rollups.js";
import { rollUpAccount, workerSettings } from "../src/domains/reports/rollupWorker.js";
import { call, type Server, startServer, type Tenant, tenant } from "./helpers.js";

const postgres = dbKind() === "postgres";
let server: Server;
let t: Tenant;

beforeAll(async () => {
  server = await startServer();
  t = await tenant("plans");
});
afterAll(() => server.close());

describe.skipIf(!postgres)("rollup worker plans (PostgreSQL)", () => {
  it("probes the rollup tables by index when their statistics say they are empty, and counts the batch", async () => {
    const now = Date.now();
    const kinds = ["flow_started", "flow_step", "flow_completed", "popup_shown", "beacon_clicked", "user_action", "selfhelp_search"];
    const body = Array.from({ length: 3_000 }, (_, i) => ({
      type: kinds[i % kinds.length],
      time: now - (i % 500) * 60_000,
      endUserId: `u${i % 1_000}`,
      ...(i % kinds.length < 3 ? { flowId: `f${i % 13}`, ...(i % kinds.length === 1 ? { step: 1 + (i % 4) } : { widget: "self_help" }) } : {}),
      ...(i % kinds.length === 3 || i % kinds.length === 4 ? { contentId: `c${i % 17}` } : {}),
      ...(i % kinds.length === 5 ? { actionId: `a${i % 5}` } : {}),
      ...(i % kinds.length === 6 ? { searchTerm: `term ${i % 23}`, resultCount: i % 3 } : {}),
    }));
    const r = await call(`${server.url}/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body });
    expect(r.status, r.text).toBe(202);
    // This file's database: nothing counted yet, so ANALYZE records the rollup tables as empty.
    for (const table of ROLLUP_TABLES) {
      const [row] = await prisma.$queryRawUnsafe<{ n: number }[]>(`SELECT COUNT(*)::int AS "n" FROM "${table}"`);
      expect(row!.n, table).toBe(0);
      await prisma.$queryRawUnsafe(`ANALYZE "${table}"`);
    }
    const [max] = await prisma.$queryRawUnsafe<{ last: number }[]>(`SELECT MAX("id")::float8 AS "last" FROM "Event" WHERE "accountId" = $1`, t.accountId);

    const plans = await withTransaction(async (tx) => {
      await workerSettings(tx);
      // No JIT either: compiling the per-user statement's expressions cost ~96 ms of each batch.
      const [jit] = await tx.$queryRawUnsafe<{ jit: string }[]>(`SELECT current_setting('jit') AS "jit"`);
      expect(jit!.jit).toBe("off");
      const out: string[] = [];
      for (const statement of rollupStatements("postgres")) {
        const rows = await tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN ${statement}`, t.accountId, 0, max!.last);
        out.push(rows.map((row) => row["QUERY PLAN"]).join("\n"));
      }
      return out;
    });
    expect(plans.length).toBeGreaterThan(0);
    for (const plan of plans) for (const table of ROLLUP_TABLES) expect(plan).not.toContain(`Seq Scan on "${table}"`);

    // And the batch is counted: every event in the hour rows, every (type, day, end user) once.
    expect(await rollUpAccount(t.accountId, 50_000, undefined, true)).toBe(3_000);
    const [hours] = await prisma.$queryRawUnsafe<{ events: number }[]>(
      `SELECT COALESCE(SUM("n"), 0)::int AS "events" FROM "EventRollup" WHERE "accountId" = $1 AND "grain" = 1`,
      t.accountId,
    );
    expect(hours!.events).toBe(3_000);
    const [perUser] = await prisma.$queryRawUnsafe<{ users: number }[]>(
      `SELECT COALESCE(SUM("n"), 0)::int AS "users" FROM "EventUserRollup" WHERE "accountId" = $1`,
      t.accountId,
    );
    expect(perUser!.users).toBe(3_000);
  });
});
