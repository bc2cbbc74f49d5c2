// The hourly prune of expired idempotency keys (pruneMessages), once an hour across instances. Every
// instance runs a pruner (whatever JOB_WORKER says: it is cheap) and offers the run every few
// minutes; only the first offer of each hour slot is taken:
//   - PostgreSQL: a pg-boss throttled job (sendThrottled: one job per queue, key and hour slot, by
//     pg-boss's unique index, so the instances' offers collapse into one job), worked by whichever
//     instance's worker fetches it first (the copy jobs' and webhooks' pg-boss instance).
//   - SQLite (embedded, one process): the slot is claimed in the process.
// A prune that fails is retried by pg-boss (PostgreSQL) or at the next slot; a missed hour is
// harmless (the next prune deletes both hours' keys, in the same bounded batches).
import type PgBoss from "pg-boss";
import { clock } from "../clock.js";
import { dbKind } from "../db/index.js";
import { createQueueOnce, pgBoss } from "../domains/copyJobs/queue.js";
import { logger } from "../logger.js";
import { pruneMessages } from "./idempotency.js";

export const PRUNE_QUEUE = "ingest-message-prune";
const SLOT_SECONDS = 3_600;
const log = logger.child({ component: "ingest-prune" });

/** SQLite: the last hour slot each key's prune was claimed for, in this process. */
const claimedSlots = new Map<string, number>();

let queueReady: Promise<void> | undefined;

/** Creates the queue once per process (retried when instances starting together collide: createQueueOnce). */
function ensureQueue(boss: PgBoss): Promise<void> {
  queueReady ??= createQueueOnce(boss, PRUNE_QUEUE, { retryLimit: 3, retryDelay: 60, expireInSeconds: SLOT_SECONDS }).catch((err) => {
    queueReady = undefined;
    throw err;
  });
  return queueReady;
}

export interface MessagePrunerOptions {
  /** How often the run is offered (ms); the run itself happens once an hour slot. */
  offerEveryMs?: number;
  /** The schedule's name (pg-boss singleton key); tests give each schedule its own. */
  key?: string;
  /** PostgreSQL: how often the worker polls the queue (s). */
  pollSeconds?: number;
  /** Rows a DELETE removes at most (src/ingest/idempotency.ts's PRUNE_BATCH by default). */
  batchSize?: number;
}

export class MessagePruner {
  private timer: NodeJS.Timeout | undefined;
  private workId: string | undefined;
  private running: Promise<unknown> | undefined;
  private readonly key: string;

  constructor(private readonly opts: MessagePrunerOptions = {}) {
    this.key = opts.key ?? "ingest-messages";
  }

  /** Subscribes to the queue (PostgreSQL), offers the run now and every `offerEveryMs`; answers whether the first offer was taken. */
  async start(): Promise<boolean> {
    if (dbKind() === "postgres") {
      const boss = await pgBoss();
      await ensureQueue(boss);
      this.workId = await boss.work<{ key: string }>(PRUNE_QUEUE, { pollingIntervalSeconds: this.opts.pollSeconds ?? 30 }, async (jobs) => {
        for (const _job of jobs) await this.prune();
      });
    }
    const offer = () => {
      const p = this.offer().catch((err) => {
        log.error({ err }, "offering the idempotency-key prune failed; offered again later");
        return false;
      });
      this.running = p;
      return p;
    };
    this.timer = setInterval(offer, this.opts.offerEveryMs ?? 5 * 60_000);
    this.timer.unref();
    return offer();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    // By id: other subscribers of the queue in this process (tests run two) keep theirs.
    if (this.workId) await (await pgBoss()).offWork({ id: this.workId }).catch(() => undefined);
  }

  /**
   * Offers this hour slot's run: whether this offer was the one taken (PostgreSQL: the job was
   * created, a worker will run it; SQLite: it ran here).
   */
  async offer(): Promise<boolean> {
    if (dbKind() === "postgres") {
      const boss: PgBoss = await pgBoss();
      return (await boss.sendThrottled(PRUNE_QUEUE, { key: this.key }, {}, SLOT_SECONDS, this.key)) !== null;
    }
    const slot = Math.floor(clock.now().getTime() / (SLOT_SECONDS * 1000));
    if (claimedSlots.get(this.key) === slot) return false;
    claimedSlots.set(this.key, slot);
    await this.prune();
    return true;
  }

  private async prune(): Promise<void> {
    const started = Date.now();
    const deleted = await pruneMessages(clock.now(), { batchSize: this.opts.batchSize });
    log.info({ deleted, ms: Date.now() - started }, "pruned expired idempotency keys");
  }
}
