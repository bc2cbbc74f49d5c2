// The rollup worker: counts each account's new events into the rollups (rollups.ts), off the ingest
// request. Ingest stores the events and nothing more; every instance with JOB_WORKER on polls for
// accounts whose events lie above their watermark (RollupWatermark) and, per account, in one
// transaction: adds the events in (watermark, next] to the rollups with set-based upserts and moves
// the watermark to `next`. Reports read the rollups and, raw, the events above the watermark they
// see in the same statement (sources.ts), so an answer is exact whatever the worker's lag; the lag
// only moves cost from the worker to the report.
//
// Why a watermark on event ids is safe: an account's event ids commit in order (lockEventOrder,
// taken by every ingest), so once the worker sees id N, every lower id of the account is committed
// and visible, and none will appear later. Instances share the work through a per-account advisory
// lock (PostgreSQL; SQLite has one process writing): a worker that cannot take it skips the account,
// so every event is counted once. Erasure and the rebuild take the same lock.
import { hostname } from "node:os";
import { epochMs } from "../../db/columns.js";
import { dbKind, prisma, type Tx, withTransaction } from "../../db/index.js";
import { setLocalSql } from "../../db/localSettings.js";
import { logger } from "../../logger.js";
import { setRollupLag } from "../../observability/metrics.js";
import { tracing } from "../../observability/tracing.js";
import { lockRollups, param, ROLLUP_TABLES, rollupStatements, tryLockRollups, watermarkOf } from "./rollups.js";
import { StatisticsKeeper } from "./statistics.js";

const log = logger.child({ component: "rollup-worker" });

/** Events added to the rollups per transaction: bounds a transaction's time (and SQLite's writer hold). */
export const ROLLUP_BATCH = 50_000;

/** How long workers leave an account still ingesting alone after counting it for `countingMs` at `share` of the time. */
const restMs = (countingMs: number, share: number) => countingMs * (1 / share - 1);

/**
 * The worker's transaction settings (PostgreSQL): no sequential scans. Its statements probe the
 * rollup tables by primary key (a row per group of the batch); with the statistics of an empty table
 * (ANALYZE before any event, a restore, a truncate) the planner costs a scan of it at nothing and
 * chose one per group instead, and in the same statement that fills it: each scan read the rows the
 * statement had inserted so far. The first batch of 50,000 events then took 82 s instead of 4.
 * And no JIT compilation, as for the reports (registry.ts): the per-user statement's plan is costed
 * past jit_above_cost, and compiling its 138 expressions took ~96 ms of every batch, for a plan
 * that evaluates each of them once per group (no gain measurable).
 */
export async function workerSettings(tx: Tx): Promise<void> {
  if (dbKind() === "postgres") await tx.$queryRawUnsafe(setLocalSql({ enable_seqscan: "off", jit: "off" }));
}

/**
 * Adds the account's events in (from, to] to the rollups and sets its watermark to `to`, inside
 * `tx`. `ingestShare`: the account is still ingesting; the watermark row records its rest
 * (`restUntil`; otherwise 0, not resting).
 */
async function addRange(tx: Tx, accountId: string, from: number, to: number, ingestShare?: number): Promise<void> {
  const t0 = performance.now();
  await workerSettings(tx);
  for (const statement of rollupStatements(dbKind())) await tx.$executeRawUnsafe(statement, accountId, from, to);
  const now = Date.now();
  await tx.$executeRawUnsafe(
    `INSERT INTO "RollupWatermark" ("accountId", "eventId", "updatedAt", "restUntil") VALUES (${param(1)}, ${param(2)}, ${param(3)}, ${param(4)})
     ON CONFLICT ("accountId") DO UPDATE SET "eventId" = excluded."eventId", "updatedAt" = excluded."updatedAt", "restUntil" = excluded."restUntil"`,
    accountId,
    to,
    now,
    ingestShare ? Math.round(now + restMs(performance.now() - t0, ingestShare)) : 0,
  );
}

