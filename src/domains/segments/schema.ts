// Segments: a named rule over end users (src/domains/segments/rules.ts) and an ordered list of the
// account's content. Evaluating a segment for one user reads a constant number of rows, whatever
// the rule: the segment, the user's values, the attribute records the rule reaches through.
import { queryFromInfo } from "@pothos/plugin-prisma";
import { type GraphQLResolveInfo, GraphQLString, Kind, valueFromAST } from "graphql";
import { prisma, type Tx, withTransaction } from "../../db/index.js";
import { lockAccount } from "../../db/locks.js";
import { AppError, badRequest, notFound } from "../../errors.js";
import { newId } from "../../ids.js";
import { builder } from "../../schema/builder.js";
import { bulkArg, chunksOf, DeletePayload, deleteByKeys } from "../../schema/bulk.js";
import { afterCursor, CONNECTION_RECORDS, connectionFrom, LIST_LIMITS, pageExtensions, pageLimit, toPage } from "../../schema/pagination.js";
import { longerThan } from "../../text.js";
import { Account, requireAccount } from "../accounts/schema.js";
import { attributeSchema } from "../attributes/schema.js";
import { tagColumnsFor } from "../content/page.js";
import { Content } from "../content/schema.js";
import { decodeValue, endUserSchema, type StoredValue } from "../endUsers/fields.js";
import { checkIdType, EndUserIdType } from "../endUsers/schema.js";
import { completedContent } from "./progress.js";
import { orderedContentFor, type RuleValues, ruleValues, type SegmentRow, segmentRow, segmentWithValues, withLinked } from "./read.js";
import { checkRule, evaluate, type Rule } from "./rules.js";

const NAME_MAX = 200;
const MAX_CONTENTS = 1_000;

const RULE_DOC = `A rule over end users, as JSON:
- \`{"and": [rule, ...]}\`, \`{"or": [rule, ...]}\`, \`{"not": rule}\` combine rules;
- \`{"field": path, "op": op, "value": v}\` is a condition; \`path\` is \`custom.<field>\` (an end-user field) or \`attribute.<primary>.<secondary>\` (a secondary attribute of the integration-attribute record whose primary attribute \`<primary>\` has the value of the user's own field \`<primary>\`);
- \`op\`: \`eq\`, \`ne\`, \`in\` (an array), \`exists\` (no value), \`gt\`/\`gte\`/\`lt\`/\`lte\` (numbers and timestamps in epoch ms), \`contains\` (strings).
A user without a value matches no comparison, matches \`ne\`, and does not \`exist\`.
Example: \`{"and": [{"field": "custom.plan", "op": "in", "value": ["gold", "platinum"]}, {"not": {"field": "attribute.company.region", "op": "eq", "value": "emea"}}]}\``;

/**
 * A user's values for the paths a rule reads (null: no such user), with the records linked through
 * a primary attribute the user holds in a non-string field: those need a statement of their own.
 */
async function withUnlinked(accountId: string, found: RuleValues | null): Promise<((path: string) => unknown) | null> {
  if (!found) return null;
  if (!found.unlinked.length) return found.read;
  const linked = new Map<string, unknown>();
  const records = await prisma.attributeRecord.findMany({
    where: { accountId, OR: found.unlinked.map((l) => ({ attributeName: l.primary, attributeValue: String(l.value) })) },
    select: { attributeName: true, values: true },
  });
  for (const r of records) for (const v of r.values) linked.set(`${r.attributeName}.${v.name}`, decodeValue(v as StoredValue));
  return withLinked(found.read, linked);
}

/**
 * Whether the end user matches the segment (null: the account has no such user), from the values
 * `read` gives. Cached per segment row read, so `matches` and `contentOrder` under one segment
 * field evaluate once. Not per request: a mutation's root fields run one after another, and one
 * may change the rule or the user's values that an earlier one evaluated (each reads its own row).
 */
const evaluations = new WeakMap<SegmentRow, Map<string, Promise<boolean | null>>>();
function evaluation(segment: SegmentRow, endUserId: string, read: (rule: Rule) => Promise<RuleValues | null>): Promise<boolean | null> {
  let cache = evaluations.get(segment);
  if (!cache) evaluations.set(segment, (cache = new Map()));
  let result = cache.get(endUserId);
  if (!result) {
    result = (async () => {
      const rule = JSON.parse(segment.rule) as Rule;
      const values = await withUnlinked(segment.accountId, await read(rule));
      return values ? evaluate(rule, values) : null;
    })();
    // Awaited by the fields that ask for it; one that fails first (an idType check) must not leave
    // a rejection nobody handles.
    result.catch(() => undefined);
    cache.set(endUserId, result);
  }
  return result;
}

