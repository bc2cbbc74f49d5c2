// Per-item results of bulk mutations. Every item of a request gets exactly one result, carrying
// its position, the HTTP-style status of its outcome and, on failure, the reasons. The REST layer
// folds these into 200/201/204/207 responses (src/rest/responses.ts).
import { z } from "zod";
import { type Tx, withTransaction } from "../db/index.js";
import { lockRows } from "../db/locks.js";
import { builder } from "./builder.js";

export interface ItemResult<T = unknown> {
  index: number;
  statusCode: number;
  id: string | null;
  errors: string[];
  record?: T | null;
}

export const MAX_BULK_ITEMS = 10_000;

/** Validation of a bulk argument: 1 to MAX_BULK_ITEMS items. */
export const bulkArg = {
  schema: z.array(z.any()).min(1, "must hold at least one item").max(MAX_BULK_ITEMS, `must hold at most ${MAX_BULK_ITEMS} items`),
} as const;

export const ItemResultInterface = builder.interfaceRef<ItemResult>("ItemResult").implement({
  description: "The outcome of one item of a bulk request.",
  fields: (t) => ({
    index: t.exposeInt("index", { description: "Position of the item in the request." }),
    statusCode: t.exposeInt("statusCode", { description: "201 created, 200 updated, 204 deleted, or the 4xx of the failure." }),
    id: t.exposeString("id", { nullable: true }),
    errors: t.exposeStringList("errors"),
    ok: t.boolean({ resolve: (r) => r.statusCode < 300 }),
  }),
});

export const DeleteResult = builder.objectRef<ItemResult>("DeleteResult").implement({
  interfaces: [ItemResultInterface],
  isTypeOf: () => true,
  fields: () => ({}),
});

/** A `{ results: [...] }` payload type for a bulk mutation. */
export function payloadType<T>(
  name: string,
  result: Parameters<typeof builder.objectRef<T>>[0] extends string ? import("@pothos/core").ObjectRef<any, T> : never,
) {
  return builder.objectRef<{ results: T[] }>(name).implement({
    fields: (t) => ({ results: t.field({ type: [result], resolve: (p) => p.results }) }),
  });
}

export const DeletePayload = payloadType<ItemResult>("DeletePayload", DeleteResult);

export const fail = (index: number, statusCode: number, errors: string[], id: string | null = null): ItemResult<never> => ({
  index,
  statusCode,
  id,
  errors,
});

/** Index of a value's first occurrence, to flag repeats in one request. */
export function firstOccurrences<T>(values: readonly T[]): Map<T, number> {
  const seen = new Map<T, number>();
  values.forEach((v, i) => {
    if (!seen.has(v)) seen.set(v, i);
  });
  return seen;
}

/**
 * The index of the earlier item of a request naming what the item at `index` names (`keys`: what
 * each item names, null for an item naming nothing, as a malformed one), or undefined.
 */
export function repeatsOf<T>(keys: readonly (T | null)[]): (index: number) => number | undefined {
  const first = firstOccurrences(keys);
  return (index) => {
    const key = keys[index] ?? null;
    const at = key === null ? undefined : first.get(key);
    return at !== undefined && at !== index ? at : undefined;
  };
}

/**
 * The 400 of an entry of a delete's list naming what the entry at `earlier` named: the record is
 * deleted (and audited) once, by the earlier entry, and every entry has one outcome of its own
 * (never a second 204 for one deletion).
 */
export const repeatedEntry = (entries: readonly string[], index: number, earlier: number): ItemResult<never> =>
  fail(index, 400, [`${entries[index]} appears more than once in this request (index ${earlier}: ${entries[earlier]})`], entries[index]!);

/**
 * A name the comma-separated path lists of deletes can carry: no comma, and no white space at either
 * end (the lists trim their entries, as `a, b` is written): ` u ` could be stored and then never
 * named again, so an end user so created could never be erased. Nor `.` or `..`: as a path segment
 * of its own (`/endUsers/.`), every URL parser (browsers, fetch, curl) removes it before sending.
 */
