// The Prisma clients of the process. DATABASE_URL picks the database: `file:` → SQLite through
// better-sqlite3, `postgresql://` → PostgreSQL through pg. Domain code is typed against the SQLite
// client; the PostgreSQL client is generated from the same models, so the two are interchangeable.
//
// SQLite gets two connections: a writer that only withTransaction() (and bookkeeping writes) use,
// and a reader for everything else. In WAL mode the reader sees the last committed state while a
// write transaction is open, so reads never queue behind a bulk write and never see its uncommitted
// rows. (The better-sqlite3 adapter runs every query of its one connection inside whatever
// transaction is open on it: a single shared connection would let reads see uncommitted data.)
//
// Only the database in use has its generated client and driver adapter loaded (the other one's
// modules cost ~6 MB of an idle process): they are imported as this module loads, picked by
// DATABASE_URL's scheme, which every entry point sets before it imports src/db (see dbKind()).
import { clearLogs } from "@prisma/debug";
import { classificationProblems, type WritePolicy } from "../audit/classification.js";
import { auditExtension, configureAudit, inTransaction, routedClient, runAudited, type TransactionClient } from "../audit/recorder.js";
import { isPostgresUrl, loadConfig } from "../config.js";
import type { Prisma, PrismaClient } from "../generated/sqlite/client.js";
import { ModelName } from "../generated/sqlite/internal/prismaNamespaceBrowser.js";
import { logger } from "../logger.js";
import { adoptTransaction, withAdapterTransactionSlot } from "./adapterTransaction.js";
import { closeDirectReads, observeDirectReads } from "./direct.js";
import { isRetryableTransactionError } from "./errors.js";
import { sqliteFile } from "./migrate.js";
import { closeSharedPool, sharedPool } from "./postgres.js";

export type Db = PrismaClient;
/** The client handed to `$transaction(async (tx) => ...)` callbacks. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

type QueryListener = (sql: string) => void;
const queryListeners = new Set<QueryListener>();

// Reads on the driver (./direct.ts) are observed like Prisma's statements.
observeDirectReads((sql) => {
  for (const fn of queryListeners) fn(sql);
});

/** Calls `fn` with every SQL statement the clients send; returns the unsubscribe function. */
export function onQuery(fn: QueryListener): () => void {
  queryListeners.add(fn);
  return () => queryListeners.delete(fn);
}

// Nothing happens at import: DATABASE_URL is read, and the clients are created, on first use
// (main.ts, the CLI, tests and benches set up the environment first and import statically).
let url: string | undefined;
const databaseUrl = (): string => (url ??= loadConfig().DATABASE_URL);

/** Which database DATABASE_URL names. */
export function dbKind(): "sqlite" | "postgres" {
  const kind = isPostgresUrl(databaseUrl()) ? "postgres" : "sqlite";
  if (kind !== loaded.kind) throw new Error(`DATABASE_URL names ${kind}, but it named ${loaded.kind} when src/db was imported: set it before importing src/db`);
  return kind;
}

// The one place the environment is read at import: which client to load, not yet the URL itself.
const loaded = isPostgresUrl(process.env.DATABASE_URL ?? "")
  ? {
      kind: "postgres" as const,
      PrismaClient: (await import("../generated/postgres/client.js")).PrismaClient as unknown as typeof PrismaClient,
      PrismaPg: (await import("@prisma/adapter-pg")).PrismaPg,
    }
  : {
      kind: "sqlite" as const,
      PrismaClient: (await import("../generated/sqlite/client.js")).PrismaClient,
      PrismaBetterSqlite3: (await import("@prisma/adapter-better-sqlite3")).PrismaBetterSqlite3,
    };

/**
 * The better-sqlite3 adapter does not tell Prisma SQLite's real bind-variable limit (32,766), so
 * Prisma assumes 999 and splits every `IN (...)` of more than 999 ids (pages of 1,000 end users,
 * bulk writes) into several statements. Declaring the real limit keeps them one statement.
 */
function sqliteAdapter(url: string) {
  if (loaded.kind !== "sqlite") throw new Error("the SQLite client is not loaded");
  const factory = new loaded.PrismaBetterSqlite3({ url });
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = observedQueries(yieldingQueries(await connect()));
    reusePreparedStatements((adapter as unknown as { client: SqliteDatabase }).client);
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (...args: Parameters<typeof startTransaction>) =>
      adoptTransaction(observedQueries(yieldingQueries(await startTransaction(...args))));
    return Object.assign(adapter, { getConnectionInfo: () => ({ maxBindValues: 32_766, supportsRelationJoins: false }) });
  };
  return factory;
}

