// What an end user has already completed, for a segment's personalised content order: the content
// (flows, tasks) the user's engagement events report as completed. One probe of the partial index
// "Event_completions_idx" (accountId, endUserId, flowId; completion events only; migration
// 20261125110607_event_ingest_paths). The type list is written into the SQL as literals, here and in
// ./read.ts: the planners use a partial index only when they can see the query implies its WHERE.
import { dbKind, prisma } from "../../db/index.js";

export const COMPLETION_EVENTS = ["flow_completed", "task_completed"] as const;

/** `"type" IN ('flow_completed', 'task_completed')`, the partial index's own condition. */
export const completionTypeSql = (alias: string) => `${alias}."type" IN (${COMPLETION_EVENTS.map((e) => `'${e}'`).join(", ")})`;

export async function completedContent(accountId: string, endUserId: string, contentIds: string[]): Promise<Set<string>> {
  if (!contentIds.length) return new Set();
  const rows =
    dbKind() === "postgres"
      ? await prisma.$queryRawUnsafe<{ flowId: string }[]>(
          `SELECT DISTINCT e."flowId" FROM "Event" e WHERE e."accountId" = $1 AND e."endUserId" = $2 AND ${completionTypeSql("e")} AND e."flowId" = ANY($3::text[])`,
          accountId,
          endUserId,
          contentIds,
        )
      : await prisma.$queryRawUnsafe<{ flowId: string }[]>(
          `SELECT DISTINCT e."flowId" FROM "Event" e WHERE e."accountId" = ? AND e."endUserId" = ? AND ${completionTypeSql("e")} AND e."flowId" IN (SELECT value FROM json_each(?))`,
          accountId,
          endUserId,
          JSON.stringify(contentIds),
        );
  return new Set(rows.map((r) => r.flowId));
}
