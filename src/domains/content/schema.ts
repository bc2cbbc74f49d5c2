// Content (links, videos, text, flows, widgets, folders): the type, the account's filtered list,
// lookups, and bulk create / update / delete with per-item results. Validation is per item: a bad
// item fails alone (REST answers 207), the good ones are written together in one transaction.

import { createContextCache } from "@pothos/core";
import { queryFromInfo } from "@pothos/plugin-prisma";
import DataLoader from "dataloader";
import { updateRows } from "../../audit/recorder.js";
import { clock } from "../../clock.js";
import { prisma, type Reader, withTransaction } from "../../db/index.js";
import { lockRows } from "../../db/locks.js";
import type { Prisma } from "../../generated/sqlite/client.js";
import { newId } from "../../ids.js";
import { builder } from "../../schema/builder.js";
import {
  bulkArg,
  DeletePayload,
  deleteByKeys,
  fail,
  firstOccurrences,
  type ItemResult,
  ItemResultInterface,
  inChunks,
  inTurn,
  payloadType,
} from "../../schema/bulk.js";
import { afterCursor, CONNECTION_RECORDS, connectionFrom, cursorPosition, LIST_LIMITS, pageExtensions, pageLimit, toPage } from "../../schema/pagination.js";
import { longerThan } from "../../text.js";
import { Account, requireAccount } from "../accounts/schema.js";
import { Tag } from "../tags/schema.js";
import { emitContent } from "../webhooks/emit.js";
import { contentPage, tagColumnsFor } from "./page.js";

export const CONTENT_TYPES = ["link", "video", "text", "flow", "widget", "folder"] as const;
export const STATIC_TYPES = ["link", "video", "text"] as const;
type ContentTypeValue = (typeof CONTENT_TYPES)[number];

const LIMITS = { title: 500, url: 2_048, description: 10_000, descriptionMd: 100_000, tags: 100 } as const;

export const ContentType = builder.enumType("ContentType", { values: CONTENT_TYPES });
const CONTENT_STATES = ["draft", "ready", "production"] as const;
export const ContentState = builder.enumType("ContentState", { values: CONTENT_STATES });
export const ContentStage = builder.enumType("ContentStage", { values: ["design", "production"] as const });
export const ContentSource = builder.enumType("ContentSource", { values: ["default", "knowledgebase"] as const });
const ContentOrder = builder.enumType("ContentOrder", {
  values: { CREATED: { description: "By creation time, oldest first" }, UPDATED: { description: "By last update time, oldest first" } } as const,
});

/** The stage follows from the state: production content is in the production stage. */
const stageOf = (state: string) => (state === "production" ? "production" : "design");

type TagRow = Prisma.TagGetPayload<object>;
const byNameOrder = (a: TagRow, b: TagRow) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
/** Tags by name in JavaScript's order (SQL's byte order agrees below U+FFFF: mostly a check). */
function byName(tags: TagRow[]): TagRow[] {
  for (let i = 1; i < tags.length; i++) if (byNameOrder(tags[i - 1]!, tags[i]!) > 0) return [...tags].sort(byNameOrder);
  return tags;
}

/** Per request: the tags of contents whose rows did not carry them, one read per batch of contents. */
const tagsOfContent = createContextCache(
  () =>
    new DataLoader<string, TagRow[]>(async (contentIds) => {
      const links = await inChunks(contentIds, (chunk) =>
        prisma.contentTag.findMany({ where: { contentId: { in: chunk } }, select: { contentId: true, tag: true } }),
      );
      const byContent = new Map<string, TagRow[]>();
      for (const l of links) byContent.set(l.contentId, [...(byContent.get(l.contentId) ?? []), l.tag]);
      return contentIds.map((id) => (byContent.get(id) ?? []).sort(byNameOrder));
    }),
);

