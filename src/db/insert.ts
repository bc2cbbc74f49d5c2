// Multi-row INSERTs for bulk writes of complete rows. Prisma's createMany costs ~50 µs per bound
// value in its query compiler: a 10,000-user upsert (60,000 value rows) spent most of its time
// there. For the models whose callers always give complete rows (and for `skipDuplicates`, which
// Prisma lacks on SQLite), createMany runs as plain INSERTs, values converted as Prisma stores
// them. A failure is a Prisma raw-query error carrying the driver's kind: src/db/errors.ts reads it.
type Row = Record<string, unknown>;

/** Models written by createMany as multi-row INSERTs (their callers always give complete rows). */
export const FAST_INSERT = new Set(["EndUser", "EndUserValue", "EndUserAction", "ContentTag", "AuditLog"]);
const MAX_PARAMS = 30_000; // under SQLite's 32,766 and PostgreSQL's 65,535

export type Dialect = "sqlite" | "postgres";

function sqlValue(v: unknown, dialect: Dialect): unknown {
  if (v === undefined || v === null) return null;
  if (v instanceof Date) return dialect === "sqlite" ? v.toISOString().replace("Z", "+00:00") : v.toISOString();
  if (typeof v === "boolean") return dialect === "sqlite" ? (v ? 1 : 0) : v;
  if (typeof v === "bigint") return dialect === "sqlite" ? Number(v) : v.toString();
  return v;
}

interface RawClient {
  $executeRawUnsafe(sql: string, ...params: unknown[]): Promise<number>;
  $queryRawUnsafe(sql: string, ...params: unknown[]): Promise<unknown>;
}

/**
 * INSERTs `rows` (all with the same columns) into `model` in statements of at most MAX_PARAMS
 * values. With `skipDuplicates`, rows that collide with a unique key (a concurrent insert of the
 * same natural key) are skipped (`ON CONFLICT DO NOTHING`, both dialects) and `inserted` lists the
 * rows written, recognised by their `identity` columns. `onConflict` is an upsert clause of the
 * caller's (`ON CONFLICT (...) DO UPDATE ...`, the same text on both databases).
 */
export async function insertRows(
  db: RawClient,
  dialect: Dialect,
  model: string,
  rows: Row[],
  opts: { skipDuplicates?: boolean; identity?: string[]; onConflict?: string } = {},
): Promise<{ count: number; inserted: Row[] }> {
  if (!rows.length) return { count: 0, inserted: [] };
  const columns = Object.keys(rows[0]!);
  if (!rows.every((r) => Object.keys(r).length === columns.length && columns.every((c) => c in r))) {
    throw new Error(`insertRows(${model}): every row needs the same columns`);
  }
  const identity = opts.identity ?? columns;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const head = `INSERT INTO "${model}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES `;
  const tail = opts.onConflict
    ? ` ${opts.onConflict}`
    : opts.skipDuplicates
      ? ` ON CONFLICT DO NOTHING RETURNING ${identity.map((c) => `"${c}"`).join(", ")}`
      : "";
  const keyOf = (r: Row) => identity.map((c) => String(r[c])).join("\u0000");
  const inserted: Row[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const params: unknown[] = [];
    const placeholder = (value: unknown) => {
      params.push(sqlValue(value, dialect));
      return dialect === "sqlite" ? "?" : `$${params.length}`;
    };
    const tuples = chunk.map((r) => `(${columns.map((c) => placeholder(r[c])).join(", ")})`);
    if (!opts.skipDuplicates) {
      await db.$executeRawUnsafe(head + tuples.join(", ") + tail, ...params);
      inserted.push(...chunk);
      continue;
    }
    const written = new Set(((await db.$queryRawUnsafe(head + tuples.join(", ") + tail, ...params)) as Row[]).map(keyOf));
    inserted.push(...chunk.filter((r) => written.has(keyOf(r))));
  }
  return { count: inserted.length, inserted };
}
