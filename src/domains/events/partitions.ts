// Upkeep of the raw events: on PostgreSQL "Event" is partitioned by month of "time" (migration
// 20261123155034_event_partitions), and the service creates the coming months' partitions ahead
// of the events that will need them; with EVENTS_RETENTION_DAYS, events older than that go once
// the rollups have counted them (whole monthly partitions on PostgreSQL, a DELETE on SQLite, which
// keeps one table). The reports' rollups
// are never touched: reports over older windows still answer from them (whole days; the raw edge
// hours of a window past retention count nothing).
import { dbKind, prisma, withTransaction } from "../../db/index.js";
import { logger } from "../../logger.js";
import { param, watermarkOf } from "../reports/rollups.js";
import { accountsBehind, catchUpRollups } from "../reports/rollupWorker.js";

const MONTHS_AHEAD = 3;
const EVERY_MS = 6 * 3_600_000;
const DAY = 86_400_000;

const monthStart = (year: number, month: number) => Date.UTC(year, month, 1);
const partitionName = (year: number, month: number) => `Event_${year}_${String(month + 1).padStart(2, "0")}`;

/** PostgreSQL: the partitions of this month and the next three, where missing. Returns those created. */
export async function ensureEventPartitions(now = Date.now()): Promise<string[]> {
  if (dbKind() !== "postgres") return [];
  const d = new Date(now);
  const wanted = Array.from({ length: MONTHS_AHEAD + 1 }, (_, i) => {
    const start = new Date(monthStart(d.getUTCFullYear(), d.getUTCMonth() + i));
    return {
      name: partitionName(start.getUTCFullYear(), start.getUTCMonth()),
      from: start.getTime(),
      to: monthStart(start.getUTCFullYear(), start.getUTCMonth() + 1),
    };
  });
  const existing = new Set(await eventPartitions());
  const created: string[] = [];
  for (const p of wanted.filter((w) => !existing.has(w.name))) {
    try {
      await withTransaction((tx) =>
        tx.$executeRawUnsafe(`CREATE TABLE IF NOT EXISTS "${p.name}" PARTITION OF "Event" FOR VALUES FROM (${p.from}) TO (${p.to})`),
      );
      created.push(p.name);
    } catch (err) {
      // Another instance made it meanwhile, or the default partition already holds events of that
      // month (they stay there, still read and still subject to retention).
      logger.warn({ partition: p.name, err: (err as Error).message }, "could not create an event partition");
    }
  }
  return created;
}

/** PostgreSQL: the monthly partitions of "Event" (not the default one). */
async function eventPartitions(): Promise<string[]> {
  const rows = await withTransaction((tx) =>
    tx.$queryRawUnsafe<{ name: string }[]>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"Event"'::regclass`,
    ),
  );
  return rows.map((r) => r.name).filter((n) => /^Event_\d{4}_\d{2}$/.test(n));
}

export interface RetentionOutcome {
  /** the monthly partitions dropped (PostgreSQL) */
  dropped: string[];
  /** rows deleted (SQLite; PostgreSQL's default partition) */
  deleted: number;
  /** monthly partitions past the cutoff kept this time: they hold events the rollups have not counted */
  kept: string[];
  /** events past the cutoff left in place because the rollups have not counted them yet */
  pending: number;
}

/**
 * Removes raw events older than `days` days. The rollups keep the counts of removed events, so
 * every account's events are counted first (catchUpRollups waits for a worker that holds an
 * account), and the removal itself never takes an event above its account's rollup watermark:
 * one stored since with an old time, not counted yet, stays for a later run (logged). On
 * PostgreSQL a monthly partition that ends before the cutoff is dropped when every account's
 * watermark covers every event in it (the month holding the cutoff stays until it has passed
 * entirely), and the default partition's older counted rows are deleted; on SQLite the older
 * counted rows are deleted, in batches.
 */
export async function applyEventRetention(days: number, now = Date.now()): Promise<RetentionOutcome> {
  for (const accountId of await accountsBehind()) await catchUpRollups(accountId);
  return removeCountedEvents(now - days * DAY);
}

