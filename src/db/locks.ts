// Row locks for read-decide-write transactions. PostgreSQL runs transactions concurrently, so a
// write that depends on what it read (an update merging into a row, an upsert deciding create or
// update, a cap on a count) locks the rows first, inside the transaction, always in key order:
// two bulk writes of the same records in opposite orders then queue instead of deadlocking.
// SQLite has one writer connection that runs one transaction at a time: nothing to lock.
import { dbKind, type Tx } from "./index.js";
import { hasColumn, selectWhere, uniqueInAccount } from "./insert.js";

/**
 * `FOR NO KEY UPDATE` for updates (it does not block inserts of rows referencing the locked ones),
 * `FOR UPDATE` for deletes.
 */
export type LockMode = "update" | "delete";

/**
 * Locks the rows of `table` whose `column` is one of `keys` (and, with `accountId`, of that account)
 * until the transaction ends, in ascending key order. Rows that do not exist are not locked:
 * inserts of new keys are made race-free with `skipDuplicates` (ON CONFLICT DO NOTHING) instead.
 * With `select`, returns those columns of the rows locked (on SQLite, where nothing is locked, of
 * the rows found): a write that goes on to read its existing rows' ids needs no second statement.
 * One statement whatever the number of keys, the list one JSON parameter (src/db/insert.ts
 * selectWhere): bound one by one through Prisma's raw query, 10,000 keys cost two statements and
 * about 40 ms of the client's work.
 */
export async function lockRows(
  tx: Tx,
  table: string,
  column: string,
  keys: Iterable<string>,
  opts: { accountId?: string; mode?: LockMode; select?: readonly string[] } = {},
): Promise<Record<string, unknown>[]> {
  const postgres = dbKind() === "postgres";
  if (!postgres && !opts.select) return [];
  const list = [...new Set(keys)];
  if (!list.length) return [];
  const where = { ...(opts.accountId ? { accountId: opts.accountId } : {}), [column]: { in: list } };
  // Ordered by the key, and then the row id where a key can name several rows (an attribute value
  // belongs to one record per attribute name): rows of one key must lock in one order too.
  const orderBy = uniqueInAccount(table, column) || !hasColumn(table, "id") ? [column] : [column, "id"];
  const lock = postgres ? { orderBy, mode: opts.mode === "delete" ? ("FOR UPDATE" as const) : ("FOR NO KEY UPDATE" as const) } : undefined;
  const rows = await selectWhere(tx, postgres ? "postgres" : "sqlite", table, opts.select ?? [column], where, lock);
  if (!rows) throw new Error(`lockRows(${table}.${column}): a String column of the model is needed`);
  return rows;
}

/**
 * An account-wide lock for changes that depend on account-wide state: "exclusive" for schema
 * changes (one at a time per account; the 50-field cap counts what is there), "share" for writes
 * validated against that schema (many at once, none during a schema change). Both leave the
 * account's other writes alone (inserts referencing the account take only KEY SHARE).
 */
export async function lockAccount(tx: Tx, accountId: string, mode: "share" | "exclusive"): Promise<void> {
  if (dbKind() !== "postgres") return;
  await tx.$queryRawUnsafe(`SELECT 1 FROM "Account" WHERE "id" = $1 ${mode === "share" ? "FOR SHARE" : "FOR NO KEY UPDATE"}`, accountId);
}

/**
 * A lock of one account's `what` (its saved endpoints, say) until the transaction ends: writes that
 * decide on the account's rows of a kind as a whole (a cap on how many there are, create or replace
 * by name) take it first and run one at a time per account, without holding up its other writes.
 * PostgreSQL: a transaction-scoped advisory lock on a hash of the two (a collision of two hashes only
 * makes two accounts' saves queue together).
 */
export async function lockAccountFor(tx: Tx, accountId: string, what: string): Promise<void> {
  if (dbKind() !== "postgres") return;
  await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", `${what}:${accountId}`);
}

/**
 * Thrown inside a transaction that found its premises changed by a concurrent one (an insert it
 * planned was skipped as a duplicate): withTransaction runs the whole transaction again.
 */
export class ConcurrentChange extends Error {
  readonly code = "40001"; // classified as a serialization failure: retried, then 503
  constructor(what: string) {
    super(`concurrent change: ${what}`);
  }
}
