// Ingestion order for the export cursor. Event ids are increasing, but on PostgreSQL two
// transactions take ids from the sequence and may commit in the other order: a reader that had
// paged past id 7 would never see a 6 committed after. A per-account advisory lock, taken first in
// the ingest transaction and held to commit, makes an account's ids commit in order; an export
// cursor (the last id read) then never skips an event. Erasing end users takes it too, before it
// reads whom to erase: an ingest and an erasure of the same account run one after the other, so no
// event of an erased end user keeps their id. SQLite has one writer: nothing to do.
//
// The same statement stands in for the foreign key "Event" does not have (checked per row, it cost
// a fifth of the insert): the account row is locked FOR KEY SHARE to commit, so it cannot be deleted
// under the insert, and a missing account inserts nothing.
import { dbKind, type Tx } from "../../db/index.js";
import { notFound } from "../../errors.js";

export async function lockEventOrder(tx: Tx, accountId: string): Promise<void> {
  const locked =
    dbKind() === "postgres"
      ? await tx.$queryRawUnsafe<unknown[]>(
          `SELECT pg_advisory_xact_lock(hashtext('guidegate.events:' || "id"))::text FROM "Account" WHERE "id" = $1 FOR KEY SHARE`,
          accountId,
        )
      : await tx.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM "Account" WHERE "id" = ?`, accountId);
  if (!locked.length) throw notFound(`account ${accountId} not found`);
}