/** Whether the end user matches the segment (null: no such user): the user's values in one statement (./read.ts). */
const matches = (segment: SegmentRow, endUserId: string) => evaluation(segment, endUserId, (rule) => ruleValues(segment.accountId, endUserId, rule));

/**
 * The one end user the selection under `segment(id:)` evaluates (`contentOrder` and `matches`
 * with the same `endUserId`, as B16 asks), if any: then the segment's row and that user's values
 * come in one statement, and the evaluation is cached for those fields.
 */
function evaluatedUser(info: GraphQLResolveInfo): string | undefined {
  const users = new Set<unknown>();
  for (const node of info.fieldNodes)
    for (const selection of node.selectionSet?.selections ?? []) {
      if (selection.kind !== Kind.FIELD || (selection.name.value !== "contentOrder" && selection.name.value !== "matches")) continue;
      const arg = selection.arguments?.find((a) => a.name.value === "endUserId");
      users.add(arg ? valueFromAST(arg.value, GraphQLString, info.variableValues) : undefined);
    }
  const [user] = users;
  return users.size === 1 && typeof user === "string" ? user : undefined;
}

/** The segment (null: none) read with the end user's values, its evaluation for them cached with that row. */
async function segmentEvaluatedFor(accountId: string, id: string, endUserId: string): Promise<SegmentRow | null> {
  const found = await segmentWithValues(accountId, id, endUserId);
  if (!found) return null;
  void evaluation(found.segment, endUserId, async () => found.values);
  return found.segment;
}