/** Prisma runs on the process's one pool (./postgres.ts), which the direct reads share. */
function postgresAdapter(connectionString: string) {
  if (loaded.kind !== "postgres") throw new Error("the PostgreSQL client is not loaded");
  const factory = new loaded.PrismaPg(sharedPool(connectionString));
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = observedQueries(await connect());
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (...args: Parameters<typeof startTransaction>) => adoptTransaction(observedQueries(await startTransaction(...args)));
    return adapter;
  };
  return factory;
}

type Queryable = { queryRaw: (...a: any[]) => Promise<any>; executeRaw: (...a: any[]) => Promise<any> };

/**
 * Statements are observed where the driver adapter runs them (metrics, tests' SQL capture), not
 * through Prisma's query events, which cost ~3% of a request even with nobody listening.
 */
function observedQueries<Q extends Queryable>(q: Q): Q {
  for (const method of ["queryRaw", "executeRaw"] as const) {
    const run = q[method].bind(q);
    q[method] = ((query: { sql: string }, ...rest: unknown[]) => {
      for (const fn of queryListeners) fn(query.sql);
      return run(query, ...rest);
    }) as Q[typeof method];
  }
  return q;
}

type SqliteStatement = {
  reader: boolean;
  columns(): unknown[];
  run(...params: unknown[]): unknown;
  raw(on?: boolean): SqliteStatement;
  all(...params: unknown[]): unknown[];
};
type SqliteDatabase = { prepare(sql: string): SqliteStatement };

/**
 * The adapter prepares every statement anew (native prepare: 6–9% of a small request). Statements
 * are prepared once per SQL text instead (most recently used 500 kept). The adapter binds its
 * arguments with bind(), which better-sqlite3 allows once per statement, so it gets a facade that
 * binds them at execution; better-sqlite3 runs synchronously, so a statement is never in two
 * executions at once.
 */
function reusePreparedStatements(db: SqliteDatabase, max = 500): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, SqliteStatement>();
  db.prepare = ((sql: string) => {
    let stmt = cache.get(sql);
    if (stmt) cache.delete(sql);
    else stmt = prepare(sql);
    cache.set(sql, stmt);
    if (cache.size > max) cache.delete(cache.keys().next().value!);
    const prepared = stmt;
    return {
      // Unbound use (the adapter's BEGIN) runs the statement as it is.
      run: (...params: unknown[]) => prepared.run(...params),
      bind: (args: unknown[]) => ({
        reader: prepared.reader,
        columns: () => prepared.columns(),
        run: () => prepared.run(...args),
        raw: () => ({ all: () => prepared.raw(true).all(...args) }),
      }),
    };
  }) as unknown as SqliteDatabase["prepare"];
}

/**
 * better-sqlite3 is synchronous and the adapter answers with already-resolved promises, so a
 * transaction of many statements runs as one chain of microtasks: nothing else (not even
 * /healthz) is served until it ends. Yielding to the event loop before each statement lets
 * other requests in between the statements of a long write.
 */
function yieldingQueries<Q extends Queryable>(q: Q): Q {
  for (const method of ["queryRaw", "executeRaw"] as const) {
    const run = q[method].bind(q);
    q[method] = (async (...args: unknown[]) => {
      await new Promise(setImmediate);
      return run(...args);
    }) as Q[typeof method];
  }
  return q;
}

function createClient(): Db {
  return dbKind() === "postgres"
    ? new loaded.PrismaClient({ adapter: postgresAdapter(databaseUrl()) })
    : new loaded.PrismaClient({ adapter: sqliteAdapter(`file:${sqliteFile(databaseUrl())}`) });
}

interface Clients {
  /** With the audit extension: audited writes only inside withTransaction. */
  writer: Db;
  /** On PostgreSQL one pool serves both; on SQLite reads have a connection of their own. */
  reader: Db;
  guarded: Db;
}
let clients: Clients | undefined;
let policy: WritePolicy | undefined;

/**
 * Hands the database layer every model's audit classification and write flags (`writePolicy` of
 * src/domains/index.ts). The database layer does not know the domains: whoever starts the process
 * calls this before anything is written (src/main.ts, the CLI, createApp, scripts, benches, the
 * test setup). Default deny: an incomplete classification throws here, and until a policy is
 * handed over every write throws.
 */
export function configureDatabase(p: WritePolicy): void {
  const models: readonly string[] = Object.values(ModelName);
  const problems = classificationProblems(models, p.classification);
  for (const m of p.fastInsert) if (!models.includes(m)) problems.push(`fastInsert names ${m}, which is not a model of the schema`);
  if (problems.length) throw new Error(`audit classification incomplete:\n  ${problems.join("\n  ")}`);
  policy = p;
  if (clients) configureAudit(policy, dbKind());
}

function open(): Clients {
  if (clients) return clients;
  const kind = dbKind();
  configureAudit(policy, kind);
  const base = createClient();
  const writer = base.$extends(auditExtension) as unknown as Db;
  const reader = kind === "sqlite" ? createClient() : writer;
  clients = { writer, reader, guarded: routedClient(reader, writer, kind === "sqlite") };
  return clients;
}

