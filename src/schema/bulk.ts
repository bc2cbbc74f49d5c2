// Per-item results of bulk mutations. Every item of a request gets exactly one result, carrying
// its position, the HTTP-style status of its outcome and, on failure, the reasons. The REST layer
// folds these into 200/201/204/207 responses (src/rest/responses.ts).
import { z } from "zod";
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
export function payloadType<T>(name: string, result: Parameters<typeof builder.objectRef<T>>[0] extends string ? import("@pothos/core").ObjectRef<any, T> : never) {
  return builder.objectRef<{ results: T[] }>(name).implement({
    fields: (t) => ({ results: t.field({ type: [result], resolve: (p) => p.results }) }),
  });
}

export const DeletePayload = payloadType<ItemResult>("DeletePayload", DeleteResult);

export const fail = (index: number, statusCode: number, errors: string[], id: string | null = null): ItemResult<never> => ({
  index, statusCode, id, errors,
});

/** Index of a value's first occurrence, to flag repeats in one request. */
export function firstOccurrences<T>(values: T[]): Map<T, number> {
  const seen = new Map<T, number>();
  values.forEach((v, i) => { if (!seen.has(v)) seen.set(v, i); });
  return seen;
}

/** Comma-separated path lists cannot carry names with commas. */
export function checkListSafeName(value: string, what: string): string | null {
  if (value.includes(",")) return `${what} must not contain a comma`;
  return null;
}

/**
 * Size of the slices account-scoped `IN` lookups of a bulk request run over. SQLite binds at most 999
 * values a statement, and Prisma splits an `IN` list only when the rest of the statement is small
 * enough, which `accountId = ? AND id IN (...)` of 999+ values is not (P2029, a 500 for a valid
 * 10,000-item request). Slices keep every statement well below the limit on both databases.
 */
export const IN_CHUNK = 500;

/** `run` over consecutive slices of `values`, results concatenated (sequential: one transaction may hold them). */
export async function inChunks<V, T>(values: Iterable<V>, run: (chunk: V[]) => Promise<T[]>): Promise<T[]> {
  const all = [...values];
  const out: T[] = [];
  for (let i = 0; i < all.length; i += IN_CHUNK) out.push(...(await run(all.slice(i, i + IN_CHUNK))));
  return out;
}
