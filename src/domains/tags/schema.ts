// Content tags: types, the account's tag list, and bulk upsert (create, describe, rename) / delete.
// Names are unique per account and identify a tag in REST paths, so they cannot hold commas.
import { queryFromInfo } from "@pothos/plugin-prisma";
import DataLoader from "dataloader";
import { createRows, updateRows } from "../../audit/recorder.js";
import { clock } from "../../clock.js";
import { dbErrorKind } from "../../db/errors.js";
import { prisma, type Tx, withTransaction } from "../../db/index.js";
import { ConcurrentChange, lockRows } from "../../db/locks.js";
import type { Tag as TagRow } from "../../generated/sqlite/client.js";
import { newId } from "../../ids.js";
import { builder } from "../../schema/builder.js";
import {
  bulkArg,
  checkListSafeName,
  chunksOf,
  DeletePayload,
  deleteByKeys,
  fail,
  type ItemResult,
  ItemResultInterface,
  inChunks,
  inTurn,
  payloadType,
} from "../../schema/bulk.js";
import { afterCursor, CONNECTION_RECORDS, connectionFrom, LIST_LIMITS, pageExtensions, pageLimit, toPage } from "../../schema/pagination.js";
import { longerThan } from "../../text.js";
import { Account, requireAccount } from "../accounts/schema.js";
import { emitContent } from "../webhooks/emit.js";

export const TAG_NAME_MAX = 100;
export const TAG_DESCRIPTION_MAX = 2_000;

/** The account's contents that carry any of these tags (read before the tags change). */
async function contentsTagged(tx: Tx, accountId: string, tagIds: readonly string[]): Promise<string[]> {
  const links = await inChunks(tagIds, (chunk) =>
    tx.contentTag.findMany({ where: { tagId: { in: chunk }, content: { accountId } }, select: { contentId: true } }),
  );
  return [...new Set(links.map((l) => l.contentId))];
}

/**
 * A tag deleted or renamed changes the `tags` of every content carrying it (names in style B, ids
 * in style A): that is a change of theirs, audited, with a new lastUpdateTime (B5 `updatedAfter`
 * finds them) and a `content.updated` webhook after the change, not one the join table makes unseen.
 */
async function touchContents(tx: Tx, accountId: string, contentIds: readonly string[]): Promise<void> {
  if (!contentIds.length) return;
  const now = clock.now();
  for (const chunk of chunksOf(contentIds)) await tx.content.updateMany({ where: { accountId, id: { in: chunk } }, data: { updatedAt: now } });
  await emitContent(tx, accountId, "content.updated", contentIds);
}

export const TagType = builder.enumType("TagType", { values: ["USER", "PAGE", "ROLE"] as const });

export const Tag = builder.prismaObject("Tag", {
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    description: t.exposeString("description", { nullable: true }),
    type: t.field({ type: TagType, resolve: (tag) => tag.type as "USER" }),
    // A DataLoader rather than relationCount: prisma's count joins an aggregate over every tag of
    // every tenant; this counts only the tags on the page, in one grouped query.
    contentCount: t.loadable({
      type: "Int",
      description: "Number of contents carrying this tag.",
      load: async (ids: string[]) => {
        const rows = await prisma.contentTag.groupBy({ by: ["tagId"], where: { tagId: { in: ids } }, _count: { _all: true } });
        const counts = new Map(rows.map((r) => [r.tagId, r._count._all]));
        return ids.map((id) => counts.get(id) ?? 0);
      },
      resolve: (tag) => tag.id,
    }),
  }),
});

builder.prismaObjectField(Account, "tags", (t) =>
  t.connection(
    {
      type: Tag,
      extensions: pageExtensions(LIST_LIMITS.standard),
      description: "The account's tags, ordered by name.",
      args: {},
      resolve: async (account, args, ctx, info) => {
        const limit = pageLimit(args, LIST_LIMITS.standard);
        const query = queryFromInfo({ context: ctx, info, paths: CONNECTION_RECORDS });
        const rows = await prisma.tag.findMany({
          ...query,
          where: { AND: [{ accountId: account.id }, afterCursor("name", args.after, false, account.id)] },
          orderBy: [{ name: "asc" }, { id: "asc" }],
          take: limit + 1,
        });
        return connectionFrom(toPage(rows, limit), account.id, (r) => r.name);
      },
    },
    {},
    {},
  ),
);