export function checkListSafeName(value: string, what: string): string | null {
  if (value.includes(",")) return `${what} must not contain a comma`;
  if (value.trim() !== value) return `${what} must not begin or end with white space`;
  if (value === "." || value === "..") return `${what} must not be "." or ".." (a URL cannot name it as a path segment)`;
  return null;
}

/**
 * Size of the slices `IN` lookups and writes of a bulk request run over. Prisma splits an `IN`
 * list only when the rest of the statement is small, which `accountId = ? AND id IN (...)` is not;
 * slices keep every statement well below the bind-variable limits (SQLite 32,766 as declared in
 * src/db/index.ts, PostgreSQL 65,535), even with two lists in one statement.
 */
export const IN_CHUNK = 2_000;

export const chunksOf = <T>(list: readonly T[], size = IN_CHUNK): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
};

/** `run` over consecutive slices of `values`, results concatenated (sequential: one transaction may hold them). */
export async function inChunks<V, T>(values: Iterable<V>, run: (chunk: V[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (const chunk of chunksOf([...values])) out.push(...(await run(chunk)));
  return out;
}

/**
 * A bulk delete by natural keys (ids, names): in one audited transaction, locks the account's rows
 * with those keys (`target`: table and key column), finds them, deletes them, and answers 204 for
 * each key found and 404 (`missing(key)`) for the others, 400 for a key an earlier one repeats. Finding inside the transaction, after the
 * lock, means a key reported deleted was deleted by this request. `target.before`: a lock the
 * delete takes first, before its rows (an erasure's event-order lock).
 */
export async function deleteByKeys(
  keys: string[],
  target: { table: string; column: string; accountId: string; before?: (tx: Tx) => Promise<void> },
  find: (db: Tx, chunk: string[]) => Promise<{ key: string; id: string }[]>,
  remove: (tx: Tx, ids: string[]) => Promise<unknown>,
  missing: (key: string) => string,
  /** what a success reports as `id`: the record's id, or the key it was asked for (end users' own ids) */
  report: "id" | "key" = "id",
): Promise<{ results: ItemResult[] }> {
  const repeatOf = repeatsOf(keys);
  const found = await withTransaction(async (tx) => {
    await target.before?.(tx);
    await lockRows(tx, target.table, target.column, keys, { accountId: target.accountId, mode: "delete" });
    const found = new Map((await inChunks(new Set(keys), (chunk) => find(tx, chunk))).map((r) => [r.key, r.id]));
    for (const ids of chunksOf([...new Set(found.values())])) await remove(tx, ids);
    return found;
  });
  return {
    results: keys.map((key, index) => {
      const earlier = repeatOf(index);
      if (earlier !== undefined) return repeatedEntry(keys, index, earlier);
      const id = found.get(key);
      return id ? { index, statusCode: 204, id: report === "id" ? id : key, errors: [] } : fail(index, 404, [missing(key)], key);
    }),
  };
}

// ---- turns ------------------------------------------------------------------------------------------
// graphql-js completes a list of plain values in one synchronous pass: the 10,000 results of a bulk
// write (each with its record) held the event loop for ~0.5 s, and /healthz waited. The records of
// item results are handed out in turns of TURN_SIZE: turn k resolves after k event-loop turns
// (setImmediate, one after another), so requests arriving meanwhile are served between turns.
const TURN_SIZE = 500;
const turns = new WeakMap<object, Promise<void>[]>();

/** `value` as the record of the item at `index` of this request's bulk result, in its turn. */
export function inTurn<T>(ctx: object, index: number, value: T): T | Promise<T> {
  const k = Math.floor(index / TURN_SIZE);
  if (k === 0) return value;
  let list = turns.get(ctx);
  if (!list) turns.set(ctx, (list = []));
  while (list.length < k) {
    const previous = list.at(-1) ?? Promise.resolve();
    list.push(previous.then(() => new Promise<void>((resolve) => setImmediate(resolve))));
  }
  return list[k - 1]!.then(() => value);
}