/**
 * One step for one account: the next `batch` events above its watermark into the rollups. Returns
 * how many events were added, 0 when it was up to date, null when another instance holds the account
 * (with `wait`, it waits for that instance's batch to end instead, and then counts what is left).
 * `ingestShare`: the account is still ingesting; the watermark records the rest that keeps the
 * workers of every instance to this share of the time on it.
 */
export async function rollUpAccount(accountId: string, batch = ROLLUP_BATCH, ingestShare?: number, wait = false): Promise<number | null> {
  return withTransaction(
    async (tx) => {
      if (wait) await lockRollups(tx, accountId);
      else if (!(await tryLockRollups(tx, accountId))) return null;
      const from = await watermarkOf(tx, accountId);
      const [next] = await tx.$queryRawUnsafe<{ to: number | bigint | null; n: number | bigint }[]>(
        `SELECT MAX("id") AS "to", COUNT(*) AS "n" FROM (SELECT "id" FROM "Event" WHERE "accountId" = ${param(1)} AND "id" > ${param(2)} ORDER BY "id" LIMIT ${batch}) x`,
        accountId,
        from,
      );
      const n = Number(next!.n);
      if (!n) return 0;
      await addRange(tx, accountId, from, Number(next!.to), ingestShare);
      return n;
    },
    { timeout: 600_000, maxWait: 30_000 },
  );
}

/**
 * Brings one account's rollups up to date (batch by batch); returns the events added. An account
 * another worker holds is waited for, not taken as up to date: on return, every event the account
 * had when the last batch began is counted (retention relies on it: src/domains/events/partitions.ts).
 */
export async function catchUpRollups(accountId: string): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await rollUpAccount(accountId, ROLLUP_BATCH, undefined, true);
    if (!n) return total;
    total += n;
  }
}

/** Accounts with events above their watermark. One index probe per account ("Event" by accountId, id). */
export async function accountsBehind(): Promise<string[]> {
  const rows = await prisma.$queryRawUnsafe<{ id: string }[]>(
    `SELECT a."id" FROM "Account" a LEFT JOIN "RollupWatermark" w ON w."accountId" = a."id"
     WHERE EXISTS (SELECT 1 FROM "Event" e WHERE e."accountId" = a."id" AND e."id" > COALESCE(w."eventId", 0)) ORDER BY a."id"`,
  );
  return rows.map((r) => r.id);
}

/**
 * When the oldest and the newest event above the account's watermark were stored (null: none), and
 * until when the account rests (epoch ms). Two index probes and the watermark's row.
 */
async function pendingAges(accountId: string): Promise<{ oldest: number; newest: number; restUntil: number } | null> {
  const [row] = await prisma.$queryRawUnsafe<{ eventId: number | bigint; restUntil: number | bigint }[]>(
    `SELECT "eventId", "restUntil" FROM "RollupWatermark" WHERE "accountId" = ${param(1)}`,
    accountId,
  );
  const watermark = row ? Number(row.eventId) : 0;
  const edge = async (order: "ASC" | "DESC") =>
    (
      await prisma.$queryRawUnsafe<{ receivedAt: number }[]>(
        `SELECT ${epochMs(dbKind(), '"receivedAt"')} AS "receivedAt" FROM "Event" WHERE "accountId" = ${param(1)} AND "id" > ${param(2)} ORDER BY "id" ${order} LIMIT 1`,
        accountId,
        watermark,
      )
    )[0]?.receivedAt;
  const oldest = await edge("ASC");
  const newest = await edge("DESC");
  return oldest === undefined || newest === undefined ? null : { oldest: Number(oldest), newest: Number(newest), restUntil: Number(row?.restUntil ?? 0) };
}

export interface RollupStatus {
  accountId: string;
  watermark: number;
  /** events above the watermark */
  pending: number;
  /** seconds since the oldest event above the watermark was stored (0 when up to date) */
  lagSeconds: number;
}

/** Every account's id, in order (a watermark belongs to an account). */
const allAccountIds = async () => (await prisma.$queryRawUnsafe<{ id: string }[]>(`SELECT "id" FROM "Account" ORDER BY "id"`)).map((r) => r.id);

