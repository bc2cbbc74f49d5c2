// Idempotent ingestion: a Segment call's `messageId` or a `POST /events` item's `id` is stored once
// per account (IngestMessage, unique on (accountId, messageId)), in the transaction that stores
// what it came with. A retried batch finds its ids taken and stores nothing again, whichever
// instance receives it: on PostgreSQL the second inserter of an id waits for the first to commit
// (the unique index) and then skips it (ON CONFLICT DO NOTHING). Only calls that store something
// (events, end-user upserts) keep a key: see src/ingest/store.ts. Expired keys are pruned in bounded
// batches by src/ingest/prune.ts, once an hour across instances.
import { clock } from "../clock.js";
import { dbKind, type Tx, withTransaction } from "../db/index.js";
import { insertRows } from "../db/insert.js";
import { longerThan } from "../text.js";

/** How long an id is remembered: the contract promises at least 7 days; a day more covers clock and cleanup lag. */
export const MESSAGE_RETENTION_MS = 8 * 24 * 3600_000;
/**
 * Segment's messageIds are UUIDs (36) or `ajs-next-<32 hex>`-like (41): 100 leaves room for other
 * clients' schemes while a key stays small (it is indexed and kept 8 days). Longer: a per-call rejection.
 */
export const MESSAGE_ID_MAX = 100;
/** Rows a prune statement deletes at most: each DELETE (and its transaction) stays short. */
export const PRUNE_BATCH = 5_000;

/** A per-item problem with an idempotency key, or null when it is fine (absent or a usable string). */
export function messageIdProblem(id: unknown, name: string): string | null {
  if (id === undefined || id === null) return null;
  if (typeof id !== "string" || id.trim() === "") return `${name} must be a non-empty string`;
  if (longerThan(id, MESSAGE_ID_MAX)) return `${name} must be at most ${MESSAGE_ID_MAX} characters`;
  return null;
}

/**
 * Claims `ids` (some may be null: no key) for `accountId` inside `tx`. Answers, per position, whether
 * that item is new (store it) or a duplicate (an id seen before, in an earlier request or earlier
 * in this one). Keep this the first write of the ingest transaction's event step: what it
 * refuses must not be stored.
 */
export async function claimMessages(tx: Tx, accountId: string, ids: readonly (string | null)[]): Promise<boolean[]> {
  const fresh = ids.map(() => true);
  const firstAt = new Map<string, number>();
  ids.forEach((id, i) => {
    if (id === null) return;
    if (firstAt.has(id)) fresh[i] = false;
    else firstAt.set(id, i);
  });
  if (!firstAt.size) return fresh;
  const receivedAt = clock.now();
  // Sorted: two transactions claiming overlapping ids on PostgreSQL take the index entries in the same order (no deadlock).
  const rows = [...firstAt.keys()].sort().map((messageId) => ({ accountId, messageId, receivedAt }));
  const { inserted } = await insertRows(tx, dbKind(), "IngestMessage", rows, { skipDuplicates: true, identity: ["messageId"] });
  const taken = new Set(inserted.map((r) => r.messageId as string));
  for (const [id, i] of firstAt) if (!taken.has(id)) fresh[i] = false;
  return fresh;
}

/**
 * Deletes ids older than the retention, `batchSize` rows a statement (each in its own transaction,
 * so no statement holds locks or SQLite's one writer for long) until fewer than a batch are left.
 * Returns how many were deleted. Runs from src/ingest/prune.ts; harmless anywhere.
 */
export async function pruneMessages(now = clock.now(), opts: { batchSize?: number } = {}): Promise<number> {
  const before = new Date(now.getTime() - MESSAGE_RETENTION_MS);
  const batch = opts.batchSize ?? PRUNE_BATCH;
  if (!Number.isInteger(batch) || batch < 1) throw new Error(`batchSize must be a positive integer, not ${batch}`);
  const p = dbKind() === "postgres" ? "$1" : "?";
  // The batch is a literal (an integer checked above): the statement shows its bound.
  const sql =
    `DELETE FROM "IngestMessage" WHERE ("accountId", "messageId") IN ` +
    `(SELECT "accountId", "messageId" FROM "IngestMessage" WHERE "receivedAt" < ${p} LIMIT ${batch})`;
  let deleted = 0;
  for (;;) {
    const n = await withTransaction((tx) => tx.$executeRawUnsafe(sql, before));
    deleted += n;
    if (n < batch) return deleted;
  }
}
