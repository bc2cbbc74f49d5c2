// Multi-row INSERTs for bulk writes of complete rows. Prisma's createMany costs ~50 µs per bound
// value in its query compiler: a 10,000-user upsert (60,000 value rows) spent most of its time
// there. For the models whose callers always give complete rows (their domain's `fastInsert`,
// src/domains/*/domain.ts), and for `skipDuplicates` (which Prisma lacks on SQLite), createMany
// runs as plain INSERTs, values converted as Prisma stores them. A failure is a Prisma raw-query error
// carrying the driver's kind: src/db/errors.ts reads it.

import { getDatamodel } from "../generated/pothos-types.js";
import { executeWithJson, queryWithJson, type RawClient } from "./adapterTransaction.js";

type Row = Record<string, unknown>;

export type Dialect = "sqlite" | "postgres";

/** Rows per statement of JSON rows or arrays (no bind limit; this bounds one statement's memory). */
const ROWS_PER_STATEMENT = 10_000;
const PG_TYPES: Record<string, string> = {
  String: "text",
  Int: "integer",
  Float: "double precision",
  Boolean: "boolean",
  DateTime: "timestamp(3)",
  BigInt: "bigint",
};
let fieldTypes: Map<string, Map<string, string>> | undefined;

/** A column's Prisma type (String, Int, DateTime, BigInt...), from the datamodel. */
function fieldType(model: string, column: string): string | undefined {
  fieldTypes ??= new Map(
    Object.entries(getDatamodel().datamodel.models).map(([name, m]) => [
      name,
      new Map(m.fields.filter((f) => f.kind === "scalar").map((f) => [f.name, f.type])),
    ]),
  );
  return fieldTypes.get(model)?.get(column);
}

/** Whether `model` has a scalar column `column` (the Prisma datamodel's). */
export const hasColumn = (model: string, column: string): boolean => fieldType(model, column) !== undefined;

let uniqueColumns: Map<string, Set<string>> | undefined;
/** Whether a value of `column` names one row of `model` within an account: its id, unique, or unique with "accountId". */
export function uniqueInAccount(model: string, column: string): boolean {
  // Built once (getDatamodel parses the whole datamodel's JSON on every call).
  uniqueColumns ??= new Map(
    Object.entries(getDatamodel().datamodel.models).map(([name, m]) => [
      name,
      new Set([
        ...m.fields.filter((f) => f.isId || f.isUnique).map((f) => f.name),
        ...m.uniqueIndexes.filter((u) => u.fields.length === 2 && u.fields.includes("accountId")).map((u) => u.fields.find((f) => f !== "accountId")!),
      ]),
    ]),
  );
  return uniqueColumns.get(model)?.has(column) ?? false;
}

let nowFields: Map<string, string[]> | undefined;
/**
 * The columns Prisma fills with the current time when a create leaves them out: `@updatedAt`, and
 * the DateTime columns with a default (every one of this schema's is `@default(now())`). Never the
 * database's default: on PostgreSQL `CURRENT_TIMESTAMP` into a zoneless `timestamp(3)` column is
 * the session time zone's wall clock (a server in Pacific/Chatham stored events received 13¾ hours
 * "later").
 */
function nowColumns(model: string): string[] {
  nowFields ??= new Map(
    Object.entries(getDatamodel().datamodel.models).map(([name, m]) => [
      name,
      m.fields.filter((f) => f.isUpdatedAt || (f.kind === "scalar" && f.type === "DateTime" && f.hasDefaultValue)).map((f) => f.name),
    ]),
  );
  return nowFields.get(model) ?? [];
}