export const Content = builder.prismaObject("Content", {
  fields: (t) => ({
    id: t.exposeID("id"),
    title: t.exposeString("title"),
    type: t.field({ type: ContentType, resolve: (c) => c.type as ContentTypeValue }),
    url: t.exposeString("url", { nullable: true }),
    source: t.field({ type: ContentSource, nullable: true, resolve: (c) => c.source as "default" | null }),
    description: t.exposeString("description", { nullable: true }),
    descriptionMd: t.exposeString("descriptionMd", { nullable: true }),
    state: t.field({ type: ContentState, resolve: (c) => c.state as "draft" }),
    stage: t.field({ type: ContentStage, resolve: (c) => c.stage as "design" }),
    parentId: t.exposeString("parentId", { nullable: true }),
    creationTime: t.expose("createdAt", { type: "Timestamp" }),
    lastUpdateTime: t.expose("updatedAt", { type: "Timestamp" }),
    // Not a plugin-prisma relation field: its per-row wrapper cost more than the rest of a row. The
    // tags come with the row where the read carried them (./page.ts, segments/read.ts), otherwise
    // from one batched read for every content of the request.
    tags: t.field({
      type: [Tag],
      description: "Tags on this content, by name.",
      resolve: (c, _args, ctx) => {
        const carried = (c as { tags?: TagRow[] }).tags;
        return carried ? byName(carried) : tagsOfContent(ctx).load(c.id);
      },
    }),
  }),
});

const ContentFilter = builder.inputType("ContentFilter", {
  fields: (t) => ({
    state: t.field({ type: [ContentState], required: false, description: "Any of these states." }),
    stage: t.field({ type: ContentStage, required: false }),
    type: t.field({ type: ContentType, required: false }),
    createdAfter: t.field({ type: "Timestamp", required: false, description: "Created strictly after this time." }),
    updatedAfter: t.field({ type: "Timestamp", required: false, description: "Last updated strictly after this time." }),
    tagId: t.string({ required: false }),
    tagName: t.string({ required: false }),
    parentId: t.string({ required: false }),
  }),
});

function filterWhere(f: typeof ContentFilter.$inferInput | null | undefined): Prisma.ContentWhereInput {
  if (!f) return {};
  return {
    ...(f.state?.length ? { state: { in: f.state } } : {}),
    ...(f.stage ? { stage: f.stage } : {}),
    ...(f.type ? { type: f.type } : {}),
    ...(f.createdAfter ? { createdAt: { gt: f.createdAfter } } : {}),
    ...(f.updatedAfter ? { updatedAt: { gt: f.updatedAfter } } : {}),
    ...(f.parentId ? { parentId: f.parentId } : {}),
    ...(f.tagId ? { tags: { some: { tagId: f.tagId } } } : {}),
    ...(f.tagName ? { tags: { some: { tag: { name: f.tagName } } } } : {}),
  };
}

builder.prismaObjectField(Account, "contents", (t) =>
  t.connection({
    type: Content,
    extensions: pageExtensions(LIST_LIMITS.standard),
    description: "The account's content, filtered, in keyset order (creation or update time, then id).",
    args: {
      filter: t.arg({ type: ContentFilter, required: false }),
      orderBy: t.arg({ type: ContentOrder, required: false, defaultValue: "CREATED" }),
    },
    resolve: async (account, args, ctx, info) => {
      const limit = pageLimit(args, LIST_LIMITS.standard);
      const field = args.orderBy === "UPDATED" ? "updatedAt" : "createdAt";
      // A cursor names its order, as the end users' do: one of the other order is a 400, not a
      // position read in this one (it would skip or repeat rows). Cursors issued before they named
      // it are read as creation cursors, the default order.
      const order = args.orderBy === "UPDATED" ? { name: "UPDATED" } : { name: "CREATED", untagged: true };
      const query = queryFromInfo({ context: ctx, info, paths: CONNECTION_RECORDS });
      // Content's own fields, with or without their tags (every selection today: Content has no
      // plugin-prisma relation field), are one statement on the driver (./page.ts); any other
      // selection plugin-prisma would plan goes through Prisma.
      if (JSON.stringify(query) === "{}") {
        const after = cursorPosition(args.after, true, account.id, order) as { sort: Date; id: string } | null;
        const tags = tagColumnsFor(info, CONNECTION_RECORDS);
        const rows = (await contentPage(account.id, args.filter ?? {}, field, after, limit + 1, tags)) as unknown as Prisma.ContentGetPayload<object>[];
        return connectionFrom(toPage(rows, limit), account.id, (r) => r[field], undefined, order.name);
      }
      const rows = await prisma.content.findMany({
        ...query,
        where: { AND: [{ accountId: account.id }, filterWhere(args.filter), afterCursor(field, args.after, true, account.id, "asc", "id", order)] },
        orderBy: [{ [field]: "asc" }, { id: "asc" }],
        take: limit + 1,
      });
      return connectionFrom(toPage(rows, limit), account.id, (r) => r[field], undefined, order.name);
    },
  }),
);