/** The segment's content in its order, selected as the query asks. */
async function orderedContents(segmentId: string, query: object) {
  const links = await prisma.segmentContent.findMany({ where: { segmentId }, orderBy: { position: "asc" }, select: { contentId: true } });
  if (!links.length) return [];
  const rows = await prisma.content.findMany({ ...query, where: { id: { in: links.map((l) => l.contentId) } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return links.map((l) => byId.get(l.contentId)).filter((r) => r !== undefined);
}

export const Segment = builder.prismaObject("Segment", {
  description: `A segment of an account's end users and the order of content shown to them. ${RULE_DOC}`,
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    rule: t.field({ type: "JSON", description: RULE_DOC, resolve: (s) => JSON.parse(s.rule) }),
    contentIds: t.stringList({
      description: "The segment's content, in order.",
      select: { contents: { orderBy: { position: "asc" }, select: { contentId: true } } },
      resolve: (s) => s.contents.map((c) => c.contentId),
    }),
    contents: t.prismaField({
      type: [Content],
      description: "The segment's content, in order.",
      resolve: (query, s) => orderedContents(s.id, query),
    }),
    creationTime: t.expose("createdAt", { type: "Timestamp" }),
    lastUpdateTime: t.expose("updatedAt", { type: "Timestamp" }),
    matches: t.boolean({
      nullable: true,
      description: "Whether the end user matches the rule (null: the account has no such end user).",
      args: { endUserId: t.arg.string({ required: true }), idType: t.arg({ type: EndUserIdType, required: false }) },
      resolve: async (s, { endUserId, idType }, ctx) => {
        await checkIdType(ctx, s.accountId, idType);
        return matches(s as SegmentRow, endUserId);
      },
    }),
    contentOrder: t.field({
      type: [Content],
      nullable: true,
      description:
        "The segment's content in its order for this end user: all of it when the user matches, none when not (null: no such end user). Content the user has completed (a flow_completed or task_completed event for it) moves after the rest, each part keeping the segment's order.",
      args: { endUserId: t.arg.string({ required: true }), idType: t.arg({ type: EndUserIdType, required: false }) },
      resolve: async (s, { endUserId, idType }, ctx, info) => {
        await checkIdType(ctx, s.accountId, idType);
        const matched = await matches(s as SegmentRow, endUserId);
        if (matched === null) return null;
        if (!matched) return [];
        // The content is read only for users who match, with what the query selects: Content's own
        // fields, with or without tags (every selection today), in one statement with the user's
        // completions (./read.ts); anything plugin-prisma would plan through Prisma.
        const query = queryFromInfo({ context: ctx, info });
        if (JSON.stringify(query) === "{}") {
          return (await orderedContentFor(s.id, s.accountId, endUserId, tagColumnsFor(info, [[]]))) as Awaited<ReturnType<typeof orderedContents>>;
        }
        const contents = await orderedContents(s.id, query);
        const done = await completedContent(
          s.accountId,
          endUserId,
          contents.map((c) => c.id),
        );
        return done.size ? [...contents.filter((c) => !done.has(c.id)), ...contents.filter((c) => done.has(c.id))] : contents;
      },
    }),
  }),
});

builder.prismaObjectField(Account, "segments", (t) =>
  t.connection({
    type: Segment,
    extensions: pageExtensions(LIST_LIMITS.standard),
    description: "The account's segments, oldest first (keyset pagination).",
    resolve: async (account, args, ctx, info) => {
      const limit = pageLimit(args, LIST_LIMITS.standard);
      const query = queryFromInfo({ context: ctx, info, paths: CONNECTION_RECORDS });
      const rows = await prisma.segment.findMany({
        ...query,
        where: { AND: [{ accountId: account.id }, afterCursor("createdAt", args.after, true, account.id)] },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        take: limit + 1,
      });
      return connectionFrom(toPage(rows, limit), account.id, (r) => r.createdAt);
    },
  }),
);

builder.prismaObjectField(Account, "segment", (t) =>
  t.prismaField({
    type: Segment,
    nullable: true,
    description: "One segment by id (null when the account has none with that id).",
    args: { id: t.arg.string({ required: true }) },
    // The segment's own fields (B16 and most reads): one statement on the driver; relations through Prisma.
    resolve: (query, account, { id }, _ctx, info) => {
      if (JSON.stringify(query) !== "{}") return prisma.segment.findUnique({ ...query, where: { id, accountId: account.id } });
      const endUserId = evaluatedUser(info);
      return endUserId === undefined ? segmentRow(account.id, id) : segmentEvaluatedFor(account.id, id, endUserId);
    },
  }),
);

// ---- writes ----------------------------------------------------------------------------------

const SegmentInput = builder.inputType("SegmentInput", {
  description: "A segment to create, or the parts of one to change (absent fields stay).",
  fields: (t) => ({
    name: t.string({
      required: false,
      description: `Required on create; stored trimmed (white space at either end is dropped); unique in the account; 1 to ${NAME_MAX} characters.`,
    }),
    rule: t.field({ type: "JSON", required: false, description: `Required on create. ${RULE_DOC}` }),
    contentIds: t.stringList({ required: false, description: `The content shown to matching users, in order (at most ${MAX_CONTENTS}, each once).` }),
  }),
});

/**
 * The input with its name stored trimmed, as tag names are (` Gold ` is the segment `Gold`, and
 * takes that name: 409 when another segment has it); a name of white space alone is empty (400).
 */
function trimmedName<I extends { name?: string | null }>(input: I): I {
  return input.name == null ? input : { ...input, name: input.name.trim() };
}

/** Checks a segment's parts against the account (schemas, content) inside the writing transaction. */
async function checkInput(tx: Tx, accountId: string, input: typeof SegmentInput.$inferInput, creating: boolean) {
  if (creating && (input.name == null || input.rule == null))
    throw badRequest("name and rule are required", [{ path: input.name == null ? "name" : "rule", message: "required" }]);
  // Characters are code points, as file names count them: `length` counts UTF-16 units, and took
  // 150 emoji for 300 characters.
  if (input.name != null && (input.name.trim() === "" || longerThan(input.name, NAME_MAX)))
    throw badRequest(`name must be 1 to ${NAME_MAX} characters`, [{ path: "name", message: "bad length" }]);
  let rule: string | undefined;
  if (input.rule != null) {
    const [endUser, attribute] = await Promise.all([endUserSchema(accountId, tx), attributeSchema(accountId, tx)]);
    rule = JSON.stringify(
      checkRule(input.rule, { endUser: new Map(endUser.map((f) => [f.name, f])), attribute: new Map(attribute.map((f) => [f.name, f])) }).rule,
    );
  }
  const ids = input.contentIds ?? undefined;
  if (ids) {
    if (ids.length > MAX_CONTENTS) throw badRequest(`contentIds holds at most ${MAX_CONTENTS} ids`, [{ path: "contentIds", message: "too many" }]);
    const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (repeated.length) throw badRequest(`contentIds repeats ${[...new Set(repeated)].join(", ")}`, [{ path: "contentIds", message: "repeated id" }]);
    const found = new Set<string>();
    for (const part of chunksOf(ids))
      for (const c of await tx.content.findMany({ where: { accountId, id: { in: part } }, select: { id: true } })) found.add(c.id);
    const unknown = ids.filter((id) => !found.has(id));
    if (unknown.length)
      throw badRequest(`contentIds names content the account does not have: ${unknown.slice(0, 20).join(", ")}`, [
        { path: "contentIds", message: "unknown content" },
      ]);
  }
  return { rule, ids };
}

/** 409 when another segment of the account has the name (the unique index still guards a race). */
async function nameFree(tx: Tx, accountId: string, name: string, self?: string) {
  const other = await tx.segment.findUnique({ where: { accountId_name: { accountId, name } }, select: { id: true } });
  if (other && other.id !== self) throw new AppError(409, `a segment named '${name}' already exists (${other.id})`, [{ path: "name", message: "taken" }]);
}

async function writeContents(tx: Tx, segmentId: string, ids: string[] | undefined, replacing: boolean) {
  if (!ids) return;
  if (replacing) await tx.segmentContent.deleteMany({ where: { segmentId } });
  if (ids.length) await tx.segmentContent.createMany({ data: ids.map((contentId, position) => ({ segmentId, contentId, position })) });
}

// Segment writes take the account lock shared: the schemas they were checked against cannot change
// until they commit (schema writes take it exclusively).
builder.mutationField("createSegment", (t) =>
  t.prismaField({
    type: Segment,
    description: "Creates a segment. 400 names what is wrong (a rule's path, an unknown content id); 409 when the name is taken.",
    args: { accountId: t.arg.string({ required: true }), input: t.arg({ type: SegmentInput, required: true }) },
    resolve: async (query, _root, { accountId, input: given }, ctx) => {
      await requireAccount(ctx, accountId);
      const input = trimmedName(given);
      const id = await withTransaction(async (tx) => {
        await lockAccount(tx, accountId, "share");
        const { rule, ids } = await checkInput(tx, accountId, input, true);
        await nameFree(tx, accountId, input.name!);
        const now = new Date();
        const id = newId("seg");
        await tx.segment.create({ data: { id, accountId, name: input.name!, rule: rule!, createdAt: now, updatedAt: now } });
        await writeContents(tx, id, ids, false);
        return id;
      });
      return prisma.segment.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);

builder.mutationField("updateSegment", (t) =>
  t.prismaField({
    type: Segment,
    description: "Changes a segment's name, rule or content order (absent fields stay). 404 for an unknown segment.",
    args: { accountId: t.arg.string({ required: true }), id: t.arg.string({ required: true }), input: t.arg({ type: SegmentInput, required: true }) },
    resolve: async (query, _root, { accountId, id, input: given }, ctx) => {
      await requireAccount(ctx, accountId);
      const input = trimmedName(given);
      await withTransaction(async (tx) => {
        await lockAccount(tx, accountId, "share");
        const { rule, ids } = await checkInput(tx, accountId, input, false);
        if (input.name != null) await nameFree(tx, accountId, input.name, id);
        const changed = await tx.segment.updateMany({
          where: { id, accountId },
          data: { updatedAt: new Date(), ...(input.name != null ? { name: input.name } : {}), ...(rule ? { rule } : {}) },
        });
        if (!changed.count) throw notFound(`No segment with id '${id}'.`);
        await writeContents(tx, id, ids, true);
      });
      return prisma.segment.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);

builder.mutationField("deleteSegments", (t) =>
  t.field({
    type: DeletePayload,
    description: "Deletes segments by id. Per-item status: 204, 404, 400 an id an earlier item of the request names.",
    args: { accountId: t.arg.string({ required: true }), ids: t.arg.stringList({ required: true, validate: bulkArg }) },
    resolve: async (_root, { accountId, ids }, ctx) => {
      await requireAccount(ctx, accountId);
      return deleteByKeys(
        ids,
        { table: "Segment", column: "id", accountId },
        async (db, chunk) =>
          (await db.segment.findMany({ where: { accountId, id: { in: chunk } }, select: { id: true } })).map((r) => ({ key: r.id, id: r.id })),
        (tx, rowIds) => tx.segment.deleteMany({ where: { accountId, id: { in: rowIds } } }),
        (id) => `no segment with id '${id}'`,
      );
    },
  }),
);
