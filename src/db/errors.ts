// What a database error means, the same on both databases and whichever way it arrived (a Prisma
// known error, a driver-adapter error inside a raw query, or the driver's own error). The error
// mapper (src/errors.ts) turns these kinds into HTTP answers; withTransaction retries "conflict".
export type DbErrorKind =
  /** deadlock (40P01), serialization failure (40001), SQLite BUSY: the transaction may succeed if run again */
  | "conflict"
  | "unique"
  | "foreignKey"
  | "notFound"
  /** no connection or transaction slot in time (pool exhausted, maxWait passed) */
  | "unavailable";

const CONFLICT_CODES = new Set(["40P01", "40001", "P2034", "SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED"]);
const CONFLICT_KINDS = new Set(["TransactionWriteConflict", "SocketTimeout"]);
const CONFLICT_TEXT = /deadlock detected|could not serialize access|database is locked|SQLITE_BUSY/i;
/** node-postgres' pool found no free connection within DATABASE_POOL_TIMEOUT_MS (./postgres.ts). */
const POOL_TIMEOUT_TEXT = /timeout exceeded when trying to connect/i;

type Info = { code?: unknown; kind?: unknown; originalCode?: unknown; message?: unknown; meta?: Record<string, unknown>; cause?: unknown };

/** The error and what it wraps: Prisma's `meta.driverAdapterError.cause`, `cause` chains. */
function* layers(err: unknown): Generator<Info> {
  let cur: unknown = err;
  for (let depth = 0; cur && typeof cur === "object" && depth < 6; depth++) {
    const e = cur as Info;
    yield e;
    const adapter = (e.meta?.driverAdapterError as { cause?: unknown } | undefined)?.cause;
    if (adapter && typeof adapter === "object") yield adapter as Info;
    cur = e.cause;
  }
}

export function dbErrorKind(err: unknown): DbErrorKind | null {
  let prismaCode: unknown;
  for (const e of layers(err)) {
    prismaCode ??= typeof e.code === "string" && /^P\d{4}$/.test(e.code) ? e.code : undefined;
    if (CONFLICT_CODES.has(String(e.code)) || CONFLICT_CODES.has(String(e.originalCode)) || CONFLICT_KINDS.has(String(e.kind))) return "conflict";
    if (e.kind === "postgres" && (e.code === "40P01" || e.code === "40001")) return "conflict";
    if (typeof e.message === "string" && CONFLICT_TEXT.test(e.message)) return "conflict";
    if (typeof e.message === "string" && POOL_TIMEOUT_TEXT.test(e.message)) return "unavailable";
    if (e.kind === "UniqueConstraintViolation") return "unique";
    if (e.kind === "ForeignKeyConstraintViolation") return "foreignKey";
  }
  switch (prismaCode) {
    case "P2002":
      return "unique";
    case "P2003":
      return "foreignKey";
    case "P2025":
      return "notFound";
    case "P2024": // timed out fetching a connection from the pool
    case "P2028":
      return "unavailable"; // transaction API: could not start or already closed (timeout)
    default:
      return null;
  }
}

export const isRetryableTransactionError = (err: unknown): boolean => dbErrorKind(err) === "conflict";