// Several `content(id:)` lookups in one document share one query: Prisma batches the findUnique
// calls of one tick into a single `WHERE (id = ? AND accountId = ?) OR ...` (its built-in DataLoader).
// The accountId in the key keeps each lookup inside the account it hangs off, also when one
// document asks under several accounts.
builder.prismaObjectField(Account, "content", (t) =>
  t.prismaField({
    type: Content,
    nullable: true,
    description: "One content by id (null when the account has none with that id).",
    args: { id: t.arg.string({ required: true }) },
    resolve: (query, account, { id }) => prisma.content.findUnique({ ...query, where: { id, accountId: account.id } }),
  }),
);

// ---- writes ----------------------------------------------------------------------------------

const ContentInput = builder.inputType("ContentInput", {
  description:
    "A content to create (no id) or update (id required; absent fields stay as they are, null clears: tags null removes them all). " +
    "`type` and `state` cannot be cleared: null is refused on update.",
  fields: (t) => ({
    id: t.string({ required: false }),
    title: t.string({ required: false }),
    type: t.field({ type: ContentType, required: false }),
    url: t.string({ required: false }),
    source: t.field({ type: ContentSource, required: false, description: "Links only; default `default`." }),
    description: t.string({ required: false, description: "Not allowed on videos." }),
    descriptionMd: t.string({ required: false, description: "Markdown description, text content only." }),
    tagIds: t.stringList({ required: false, description: "Replaces the content's tags (style A: tag ids); null or [] removes them all." }),
    tagNames: t.stringList({ required: false, description: "Replaces the content's tags (style B: tag names); null or [] removes them all." }),
    state: t.field({ type: ContentState, required: false, description: "Default draft; the stage follows. Cannot be cleared (null is refused on update)." }),
    parentId: t.string({ required: false, description: "A folder of the same account." }),
  }),
});
type ContentInputShape = typeof ContentInput.$inferInput;

interface ContentItem extends ItemResult<unknown> {}
const ContentResult = builder.objectRef<ContentItem>("ContentResult").implement({
  interfaces: [ItemResultInterface],
  isTypeOf: () => true,
  fields: (t) => ({ content: t.field({ type: Content, nullable: true, resolve: (r, _args, ctx) => inTurn(ctx, r.index, (r.record ?? null) as never) }) }),
});
const ContentPayload = payloadType<ContentItem>("ContentPayload", ContentResult);

/** The record a write would leave, checked against the rules of its type. */
interface Draft {
  title: string | null;
  type: string | null;
  url: string | null;
  source: string | null;
  description: string | null;
  descriptionMd: string | null;
  state: string;
  parentId: string | null;
}

const DESCRIPTION_TYPES_ARG = "Restricts the types on which this call may set `description` (REST style B: link, as the spec's variant B says).";

/** What a write call allows beyond the types' own rules (REST's routes narrow them). */
interface WriteRules {
  /** the types it may write (null: any) */
  allowedTypes: readonly string[] | null;
  /** the types on which it may set `description` (null: any that takes one) */
  descriptionTypes: readonly string[] | null;
}

/** `rules` from a write mutation's arguments. */
const rulesOf = (args: { allowedTypes?: readonly string[] | null; descriptionTypes?: readonly string[] | null }): WriteRules => ({
  allowedTypes: args.allowedTypes ?? null,
  descriptionTypes: args.descriptionTypes ?? null,
});

/**
 * The problems of the record a write would leave. `setsDescription`: the item itself gives a
 * description (a stored one, written through a route that allows it, is not this call's to refuse).
 */
