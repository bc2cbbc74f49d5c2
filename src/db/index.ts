// The one Prisma client of the process. DATABASE_URL picks the database: `file:` → SQLite through
// better-sqlite3, `postgresql://` → PostgreSQL through pg. Domain code is typed against the SQLite
// client; the PostgreSQL client is generated from the same models, so the two are interchangeable.
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/sqlite/client.js";
import { PrismaClient as PgPrismaClient } from "../generated/postgres/client.js";
import { isPostgresUrl, loadConfig } from "../config.js";
import { sqliteFile } from "./migrate.js";
import { guardedClient, runAudited, setDialect, type TransactionClient } from "../audit/recorder.js";

export type Db = PrismaClient;
/** The client handed to `$transaction(async (tx) => ...)` callbacks. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

type QueryListener = (sql: string) => void;
const queryListeners = new Set<QueryListener>();

/** Calls `fn` with every SQL statement the client sends; returns the unsubscribe function. */
export function onQuery(fn: QueryListener): () => void {
  queryListeners.add(fn);
  return () => queryListeners.delete(fn);
}

export const databaseUrl = loadConfig().DATABASE_URL;
export const dbKind: "sqlite" | "postgres" = isPostgresUrl(databaseUrl) ? "postgres" : "sqlite";
setDialect(dbKind);

/**
 * The better-sqlite3 adapter does not tell Prisma SQLite's real bind-variable limit (32,766), so
 * Prisma assumes 999 and splits every `IN (...)` of more than 999 ids (pages of 1,000 end users,
 * bulk writes) into several statements. Declaring the real limit keeps them one statement.
 */
function sqliteAdapter(url: string) {
  const factory = new PrismaBetterSQLite3({ url });
  const connect = factory.connect.bind(factory);
  factory.connect = async () =>
    Object.assign(await connect(), { getConnectionInfo: () => ({ maxBindValues: 32_766, supportsRelationJoins: false }) });
  return factory;
}

function createClient(): Db {
  const log: [{ emit: "event"; level: "query" }] = [{ emit: "event", level: "query" }];
  const client =
    dbKind === "postgres"
      ? (new PgPrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: 10 }), log }) as unknown as Db)
      : new PrismaClient({ adapter: sqliteAdapter(`file:${sqliteFile(databaseUrl)}`), log });
  (client as unknown as { $on(e: "query", cb: (e: { query: string }) => void): void }).$on("query", (e) => {
    for (const fn of queryListeners) fn(e.query);
  });
  return client;
}

/** Unguarded: only withTransaction (and the audit recorder) may write through it. */
const rawClient: Db = createClient();
export const prisma: Db = guardedClient(rawClient);

/**
 * The one way to change data: a transaction whose changes are audited in that same transaction
 * (src/audit/recorder.ts). Nested calls join the outer transaction.
 */
export function withTransaction<T>(fn: (tx: Tx) => Promise<T>, opts?: { timeout?: number; maxWait?: number }): Promise<T> {
  return runAudited(rawClient as unknown as TransactionClient, fn, opts);
}

/** SQLite needs per-connection settings; the adapter keeps one connection, so once is enough. */
export async function prepareDb(): Promise<void> {
  if (dbKind === "sqlite") {
    await prisma.$queryRawUnsafe("PRAGMA journal_mode = WAL");
    await prisma.$executeRawUnsafe("PRAGMA busy_timeout = 10000");
    await prisma.$executeRawUnsafe("PRAGMA foreign_keys = ON");
  }
}
