// Running a question's statements with a bound on their cost: EXPLORE_TIMEOUT_MS per question.
//   - PostgreSQL: one read-only REPEATABLE READ transaction on the shared pool (the statements of a
//     question see one snapshot) with a transaction-local statement_timeout (../../db/localSettings.ts);
//     the server cancels a statement past it.
//   - SQLite: better-sqlite3 is synchronous, so a long statement on the process's thread would stall
//     every other request. Questions run in worker threads, each with its own read-only connection
//     (WAL: readers never wait for the writer), in one read transaction per question; a worker past
//     the timeout is terminated (that interrupts SQLite mid-statement) and replaced.
// Past the timeout the question is answered with a 422 that says what to narrow (docs/explore.md):
// the question, not the service, is the problem, so retrying it unchanged would not help (a 503
// would invite exactly that). A SQLite question that finds no worker within its time (or a full
// queue) is the other case: a 503 with Retry-After.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { isPostgresUrl, loadConfig } from "../../config.js";
import { setLocalSql } from "../../db/localSettings.js";
import { sqliteFile } from "../../db/migrate.js";
import { sharedPool } from "../../db/postgres.js";
import { AppError } from "../../errors.js";
import { type Dialect, ICU_ROOT, type Statement } from "./sql.js";

export const dialect = (): Dialect => (isPostgresUrl(loadConfig().DATABASE_URL) ? "postgres" : "sqlite");

const timeout = () => loadConfig().EXPLORE_TIMEOUT_MS;

/** What a question scans: its window, its dimensions (each a GROUP BY over the window's events) and whether it joins user values. */
export interface Scan {
  windowMs: number;
  dimensions: number;
  userValues: boolean;
}

/** What a question may spend once it runs: the configured time. */
export function budgetOf(_scan: Scan): { timeoutMs: number } {
  return { timeoutMs: timeout() };
}

/** Cost units (src/graphql/cost.ts; 100 a budget point) per day of events a question scans. */
export const EXPLORE_UNITS_PER_DAY = 10;
const DAY_MS = 86_400_000;

/**
 * What a question costs before it runs, in the budget's cost units: it reads every event of its
 * window, so the window's days (10 units, a tenth of a point, each), times one more for each
 * dimension it groups by, doubled when it joins the end users' values. A 30-day count costs 3 points,
 * the same by event type and user plan 18; a cheap REST read costs 1 (docs/production.md).
 */
export function scanCost(scan: Scan): number {
  const days = Math.max(1, Math.ceil(scan.windowMs / DAY_MS));
  return days * EXPLORE_UNITS_PER_DAY * (1 + scan.dimensions) * (scan.userValues ? 2 : 1);
}

const tooCostly = (ms: number) =>
  new AppError(
    422,
    `The question took longer than the ${ms} ms allowed (EXPLORE_TIMEOUT_MS) and was stopped: narrow it (a shorter window between startDate and endDate, fewer or coarser dimensions, a longer interval, or filters that match fewer events) and ask again.`,
    undefined,
    undefined,
    // GraphQL's code of it: what a client branches on to narrow its question (REST: the 422 itself).
    { code: "EXPLORE_TIMEOUT" },
  );

/**
 * How a question's statements are planned on PostgreSQL. `hashJoins`: for the funnels' and
 * retention's joins of materialized CTEs (the steps reached so far, the cohorts) with the events:
 * the planner estimates such a CTE at a row or two whatever it holds, and picks nested loops that
 * compare every entrant with every event (41 s for 100,000 events); their joins are equalities on
 * the end user, which a hash join answers in one pass over each side.
 */
export interface Plan {
  hashJoins?: boolean;
  /**
   * For groupings whose size the planner cannot know (retention's returns per end user and period:
   * it estimates a computed period key at one value per event, so one group per event, and sorts
   * every event, 3M rows spilled to disk, instead of hashing the ~250,000 groups there are):
   * sorts are taken only where nothing else answers.
   */
  hashAggregates?: boolean;
}

/** PostgreSQL's memory for each sort or hash of a question (see runPostgres). */
const EXPLORE_WORK_MEM = "64MB";

/** Runs the statements of one question in one snapshot; their rows, in order. */
export async function runStatements(statements: readonly Statement[], budget: { timeoutMs: number }, plan: Plan = {}): Promise<Record<string, unknown>[][]> {
  return dialect() === "postgres" ? runPostgres(statements, budget.timeoutMs, plan) : runSqlite(statements, budget.timeoutMs);
}

let icuChecked: Promise<boolean> | undefined;
/** Whether the server has ICU's root collation (every build with ICU, Debian's and the managed services' too); asked once. */
function hasIcu(client: { query(sql: string, params: unknown[]): Promise<{ rows: unknown[] }> }): Promise<boolean> {
  icuChecked ??= client.query("SELECT 1 FROM pg_collation WHERE collname = $1", [ICU_ROOT.slice(1, -1)]).then(
    (r) => r.rows.length > 0,
    (err: unknown) => {
      icuChecked = undefined;
      throw err;
    },
  );
  return icuChecked;
}
/** A statement for a server without ICU: the database's own lower() (its LC_CTYPE's case mapping). */
const withoutIcu = (sql: string) => sql.replaceAll(` COLLATE ${ICU_ROOT}`, "");