/** Per account with events: how far its rollups are (`rollups status`; counts the pending events, unlike the worker's probes). */
export async function rollupStatus(accountIds?: string[]): Promise<RollupStatus[]> {
  const ids = accountIds ?? (await allAccountIds());
  const out: RollupStatus[] = [];
  for (const accountId of [...new Set(ids)].sort()) {
    const watermark = await watermarkOf(prisma, accountId);
    const [row] = await prisma.$queryRawUnsafe<{ n: number | bigint; oldest: number | null }[]>(
      `SELECT COUNT(*) AS "n", ${epochMs(dbKind(), 'MIN("receivedAt")')} AS "oldest" FROM "Event" WHERE "accountId" = ${param(1)} AND "id" > ${param(2)}`,
      accountId,
      watermark,
    );
    const pending = Number(row!.n);
    if (!pending && !watermark) continue;
    const oldest = row!.oldest === null ? null : Number(row!.oldest);
    out.push({ accountId, watermark, pending, lagSeconds: oldest === null ? 0 : Math.max(0, (Date.now() - oldest) / 1000) });
  }
  return out;
}

/**
 * Recomputes the rollups of one account (or of each) from its events: deletes its rows and counts
 * every event up to the latest again, in one transaction per account, under the rollup lock. For a
 * repair after a bug or a manual change of events; the worker keeps them up to date otherwise.
 * End users erased by pseudonym come out under their pseudonym, as erasure leaves them.
 */
export async function rebuildRollups(accountId?: string): Promise<{ accounts: number; events: number }> {
  const ids = accountId !== undefined ? [accountId] : await allAccountIds();
  let events = 0;
  for (const id of ids) {
    events += await withTransaction(
      async (tx) => {
        await lockRollups(tx, id);
        for (const table of ROLLUP_TABLES) await tx.$executeRawUnsafe(`DELETE FROM "${table}" WHERE "accountId" = ${param(1)}`, id);
        const [last] = await tx.$queryRawUnsafe<{ to: number | bigint | null; n: number | bigint }[]>(
          `SELECT MAX("id") AS "to", COUNT(*) AS "n" FROM "Event" WHERE "accountId" = ${param(1)}`,
          id,
        );
        await addRange(tx, id, 0, Number(last!.to ?? 0));
        return Number(last!.n);
      },
      { timeout: 3_600_000, maxWait: 30_000 },
    );
  }
  return { accounts: ids.length, events };
}

export interface RollupWorkerOptions {
  /** Pause between passes (ms). */
  pollMs?: number;
  /**
   * Ingest goes first: an account's events are rolled up once none has arrived for this long (ms),
   * so the worker's statements do not compete with a burst of ingest requests for the database...
   */
  quietMs?: number;
  /** ...unless its oldest event not yet counted is this old (ms): the lag stays bounded under steady ingest. */
  maxLagMs?: number;
  /**
   * While an account is still ingesting (due by the lag bound, not by a pause), the share of the
   * time the workers spend counting it (0 < share ≤ 1): after such a batch they leave it alone for
   * (1 / share − 1) × the batch's duration (recorded in its watermark row, so the workers of
   * several instances do not take turns on it), and this worker leaves every account still
   * ingesting alone as long (its own load stays within the share). A burst faster than the
   * worker can count is not slowed by it for the whole burst (the lag grows then anyway; the
   * reports read what is not counted raw), and the accounts whose ingest has paused are counted at
   * once. 1: back to back.
   */
  ingestShare?: number;
  /** Events per batch (transaction). */
  batch?: number;
  /**
   * How often (ms) the worker looks for event and rollup tables grown enough since their last
   * ANALYZE to need another (PostgreSQL; statistics.ts), during a pass and between passes.
   */
  statisticsEveryMs?: number;
  /** The fewest changed rows for which a table is analyzed (statistics.ts: MIN_ROWS). */
  statisticsMinRows?: number;
}

/** Why an account's pending events are due: its ingest paused, or only the lag reached its bound. */
type Due = "quiet" | "lag" | null;

