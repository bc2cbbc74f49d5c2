// Planner statistics of the event and rollup tables, kept fresh by the rollup worker on PostgreSQL.
//
// Why the service does this itself: these tables grow by millions of rows in a burst, and until
// ANALYZE has seen them PostgreSQL plans with the statistics of the empty tables (or none: a row
// or two per scan). Over 1M events just ingested, with a few hundred thousand counted, the
// reports' plans turned into nested loops: `selfHelpSearchTrend` took 390 s and
// `endUserEngagement` about 40 s (a semi join comparing 470,000 per-user rows with each of 1,000
// page users); after ANALYZE, 2.1 s and 2.4 s. Autovacuum analyzes a table once a tenth of it has
// changed, but only on its own schedule (a minute's nap, three workers shared by every database,
// busy vacuuming the same burst), it can be off, and it never analyzes a partitioned table
// itself ("Event"), only its partitions. So after a table has doubled since its last ANALYZE
// (at least MIN_ROWS changed), the worker analyzes it at once. Doubling bounds how far an estimate
// can be off to a factor of two and the work to a few ANALYZEs per burst (10k, 20k, 40k, ... rows:
// nine up to 3M), each a sample of 30,000 rows at the default statistics target.
//
// SQLite needs none of it: without statistics its planner assumes every table is large (about a
// million rows), never a row or two, and the reads of these tables name their index where it
// matters (docs/reports.md).
import { dbKind, prisma } from "../../db/index.js";
import { logger } from "../../logger.js";
import { ROLLUP_TABLES } from "./rollups.js";

const log = logger.child({ component: "planner-statistics" });

/** The tables a burst of events grows: the events (by partition; analyzed as a whole) and what the worker writes. */
const TABLES = ["Event", "EventUserName", ...ROLLUP_TABLES];

export interface StatisticsOptions {
  /** Rows changed since the last ANALYZE below which a table is never analyzed. */
  minRows?: number;
}

export const MIN_ROWS = 10_000;

/**
 * Analyzes the event and rollup tables that have changed by at least as many rows as they held at
 * their last ANALYZE (and at least `minRows`); a partition of "Event" analyzes "Event", which
 * samples the whole table and every partition. `SKIP_LOCKED`: a table another session is
 * analyzing or vacuuming (another instance, autovacuum) is left to it. Returns the tables analyzed.
 */
export async function refreshPlannerStatistics(opts: StatisticsOptions = {}): Promise<string[]> {
  if (dbKind() !== "postgres") return [];
  const due = await prisma.$queryRawUnsafe<{ table: string; changed: bigint | number }[]>(
    `SELECT COALESCE(p."relname", c."relname") AS "table", SUM(s."n_mod_since_analyze") AS "changed"
     FROM "pg_stat_user_tables" s JOIN "pg_class" c ON c."oid" = s."relid"
       LEFT JOIN "pg_inherits" i ON i."inhrelid" = c."oid" LEFT JOIN "pg_class" p ON p."oid" = i."inhparent"
     WHERE s."schemaname" = current_schema() AND COALESCE(p."relname", c."relname") = ANY ($1::text[])
       AND s."n_mod_since_analyze" >= GREATEST($2::bigint, c."reltuples"::bigint)
     GROUP BY 1 ORDER BY 1`,
    TABLES,
    opts.minRows ?? MIN_ROWS,
  );
  for (const { table, changed } of due) {
    const t0 = performance.now();
    // A query, not a write: it changes no row (the read client has no $executeRaw).
    await prisma.$queryRawUnsafe(`ANALYZE (SKIP_LOCKED) "${table}"`);
    log.info({ table, changedRows: Number(changed), ms: Math.round(performance.now() - t0) }, "planner statistics refreshed");
  }
  return due.map((d) => d.table);
}

/**
 * Runs refreshPlannerStatistics at most every `everyMs`, one at a time and beside the caller (the
 * worker's batches go on while a table is analyzed). A failure is logged, never thrown: stale
 * statistics slow reports, they do not make them wrong.
 */
export class StatisticsKeeper {
  private last = Number.NEGATIVE_INFINITY;
  private running: Promise<void> | undefined;

  constructor(
    private readonly everyMs: number,
    private readonly opts: StatisticsOptions = {},
  ) {}

  /** Starts a check when the last one is at least `everyMs` old and none is running. */
  tick(): void {
    if (this.running || performance.now() - this.last < this.everyMs) return;
    this.last = performance.now();
    this.running = refreshPlannerStatistics(this.opts)
      .then(() => undefined)
      .catch((err) => log.warn({ err }, "planner statistics not refreshed"))
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Waits for the check in progress, if any. */
  async settled(): Promise<void> {
    await this.running;
  }
}