function draftProblems(d: Draft, rules: WriteRules, setsDescription: boolean): string[] {
  const { allowedTypes, descriptionTypes } = rules;
  const p: string[] = [];
  if (d.title == null || d.title.trim() === "") p.push("title is required");
  else if (longerThan(d.title, LIMITS.title)) p.push(`title must be at most ${LIMITS.title} characters`);
  if (d.type == null) p.push(`type is required (one of ${STATIC_TYPES.join(", ")})`);
  else if (allowedTypes && !allowedTypes.includes(d.type)) p.push(`type '${d.type}' cannot be written here (allowed: ${allowedTypes.join(", ")})`);
  if (d.url != null) {
    if (longerThan(d.url, LIMITS.url)) p.push(`url must be at most ${LIMITS.url} characters`);
    else if (!/^https?:\/\/[^\s]+$/i.test(d.url) || !URL.canParse(d.url)) p.push("url must be an absolute http(s) URL");
  } else if (d.type === "link" || d.type === "video") p.push(`url is required for ${d.type} content`);
  if (d.source != null && d.type !== "link") p.push("source is allowed on link content only");
  if (d.description != null) {
    if (d.type === "video") p.push("description is not allowed on video content");
    else if (setsDescription && d.type && descriptionTypes && !descriptionTypes.includes(d.type))
      p.push(`description is allowed on ${descriptionTypes.join(", ")} content only${d.type === "text" ? " (text content takes description_md)" : ""}`);
    else if (longerThan(d.description, LIMITS.description)) p.push(`description must be at most ${LIMITS.description} characters`);
  }
  if (d.descriptionMd != null) {
    if (d.type !== "text") p.push("description_md is allowed on text content only");
    else if (longerThan(d.descriptionMd, LIMITS.descriptionMd)) p.push(`description_md must be at most ${LIMITS.descriptionMd} characters`);
  }
  return p;
}

/** Resolves tag references (ids or names) and parent folders of all items in a few queries. */
async function resolveReferences(db: Reader, accountId: string, items: ContentInputShape[]) {
  const ids = new Set<string>();
  const names = new Set<string>();
  const parents = new Set<string>();
  for (const it of items) {
    for (const v of it.tagIds ?? []) ids.add(v);
    for (const v of it.tagNames ?? []) names.add(v);
    if (it.parentId) parents.add(it.parentId);
  }
  const tags = [
    ...(await inChunks(ids, (chunk) => db.tag.findMany({ where: { accountId, id: { in: chunk } }, select: { id: true, name: true } }))),
    ...(await inChunks(names, (chunk) => db.tag.findMany({ where: { accountId, name: { in: chunk } }, select: { id: true, name: true } }))),
  ];
  const folders = await inChunks(parents, (chunk) => db.content.findMany({ where: { accountId, id: { in: chunk } }, select: { id: true, type: true } }));
  const tagById = new Set(tags.map((t) => t.id));
  const tagIdByName = new Map(tags.map((t) => [t.name, t.id]));
  const folderTypes = new Map(folders.map((f) => [f.id, f.type]));
  /** The tag ids an item asks for, or the problems with its references. */
  return (it: ContentInputShape): { tagIds: string[] | undefined; problems: string[] } => {
    const problems: string[] = [];
    if (it.tagIds !== undefined && it.tagNames !== undefined) problems.push("give tags as ids or as names, not both");
    let tagIds: string[] | undefined;
    // null clears, as for every other field: no tags (an empty list does the same).
    if (it.tagIds === null || it.tagNames === null) tagIds = [];
    else if (it.tagIds) {
      for (const id of it.tagIds) if (!tagById.has(id)) problems.push(`unknown tag id '${id}'`);
      tagIds = [...new Set(it.tagIds)];
    } else if (it.tagNames) {
      tagIds = [];
      for (const n of new Set(it.tagNames)) {
        const id = tagIdByName.get(n);
        if (id) tagIds.push(id);
        else problems.push(`unknown tag '${n}' (create it with PUT /tags first)`);
      }
    }
    if (tagIds && tagIds.length > LIMITS.tags) problems.push(`at most ${LIMITS.tags} tags per content`);
    if (it.parentId) {
      const type = folderTypes.get(it.parentId);
      if (!type) problems.push(`unknown parent '${it.parentId}'`);
      else if (type !== "folder") problems.push(`parent '${it.parentId}' is not a folder`);
    }
    return { tagIds, problems };
  };
}

const TX = { timeout: 120_000, maxWait: 10_000 } as const;