/** Polls for accounts behind and brings them up to date; sets the lag metric after each pass. */
export class RollupWorker {
  readonly id = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private readonly pollMs: number;
  private readonly quietMs: number;
  private readonly maxLagMs: number;
  private readonly ingestShare: number;
  private readonly batch: number;
  /** Until when (performance.now()) this worker leaves accounts still ingesting alone (ingestShare). */
  private restUntil = 0;
  private readonly statistics: StatisticsKeeper;

  constructor(opts: RollupWorkerOptions = {}) {
    this.pollMs = opts.pollMs ?? 1_000;
    this.quietMs = opts.quietMs ?? 2_000;
    this.maxLagMs = opts.maxLagMs ?? 60_000;
    this.ingestShare = opts.ingestShare ?? 0.25;
    this.batch = opts.batch ?? ROLLUP_BATCH;
    this.statistics = new StatisticsKeeper(opts.statisticsEveryMs ?? 10_000, { minRows: opts.statisticsMinRows });
    if (!(this.ingestShare > 0 && this.ingestShare <= 1)) throw new RangeError(`ingestShare must be in (0, 1], not ${this.ingestShare}`);
  }

  /** Whether the account's pending events are due, and why; and the lag (s). */
  private async due(accountId: string): Promise<{ due: Due; lagSeconds: number }> {
    const ages = await pendingAges(accountId);
    if (!ages) return { due: null, lagSeconds: 0 };
    const now = Date.now();
    const resting = performance.now() < this.restUntil || now < ages.restUntil;
    const due: Due = now - ages.newest >= this.quietMs ? "quiet" : now - ages.oldest >= this.maxLagMs && !resting ? "lag" : null;
    return { due, lagSeconds: Math.max(0, (now - ages.oldest) / 1000) };
  }

  start(): void {
    this.loop = this.run();
    log.info({ worker: this.id, pollMs: this.pollMs }, "rollup worker started");
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
    await this.statistics.settled();
    log.info({ worker: this.id }, "rollup worker stopped");
  }

  /**
   * One pass: every account behind whose events are due, one batch each in turn until none is due
   * (up to date, ingesting and not yet at the lag bound, resting after a batch beside ingest
   * (ingestShare), or held by another instance). Sets the lag metric: the largest lag seen.
   */
  async pass(): Promise<number> {
    let added = 0;
    let lag = 0;
    // Ingest grows the event tables while no account is due yet: their statistics are looked at
    // on every pass, and the rollups' after each batch (at most every statisticsEveryMs).
    this.statistics.tick();
    let behind = await accountsBehind();
    while (behind.length && !this.stopping) {
      const still: string[] = [];
      lag = 0;
      for (const accountId of behind) {
        if (this.stopping) break;
        const due = await this.due(accountId);
        lag = Math.max(lag, due.lagSeconds);
        if (!due.due) continue;
        const t0 = performance.now();
        const share = due.due === "lag" ? this.ingestShare : undefined;
        // With tracing on, each account's batch is a trace of its own (not linked: it counts the
        // events of any number of ingest requests; an idle pass, every ROLLUP_POLL_MS, is not traced).
        const n = await (tracing
          ? tracing.inLinkedTrace("rollup pass", { "guidegate.account_id": accountId, "guidegate.rollup.due": due.due }, null, async (span) => {
              const added = await rollUpAccount(accountId, this.batch, share);
              span.setAttribute("guidegate.rollup.events", added ?? 0);
              return added;
            })
          : rollUpAccount(accountId, this.batch, share));
        const ms = performance.now() - t0;
        this.statistics.tick();
        if (due.due === "lag") this.restUntil = performance.now() + restMs(ms, this.ingestShare);
        if (n) {
          added += n;
          still.push(accountId);
          log.debug({ accountId, events: n, ms: Math.round(ms), due: due.due }, "events added to the rollups");
        }
      }
      behind = still;
    }
    setRollupLag(lag);
    return added;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.pass();
      } catch (err) {
        if (!this.stopping) log.error({ err }, "rollup pass failed; it runs again");
      }
      if (this.stopping) break;
      await new Promise<void>((resolve) => {
        this.timer = setTimeout(resolve, this.pollMs);
        this.wake = resolve;
      });
    }
  }
}
