// Engagement events from the parent application (POST /events, the recordEvents mutation): each
// item checked alone, the valid ones stored in one transaction as multi-row INSERTs, their end
// users created on first sight (audited, as any end-user creation) and the latest userName kept.
import { createRows } from "../../audit/recorder.js";
import { clock } from "../../clock.js";
import { dbKind, withTransaction } from "../../db/index.js";
import { insertRows } from "../../db/insert.js";
import type { Prisma } from "../../generated/sqlite/client.js";
import { newId } from "../../ids.js";
import { claimMessages, messageIdProblem } from "../../ingest/idempotency.js";
import { builder } from "../../schema/builder.js";
import { bulkArg, chunksOf, fail, type ItemResult, ItemResultInterface, payloadType } from "../../schema/bulk.js";
import { requireAccount } from "../accounts/schema.js";
import { lockEventOrder } from "../eventExport/order.js";
import { emitEngagementEvents } from "../webhooks/emit.js";
import { checkEvent, type EventRow } from "./validate.js";

/** Per-item status of a stored event: accepted (the request answers 202 when all are). */
export const STORED = 202;

builder.scalarType("EngagementEvent", {
  description:
    "An engagement event: {type, time (epoch ms), endUserId, flowId, contentId, widget, step, searchTerm, resultCount, useful, comment, actionId, domain, userName}; " +
    "the fields each type needs are checked per item (a bad item fails alone, with its index).",
  serialize: (value) => value,
  parseValue: (value) => value,
});

/** An item's outcome; `duplicate`: its idempotency key was seen before, so it was not stored again. */
export type EventItemResult = ItemResult & { duplicate?: boolean };

/**
 * Stores the valid events of `items` and answers one result per item: 202 stored, 400 with the
 * reasons. One transaction, under the account's event-order lock: end users first seen here are
 * created (audited), the events inserted (PostgreSQL: one statement, the rows as one JSON parameter;
 * SQLite: ~2,000 rows a statement), the latest userName per end user upserted. The rollup worker counts the events a moment later.
 * An item's optional `id` (or `messageIds[index]`, given by the Segment ingest) is its idempotency key;
 * `fieldNames[index]`, what the caller calls each of the item's fields (given by the Segment ingest),
 * names them in the item's errors.
 */