// Lookups by natural key batch through a per-request DataLoader (several `tag(name:)` in one document → one query).
const tagByName = new WeakMap<object, DataLoader<string, TagRow | null>>();
function tagLoader(ctx: object, accountId: string) {
  let loader = tagByName.get(ctx);
  if (!loader) {
    loader = new DataLoader(async (keys: readonly string[]) => {
      const pairs = keys.map((k) => JSON.parse(k) as [string, string]);
      const rows = await prisma.tag.findMany({
        where: { OR: pairs.map(([accountId, name]) => ({ accountId, name })) },
      });
      const byKey = new Map(rows.map((r) => [JSON.stringify([r.accountId, r.name]), r]));
      return keys.map((k) => byKey.get(k) ?? null);
    });
    tagByName.set(ctx, loader);
  }
  return { load: (name: string) => loader.load(JSON.stringify([accountId, name])) };
}

builder.prismaObjectField(Account, "tag", (t) =>
  t.field({
    type: Tag,
    nullable: true,
    description: "One tag by name (null when there is none).",
    args: { name: t.arg.string({ required: true }) },
    resolve: (account, { name }, ctx) => tagLoader(ctx, account.id).load(name),
  }),
);

// ---- mutations -------------------------------------------------------------------------------

const TagInput = builder.inputType("TagInput", {
  description: "Create a tag (type USER), or update the one named `name`: its description, and its name via `newName`.",
  fields: (t) => ({
    name: t.string({ required: false, description: "Identifies the tag; required." }),
    description: t.string({ required: false }),
    newName: t.string({ required: false, description: "Renames an existing tag." }),
  }),
});

interface TagItem extends ItemResult<TagRow> {}
const TagResult = builder.objectRef<TagItem>("TagResult").implement({
  interfaces: [ItemResultInterface],
  isTypeOf: () => true,
  fields: (t) => ({ tag: t.field({ type: Tag, nullable: true, resolve: (r, _args, ctx) => inTurn(ctx, r.index, r.record ?? null) }) }),
});

const TagsPayload = payloadType<TagItem>("TagsPayload", TagResult);

function nameProblem(value: string | null | undefined, field: string): string | null {
  if (value == null || value.trim() === "") return `${field} is required`;
  if (longerThan(value, TAG_NAME_MAX)) return `${field} must be at most ${TAG_NAME_MAX} characters`;
  // Names are stored trimmed (below): it is the trimmed name that must fit a list.
  return checkListSafeName(value.trim(), field);
}