async function runPostgres(statements: readonly Statement[], ms: number, plan: Plan): Promise<Record<string, unknown>[][]> {
  const client = await sharedPool(loadConfig().DATABASE_URL).connect();
  let broken: unknown;
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    await client.query(
      setLocalSql({
        statement_timeout: Math.floor(ms),
        ...(plan.hashJoins ? { enable_nestloop: "off" } : {}),
        ...(plan.hashAggregates ? { enable_sort: "off" } : {}),
        // A question's sorts and hash tables over a month of events: at the default 4 MB they spill
        // to disk (140 MB of external merge for a day × type question over 3M events, 80 MB for
        // weekly retention). Per sort or hash node of this transaction only; questions run at most
        // a pool's worth at once.
        work_mem: EXPLORE_WORK_MEM,
        // No JIT compilation: these statements are planned at a cost past jit_above_cost (millions
        // of rows), and compiling their expressions took 100 to 280 ms of each funnel, retention or
        // query statement over 3M events, more than the compiled code saved in their one pass.
        jit: "off",
      }),
    );
    const icu = await hasIcu(client);
    const out: Record<string, unknown>[][] = [];
    for (const s of statements) out.push((await client.query(icu ? s.sql : withoutIcu(s.sql), s.params)).rows);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    await client.query("ROLLBACK").catch((e) => {
      broken = e;
    });
    // 57014: query_canceled (statement_timeout).
    if ((err as { code?: string }).code === "57014") throw tooCostly(ms);
    throw err;
  } finally {
    client.release(broken as Error | undefined);
  }
}

// ---- SQLite: worker threads ------------------------------------------------------------------------

// The worker's code: plain JavaScript evaluated by the worker (no build step or loader involved),
// requiring the driver the process resolved.
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma("busy_timeout = 10000");
// contains' case folding, as JavaScript's (sql.ts, unicodeLower): SQLite's lower() folds ASCII only.
db.function("unicode_lower", { deterministic: true }, (s) => (s === null ? null : String(s).toLowerCase()));
const run = db.transaction((statements) => statements.map((s) => db.prepare(s.sql).all(...s.params)));
parentPort.on("message", (statements) => {
  try {
    parentPort.postMessage({ rows: run(statements) });
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
});
`;

/** Idle workers kept for the next questions (the extras end after use). */
const IDLE_WORKERS = 2;
/**
 * Questions running at once on SQLite; more wait their turn (their time starts when they run).
 * Each worker is a thread with its own connection and page cache: the machine's cores bound them.
 */
const MAX_WORKERS = 4;
/** Questions waiting for a worker at most; one more is refused at once (503). */
const MAX_WAITING = 32;
const idle: Worker[] = [];

/**
 * At most `max` holders at once. A waiter waits in turn, at most `ms`; `acquire` answers whether it
 * got a slot (not when the queue is full, or its time ran out first). Without the bounds, a burst of
 * questions queued without end, each answered long after its client had given up.
 */
export class Slots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(
    readonly max: number,
    readonly maxWaiting: number,
  ) {}
  get queued(): number {
    return this.waiting.length;
  }
  acquire(ms: number): Promise<boolean> {
    if (this.held < this.max) {
      this.held++;
      return Promise.resolve(true);
    }
    if (this.waiting.length >= this.maxWaiting) return Promise.resolve(false);
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        this.held++;
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(grant), 1);
        resolve(false);
      }, ms);
      this.waiting.push(grant);
    });
  }
  release(): void {
    this.held--;
    this.waiting.shift()?.();
  }
}
const workers = new Slots(MAX_WORKERS, MAX_WAITING);

/** The service, not the question, is the limit: a 503 to retry, unlike the 422 of a question too costly. */
const busy = (ms: number) =>
  new AppError(
    503,
    `Explore is answering as many questions as this instance runs at once (${MAX_WORKERS}, with up to ${MAX_WAITING} waiting), and this one found no turn within ${ms} ms: ask again in a few seconds.`,
    undefined,
    { "Retry-After": String(Math.max(1, Math.ceil(ms / 2000))) },
    { code: "EXPLORE_BUSY" },
  );

function newWorker(): Worker {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const w = new Worker(WORKER, { eval: true, workerData: { driver, file: sqliteFile(loadConfig().DATABASE_URL) } });
  // An idle worker never keeps the process alive (nor delays its shutdown: nothing to close).
  w.unref();
  return w;
}

async function runSqlite(statements: readonly Statement[], ms: number): Promise<Record<string, unknown>[][]> {
  // A turn within the question's own time; then the whole of it to run.
  if (!(await workers.acquire(ms))) throw busy(ms);
  try {
    return await inWorker(statements, ms);
  } finally {
    workers.release();
  }
}

function inWorker(statements: readonly Statement[], ms: number): Promise<Record<string, unknown>[][]> {
  const worker = idle.pop() ?? newWorker();
  return new Promise((resolve, reject) => {
    const done = (fn: () => void) => {
      clearTimeout(timer);
      worker.off("message", onMessage);
      worker.off("error", onError);
      fn();
    };
    const onMessage = (m: { rows?: Record<string, unknown>[][]; error?: string }) =>
      done(() => {
        if (idle.length < IDLE_WORKERS) idle.push(worker);
        else void worker.terminate();
        if (m.error !== undefined) reject(new Error(`explore statement failed: ${m.error}`));
        else resolve(m.rows!);
      });
    const onError = (err: Error) => done(() => reject(err));
    const timer = setTimeout(
      () =>
        done(() => {
          void worker.terminate();
          reject(tooCostly(ms));
        }),
      ms,
    );
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.postMessage(statements);
  });
}
