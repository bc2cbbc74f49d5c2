// The copy jobs' queue: how a committed job reaches the workers. The schema hands jobs over here
// (dispatch) without knowing the worker (./worker.ts), which listens here.
//   - PostgreSQL: pg-boss (the idempotency-key prune shares its instance, src/ingest/prune.ts).
//   - SQLite (embedded, one process): an in-process wake-up of the polling workers.
import type PgBoss from "pg-boss";
import { loadConfig } from "../../config.js";
import { dbKind } from "../../db/index.js";
import { logger } from "../../logger.js";

export const QUEUE = "copy-jobs";
const log = logger.child({ component: "copy-jobs" });

let boss: Promise<PgBoss> | undefined;

/** The process's pg-boss (PostgreSQL only), started on first use; its schema is created if missing (the idempotency-key prune shares it). */
export function pgBoss(): Promise<PgBoss> {
  boss ??= (async () => {
    // Loaded on PostgreSQL only (SQLite runs the in-process worker).
    const { default: PgBossClass } = await import("pg-boss");
    const config = loadConfig();
    const b = new PgBossClass({ connectionString: config.DATABASE_URL, schema: "pgboss", max: config.JOB_QUEUE_POOL_SIZE, schedule: false });
    b.on("error", (err) => log.error({ err }, "pg-boss error"));
    await b.start();
    await createQueueOnce(b, QUEUE, { retryLimit: 8, retryDelay: 1, retryBackoff: true, expireInSeconds: 3600 });
    return b;
  })();
  return boss;
}

/**
 * Creates a pg-boss queue if it is missing. Instances starting together may collide creating it
 * (pg-boss makes a table per queue: a deadlock, 40P01, or a duplicate); createQueue is a no-op once
 * the queue exists, so a failed attempt is made again, a few times, after a short random wait.
 */
export async function createQueueOnce(b: PgBoss, name: string, options: Omit<PgBoss.Queue, "name">): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await b.createQueue(name, { name, ...options });
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt + Math.random() * 100));
    }
  }
}

/** The process's pg-boss if it was started, else undefined (stopping a worker must not start one). */
export function startedBoss(): Promise<PgBoss> | undefined {
  return boss;
}

const localWakers = new Set<() => void>();

/** SQLite: `wake` runs on every dispatch until the returned function is called. */
export function onDispatch(wake: () => void): () => void {
  localWakers.add(wake);
  return () => localWakers.delete(wake);
}

/** Tells the workers that job `id` wants running (after its row is committed). */
export async function dispatch(id: string): Promise<void> {
  if (dbKind() === "postgres") {
    await (await pgBoss()).send(QUEUE, { jobId: id });
  } else {
    for (const wake of localWakers) wake();
  }
}

/** Stops the process's pg-boss (after the workers stopped). */
export async function closeQueue(): Promise<void> {
  const b = boss;
  boss = undefined;
  if (b) await (await b).stop({ graceful: false, wait: true, close: true, timeout: 5_000 });
}
