// Ingestion order for the export cursor. Event ids are increasing, but on PostgreSQL two
// transactions take ids from the sequence and may commit in the other order: a reader that had
// paged past id 7 would never see a 6 committed after. A per-account advisory lock, taken just
// before the events are inserted and held to commit, makes an account's ids commit in order; an
// export cursor (the last id read) then never skips an event. SQLite has one writer: nothing to do.
import { dbKind, type Tx } from "../../db/index.js";

export async function lockEventOrder(tx: Tx, accountId: string): Promise<void> {
  if (dbKind() !== "postgres") return;
  await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(hashtext('guidegate.events:' || $1))::text`, accountId);
}
