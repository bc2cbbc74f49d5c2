// Reads captured SQL (from sqlOf) as "VERB Table" pairs, the same on SQLite and PostgreSQL.
const TABLE = /(?:FROM|INTO|UPDATE)\s+(?:[`"]\w+[`"]\.)?[`"](\w+)[`"]/i;

/**
 * Statements that are bookkeeping on a timer rather than the request's work, so whether they land
 * in a capture depends on timing: the batched write of key-use times (src/auth/keyUsage.ts).
 */
const BOOKKEEPING = [/^UPDATE\s+[`"]\w+[`"]\.[`"]ApiKey[`"]\s+SET\s+[`"]lastUsedAt[`"]/i];

const ROW_LOCK = /\bFOR (?:NO KEY )?UPDATE$|\bFOR (?:KEY )?SHARE$/i;

/** A statement's verb; a read that names its page in a CTE first (`WITH c AS (SELECT …) SELECT …`) is a SELECT. */
const verbOf = (q: string) => {
  const verb = q.split(/\s+/, 1)[0]!.toUpperCase();
  return verb === "WITH" && !/\b(?:INSERT|UPDATE|DELETE)\b/i.test(q) ? "SELECT" : verb;
};

/** The request's own statements as "VERB Table" ("LOCK Table" for row locks), bookkeeping left out. */
export function shape(sql: string[]): string[] {
  return sql
    .map((q) => q.trim())
    .filter((q) => !BOOKKEEPING.some((re) => re.test(q)))
    .map((q) => `${ROW_LOCK.test(q) ? "LOCK" : verbOf(q)} ${TABLE.exec(q)?.[1] ?? "?"}`);
}

/**
 * The row-lock statement of a read-decide-write transaction (src/db/locks.ts): PostgreSQL only;
 * SQLite's one writer connection needs none.
 */
export const LOCK = (table: string): string[] => (/^postgres/.test(process.env.DATABASE_URL ?? "") ? [`LOCK ${table}`] : []);

/**
 * The lookups that resolve the caller's key, user, memberships and those accounts (once per
 * request with the identity cache off, as in the tests; see test/identity-cache.test.ts).
 */
export const AUTH = ["SELECT ApiKey", "SELECT User", "SELECT Membership", "SELECT Account"] as const;
