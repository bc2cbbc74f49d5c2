// Upkeep of the raw events: on PostgreSQL "Event" is partitioned by month of "time" (migration
// 20261123155034_event_partitions), and the service creates the coming months' partitions ahead
// of the events that will need them; with EVENTS_RETENTION_DAYS, events older than that go (whole
// monthly partitions on PostgreSQL, a DELETE on SQLite, which keeps one table). The reports' rollups
// are never touched: reports over older windows still answer from them (whole days; the raw edge
// hours of a window past retention count nothing).
import { dbKind, withTransaction } from "../../db/index.js";
import { logger } from "../../logger.js";
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

/**
 * Removes raw events older than `days` days: on PostgreSQL the monthly partitions that end before
 * the cutoff are dropped (the month holding the cutoff stays until it has passed entirely) and the
 * default partition's older rows deleted; on SQLite the older rows are deleted, in batches.
 */
export async function applyEventRetention(days: number, now = Date.now()): Promise<{ dropped: string[]; deleted: number }> {
  const cutoff = now - days * DAY;
  // The rollups keep the counts of removed events: count every event before any goes.
  for (const accountId of await accountsBehind()) await catchUpRollups(accountId);
  if (dbKind() === "postgres") {
    const dropped: string[] = [];
    for (const name of (await eventPartitions()).sort()) {
      const [, y, m] = /^Event_(\d{4})_(\d{2})$/.exec(name)!;
      if (monthStart(Number(y), Number(m)) > cutoff) continue; // the month after it starts past the cutoff
      await withTransaction((tx) => tx.$executeRawUnsafe(`DROP TABLE IF EXISTS "${name}"`));
      dropped.push(name);
    }
    const deleted = await withTransaction((tx) => tx.$executeRawUnsafe(`DELETE FROM "Event_default" WHERE "time" < $1`, cutoff));
    return { dropped, deleted };
  }
  let deleted = 0;
  for (;;) {
    // Batches keep each write transaction (SQLite's one writer) short.
    const n = await withTransaction((tx) =>
      tx.$executeRawUnsafe(`DELETE FROM "Event" WHERE "id" IN (SELECT "id" FROM "Event" WHERE "time" < ? LIMIT 50000)`, cutoff),
    );
    deleted += n;
    if (n < 50_000) return { dropped: [], deleted };
  }
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