/** Methods that change rows: on the exported client the audit refuses them (they belong in withTransaction). */
type WriteMethod = "create" | "createMany" | "createManyAndReturn" | "update" | "updateMany" | "updateManyAndReturn" | "upsert" | "delete" | "deleteMany";

/**
 * The models whose writes the audit lets run outside withTransaction(), as a type: exempt models,
 * and audited ones with bookkeeping writes (the audit still checks each call and refuses real
 * changes). The database layer does not know them: src/domains/index.ts fills this interface in
 * (declaration merging) from the domains' classifications, the same ones configureDatabase() is
 * handed at run time.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by src/domains/index.ts
export interface FreeWrites {}
type FreeWrite = Uncapitalize<keyof FreeWrites & string>;

/**
 * What reads need, in or out of a transaction: every model reads; only FreeWrites models write.
 * The others are audited, children of an audited model, or the log itself, so the audit extension
 * refuses their writes outside withTransaction(); the type says so up front. Raw statements that
 * change data are left out too.
 */
export type Reader = Omit<
  { [K in keyof Tx]: K extends Uncapitalize<Prisma.ModelName> ? (K extends FreeWrite ? Tx[K] : Omit<Tx[K], WriteMethod>) : Tx[K] },
  "$executeRaw" | "$executeRawUnsafe"
>;
/** The type of the exported client: a Reader that can also be disconnected. */
export type ReadDb = Reader & Pick<Db, "$connect" | "$disconnect">;

/** The process's client for reads; created on first use. Writes go through withTransaction(). */
export const prisma: ReadDb = new Proxy({} as ReadDb, {
  get: (_target, prop) => Reflect.get(open().guarded, prop),
  has: (_target, prop) => Reflect.has(open().guarded, prop),
});

/** How often a transaction that hit a deadlock, serialization failure or busy database is run. */
export const TRANSACTION_ATTEMPTS = 5;

/**
 * The one way to change data: a transaction whose changes are audited in that same transaction
 * (src/audit/recorder.ts). Nested calls join the outer transaction.
 *
 * Deadlocks, serialization failures and SQLite's BUSY roll the whole transaction back; the
 * outermost call then runs `fn` again (a few times, with a growing jittered pause), so `fn` must
 * read what its decisions depend on inside the transaction and build its results afresh on each
 * run. If every attempt fails, the last error goes to the error mapper (src/errors.ts: 503 with
 * Retry-After), never a masked 500.
 */
export async function withTransaction<T>(fn: (tx: Tx) => Promise<T>, opts?: { timeout?: number; maxWait?: number }): Promise<T> {
  const writer = open().writer as unknown as TransactionClient;
  if (inTransaction()) return runAudited(writer, fn, opts);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        // A slot per attempt: its bulk statements may go to the adapter's transaction (./adapterTransaction.ts).
        return await withAdapterTransactionSlot((bind) =>
          runAudited(
            writer,
            (tx: Tx) => {
              bind(tx);
              return fn(tx);
            },
            opts,
          ),
        );
      } catch (err) {
        if (attempt >= TRANSACTION_ATTEMPTS || !isRetryableTransactionError(err)) throw err;
        logger.debug({ attempt, err: (err as Error).message }, "transaction conflicted with a concurrent one: running it again");
        await new Promise((r) => setTimeout(r, Math.random() * 20 * 2 ** attempt));
      }
    }
  } finally {
    forgetQueryArguments();
  }
}

/**
 * Drops what Prisma's debug module keeps of the last 100 statements it saw, whether or not DEBUG is
 * set: their arguments, among them a bulk write's rows as one JSON parameter of several MB (the
 * audit entries of 10,000 end users: 7 MB), held until 100 more statements have run, so that the
 * heap could not give them back after the request (docs/performance.md, "Memory"). Nothing reads
 * that history but Prisma's own crash report.
 */
export const forgetQueryArguments = (): void => clearLogs();

/** SQLite needs per-connection settings, on each of its two connections. */
export async function prepareDb(): Promise<void> {
  if (dbKind() === "sqlite") {
    const { reader, writer } = open();
    for (const client of new Set([reader, writer])) {
      await client.$queryRawUnsafe("PRAGMA journal_mode = WAL");
      await client.$executeRawUnsafe("PRAGMA busy_timeout = 10000");
      await client.$executeRawUnsafe("PRAGMA foreign_keys = ON");
    }
  }
}

/** Closes every connection (shutdown, CLI exit, tests). */
export async function disconnectDb(): Promise<void> {
  await closeDirectReads();
  if (clients) {
    const { reader, writer } = clients;
    await Promise.all([...new Set([reader, writer])].map((c) => c.$disconnect()));
  }
  await closeSharedPool();
}
