// The process's PostgreSQL connections, in one place: one pool shared by Prisma's adapter and the
// direct reads (DATABASE_POOL_SIZE), with a bounded wait for a connection (DATABASE_POOL_TIMEOUT_MS:
// past it the request is a 503 with Retry-After, src/db/errors.ts), and the time zone pinned for
// every node-postgres client of the process.
import pg from "pg";
import { loadConfig } from "../config.js";

/** `timestamp(3)` without time zone: what Prisma makes of `DateTime`. It holds UTC. */
export const TIMESTAMP_OID = 1114;

/** A `timestamp` value as the server writes it (`2026-01-01 10:00:00.123`), read as the UTC instant it stands for. */
const utc = (text: string) => new Date(`${text.replace(" ", "T")}Z`);

/**
 * node-postgres writes a Date parameter in the process's local time with its offset, and a
 * `timestamp` column drops the offset when it reads such a literal: under TZ=America/New_York every
 * time compared or stored that way was five hours off. It also reads `timestamp` values in local
 * time. Both are pinned to UTC here for every pg client of the process (the direct reads, pg-boss,
 * the listener), whatever TZ says; Prisma's adapter formats its parameters in UTC itself.
 */
export function pinUtc(): void {
  pg.defaults.parseInputDatesAsUTC = true;
  pg.types.setTypeParser(TIMESTAMP_OID, utc);
}

let pool: pg.Pool | undefined;

/**
 * The shared pool (created on first use). Prisma's adapter runs its statements and transactions on
 * it, the direct reads theirs: DATABASE_POOL_SIZE bounds both together.
 */
export function sharedPool(connectionString: string): pg.Pool {
  if (pool) return pool;
  pinUtc();
  const config = loadConfig();
  pool = new pg.Pool({
    connectionString,
    max: config.DATABASE_POOL_SIZE,
    connectionTimeoutMillis: config.DATABASE_POOL_TIMEOUT_MS,
    application_name: "guidegate",
  });
  // An idle connection the server dropped (a restart, a dropped test database) must not crash the process.
  pool.on("error", () => {});
  return pool;
}

/** Closes the shared pool (shutdown, tests); the next use opens a new one. */
export async function closeSharedPool(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.end();
}
