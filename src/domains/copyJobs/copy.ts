// Copying one requested content into the destination account, inside the item's transaction:
// a folder brings its whole tree (parents first, the tree kept), tags are matched by name in the
// destination (created as USER tags when missing) when the job copies them, and every copy is
// owned by the destination user.

import { randomUUID } from "node:crypto";
import { createRows } from "../../audit/recorder.js";
import type { Tx } from "../../db/index.js";
import { AppError } from "../../errors.js";
import { newId } from "../../ids.js";
import { publicUrl } from "../../publicUrl.js";
import { emitContent } from "../webhooks/emit.js";

/** A folder tree larger than this is refused (its item fails; the rest of the job goes on). */
export const MAX_TREE = 10_000;

export interface CopyPlan {
  sourceAccountId: string;
  destinationAccountId: string;
  /** User.id of the destination user */
  ownerId: string;
  copyUserTags: boolean;
}

type Node = {
  id: string;
  parentId: string | null;
  title: string;
  type: string;
  url: string | null;
  source: string | null;
  description: string | null;
  descriptionMd: string | null;
  state: string;
  stage: string;
  tags: { tag: { name: string } }[];
};

const SELECT = {
  id: true,
  parentId: true,
  title: true,
  type: true,
  url: true,
  source: true,
  description: true,
  descriptionMd: true,
  state: true,
  stage: true,
  tags: { select: { tag: { select: { name: true } } } },
} as const;

/** Copies `sourceId` (and, for a folder, everything under it); returns the root copy's id and how many contents were created. */
export async function copyItem(tx: Tx, plan: CopyPlan, sourceId: string): Promise<{ targetId: string; created: number }> {
  const root = (await tx.content.findFirst({ where: { id: sourceId, accountId: plan.sourceAccountId }, select: SELECT })) as Node | null;
  if (!root) throw new AppError(404, `content '${sourceId}' no longer exists in account '${plan.sourceAccountId}'`);
  // The tree, level by level (one query per level); `seen` guards against a cycle in bad data.
  const nodes: Node[] = [root];
  const seen = new Set([root.id]);
  let level: Node[] = root.type === "folder" ? [root] : [];
  while (level.length) {
    const children = (await tx.content.findMany({
      where: { accountId: plan.sourceAccountId, parentId: { in: level.map((n) => n.id) } },
      select: SELECT,
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    })) as Node[];
    level = children.filter((c) => !seen.has(c.id));
    for (const c of level) seen.add(c.id);
    nodes.push(...level);
    if (nodes.length > MAX_TREE) throw new AppError(400, `folder '${sourceId}' holds more than ${MAX_TREE} contents; copy its subfolders instead`);
  }

  const newIds = new Map(nodes.map((n) => [n.id, newId("c")]));
  const now = new Date();
  await tx.content.createMany({
    data: nodes.map((n) => ({
      id: newIds.get(n.id)!,
      accountId: plan.destinationAccountId,
      title: n.title,
      type: n.type,
      url: n.url,
      source: n.source,
      description: n.description,
      descriptionMd: n.descriptionMd,
      state: n.state,
      stage: n.stage,
      // The root lands at the top of the destination; below it the tree is kept.
      parentId: n === root ? null : newIds.get(n.parentId!)!,
      ownerId: plan.ownerId,
      createdAt: now,
      updatedAt: now,
    })),
  });

  if (plan.copyUserTags) {
    const names = [...new Set(nodes.flatMap((n) => n.tags.map((t) => t.tag.name)))];
    if (names.length) {
      const tagIds = await destinationTags(tx, plan.destinationAccountId, names);
      const links = nodes.flatMap((n) =>
        [...new Set(n.tags.map((t) => t.tag.name))].map((name) => ({ contentId: newIds.get(n.id)!, tagId: tagIds.get(name)! })),
      );
      await tx.contentTag.createMany({ data: links });
    }
  }
  // The destination's subscribers hear of the new contents as of any other (with their tags), in this transaction.
  await emitContent(tx, plan.destinationAccountId, "content.created", [...newIds.values()]);
  return { targetId: newIds.get(root.id)!, created: nodes.length };
}

/** The destination's tags of these names, creating the missing ones as USER tags (race-free). */
async function destinationTags(tx: Tx, accountId: string, names: string[]): Promise<Map<string, string>> {
  const existing = await tx.tag.findMany({ where: { accountId, name: { in: names } }, select: { id: true, name: true } });
  const have = new Set(existing.map((t) => t.name));
  const now = new Date();
  const missing = names
    .filter((n) => !have.has(n))
    .map((name) => ({ id: newId("t"), accountId, name, type: "USER", description: null, createdAt: now, updatedAt: now }));
  // A concurrent writer may create one of them first: its row is used instead.
  if (missing.length) await createRows("Tag", missing, { skipDuplicates: true });
  const all = missing.length ? await tx.tag.findMany({ where: { accountId, name: { in: names } }, select: { id: true, name: true } }) : existing;
  return new Map(all.map((t) => [t.name, t.id]));
}

/**
 * Where a job's status is read (GET, with the caller's credentials): absolute under PUBLIC_URL, so
 * the link in the completion e-mail works from a mail client; a path when none is configured.
 */
export const jobStatusUrl = (accountId: string, jobId: string) => publicUrl(`/v1/accounts/${encodeURIComponent(accountId)}/jobs/${encodeURIComponent(jobId)}`);

/** A job id: a UUID, as pg-boss ids are. */
export const newJobId = () => randomUUID();
