// Hot reads on the database driver itself, past Prisma's query engine. A page of content with its
// tags, an end user with their values, a segment evaluation: statements the service runs on every
// page view of its customers' users, where Prisma's per-call work (query planning, parameter and
// result mapping, its promise chain) costs more than the database. Measured on a 10-row page: the
// same one statement costs 1.08 CPU ms through Prisma's $queryRaw and 0.48 ms on the driver.
//
// Only reads come here: every write still goes through Prisma inside withTransaction(), where the
// audit's default-deny guard sees it. Statements are prepared once per SQL text and observed like
// Prisma's (onQuery: metrics, the tests' SQL counts).
//   - SQLite: a read-only connection of its own (WAL: it sees the last commit, never waits for a
//     writer), better-sqlite3's synchronous statements.
//   - PostgreSQL: the pool Prisma's adapter uses too (./postgres.ts: one DATABASE_POOL_SIZE for
//     both), named prepared statements, timestamps read and written as UTC. Behind a pooler that
//     cannot follow named statements (DATABASE_PREPARED_STATEMENTS=false), each read runs as a
//     PL/pgSQL function instead (./readFunctions.ts), whose plan PostgreSQL caches per server
//     connection as it would a prepared statement's.
// Every SQL text is built from a bounded set of shapes (a client's values are parameters, never
// text), but a client chooses among thousands of them (the content list's filter combinations): on
// PostgreSQL only the first MAX_NAMED_STATEMENTS of those (DirectQuery.open) a process runs get
// names (prepared statements or functions), later ones run unnamed (./readFunctions.ts); the
// service's fixed reads always get theirs. The SQLite map is bounded too.
//
// A direct read sees committed data only: inside withTransaction() it would miss the
// transaction's own writes, so it refuses to run there (read through the transaction client).
import Database from "better-sqlite3";
import { inTransaction } from "../audit/recorder.js";
import { isPostgresUrl, loadConfig } from "../config.js";
import { tracing } from "../observability/tracing.js";
import { modelColumns } from "./columns.js";
import { sqliteFile } from "./migrate.js";
import { sharedPool } from "./postgres.js";
import { admission, MAX_NAMED_STATEMENTS, ReadFunctions } from "./readFunctions.js";

/** One read in both dialects: `?` placeholders on SQLite, `$1…` on PostgreSQL, the same parameters. */
export interface DirectQuery {
  name: string;
  /**
   * One of a family of shapes clients choose among (the content list's filter combinations): on
   * PostgreSQL only the first MAX_NAMED_STATEMENTS of them get names. The service's fixed reads
   * always do, so that clients cannot crowd them out.
   */
  open?: boolean;
  sqlite: string;
  postgres: string;
  /**
   * better-sqlite3 binds `?` by position only (no `?1` reuse): for SQLite, the index of the
   * parameter each `?` takes, in order of appearance, when a parameter is used more than once.
   */
  sqliteArgs?: readonly number[];
}

type Observer = (sql: string) => void;
let observe: Observer = () => {};
/** src/db/index.ts hands its statement observer over (metrics, the tests' SQL counts). */
export function observeDirectReads(fn: Observer): void {
  observe = fn;
}

/** The most SQLite statements kept prepared (least recently used dropped): far above the shapes the code builds. */
const SQLITE_STATEMENTS = 200;

interface Driver {
  all<T>(q: DirectQuery, params: unknown[]): T[] | Promise<T[]>;
  close(): Promise<void>;
}

let driver: Driver | undefined;
let url: string | undefined;

function sqliteDriver(file: string): Driver {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 10000");
  const statements = new Map<string, Database.Statement>();
  return {
    all<T>(q: DirectQuery, params: unknown[]) {
      let stmt = statements.get(q.sqlite);
      if (stmt) statements.delete(q.sqlite);
      else stmt = db.prepare(q.sqlite);
      statements.set(q.sqlite, stmt);
      if (statements.size > SQLITE_STATEMENTS) statements.delete(statements.keys().next().value!);
      observe(q.sqlite);
      return stmt.all(...(q.sqliteArgs ? q.sqliteArgs.map((i) => params[i]) : params)) as T[];
    },
    close: async () => void db.close(),
  };
}

