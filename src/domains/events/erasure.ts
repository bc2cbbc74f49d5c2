// Erasure of an end user from the engagement data. Their events are kept, anonymised, rather than
// deleted, so that every report's totals and distinct-user counts stay what they were: each erased
// user's events move to one random pseudonym (`erased_…`, linked to nothing, the same for all of
// that user's events), and what could name them or carry their words goes: `userName` and the
// feedback `comment`. The latest-name cache (EventUserName) loses their row.
import { randomBytes } from "node:crypto";
import { dbKind, type Tx } from "../../db/index.js";
import { keyValuePairs } from "../../db/insert.js";

/** What every pseudonym of an erased end user begins with; reserved: no end-user id written by a client may begin with it. */
export const PSEUDONYM_PREFIX = "erased_";

/** A fresh pseudonym for an erased end user: random, so it cannot be traced back to the person. */
export const newPseudonym = (): string => `${PSEUDONYM_PREFIX}${randomBytes(12).toString("base64url")}`;

/**
 * Why an end-user id a client sends (named `what` in the message) cannot be written, or null. The
 * pseudonym prefix is reserved: an event, a Segment call or an end-user write naming `erased_…`
 * would attach a name, values or new events to an erased person's pseudonym (or to an end user no
 * one could tell from one), undoing the anonymisation in the reports.
 */
export function reservedEndUserIdProblem(id: string, what: string): string | null {
  return id.startsWith(PSEUDONYM_PREFIX)
    ? `${what} must not begin with '${PSEUDONYM_PREFIX}': that prefix is reserved for the pseudonyms of erased end users`
    : null;
}

export interface ErasedUser {
  /** the end user's id as events carry it (the account's identification method) */
  endUserId: string;
  pseudonym: string;
}

/** Anonymises the events of `users` in one statement, whatever their number; returns how many events changed. */
export async function anonymiseEvents(tx: Tx, accountId: string, users: readonly ErasedUser[]): Promise<number> {
  if (!users.length) return 0;
  const dialect = dbKind();
  const pairs = await keyValuePairs(
    tx,
    dialect,
    users.map((u) => [u.endUserId, u.pseudonym] as const),
  );
  const sql =
    dialect === "postgres"
      ? `UPDATE "Event" e SET "endUserId" = m.v, "userName" = NULL, "comment" = NULL FROM ${pairs.from} m WHERE e."accountId" = $2 AND e."endUserId" = m.k`
      : `UPDATE "Event" SET "endUserId" = m.v, "userName" = NULL, "comment" = NULL FROM ${pairs.from} AS m WHERE "Event"."accountId" = ? AND "Event"."endUserId" = m.k`;
  const changed = await tx.$executeRawUnsafe(sql, ...pairs.params, accountId);
  await tx.eventUserName.deleteMany({ where: { accountId, endUserId: { in: users.map((u) => u.endUserId) } } });
  return changed;
}