/** The PostgreSQL types of a model's columns, from the Prisma datamodel (as the migrations create them). */
function columnTypes(model: string, columns: string[]): string[] {
  return columns.map((c) => {
    const type = PG_TYPES[fieldType(model, c) ?? ""];
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

/**
 * Whether every row has exactly the first row's own keys, in any order. Without an array per row:
 * a bulk write checks its 50,000 value rows more than once, and sorting and joining each row's
 * keys to compare them allocated ~180 MB of a 10,000-user create's ~750 MB (a quarter of what its
 * collector then had to scavenge).
 */
export function sameColumns(rows: readonly Row[]): boolean {
  const first = rows[0];
  if (!first) return true;
  const count = Object.keys(first).length;
  for (let i = 1; i < rows.length; i++) if (!sameKeys(first, count, rows[i]!)) return false;
  return true;
}

/** Whether `r` has exactly the own keys of `first` (which has `count` of them), in any order. */
function sameKeys(first: Row, count: number, r: Row): boolean {
  let n = 0;
  for (const k in r) {
    if (!Object.hasOwn(r, k)) continue;
    if (!Object.hasOwn(first, k)) return false;
    n++;
  }
  return n === count;
}

/**
 * INSERTs `rows` (all with the same columns) into `model`, 10,000 rows a statement, as one JSON
 * parameter. With `skipDuplicates`, rows that collide with a unique key (a concurrent insert of the
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
  // The current time where Prisma would give it (nowColumns), not a database default.
  const missing = nowColumns(model).filter((c) => !(c in rows[0]!));
  if (missing.length) {
    const now = new Date();
    rows = rows.map((r) => ({ ...r, ...Object.fromEntries(missing.map((c) => [c, now])) }));
  }
  const columns = Object.keys(rows[0]!);
  if (!sameColumns(rows)) throw new Error(`insertRows(${model}): every row needs the same columns`);
  const identity = opts.identity ?? columns;
  const tail = opts.onConflict
    ? ` ${opts.onConflict}`
    : opts.skipDuplicates
      ? ` ON CONFLICT DO NOTHING RETURNING ${identity.map((c) => `"${c}"`).join(", ")}`
      : "";
  const keyOf = (r: Row) => identity.map((c) => String(r[c])).join("\u0000");
  const inserted: Row[] = [];
  const names = columns.map((c) => `"${c}"`).join(", ");
  // (`WHERE true`: SQLite's grammar needs it between a SELECT and an ON CONFLICT clause.)
  const sql = `INSERT INTO "${model}" (${names}) SELECT ${names} FROM ${jsonRowsFrom(dialect, model, columns, "r")} WHERE true${tail}`;
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
    const json = rowsJson(dialect, model, columns, chunk);
    if (!opts.skipDuplicates) {
      await executeWithJson(db, sql, json);
      inserted.push(...chunk);
      continue;
    }
    const written = new Set((await queryWithJson(db, sql, json)).map(keyOf));
    inserted.push(...chunk.filter((r) => written.has(keyOf(r))));
  }
  return { count: inserted.length, inserted };
}

// Bulk writes send a statement's rows as one JSON parameter, read back as a table in the statement.
// PostgreSQL (`json_to_recordset`): a statement costs one parameter instead of one per value, which
// PostgreSQL parses and plans much faster (a 30,000-row insert: ~3x), and JSON.stringify encodes
// 10,000 rows in ~20 ms where the driver's array encoding of the same values as one array per
// column (`unnest`) took ~100. SQLite (`json_each`, each row an array read by position, typed by
// the column's affinity as a bound value would be): Prisma's raw-query path and the driver handled
// each of up to 30,000 bound values a statement, about a fifth of a 10,000-user create with the
// garbage they left, and a VALUES list's length made a new SQL text for every chunk size. Text that
// JSON cannot carry (NUL, unpaired surrogates) is refused at the REST, GraphQL and Segment
// boundaries (src/text.ts).

/** The FROM item (named `alias`) that reads `columns` of rows sent as rowsJson's parameter. */
function jsonRowsFrom(dialect: Dialect, model: string, columns: string[], alias: string): string {
  if (dialect === "sqlite") return `(SELECT ${columns.map((c, i) => `value ->> ${i} AS "${c}"`).join(", ")} FROM json_each(?)) AS ${alias}`;
  const record = columnTypes(model, columns)
    .map((t, i) => `"${columns[i]}" ${t}`)
    .join(", ");
  return `json_to_recordset($1::json) AS ${alias}(${record})`;
}

/**
 * One statement's rows (each with exactly `columns`) as its JSON parameter. PostgreSQL: the rows
 * themselves (JSON.stringify writes dates as the ISO text Prisma stores); JSON has no bigint, so
 * those columns go as decimal text, on copies of the rows, and JSON.stringify runs without a
 * replacer (a call per key and value: 140 ms of a 10,000-user create's 50,000 value rows, which
 * have no bigint column at all). SQLite: arrays of the values as Prisma stores them there.
 */
function rowsJson(dialect: Dialect, model: string, columns: string[], chunk: Row[]): string {
  if (dialect === "sqlite") return JSON.stringify(chunk.map((r) => columns.map((c) => sqlValue(r[c], dialect))));
  const bigints = columns.filter((c) => fieldType(model, c) === "BigInt");
  if (!bigints.length || !chunk.some((r) => bigints.some((c) => typeof r[c] === "bigint"))) return JSON.stringify(chunk);
  return JSON.stringify(
    chunk.map((r) => {
      const copy = { ...r };
      for (const c of bigints) if (typeof copy[c] === "bigint") copy[c] = String(copy[c]);
      return copy;
    }),
  );
}

/**
 * UPDATEs rows of `model`, each with its own values, matched on the `match` columns: one statement
 * per group of rows that set the same columns (and per 10,000 rows), joining the table to the list
 * of values (`UPDATE ... FROM`, the list one JSON parameter). Returns how many rows changed.
 */
export async function updateRows(db: RawClient, dialect: Dialect, model: string, match: string[], rows: Row[]): Promise<number> {
  const groups = new Map<string, Row[]>();
  // A row with the previous row's columns joins its group without sorting its keys into a new
  // key (an array and a string per row of 10,000): a bulk write's rows mostly set the same columns.
  let previous: { row: Row; count: number; list: Row[] } | undefined;
  for (const r of rows) {
    if (previous && sameKeys(previous.row, previous.count, r)) {
      previous.list.push(r);
      continue;
    }
    const own = Object.keys(r);
    const key = own
      .filter((c) => !match.includes(c))
      .sort()
      .join("\u0000");
    let list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, (list = [r]));
    previous = { row: r, count: own.length, list };
  }
  let changed = 0;
  for (const [key, group] of groups) {
    const set = key.split("\u0000").filter(Boolean);
    if (!set.length) continue;
    const columns = [...match, ...set];
    const q = (c: string) => `"${c}"`;
    const target = dialect === "postgres" ? `${q(model)} AS t` : q(model);
    const t = dialect === "postgres" ? "t" : q(model);
    const sql = `UPDATE ${target} SET ${set.map((c) => `${q(c)} = v.${q(c)}`).join(", ")} FROM ${jsonRowsFrom(dialect, model, columns, "v")} WHERE ${match
      .map((c) => `${t}.${q(c)} = v.${q(c)}`)
      .join(" AND ")}`;
    for (let i = 0; i < group.length; i += ROWS_PER_STATEMENT) {
      changed += await executeWithJson(db, sql, rowsJson(dialect, model, columns, group.slice(i, i + ROWS_PER_STATEMENT)));
    }
  }
  return changed;
}

type RawTx = { $executeRawUnsafe(sql: string, ...params: unknown[]): Promise<number> };

/**
 * A keyed list of (key → value) pairs to join an UPDATE against, as the SQL of a FROM item with
 * columns `k` and `v`, for any number of pairs in a fixed number of statements. PostgreSQL reads
 * them from one JSON parameter (a hash join). SQLite gets them in a temporary table with `k` as its
 * primary key, filled from one JSON parameter: a JSON subquery has no index, and joining a table
 * that has none on its side (events by end user) would compare every row with every pair.
 * `$1` in the returned SQL is the JSON parameter on PostgreSQL (pass `params` first).
 */
export async function keyValuePairs(tx: RawTx, dialect: Dialect, pairs: readonly (readonly [string, string])[]): Promise<{ from: string; params: unknown[] }> {
  const json = JSON.stringify(pairs);
  if (dialect === "postgres") return { from: "(SELECT value->>0 AS k, value->>1 AS v FROM jsonb_array_elements($1::jsonb))", params: [json] };
  await tx.$executeRawUnsafe('CREATE TEMP TABLE IF NOT EXISTS "gg_pairs" ("k" TEXT PRIMARY KEY, "v" TEXT NOT NULL)');
  await tx.$executeRawUnsafe('DELETE FROM temp."gg_pairs"');
  await tx.$executeRawUnsafe('INSERT OR REPLACE INTO temp."gg_pairs" ("k", "v") SELECT value->>0, value->>1 FROM json_each(?)', json);
  return { from: 'temp."gg_pairs"', params: [] };
}

// ---- simple filters --------------------------------------------------------------------------------
// Bulk writes also read and delete by lists of ids (`{ endUserId: { in: ids }, field: { in: names } }`,
// chunk after chunk). Through Prisma's client each such call copies its arguments (query extensions
// deep-clone them) and builds a query of thousands of values: about a fifth of the garbage of a
// 10,000-user update. These take the whole list as one JSON parameter instead.

/**
 * A Prisma `where` that only compares String columns of `model` with a string (`col: "x"`) or a
 * list of strings (`col: { in: [...] }`), as SQL conditions on the table reading one JSON parameter
 * (the `where` with its lists flattened), named `uses` times; null for any other shape: the caller
 * goes through Prisma then.
 */
function simpleWhere(dialect: Dialect, model: string, where: unknown): { conditions: string; json: string; uses: number } | null {
  if (!where || typeof where !== "object" || Array.isArray(where)) return null;
  const conditions: string[] = [];
  const flat: Record<string, string | string[]> = {};
  const param = dialect === "postgres" ? "$1::json" : "?";
  for (const [column, test] of Object.entries(where as Row)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(column) || fieldType(model, column) !== "String") return null;
    if (typeof test === "string") {
      conditions.push(`"${column}" = (${param} ->> ${dialect === "postgres" ? `'${column}'` : `'$.${column}'`})`);
      flat[column] = test;
    } else if (test && typeof test === "object" && !Array.isArray(test) && Object.keys(test).length === 1 && Array.isArray((test as { in?: unknown }).in)) {
      const list = (test as { in: unknown[] }).in;
      if (!list.every((v) => typeof v === "string")) return null;
      conditions.push(
        dialect === "postgres"
          ? `"${column}" IN (SELECT json_array_elements_text(${param} -> '${column}'))`
          : `"${column}" IN (SELECT value FROM json_each(${param}, '$.${column}'))`,
      );
      flat[column] = list as string[];
    } else return null;
  }
  if (!conditions.length) return null;
  return { conditions: conditions.join(" AND "), json: JSON.stringify(flat), uses: dialect === "postgres" ? 1 : conditions.length };
}

/** `deleteMany({ where })` of a simple where (simpleWhere) in one statement; null for another shape. */
export async function deleteWhere(db: RawClient, dialect: Dialect, model: string, where: unknown): Promise<number | null> {
  const w = simpleWhere(dialect, model, where);
  return w ? executeWithJson(db, `DELETE FROM "${model}" WHERE ${w.conditions}`, w.json, w.uses) : null;
}

/**
 * `findMany({ where, select })` of a simple where (simpleWhere), `columns` of each row, in one
 * statement; null for another shape. Values as the driver gives them on the adapter's path
 * (queryWithJson: PostgreSQL's bigint as text): for String and Int columns they are Prisma's.
 */
export async function selectWhere(
  db: RawClient,
  dialect: Dialect,
  model: string,
  columns: readonly string[],
  where: unknown,
  /** PostgreSQL row locks (src/db/locks.ts lockRows): the rows locked in the order of `orderBy` */
  lock?: { orderBy: readonly string[]; mode: "FOR UPDATE" | "FOR NO KEY UPDATE" },
): Promise<Row[] | null> {
  const w = simpleWhere(dialect, model, where);
  if (!w) return null;
  const tail = lock ? ` ORDER BY ${lock.orderBy.map((c) => `"${c}"`).join(", ")} ${lock.mode}` : "";
  return queryWithJson(db, `SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${model}" WHERE ${w.conditions}${tail}`, w.json, w.uses);
}
