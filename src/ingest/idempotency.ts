// Idempotent ingestion: a Segment call's `messageId` or a `POST /events` item's `id` is stored once
// per account (IngestMessage, unique on (accountId, messageId)), in the transaction that stores
// what it came with. A retried batch finds its ids taken and stores nothing again, whichever
// instance receives it: on PostgreSQL the second inserter of an id waits for the first to commit
// (the unique index) and then skips it (ON CONFLICT DO NOTHING).
import { clock } from "../clock.js";
import { dbKind, type Tx, withTransaction } from "../db/index.js";
import { insertRows } from "../db/insert.js";

/** How long an id is remembered: the contract promises at least 7 days; a day more covers clock and cleanup lag. */
export const MESSAGE_RETENTION_MS = 8 * 24 * 3600_000;
export const MESSAGE_ID_MAX = 256;

/** A per-item problem with an idempotency key, or null when it is fine (absent or a usable string). */
export function messageIdProblem(id: unknown, name: string): string | null {
  if (id === undefined || id === null) return null;
  if (typeof id !== "string" || id.trim() === "") return `${name} must be a non-empty string`;
  if (id.length > MESSAGE_ID_MAX) return `${name} must be at most ${MESSAGE_ID_MAX} characters`;
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

/** Deletes ids older than the retention (run periodically by the webhook worker; harmless anywhere). */
export async function pruneMessages(now = clock.now()): Promise<number> {
  const before = new Date(now.getTime() - MESSAGE_RETENTION_MS);
  return withTransaction(async (tx) => (await tx.ingestMessage.deleteMany({ where: { receivedAt: { lt: before } } })).count);
}
