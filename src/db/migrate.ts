// Applies the committed SQL migrations (prisma/migrations/<provider>/*/migration.sql) in name order,
// each once, recorded in _guidegate_migrations. Runs at server and CLI start. On PostgreSQL an
// advisory lock makes concurrent instances wait for one another instead of racing.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { isPostgresUrl } from "../config.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const LOCK_KEY = 482_901_377; // arbitrary, fixed: identifies guidegate's migration lock

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

function loadMigrations(provider: "sqlite" | "postgres"): Migration[] {
  const dir = join(root, "prisma", "migrations", provider);
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

export function sqliteFile(url: string): string {
  const path = url.replace(/^file:/, "");
  return resolve(process.cwd(), path);
}

/**
 * The database itself cannot be opened or reached (a SQLite path that is no file, a PostgreSQL
 * server that refuses, a database that does not exist): a configuration problem, reported in one
 * line by the entry points with the variable that names the database. No password in the message.
 */
export class DatabaseOpenError extends Error {}

/** A PostgreSQL URL as it may be shown: without its password. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(an unparsable URL)";
  }
}

export interface MigrateResult {
  applied: string[];
  fresh: boolean;
}

export async function migrate(url: string, log: (msg: string) => void = () => {}): Promise<MigrateResult> {
  return isPostgresUrl(url) ? migratePostgres(url, log) : migrateSqlite(url, log);
}

function migrateSqlite(url: string, log: (msg: string) => void): MigrateResult {
  const file = sqliteFile(url);
  let db: Database.Database;
  try {
    mkdirSync(dirname(file), { recursive: true });
    db = new Database(file);
  } catch (err) {
    throw new DatabaseOpenError(`cannot open the SQLite database ${file}: ${(err as Error).message}`);
  }
  try {
    // The first statement: a file that is no SQLite database fails here.
    db.pragma("journal_mode = WAL");
  } catch (err) {
    db.close();
    throw new DatabaseOpenError(`cannot open the SQLite database ${file}: ${(err as Error).message}`);
  }
  try {
    db.pragma("busy_timeout = 10000");
    db.exec(`CREATE TABLE IF NOT EXISTS _guidegate_migrations (
      name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    const done = new Set(
      db
        .prepare("SELECT name FROM _guidegate_migrations")
        .all()
        .map((r) => (r as { name: string }).name),
    );
    const fresh = done.size === 0;
    const applied: string[] = [];
    for (const m of loadMigrations("sqlite")) {
      if (done.has(m.name)) continue;
      db.transaction(() => {
        db.exec(m.sql);
        db.prepare("INSERT INTO _guidegate_migrations (name, checksum, applied_at) VALUES (?, ?, ?)").run(m.name, m.checksum, new Date().toISOString());
      }).immediate();
      log(`applied migration ${m.name}`);
      applied.push(m.name);
    }
    return { applied, fresh };
  } finally {
    db.close();
  }
}

async function migratePostgres(url: string, log: (msg: string) => void): Promise<MigrateResult> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw new DatabaseOpenError(`cannot connect to PostgreSQL at ${shownUrl(url)}: ${(err as Error).message}`);
  }
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS _guidegate_migrations (
      name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ name: string }>("SELECT name FROM _guidegate_migrations");
    const done = new Set(rows.map((r) => r.name));
    const fresh = done.size === 0;
    const applied: string[] = [];
    for (const m of loadMigrations("postgres")) {
      if (done.has(m.name)) continue;
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query("INSERT INTO _guidegate_migrations (name, checksum) VALUES ($1, $2)", [m.name, m.checksum]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      log(`applied migration ${m.name}`);
      applied.push(m.name);
    }
    return { applied, fresh };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]).catch(() => {});
    await client.end();
  }
}