function postgresDriver(connectionString: string): Driver {
  const pool = sharedPool(connectionString);
  // Named statements are parsed and planned once per connection; a pooler in transaction mode
  // (PgBouncer < 1.21) hands the next query another server connection, where the name is unknown:
  // there a function per statement keeps the plan cached on the server instead (unnamed statements
  // were planned on every call: 0.55 ms of planning for B16's 0.09 ms values read).
  const config = loadConfig();
  const functions = config.DATABASE_PREPARED_STATEMENTS || !config.DATABASE_READ_FUNCTIONS ? null : new ReadFunctions(pool);
  const named = admission(MAX_NAMED_STATEMENTS);
  return {
    async all<T>(q: DirectQuery, params: unknown[]) {
      observe(q.postgres);
      if (functions) return (await functions.query(q.postgres, params, q.open)) as T[];
      const name = config.DATABASE_PREPARED_STATEMENTS && (!q.open || named(q.postgres)) ? q.name : undefined;
      return (await pool.query({ name, text: q.postgres, values: params })).rows as T[];
    },
    // The pool is Prisma's too: src/db/index.ts closes it.
    close: async () => {},
  };
}

function open(): Driver {
  if (driver) return driver;
  url ??= loadConfig().DATABASE_URL;
  driver = isPostgresUrl(url) ? postgresDriver(url) : sqliteDriver(sqliteFile(url));
  return driver;
}

/** Which dialect the direct reads speak. */
export const directDialect = (): "sqlite" | "postgres" => (isPostgresUrl((url ??= loadConfig().DATABASE_URL)) ? "postgres" : "sqlite");

/** Runs one prepared read; rows as the driver returns them. */
export function directRead<T>(q: DirectQuery, params: unknown[]): T[] | Promise<T[]> {
  if (inTransaction())
    throw new Error(`direct read ${q.name} inside a transaction: it would not see the transaction's own writes; read through the transaction client`);
  const t = tracing;
  if (!t) return open().all<T>(q, params);
  // With tracing on, a span per statement, as Prisma's db_query spans (with the SQL, never the values).
  const postgres = directDialect() === "postgres";
  return t.inSpan(
    `db_query ${q.name}`,
    { "db.system.name": postgres ? "postgresql" : "sqlite", "db.query.text": postgres ? q.postgres : q.sqlite, "db.query.name": q.name },
    () => open().all<T>(q, params),
    "client",
  );
}

/** Closes the direct-read connection(s) (shutdown, tests). */
export async function closeDirectReads(): Promise<void> {
  const d = driver;
  driver = undefined;
  await d?.close();
}

/** A DateTime column as SQLite stores it (Prisma's ISO text) or PostgreSQL returns it: a Date. */
export function dateOf(value: unknown): Date {
  return value instanceof Date ? value : new Date(typeof value === "string" && !/[zZ]|[+-]\d\d:\d\d$/.test(value) ? `${value}Z` : (value as string));
}

/**
 * A Date as a parameter compared with a DateTime column: SQLite's stored form (Prisma's ISO text),
 * PostgreSQL's UTC ISO text (a `timestamp` column drops the zone, so it must be UTC's; never the
 * driver's local-time rendering of a Date).
 */
export function storedDate(d: Date): string {
  return directDialect() === "sqlite" ? d.toISOString().replace("Z", "+00:00") : d.toISOString();
}

/**
 * A row of `model` read directly, its values turned into what Prisma's findMany returns, by the
 * column types of the schema (./columns.ts): DateTime from epoch ms or stored text to a Date,
 * SQLite's 0/1 to a boolean, BigInt to a bigint. Other keys of the row are left as they are.
 */
export function asPrismaRow<R extends Record<string, unknown>>(model: string, row: R): R {
  const r = row as Record<string, unknown>;
  for (const c of modelColumns(model)) {
    const v = r[c.name];
    if (v === undefined || v === null) continue;
    if (c.type === "DateTime") r[c.name] = typeof v === "number" ? new Date(v) : dateOf(v);
    else if (c.type === "Boolean") r[c.name] = Boolean(v);
    else if (c.type === "BigInt") r[c.name] = BigInt(v as number | string);
  }
  return row;
}
