// The incremental export in GraphQL: `account.eventExport` answers one page of events in ingestion
// order with the cursor to resume from (never null: new events appear after it later).
import { badRequest } from "../../errors.js";
import { ownEntry } from "../../lookup.js";
import { builder } from "../../schema/builder.js";
import { pageSize } from "../../schema/pagination.js";
import { Account } from "../accounts/schema.js";
import { EVENT_TYPES } from "../events/validate.js";
import { EXPORT_LIMITS, type ExportBounds, exportBounds, exportPageCost, exportRows } from "./read.js";

const ExportPage = builder.objectRef<ExportBounds>("EventExportPage").implement({
  description: "A page of the event export.",
  fields: (t) => ({
    events: t.field({
      type: ["JSON"],
      description: "The events in ingestion order: the contract's fields, `id` (increasing) and `receivedTime` (epoch ms).",
      resolve: async (b) => {
        const all: unknown[] = [];
        for await (const slice of exportRows(b)) all.push(...slice);
        return all;
      },
    }),
    cursor: t.exposeString("cursor", { description: "Resume from here (pass it as `cursor`); never null." }),
    hasMore: t.exposeBoolean("hasMore", { description: "Whether more events exist now after this page." }),
    afterId: t.field({ type: "EventId", description: "The page holds events with afterId < id ≤ upToId.", resolve: (b) => b.after }),
    upToId: t.field({ type: "EventId", resolve: (b) => b.upTo }),
  }),
});

export function checkTypes(types: readonly string[] | null | undefined): string[] | null {
  if (!types?.length) return null;
  const unknown = types.filter((t) => ownEntry(EVENT_TYPES, t) === undefined);
  if (unknown.length)
    throw badRequest(`type must be one of ${Object.keys(EVENT_TYPES).join(", ")}`, [{ path: "type", message: `unknown: ${unknown.slice(0, 5).join(", ")}` }]);
  return [...new Set(types)].sort();
}

builder.prismaObjectField(Account, "eventExport", (t) =>
  t.field({
    type: ExportPage,
    description: `Events in ingestion order after \`cursor\` (from the start without one); \`limit\` default ${EXPORT_LIMITS.default}, max ${EXPORT_LIMITS.max}.`,
    args: {
      cursor: t.arg.string({ required: false }),
      limit: t.arg.int({ required: false }),
      types: t.arg.stringList({ required: false, description: "Only these engagement event types." }),
    },
    // Priced by the events the page may hold (src/graphql/cost.ts reads it), over REST and GraphQL alike.
    extensions: { cost: exportPageCost },
    resolve: async (account, { cursor, limit, types }) => {
      return exportBounds(account.id, cursor, pageSize(limit ?? EXPORT_LIMITS.default, EXPORT_LIMITS), checkTypes(types));
    },
  }),
);
