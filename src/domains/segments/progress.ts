// What an end user has already completed, for a segment's personalised content order: the content
// (flows, tasks) the user's engagement events report as completed. One indexed read per evaluation
// (Event(accountId, flowId, type, time)).
import { prisma } from "../../db/index.js";

export const COMPLETION_EVENTS = ["flow_completed", "task_completed"] as const;

export async function completedContent(accountId: string, endUserId: string, contentIds: string[]): Promise<Set<string>> {
  if (!contentIds.length) return new Set();
  const rows = await prisma.event.findMany({
    where: { accountId, endUserId, type: { in: [...COMPLETION_EVENTS] }, flowId: { in: contentIds } },
    select: { flowId: true },
    distinct: ["flowId"],
  });
  return new Set(rows.map((r) => r.flowId!));
}