/** Removes the events older than `cutoff` (epoch ms) that the rollups have counted: applyEventRetention's second half. */
export async function removeCountedEvents(cutoff: number): Promise<RetentionOutcome> {
  const dropped: string[] = [];
  const kept: string[] = [];
  let deleted = 0;
  if (dbKind() === "postgres") {
    for (const name of (await eventPartitions()).sort()) {
      const [, y, m] = /^Event_(\d{4})_(\d{2})$/.exec(name)!;
      if (monthStart(Number(y), Number(m)) > cutoff) continue; // the month after it starts past the cutoff
      const gone = await withTransaction(async (tx) => {
        // The parent first, as an insert locks it before the partition its rows go to: once it is
        // held, no insert into this partition is under way or can begin until the drop commits, so
        // the probe below sees every event the partition will ever hold. (DROP takes it anyway.)
        await tx.$executeRawUnsafe(`LOCK TABLE ONLY "Event" IN ACCESS EXCLUSIVE MODE`);
        // An account with an event above its watermark here (one index probe per account).
        const behind = await tx.$queryRawUnsafe<unknown[]>(
          `SELECT 1 FROM "Account" a LEFT JOIN "RollupWatermark" w ON w."accountId" = a."id"
           WHERE EXISTS (SELECT 1 FROM "${name}" e WHERE e."accountId" = a."id" AND e."id" > COALESCE(w."eventId", 0)) LIMIT 1`,
        );
        if (behind.length) return false;
        await tx.$executeRawUnsafe(`DROP TABLE "${name}"`);
        return true;
      });
      (gone ? dropped : kept).push(name);
    }
    deleted = await withTransaction((tx) =>
      tx.$executeRawUnsafe(
        `DELETE FROM "Event_default" e USING "RollupWatermark" w WHERE w."accountId" = e."accountId" AND e."id" <= w."eventId" AND e."time" < $1`,
        cutoff,
      ),
    );
  } else {
    for (;;) {
      // Batches keep each write transaction (SQLite's one writer) short.
      const n = await withTransaction((tx) =>
        tx.$executeRawUnsafe(
          `DELETE FROM "Event" WHERE "id" IN (SELECT e."id" FROM "Event" e JOIN "RollupWatermark" w ON w."accountId" = e."accountId"
             WHERE e."id" <= w."eventId" AND e."time" < ? LIMIT 50000)`,
          cutoff,
        ),
      );
      deleted += n;
      if (n < 50_000) break;
    }
  }
  // What stayed for not being counted yet: the events past the cutoff above each watermark (few).
  let pending = 0;
  for (const accountId of await accountsBehind()) {
    const [row] = await prisma.$queryRawUnsafe<{ n: number | bigint }[]>(
      `SELECT COUNT(*) AS "n" FROM "Event" WHERE "accountId" = ${param(1)} AND "id" > ${param(2)} AND "time" < ${param(3)}`,
      accountId,
      await watermarkOf(prisma, accountId),
      cutoff,
    );
    pending += Number(row!.n);
  }
  if (kept.length || pending)
    logger.warn(
      { kept, pending },
      "raw events past retention kept: the rollups have not counted them yet (stored since the catch-up, or held by a worker); a later run removes them",
    );
  return { dropped, deleted, kept, pending };
}

/** Runs the upkeep now and every six hours (timer unref'd); returns the function that stops it. */
export function startEventMaintenance(config: { EVENTS_RETENTION_DAYS?: number }): () => void {
  const run = async () => {
    try {
      const created = await ensureEventPartitions();
      if (created.length) logger.info({ partitions: created }, "created event partitions");
      if (config.EVENTS_RETENTION_DAYS) {
        const r = await applyEventRetention(config.EVENTS_RETENTION_DAYS);
        if (r.dropped.length || r.deleted) logger.info({ ...r, days: config.EVENTS_RETENTION_DAYS }, "removed raw events past retention");
      }
    } catch (err) {
      logger.error({ err }, "event upkeep failed; it runs again later");
    }
  };
  void run();
  const timer = setInterval(run, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
