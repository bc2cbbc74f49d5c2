// Multi-row INSERTs for bulk writes of complete rows. Prisma's createMany costs ~50 µs per bound
// value in its query compiler: a 10,000-user upsert (60,000 value rows) spent most of its time
// there. For the models whose callers always give complete rows (and for `skipDuplicates`, which
// Prisma lacks on SQLite), createMany runs as plain INSERTs, values converted as Prisma stores
// them. A failure is a Prisma raw-query error carrying the driver's kind: src/db/errors.ts reads it.
import { getDatamodel } from "../generated/pothos-types.js";

type Row = Record<string, unknown>;

/** Models written by createMany as multi-row INSERTs (their callers always give complete rows). */
export const FAST_INSERT = new Set([
  "Content",
  "EndUser",
  "EndUserValue",
  "EndUserAction",
  "ContentTag",
  "AuditLog",
  "AttributeRecord",
  "AttributeRecordValue",
  "SegmentContent",
]);
const MAX_PARAMS = 30_000; // under SQLite's 32,766 and PostgreSQL's 65,535

export type Dialect = "sqlite" | "postgres";

/** Rows per PostgreSQL statement (arrays have no bind limit; this bounds one statement's memory). */
const PG_ROWS = 10_000;
const PG_TYPES: Record<string, string> = {
  String: "text",
  Int: "integer",
  Float: "double precision",
  Boolean: "boolean",
  DateTime: "timestamp(3)",
  BigInt: "bigint",
};
let fieldTypes: Map<string, Map<string, string>> | undefined;

/** The PostgreSQL types of a model's columns, from the Prisma datamodel (as the migrations create them). */
function columnTypes(model: string, columns: string[]): string[] {
  fieldTypes ??= new Map(
    Object.entries(getDatamodel().datamodel.models).map(([name, m]) => [
      name,
      new Map(m.fields.filter((f) => f.kind === "scalar").map((f) => [f.name, f.type])),
    ]),
  );
  return columns.map((c) => {
    const type = PG_TYPES[fieldTypes!.get(model)?.get(c) ?? ""];
    if (!type) throw new Error(`insertRows(${model}): no PostgreSQL type known for column ${c}`);
    return type;
  });
}

/** A value bound as Prisma stores it in that dialect (dates, booleans, bigints). */
export function sqlValue(v: unknown, dialect: Dialect): unknown {
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
 * rows written, recognised by their `identity` columns.
 */
export async function insertRows(
  db: RawClient,
  dialect: Dialect,
  model: string,
  rows: Row[],
  opts: { skipDuplicates?: boolean; identity?: string[] } = {},
): Promise<{ count: number; inserted: Row[] }> {
  if (!rows.length) return { count: 0, inserted: [] };
  const columns = Object.keys(rows[0]!);
  if (!rows.every((r) => Object.keys(r).length === columns.length && columns.every((c) => c in r))) {
    throw new Error(`insertRows(${model}): every row needs the same columns`);
  }
  const identity = opts.identity ?? columns;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const head = `INSERT INTO "${model}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES `;
  const tail = opts.skipDuplicates ? ` ON CONFLICT DO NOTHING RETURNING ${identity.map((c) => `"${c}"`).join(", ")}` : "";
  const keyOf = (r: Row) => identity.map((c) => String(r[c])).join("\u0000");
  const inserted: Row[] = [];
  if (dialect === "postgres") {
    // One array per column (`unnest`): a statement costs a handful of parameters instead of one
    // per value, which PostgreSQL parses and plans much faster (a 30,000-row insert: ~3x).
    const types = columnTypes(model, columns);
    const sql = `INSERT INTO "${model}" (${columns.map((c) => `"${c}"`).join(", ")}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(", ")})`;
    for (let i = 0; i < rows.length; i += PG_ROWS) {
      const chunk = rows.slice(i, i + PG_ROWS);
      const arrays = columns.map((c) => chunk.map((r) => sqlValue(r[c], dialect)));
      if (!opts.skipDuplicates) {
        await db.$executeRawUnsafe(sql, ...arrays);
        inserted.push(...chunk);
        continue;
      }
      const written = new Set(((await db.$queryRawUnsafe(sql + tail, ...arrays)) as Row[]).map(keyOf));
      inserted.push(...chunk.filter((r) => written.has(keyOf(r))));
    }
    return { count: inserted.length, inserted };
  }
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const params: unknown[] = [];
    const placeholder = (value: unknown) => {
      params.push(sqlValue(value, dialect));
      return dialect === "sqlite" ? "?" : `$${params.length}`;
    };
    const tuples = chunk.map((r) => `(${columns.map((c) => placeholder(r[c])).join(", ")})`);
    if (!opts.skipDuplicates) {
      await db.$executeRawUnsafe(head + tuples.join(", "), ...params);
      inserted.push(...chunk);
      continue;
    }
    const written = new Set(((await db.$queryRawUnsafe(head + tuples.join(", ") + tail, ...params)) as Row[]).map(keyOf));
    inserted.push(...chunk.filter((r) => written.has(keyOf(r))));
  }
  return { count: inserted.length, inserted };
}
