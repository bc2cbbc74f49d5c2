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
//   - PostgreSQL: a small pool of its own (DIRECT_POOL connections besides Prisma's), named
//     prepared statements, timestamps read as UTC.
import Database from "better-sqlite3";
import pg from "pg";
import { isPostgresUrl, loadConfig } from "../config.js";
import { sqliteFile } from "./migrate.js";

/** One read in both dialects: `?` placeholders on SQLite, `$1…` on PostgreSQL, the same parameters. */
export interface DirectQuery {
  name: string;
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

const DIRECT_POOL = 4;

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
      if (!stmt) statements.set(q.sqlite, (stmt = db.prepare(q.sqlite)));
      observe(q.sqlite);
      return stmt.all(...(q.sqliteArgs ? q.sqliteArgs.map((i) => params[i]) : params)) as T[];
    },
    close: async () => void db.close(),
  };
}

// timestamp(3) without time zone holds UTC: read it as such, not in the process's local zone.
const TIMESTAMP = 1114;
const utc = (text: string) => new Date(`${text.replace(" ", "T")}Z`);

function postgresDriver(connectionString: string): Driver {
  const pool = new pg.Pool({
    connectionString,
    max: DIRECT_POOL,
    application_name: "guidegate-direct-reads",
    types: { getTypeParser: ((oid: number, format?: string) => (oid === TIMESTAMP ? utc : pg.types.getTypeParser(oid, format as "text"))) as never },
  });
  // An idle connection the server dropped (a restart, a dropped test database) must not crash the process.
  pool.on("error", () => {});
  return {
    async all<T>(q: DirectQuery, params: unknown[]) {
      observe(q.postgres);
      return (await pool.query({ name: q.name, text: q.postgres, values: params })).rows as T[];
    },
    close: () => pool.end(),
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
  return open().all<T>(q, params);
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

/** A Date as SQLite stores it (Prisma's ISO text), for comparisons in SQL; PostgreSQL takes the Date. */
export function storedDate(d: Date): Date | string {
  return directDialect() === "sqlite" ? d.toISOString().replace("Z", "+00:00") : d;
}