builder.mutationField("upsertTags", (t) =>
  t.field({
    type: TagsPayload,
    description:
      "Creates or updates tags by name, in request order, all in one transaction. Per-item status: 201 created, 200 updated, 400 invalid, 404 nothing to rename, 409 name taken.",
    args: {
      accountId: t.arg.string({ required: true }),
      input: t.arg({ type: [TagInput], required: true, validate: bulkArg }),
    },
    resolve: async (_root, { accountId, input }, ctx) => {
      await requireAccount(ctx, accountId);
      const names = new Set<string>();
      for (const item of input) {
        if (item.name) names.add(item.name.trim());
        if (item.newName) names.add(item.newName.trim());
      }
      type Op = { kind: "create"; row: TagRow } | { kind: "update"; id: string; name: string; renamed: boolean; description: string | null | undefined };
      // Decided inside the transaction on locked rows: concurrent upserts of one name queue on its
      // row; a create that loses the race to a concurrent one is skipped as a duplicate
      // (ON CONFLICT DO NOTHING) and the transaction runs again, now finding the row to update.
      const ops = await withTransaction(
        async (tx) => {
          await lockRows(tx, "Tag", "name", names, { accountId });
          const existing = await inChunks(names, (chunk) => tx.tag.findMany({ where: { accountId, name: { in: chunk } } }));
          // Simulate the whole request on a name → tag map, so each item sees the items before it.
          const byName = new Map(existing.map((tag) => [tag.name, { ...tag }]));
          const ops: { op: Op; result: TagItem }[] = [];
          const results: TagItem[] = input.map((item, index) => {
            const errors = [nameProblem(item.name, "name")];
            if (item.newName != null) errors.push(nameProblem(item.newName, "newName"));
            if (item.description != null && longerThan(item.description, TAG_DESCRIPTION_MAX))
              errors.push(`description must be at most ${TAG_DESCRIPTION_MAX} characters`);
            const problems = errors.filter((e): e is string => e !== null);
            if (problems.length) return fail(index, 400, problems);
            const name = item.name!.trim();
            const newName = item.newName?.trim();
            const current = byName.get(name);
            if (!current) {
              if (newName && newName !== name) return fail(index, 404, [`no tag named '${name}' to rename`]);
              const now = new Date();
              const row: TagRow = { id: newId("t"), accountId, name, description: item.description ?? null, type: "USER", createdAt: now, updatedAt: now };
              byName.set(name, row);
              const result: TagItem = { index, statusCode: 201, id: row.id, errors: [] };
              ops.push({ op: { kind: "create", row }, result });
              return result;
            }
            const renamed = !!newName && newName !== name;
            if (renamed) {
              if (byName.has(newName!)) return fail(index, 409, [`a tag named '${newName}' already exists`], current.id);
              byName.delete(name);
              current.name = newName!;
              byName.set(newName!, current);
            }
            if (item.description !== undefined) current.description = item.description;
            const result: TagItem = { index, statusCode: 200, id: current.id, errors: [] };
            ops.push({ op: { kind: "update", id: current.id, name: current.name, renamed, description: item.description }, result });
            return result;
          });
          // Request order matters (a rename may free a name a later item creates). Creates and
          // updates that keep their name touch no other row's name: they are batched (one insert,
          // one UPDATE … FROM per group of columns) and written before each rename, which runs alone.
          let creates: TagRow[] = [];
          const updates = new Map<string, Record<string, unknown>>();
          const flush = async () => {
            if (creates.length && (await createRows("Tag", creates, { skipDuplicates: true })) < creates.length) {
              throw new ConcurrentChange("a tag of this name was created by a concurrent request");
            }
            creates = [];
            if (updates.size) await updateRows("Tag", [...updates.values()]);
            updates.clear();
          };
          const now = new Date();
          const renamed: string[] = [];
          for (const { op } of ops) {
            if (op.kind === "create") {
              creates.push(op.row);
              continue;
            }
            const data = { name: op.name, ...(op.description !== undefined ? { description: op.description } : {}) };
            if (!op.renamed) {
              // A later item on the same tag adds to the earlier one's change.
              updates.set(op.id, { ...updates.get(op.id), id: op.id, accountId, ...data, updatedAt: now });
              continue;
            }
            await flush();
            await tx.tag.update({ where: { id: op.id }, data }).catch((err: unknown) => {
              throw dbErrorKind(err) === "unique" ? new ConcurrentChange("the new name was taken by a concurrent request") : err;
            });
            renamed.push(op.id);
          }
          await flush();
          // A rename changes the tagged contents' names in style B (their `tags`).
          await touchContents(tx, accountId, await contentsTagged(tx, accountId, [...new Set(renamed)]));
          return { ops, results };
        },
        { timeout: 120_000, maxWait: 10_000 },
      );
      if (ops.ops.length) {
        const rows = await prisma.tag.findMany({ where: { id: { in: ops.ops.map((o) => o.result.id!) } } });
        const byId = new Map(rows.map((r) => [r.id, r]));
        for (const { result } of ops.ops) result.record = byId.get(result.id!) ?? null;
      }
      return { results: ops.results };
    },
  }),
);

builder.mutationField("deleteTags", (t) =>
  t.field({
    type: DeletePayload,
    description: "Deletes tags of any type by name. Per-item status: 204 deleted, 404 not found, 400 a name an earlier item of the request names.",
    args: {
      accountId: t.arg.string({ required: true }),
      names: t.arg.stringList({ required: true, validate: bulkArg }),
    },
    resolve: async (_root, { accountId, names }, ctx) => {
      await requireAccount(ctx, accountId);
      return deleteByKeys(
        names,
        { table: "Tag", column: "name", accountId },
        async (db, chunk) =>
          (await db.tag.findMany({ where: { accountId, name: { in: chunk } }, select: { id: true, name: true } })).map((r) => ({ key: r.name, id: r.id })),
        async (tx, ids) => {
          const tagged = await contentsTagged(tx, accountId, ids);
          const deleted = await tx.tag.deleteMany({ where: { accountId, id: { in: ids } } });
          await touchContents(tx, accountId, tagged);
          return deleted;
        },
        (name) => `no tag named '${name}'`,
      );
    },
  }),
);