/** Loads the written rows with the selection the document asked for under results.content. */
async function attachRecords(results: ContentItem[], ctx: object, info: Parameters<typeof queryFromInfo>[0]["info"]) {
  const ok = results.filter((r) => r.statusCode < 300 && r.id);
  if (!ok.length) return;
  const query = queryFromInfo({ context: ctx, info, path: ["results", "content"], typeName: "Content" });
  const rows = await prisma.content.findMany({ ...query, where: { id: { in: ok.map((r) => r.id!) } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const r of ok) r.record = byId.get(r.id!) ?? null;
}

builder.mutationField("createContents", (t) =>
  t.field({
    type: ContentPayload,
    description: "Creates contents. Per-item status: 201 created, 400 invalid. Valid items are written together in one transaction.",
    args: {
      accountId: t.arg.string({ required: true }),
      input: t.arg({ type: [ContentInput], required: true, validate: bulkArg }),
      allowedTypes: t.arg({ type: [ContentType], required: false, description: "Restricts the types this call may create (REST: link, video, text)." }),
      descriptionTypes: t.arg({ type: [ContentType], required: false, description: DESCRIPTION_TYPES_ARG }),
    },
    resolve: async (_root, { accountId, input, ...args }, ctx, info) => {
      const rules = rulesOf(args);
      await requireAccount(ctx, accountId);
      const refs = await resolveReferences(prisma, accountId, input);
      const now = new Date();
      const rows: Prisma.ContentCreateManyInput[] = [];
      const links: Prisma.ContentTagCreateManyInput[] = [];
      const results: ContentItem[] = input.map((it, index) => {
        const state = it.state ?? "draft";
        const draft: Draft = {
          title: it.title ?? null,
          type: it.type ?? null,
          url: it.url ?? null,
          source: it.source ?? (it.type === "link" ? "default" : null),
          description: it.description ?? null,
          descriptionMd: it.descriptionMd ?? null,
          state,
          parentId: it.parentId ?? null,
        };
        const { tagIds, problems } = refs(it);
        const all = [
          ...(it.id != null ? ["id must not be given when creating (it is assigned)"] : []),
          ...draftProblems(draft, rules, it.description != null),
          ...problems,
        ];
        if (all.length) return fail(index, 400, all);
        const id = newId("c");
        rows.push({ ...draft, title: draft.title!, type: draft.type!, id, accountId, stage: stageOf(state), createdAt: now, updatedAt: now });
        for (const tagId of tagIds ?? []) links.push({ contentId: id, tagId });
        return { index, statusCode: 201, id, errors: [] };
      });
      if (rows.length) {
        await withTransaction(async (tx) => {
          await tx.content.createMany({ data: rows });
          if (links.length) await tx.contentTag.createMany({ data: links });
          await emitContent(
            tx,
            accountId,
            "content.created",
            rows.map((r) => r.id),
          );
        }, TX);
      }
      await attachRecords(results, ctx, info);
      return { results };
    },
  }),
);

builder.mutationField("updateContents", (t) =>
  t.field({
    type: ContentPayload,
    description: "Updates contents by id. Per-item status: 200 updated, 400 invalid, 404 unknown id. Valid items are written together in one transaction.",
    args: {
      accountId: t.arg.string({ required: true }),
      input: t.arg({ type: [ContentInput], required: true, validate: bulkArg }),
      allowedTypes: t.arg({ type: [ContentType], required: false, description: "Restricts the types this call may update (REST: link, video, text)." }),
      descriptionTypes: t.arg({ type: [ContentType], required: false, description: DESCRIPTION_TYPES_ARG }),
    },
    resolve: async (_root, { accountId, input, ...args }, ctx, info) => {
      const rules = rulesOf(args);
      await requireAccount(ctx, accountId);
      const ids = input.map((it) => it.id).filter((id): id is string => !!id);
      // Everything the outcome depends on is read inside the transaction, after the rows are
      // locked: concurrent updates of the same content queue, and each writes only the fields its
      // request names, so none loses another's change.
      const results = await withTransaction(async (tx) => {
        await lockRows(tx, "Content", "id", ids, { accountId });
        const existing = await inChunks(new Set(ids), (chunk) => tx.content.findMany({ where: { accountId, id: { in: chunk } } }));
        const refs = await resolveReferences(tx, accountId, input);
        const byId = new Map(existing.map((c) => [c.id, c]));
        const first = firstOccurrences(input.map((it) => it.id));
        const writes: { id: string; data: Prisma.ContentUncheckedUpdateInput; tagIds: string[] | undefined }[] = [];
        const results: ContentItem[] = input.map((it, index) => {
          if (!it.id) return fail(index, 400, ["id is required to update"]);
          if (first.get(it.id) !== index) return fail(index, 400, [`id '${it.id}' appears more than once in this request`], it.id);
          const cur = byId.get(it.id);
          if (!cur) return fail(index, 404, [`no content with id '${it.id}'`], it.id);
          const pick = <K extends keyof Draft>(k: K, v: Draft[K] | undefined): Draft[K] => (v === undefined ? (cur[k] as Draft[K]) : v);
          const draft: Draft = {
            title: pick("title", it.title),
            type: cur.type,
            url: pick("url", it.url),
            source: pick("source", it.source),
            description: pick("description", it.description),
            descriptionMd: pick("descriptionMd", it.descriptionMd),
            state: it.state ?? cur.state,
            parentId: pick("parentId", it.parentId),
          };
          const { tagIds, problems } = refs(it);
          const all = [
            // type and state have no empty value: null would otherwise be ignored without a word.
            ...(it.type === null ? [`type cannot be cleared (it is '${cur.type}')`] : []),
            ...(it.type != null && it.type !== cur.type ? [`type cannot be changed (it is '${cur.type}')`] : []),
            ...(it.state === null ? [`state cannot be cleared (one of ${CONTENT_STATES.join(", ")})`] : []),
            ...(it.parentId === it.id ? ["a content cannot be its own parent"] : []),
            ...draftProblems(draft, rules, it.description != null),
            ...problems,
          ];
          if (all.length) return fail(index, 400, all, it.id);
          writes.push({ id: it.id, data: namedFields(it), tagIds });
          return { index, statusCode: 200, id: it.id, errors: [] };
        });
        // All items in a few statements (grouped by the fields they name), each with its audit entry.
        await updateRows(
          "Content",
          writes.map((w) => ({ id: w.id, accountId, ...w.data })),
        );
        // Tag replacements of all items at once: per-item statements make a 10,000-item PUT take minutes.
        const retagged = writes.filter((w) => w.tagIds);
        await inChunks(
          retagged.map((w) => w.id),
          async (chunk) => [await tx.contentTag.deleteMany({ where: { contentId: { in: chunk } } })],
        );
        const links = retagged.flatMap((w) => w.tagIds!.map((tagId) => ({ contentId: w.id, tagId })));
        if (links.length) await tx.contentTag.createMany({ data: links });
        await emitContent(
          tx,
          accountId,
          "content.updated",
          writes.map((w) => w.id),
        );
        return results;
      }, TX);
      await attachRecords(results, ctx, info);
      return { results };
    },
  }),
);

/** The columns an update item names (absent fields stay as stored; null clears); the stage follows the state. */
function namedFields(it: ContentInputShape): Prisma.ContentUncheckedUpdateInput {
  const data: Prisma.ContentUncheckedUpdateInput = { updatedAt: new Date() };
  if (it.title !== undefined) data.title = it.title!;
  if (it.url !== undefined) data.url = it.url;
  if (it.source !== undefined) data.source = it.source;
  if (it.description !== undefined) data.description = it.description;
  if (it.descriptionMd !== undefined) data.descriptionMd = it.descriptionMd;
  if (it.parentId !== undefined) data.parentId = it.parentId;
  if (it.state != null) Object.assign(data, { state: it.state, stage: stageOf(it.state) });
  return data;
}

builder.mutationField("deleteContents", (t) =>
  t.field({
    type: DeletePayload,
    description: "Deletes contents by id. Per-item status: 204 deleted, 404 not found, 400 an id an earlier item of the request names.",
    args: {
      accountId: t.arg.string({ required: true }),
      ids: t.arg.stringList({ required: true, validate: bulkArg }),
    },
    resolve: async (_root, { accountId, ids }, ctx) => {
      await requireAccount(ctx, accountId);
      return deleteByKeys(
        ids,
        { table: "Content", column: "id", accountId },
        async (db, chunk) =>
          (await db.content.findMany({ where: { accountId, id: { in: chunk } }, select: { id: true } })).map((r) => ({ key: r.id, id: r.id })),
        async (tx, rowIds) => {
          // The contents of a deleted folder move to the top level. That is a change of theirs (a
          // new parentId): audited, with its lastUpdateTime (B5 `updatedAfter` finds it) and its
          // webhook, not something the foreign key's SET NULL would do unseen.
          const moved = { accountId, parentId: { in: rowIds }, id: { notIn: rowIds } };
          const children = (await tx.content.findMany({ where: moved, select: { id: true } })).map((c) => c.id);
          if (children.length) {
            await tx.content.updateMany({ where: moved, data: { parentId: null, updatedAt: clock.now() } });
            await emitContent(tx, accountId, "content.updated", children);
          }
          await emitContent(tx, accountId, "content.deleted", rowIds);
          return tx.content.deleteMany({ where: { accountId, id: { in: rowIds } } });
        },
        (id) => `no content with id '${id}'`,
      );
    },
  }),
);