export async function recordEvents(
  accountId: string,
  items: unknown[],
  opts: { messageIds?: readonly (string | null)[]; fieldNames?: readonly Readonly<Record<string, string>>[] } = {},
): Promise<EventItemResult[]> {
  const now = clock.now().getTime();
  const rows: EventRow[] = [];
  const keys: (string | null)[] = [];
  const rowIndex: number[] = [];
  const results: EventItemResult[] = items.map((item, index) => {
    let messageId = opts.messageIds?.[index] ?? null;
    let body = item;
    if (!opts.messageIds && item !== null && typeof item === "object" && !Array.isArray(item) && "id" in item) {
      const { id, ...event } = item as Record<string, unknown>;
      const problem = messageIdProblem(id, "id");
      if (problem) return fail(index, 400, [problem]);
      messageId = (id as string | null) ?? null;
      body = event;
    }
    const checked = checkEvent(accountId, body, now, opts.fieldNames?.[index]);
    if ("problems" in checked) return fail(index, 400, checked.problems);
    rows.push(checked.row);
    keys.push(messageId);
    rowIndex.push(index);
    return { index, statusCode: STORED, id: null, errors: [] };
  });
  if (!rows.length) return results;
  let fresh: boolean[] = [];
  const dialect = dbKind();
  await withTransaction(
    async (tx) => {
      // The account's event-order lock first, held to commit: ids then commit in order per account,
      // so an export cursor never passes a later-committed event and the rollup watermark never
      // passes an event still to commit. Erasure takes it too, before it reads whom to erase
      // (src/domains/endUsers/schema.ts): taken before the end users are looked up, an erasure runs
      // wholly before this request (whose lookup then no longer finds the erased users, and creates
      // anew those its events name) or wholly after it (and anonymises these events with the rest).
      await lockEventOrder(tx, accountId);
      // Idempotency next: items whose key was seen before are not stored again
      // (src/ingest/idempotency.ts), and change nothing else either: a repeat must not bring back
      // an end user (or their name) erased since the first delivery.
      fresh = await claimMessages(tx, accountId, keys);
      const stored = rows.filter((_, i) => fresh[i]);
      const { userIds, names } = endUsersOf(stored);
      // End users on first sight, through the end users' own table (and its audit entries).
      const existing = new Set<string>();
      if (dialect === "postgres" && userIds.length) {
        // One statement with one array parameter, not an IN list of thousands of placeholders.
        const found = await tx.$queryRawUnsafe<{ externalId: string }[]>(
          `SELECT "externalId" FROM "EndUser" WHERE "accountId" = $1 AND "externalId" = ANY($2::text[])`,
          accountId,
          userIds,
        );
        for (const u of found) existing.add(u.externalId);
      } else {
        for (const part of chunksOf(userIds)) {
          for (const u of await tx.endUser.findMany({ where: { accountId, externalId: { in: part } }, select: { externalId: true } }))
            existing.add(u.externalId);
        }
      }
      const at = new Date(now);
      const created: Prisma.EndUserCreateManyInput[] = userIds
        .filter((id) => !existing.has(id))
        .map((externalId) => ({ id: newId("u"), accountId, externalId, createdAt: at, updatedAt: at }));
      // A concurrent request creating the same user is fine: the user exists either way.
      await createRows("EndUser", created, { skipDuplicates: true });
      await insertRows(tx, dialect, "Event", stored as unknown as Record<string, unknown>[]);
      // The reports' rollups are not written here: the rollup worker counts these events from the
      // table a moment later (src/domains/reports/rollupWorker.ts), and reports read them raw until then.
      await emitEngagementEvents(tx, accountId, stored);
      if (names.size) {
        await insertRows(
          tx,
          dialect,
          "EventUserName",
          [...names].map(([endUserId, n]) => ({ accountId, endUserId, userName: n.userName, time: n.time })),
          {
            onConflict:
              'ON CONFLICT ("accountId", "endUserId") DO UPDATE SET "userName" = excluded."userName", "time" = excluded."time" WHERE excluded."time" >= "EventUserName"."time"',
          },
        );
      }
    },
    { timeout: 300_000, maxWait: 10_000 },
  );
  fresh.forEach((isNew, i) => {
    if (!isNew) results[rowIndex[i]!]!.duplicate = true;
  });
  return results;
}

/** The end users `rows` name (sorted) and the latest name of each (by event time; a tie goes to the later row). */
function endUsersOf(rows: readonly EventRow[]): { userIds: string[]; names: Map<string, { userName: string; time: number }> } {
  const names = new Map<string, { userName: string; time: number }>();
  for (const r of rows) {
    if (r.endUserId === null || r.userName === null) continue;
    const seen = names.get(r.endUserId);
    if (!seen || r.time >= seen.time) names.set(r.endUserId, { userName: r.userName, time: r.time });
  }
  const userIds = [...new Set(rows.map((r) => r.endUserId).filter((id): id is string => id !== null))].sort();
  return { userIds, names };
}

const EventResult = builder.objectRef<EventItemResult>("EventResult").implement({
  interfaces: [ItemResultInterface],
  isTypeOf: () => true,
  fields: (t) => ({
    duplicate: t.boolean({ description: "The item's `id` was seen before: accepted, not stored again.", resolve: (r) => r.duplicate === true }),
  }),
});
const EventsPayload = payloadType<EventItemResult>("EventsPayload", EventResult);

builder.mutationField("recordEvents", (t) =>
  t.field({
    type: EventsPayload,
    description: "Stores engagement events (1 to 10,000). Per-item status: 202 stored, 400 invalid (the valid ones are stored).",
    args: {
      accountId: t.arg.string({ required: true }),
      // Items may be null: a null item fails alone ("an event must be a JSON object"), as any other
      // non-object does; a non-null list type refused the whole request for it.
      events: t.arg({ type: ["EngagementEvent"], required: { list: true, items: false }, validate: bulkArg }),
    },
    resolve: async (_root, { accountId, events }, ctx) => {
      await requireAccount(ctx, accountId);
      return { results: await recordEvents(accountId, events) };
    },
  }),
);
