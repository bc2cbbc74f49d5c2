// End users: anyone who engages with content in the parent application, identified by the id of
// the account's identification method. Custom values (typed by the end-user schema) and user
// actions live in separate tables, so a read asks the database only for what the query selects.

import { queryFromInfo } from "@pothos/plugin-prisma";
import type { GraphQLResolveInfo } from "graphql";
import { createRows, eraseAuditTrail, updateRows } from "../../audit/recorder.js";
import type { Context } from "../../context.js";
import { dbKind, prisma, type Tx, withTransaction } from "../../db/index.js";
import { deleteWhere, selectWhere } from "../../db/insert.js";
import { ConcurrentChange, lockAccount, lockRows } from "../../db/locks.js";
import { badRequest } from "../../errors.js";
import type { Prisma } from "../../generated/sqlite/client.js";
import { newId } from "../../ids.js";
import { builder } from "../../schema/builder.js";
import {
  bulkArg,
  checkListSafeName,
  chunksOf,
  DeletePayload,
  deleteByKeys,
  fail,
  firstOccurrences,
  type ItemResult,
  ItemResultInterface,
  inTurn,
  payloadType,
} from "../../schema/bulk.js";
import { afterCursor, CONNECTION_RECORDS, connectionFrom, LIST_LIMITS, pageExtensions, pageLimit, toPage } from "../../schema/pagination.js";
import { longerThan } from "../../text.js";
import { Account, requireAccount } from "../accounts/schema.js";
import { lockEventOrder } from "../eventExport/order.js";
import { anonymiseEvents, newPseudonym, reservedEndUserIdProblem } from "../events/erasure.js";
import { eraseEndUsersFromRollups } from "../reports/rollups.js";
import { anonymiseWebhookMessages, emitEndUsersDeleted } from "../webhooks/emit.js";
import { decodeValue, encodeValue, endUserSchema, type SchemaField, type StoredValue, withClearText } from "./fields.js";
import { endUsersWith, endUserWith } from "./read.js";

const ID_MAX = 256;
const ACTION_ID_MAX = 128;
const TX = { timeout: 300_000, maxWait: 10_000 } as const;

// ---- identification --------------------------------------------------------------------------

export const EndUserIdType = builder.enumType("EndUserIdType", {
  description: "The identification method a caller used for an end-user id (REST: svc-app-user-id, svc-cookie-user-id).",
  values: {
    APP: { description: "An id passed or detected by an application (account method app_user_id or crm_user_id)." },
    COOKIE: { description: "The id of the cookie set in the user's browser (account method cookie)." },
  } as const,
});

/**
 * A caller-declared id type must match the account's method; a mismatch is the caller's error. The
 * method comes with the caller's identity (no query); the database is asked only without one.
 */
export async function checkIdType(ctx: Context, accountId: string, idType: "APP" | "COOKIE" | null | undefined): Promise<void> {
  if (!idType) return;
  const known = (await ctx.identity()).accounts.get(accountId);
  const account = known ?? (await prisma.account.findUniqueOrThrow({ where: { id: accountId }, select: { idMethod: true } }));
  const matches = idType === "COOKIE" ? account.idMethod === "cookie" : account.idMethod !== "cookie";
  if (!matches) {
    throw badRequest(`the id type does not match the account's identification method (${account.idMethod})`, [
      // The argument's name; a REST route names the parameter it took it from (its `names`).
      { path: "idType", message: `account uses ${account.idMethod}` },
    ]);
  }
}

// ---- types -----------------------------------------------------------------------------------

type ActionRow = { actionId: string; count: number; value: bigint | number | null };
/**
 * A user this request created, as the read of it would return it: the row with its values and
 * actions. A field added to EndUser that reads another relation must be filled here too
 * (test/rest-endusers/style-b.test.ts compares such a reply with a read of the same user).
 */
type NewUser = Prisma.EndUserCreateManyInput & { values: (StoredValue & { field: string })[]; actions: ActionRow[] };

// Both action maps read the `actions` relation, which plugin-prisma loads with the query that
// reads the users (one statement per page or slice, whichever of the two fields are asked for), so
// they resolve synchronously: a 10,000-user reply is not 20,000 pending promises.
const actionCounts = (rows: ActionRow[]) => Object.fromEntries(rows.map((r) => [r.actionId, r.count]));
const actionValues = (rows: ActionRow[]) => Object.fromEntries(rows.flatMap((r) => (r.value == null ? [] : [[r.actionId, Number(r.value)]])));

export const EndUser = builder.prismaObject("EndUser", {
  fields: (t) => ({
    id: t.exposeID("externalId", { description: "The id in the account's identification method." }),
    creationTime: t.expose("createdAt", { type: "Timestamp" }),
    lastUpdateTime: t.expose("updatedAt", { type: "Timestamp" }),
    custom: t.field({
      type: "CustomValues",
      description: "Custom field values by field name (encrypted_string values decrypted).",
      select: { values: true },
      resolve: (u) => Object.fromEntries(u.values.map((v) => [v.field, decodeValue(v as StoredValue)])),
    }),
    userActionCount: t.field({
      type: "UserActionCounts",
      description: "Count per user-action id.",
      select: { actions: { select: { actionId: true, count: true, value: true } } },
      resolve: (u) => actionCounts(u.actions),
    }),
    userActions: t.field({
      type: "UserActionValues",
      description: "The integer last reported per user-action id (e.g. a time in epoch ms).",
      select: { actions: { select: { actionId: true, count: true, value: true } } },
      resolve: (u) => actionValues(u.actions),
    }),
  }),
});

const CustomFilter = builder.inputType("CustomFieldFilter", {
  fields: (t) => ({
    field: t.string({ required: true }),
    equals: t.field({ type: "JSON", required: true, description: "A value of the field's type." }),
  }),
});

const EndUserFilter = builder.inputType("EndUserFilter", {
  fields: (t) => ({
    createdAfter: t.field({ type: "Timestamp", required: false }),
    updatedAfter: t.field({ type: "Timestamp", required: false }),
    custom: t.field({ type: [CustomFilter], required: false, description: "All must match." }),
  }),
});

async function endUserWhere(accountId: string, f: typeof EndUserFilter.$inferInput | null | undefined): Promise<Prisma.EndUserWhereInput> {
  if (!f) return {};
  const conditions: Prisma.EndUserWhereInput[] = [];
  if (f.createdAfter) conditions.push({ createdAt: { gt: f.createdAfter } });
  if (f.updatedAfter) conditions.push({ updatedAt: { gt: f.updatedAfter } });
  if (f.custom?.length) {
    const schema = new Map((await endUserSchema(accountId)).map((s) => [s.name, s]));
    for (const c of f.custom) {
      const field = schema.get(c.field);
      if (!field) throw badRequest(`unknown custom field '${c.field}'`, [{ path: "filter.custom", message: "unknown field" }]);
      if (field.type === "encrypted_string") throw badRequest(`'${c.field}' is encrypted and cannot be filtered on`);
      const enc = encodeValue(field, c.equals);
      if ("problem" in enc) throw badRequest(enc.problem, [{ path: "filter.custom", message: enc.problem }]);
      const { type: _t, ...cols } = enc.stored;
      const column = Object.entries(cols).find(([, v]) => v !== null)!;
      // The account too: the typed-value indexes lead with it (accountId, field, column).
      conditions.push({ values: { some: { accountId, field: c.field, [column[0]]: column[1] } } });
    }
  }
  return { AND: conditions };
}

builder.prismaObjectField(Account, "endUsers", (t) =>
  t.connection({
    type: EndUser,
    extensions: pageExtensions(LIST_LIMITS.standard),
    description: "The account's end users in creation order (keyset pagination), optionally filtered.",
    args: {
      filter: t.arg({ type: EndUserFilter, required: false }),
      orderBy: t.arg({ type: builder.enumType("EndUserOrder", { values: ["CREATED", "UPDATED"] as const }), required: false, defaultValue: "CREATED" }),
    },
    resolve: async (account, args, ctx, info) => {
      const limit = pageLimit(args, LIST_LIMITS.standard);
      // By update: ties broken by the wire id, the contract's (lastUpdateTime, id) order (a bulk write
      // gives thousands of users one time); by creation, by the internal id (creation order).
      const updated = args.orderBy === "UPDATED";
      const field = updated ? "updatedAt" : "createdAt";
      const tie = updated ? "externalId" : "id";
      // A cursor names its order: one of the other order is a 400, not a position read in this one.
      // Cursors issued before they named it are read as creation cursors (all of them were, but
      // those of updatedSince walks, which cannot be told apart): an untagged cursor is refused by
      // the update order and a sync resumes from its last lastUpdateTime (docs/events-in-and-out.md).
      const order = updated ? { name: "UPDATED" } : { name: "CREATED", untagged: true };
      const query = queryFromInfo({ context: ctx, info, paths: CONNECTION_RECORDS });
      const rows = await prisma.endUser.findMany({
        ...query,
        where: {
          AND: [{ accountId: account.id }, await endUserWhere(account.id, args.filter), afterCursor(field, args.after, true, account.id, "asc", tie, order)],
        },
        orderBy: [{ [field]: "asc" }, { [tie]: "asc" }],
        take: limit + 1,
      });
      return connectionFrom(
        toPage(rows, limit),
        account.id,
        (r) => r[field],
        (r) => r[tie],
        order.name,
      );
    },
  }),
);

/** The relations a planned query includes, when ./read.ts can serve it: only `values` and `actions`. */
function directInclude(query: object): { values: boolean; actions: boolean } | null {
  const keys = Object.keys(query);
  if (keys.length === 0) return { values: false, actions: false };
  if (keys.length !== 1 || keys[0] !== "include") return null;
  const include = (query as { include: Record<string, unknown> }).include;
  const names = Object.keys(include);
  if (!names.every((n) => n === "values" || n === "actions")) return null;
  if (include.values !== undefined && include.values !== true) return null;
  return { values: "values" in include, actions: "actions" in include };
}

builder.prismaObjectField(Account, "endUser", (t) =>
  t.prismaField({
    type: EndUser,
    nullable: true,
    description: "One end user by id; `idType` (if given) must match the account's identification method.",
    args: { id: t.arg.string({ required: true }), idType: t.arg({ type: EndUserIdType, required: false }) },
    resolve: async (query, account, { id, idType }, ctx) => {
      await checkIdType(ctx, account.id, idType);
      // What B14 and segment evaluations select (the user with values and/or actions) is one
      // statement on the driver (./read.ts); any other selection goes through Prisma.
      const include = directInclude(query);
      if (include) return (await endUserWith(account.id, id, include)) as Awaited<ReturnType<typeof prisma.endUser.findUnique>>;
      return prisma.endUser.findUnique({ ...query, where: { accountId_externalId: { accountId: account.id, externalId: id } } });
    },
  }),
);

// ---- writes ----------------------------------------------------------------------------------

const EndUserInput = builder.inputType("EndUserInput", {
  fields: (t) => ({
    id: t.string({ required: false, description: "Required: the end user's id." }),
    custom: t.field({
      type: "CustomValues",
      required: false,
      description: "Field → value; null clears a value; absent fields stay. The map itself cannot be null.",
    }),
    userActionCount: t.field({
      type: "UserActionCounts",
      required: false,
      description: "User-action id → count (non-negative integer); absent ids stay. Cannot be null.",
    }),
    userActions: t.field({ type: "UserActionValues", required: false, description: "User-action id → integer; absent ids stay. Cannot be null." }),
  }),
});

type EndUserItem = ItemResult<unknown>;
const EndUserResult = builder.objectRef<EndUserItem>("EndUserResult").implement({
  interfaces: [ItemResultInterface],
  isTypeOf: () => true,
  fields: (t) => ({ endUser: t.field({ type: EndUser, nullable: true, resolve: (r, _args, ctx) => inTurn(ctx, r.index, (r.record ?? null) as never) }) }),
});
const EndUsersPayload = payloadType<EndUserItem>("EndUsersPayload", EndUserResult);

/** An end user's stored action as the bulk write reads it (selectWhere: PostgreSQL's bigint `value` comes as text). */
interface StoredAction {
  endUserId: string;
  actionId: string;
  count: number;
  value: string | number | bigint | null;
}

interface WriteItem {
  id?: unknown;
  custom?: unknown;
  userActionCount?: unknown;
  userActions?: unknown;
}
const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** userActionCount is stored in a 32-bit integer column. */
const COUNT_MAX = 2_147_483_647;

function actionMap(value: unknown, what: string, min: number | null, max = Number.MAX_SAFE_INTEGER): { map?: Map<string, number>; problems: string[] } {
  if (value === undefined) return { problems: [] };
  if (value === null) return { problems: [`${what} cannot be null: give an object of user-action id → integer`] };
  if (!isPlainObject(value)) return { problems: [`${what} must be an object of user-action id → integer`] };
  const map = new Map<string, number>();
  const problems: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (k === "" || longerThan(k, ACTION_ID_MAX)) problems.push(`${what}: user-action ids must be 1-${ACTION_ID_MAX} characters`);
    else if (typeof v !== "number" || !Number.isSafeInteger(v) || (min !== null && v < min))
      problems.push(`${what}.${k} must be ${min === 0 ? "a non-negative" : "an"} integer`);
    else if (v > max) problems.push(`${what}.${k} must be at most ${max}`);
    else map.set(k, v);
  }
  return { map, problems };
}

/**
 * Creates or updates end users. Each item is checked alone (id, custom values against the schema,
 * action maps); the valid ones are then written in one transaction, merging into what is stored:
 * named custom fields and actions change, the others stay.
 */
export async function upsertEndUsers(accountId: string, items: WriteItem[]): Promise<EndUserItem[]> {
  // Decided inside the transaction: the schema under a shared account lock (a concurrent schema
  // change waits, see ./fields.ts), the named end users locked in id order, so concurrent
  // upserts of one user merge instead of overwriting, and a create that loses the race to a
  // concurrent one runs the transaction again as an update.
  return withTransaction(async (tx) => {
    await lockAccount(tx, accountId, "share");
    const schema = new Map<string, SchemaField>((await endUserSchema(accountId, tx)).map((f) => [f.name, f]));
    const first = firstOccurrences(items.map((it) => it.id));
    type Valid = {
      index: number;
      externalId: string;
      values: Map<string, StoredValue | null>;
      counts?: Map<string, number>;
      actionValues?: Map<string, number>;
    };
    const valid: Valid[] = [];
    const check = (it: WriteItem, index: number): EndUserItem => {
      const problems: string[] = [];
      const externalId = it.id;
      if (typeof externalId !== "string" || externalId.trim() === "") return fail(index, 400, ["id is required (a non-empty string)"]);
      if (longerThan(externalId, ID_MAX)) problems.push(`id must be at most ${ID_MAX} characters`);
      const comma = checkListSafeName(externalId, "id");
      if (comma) problems.push(comma);
      const reserved = reservedEndUserIdProblem(externalId, "id");
      if (reserved) problems.push(reserved);
      if (first.get(externalId) !== index) problems.push(`id '${externalId}' appears more than once in this request`);
      const values = new Map<string, StoredValue | null>();
      // A map as a whole has no empty value to clear to: null names no field, and would otherwise be ignored without a word.
      if (it.custom === null) problems.push("custom cannot be null: give an object of field name → value (a field given as null is cleared)");
      if (it.custom != null) {
        if (!isPlainObject(it.custom)) problems.push("custom must be an object of field name → value");
        else
          for (const [name, value] of Object.entries(it.custom)) {
            const field = schema.get(name);
            if (!field) {
              problems.push(`unknown custom field '${name.slice(0, 80)}' (add it to the end-user schema first)`);
              continue;
            }
            if (value === null) {
              values.set(name, null);
              continue;
            }
            const enc = encodeValue(field, value);
            if ("problem" in enc) problems.push(enc.problem);
            else values.set(name, enc.stored);
          }
      }
      const counts = actionMap(it.userActionCount, "userActionCount", 0, COUNT_MAX);
      const actionValues = actionMap(it.userActions, "userActions", null);
      problems.push(...counts.problems, ...actionValues.problems);
      if (problems.length) return fail(index, 400, problems, externalId);
      valid.push({ index, externalId, values, counts: counts.map, actionValues: actionValues.map });
      return { index, statusCode: 0, id: externalId, errors: [] }; // status set once we know new vs existing
    };
    // Checked in turns of 1,000 (encrypting values is CPU work): other requests are served between.
    const results: EndUserItem[] = [];
    for (const [index, it] of items.entries()) {
      if (index > 0 && index % 1_000 === 0) await new Promise(setImmediate);
      results.push(check(it, index));
    }
    if (!valid.length) return results;

    const now = new Date();
    {
      // The named users that exist, locked in the order of their ids (externalId; src/db/locks.ts), read by the same statement.
      const existing = new Map<string, string>();
      for (const r of await lockRows(
        tx,
        "EndUser",
        "externalId",
        valid.map((v) => v.externalId),
        { accountId, select: ["id", "externalId"] },
      ))
        existing.set(r.externalId as string, r.id as string);
      const created: (Prisma.EndUserCreateManyInput & { createdAt: Date; updatedAt: Date })[] = [];
      const rowId = new Map<string, string>();
      for (const v of valid) {
        const id = existing.get(v.externalId);
        results[v.index]!.statusCode = id ? 200 : 201;
        if (id) rowId.set(v.externalId, id);
        else {
          const nid = newId("u");
          rowId.set(v.externalId, nid);
          created.push({ id: nid, accountId, externalId: v.externalId, createdAt: now, updatedAt: now });
        }
      }
      created.sort((a, b) => (a.externalId < b.externalId ? -1 : 1));
      if ((await createRows("EndUser", created, { skipDuplicates: true })) < created.length)
        throw new ConcurrentChange("an end user was created by a concurrent request");
      // A new user's reply is exactly what this transaction writes (below): no read-back.
      const fresh = new Map<string, NewUser>(created.map((u) => [u.id, { ...u, values: [], actions: [] }]));
      // The users that existed are updated now (their audit entries: `update` of updatedAt), in one
      // statement from a JSON parameter (src/db/insert.ts updateRows): an updateMany per chunk of
      // ids went through Prisma's client twice (the audit's read of the records, then the update),
      // which deep-copies and plans arguments of thousands of ids each time.
      await updateRows(
        "EndUser",
        [...existing].map(([externalId, id]) => ({ id, accountId, externalId, updatedAt: now })),
      );

      // Custom values: replace exactly the (user, field) pairs named; null leaves the pair empty.
      const valueKeys = valid.flatMap((v) => [...v.values.keys()].map((field) => ({ endUserId: rowId.get(v.externalId)!, field })));
      if (valueKeys.length) {
        const existingUsers = valid.filter((v) => existing.has(v.externalId) && v.values.size);
        for (const group of groupByFields(existingUsers, (v) => [...v.values.keys()])) {
          for (const part of chunksOf(group.items.map((v) => rowId.get(v.externalId)!))) {
            await tx.endUserValue.deleteMany({ where: { endUserId: { in: part }, field: { in: group.fields } } });
          }
        }
        const rows = valid.flatMap((v) =>
          [...v.values.entries()]
            .filter(([, s]) => s !== null)
            .map(([field, s]) => withClearText(s!, { endUserId: rowId.get(v.externalId)!, accountId, field, ...s! })),
        );
        await createRows("EndUserValue", rows);
        for (const r of rows) fresh.get(r.endUserId)?.values.push(r);
      }

      // User actions: counts and values merge per action id with what is stored.
      const withActions = valid.filter((v) => v.counts?.size || v.actionValues?.size);
      if (withActions.length) {
        const actionIdsOf = (v: Valid) => [...(v.counts?.keys() ?? []), ...(v.actionValues?.keys() ?? [])];
        // (user ids, action ids) chunk pairs covering every pair named of users that existed (a new
        // user has no stored actions), each small enough to bind.
        const blocks = chunksOf(withActions.filter((v) => existing.has(v.externalId))).flatMap((users) => {
          const ids = users.map((v) => rowId.get(v.externalId)!);
          return chunksOf([...new Set(users.flatMap(actionIdsOf))]).map((actionIds) => ({ ids, actionIds }));
        });
        const stored = new Map<string, StoredAction>();
        for (const b of blocks) {
          const where = { endUserId: { in: b.ids }, actionId: { in: b.actionIds } };
          for (const r of (await selectWhere(tx, dbKind(), "EndUserAction", ["endUserId", "actionId", "count", "value"], where))! as unknown as StoredAction[])
            stored.set(`${r.endUserId}\u0000${r.actionId}`, r);
        }
        const rows: Prisma.EndUserActionCreateManyInput[] = [];
        for (const v of withActions) {
          const endUserId = rowId.get(v.externalId)!;
          for (const actionId of new Set([...(v.counts?.keys() ?? []), ...(v.actionValues?.keys() ?? [])])) {
            const old = stored.get(`${endUserId}\u0000${actionId}`);
            const value = v.actionValues?.get(actionId);
            // Plain numbers (safe integers, checked above): the audit entry serialises them as JSON.
            rows.push({
              endUserId,
              actionId,
              count: v.counts?.get(actionId) ?? old?.count ?? 0,
              value: value !== undefined ? value : old?.value != null ? Number(old.value) : null,
            });
          }
        }
        if (stored.size) for (const b of blocks) await tx.endUserAction.deleteMany({ where: { endUserId: { in: b.ids }, actionId: { in: b.actionIds } } });
        await createRows("EndUserAction", rows);
        for (const r of rows) fresh.get(r.endUserId)?.actions.push(r as ActionRow);
      }
      for (const v of valid) {
        const u = fresh.get(rowId.get(v.externalId)!);
        if (u) results[v.index]!.record = u;
      }
    }
    return results;
  }, TX);
}

/**
 * Deletes end users (by row id) with their values and actions, and erases them everywhere else, in
 * the caller's transaction and in a fixed number of statements per chunk: their events are
 * anonymised under one random pseudonym each (src/domains/events/erasure.ts), their per-user report
 * rollups move to that pseudonym (src/domains/reports/rollups.ts), and so do the engagement webhook
 * messages about them (src/domains/webhooks/emit.ts); the audit entries about them are rewritten to
 * another, unrelated pseudonym without the values (src/audit/recorder.ts).
 */
async function eraseEndUsers(tx: Tx, accountId: string, rowIds: string[]): Promise<void> {
  const rows = await tx.endUser.findMany({ where: { accountId, id: { in: rowIds } }, select: { id: true, accountId: true, externalId: true } });
  const erased = rows.map((row) => ({ row, pseudonym: newPseudonym() }));
  await tx.endUser.deleteMany({ where: { accountId, id: { in: rowIds } } });
  await deleteChildren(tx, rowIds);
  const pseudonyms = erased.map((e) => ({ endUserId: e.row.externalId, pseudonym: e.pseudonym }));
  await anonymiseEvents(tx, accountId, pseudonyms);
  await eraseEndUsersFromRollups(tx, accountId, pseudonyms);
  await anonymiseWebhookMessages(tx, accountId, pseudonyms);
  // The audit trail gets pseudonyms of its own. The deletion's entry and the end_user.deleted message
  // (which names the user, for the customer's systems, and stays in the delivery log) are written at
  // one instant; under the events' pseudonym the pair would tie the user's id to their whole history.
  await eraseAuditTrail(
    "EndUser",
    rows.map((row) => ({ row, pseudonym: newPseudonym() })),
  );
}

/**
 * The values and actions of deleted end users, after them (the same lock order as a write: the end
 * user's row first). No foreign key cascades them on PostgreSQL (migration
 * 20261126070000_end_user_children_without_foreign_key); raw statements, so that the audit does not
 * fold the erased values into the entry that eraseAuditTrail strips anyway.
 */
async function deleteChildren(tx: Tx, rowIds: string[]): Promise<void> {
  for (const model of ["EndUserValue", "EndUserAction"])
    if ((await deleteWhere(tx, dbKind(), model, { endUserId: { in: rowIds } })) === null)
      throw new Error(`deleteChildren: ${model}.endUserId is no String column`);
}

/** Groups items that name the same set of fields, so one delete serves each group. */
function groupByFields<T>(items: T[], fieldsOf: (t: T) => string[]): { fields: string[]; items: T[] }[] {
  const groups = new Map<string, { fields: string[]; items: T[] }>();
  for (const it of items) {
    const fields = fieldsOf(it);
    // Sorted only when out of order: a sort allocates its work space (~1 KB), per item of 10,000.
    if (fields.some((f, i) => i > 0 && fields[i - 1]! > f)) fields.sort();
    const key = fields.join("\u0000");
    const g = groups.get(key) ?? { fields, items: [] };
    g.items.push(it);
    groups.set(key, g);
  }
  return [...groups.values()];
}

/**
 * Puts each written user on its result, shaped as the query's selection reads it. Users this request
 * created already carry what was written (every column the reply can select); the updated ones are
 * read back, in slices of 1,000 (between slices other requests get their turn): what the REST
 * routes select (the user with values and/or actions) in one statement per slice on the driver
 * (./read.ts), any other selection through Prisma, which maps each row synchronously (~25 µs a
 * row: a 2,000-user slice with its values held the event loop for ~300 ms).
 */
async function attachEndUsers(accountId: string, results: EndUserItem[], ctx: object, info: GraphQLResolveInfo, path: string[]) {
  const ok = results.filter((r) => r.statusCode < 300 && r.id);
  if (!ok.length) return;
  // Also records, for the fields below the path, that their selection is loaded (created rows included).
  const query = queryFromInfo({ context: ctx, info, path, typeName: "EndUser" });
  const toRead = ok.filter((r) => !r.record);
  const byId = new Map<string, unknown>();
  const include = directInclude(query);
  for (const part of chunksOf(
    toRead.map((r) => r.id!),
    1_000,
  )) {
    const rows = include
      ? await endUsersWith(accountId, part, include)
      : await prisma.endUser.findMany({ ...query, where: { accountId, externalId: { in: part } } });
    for (const r of rows) byId.set(r.externalId as string, r);
  }
  for (const r of toRead) r.record = byId.get(r.id!) ?? null;
}

builder.mutationField("upsertEndUsers", (t) =>
  t.field({
    type: EndUsersPayload,
    description: "Creates or updates end users (up to 10,000). Per-item status: 201 created, 200 updated, 400 invalid.",
    args: { accountId: t.arg.string({ required: true }), input: t.arg({ type: [EndUserInput], required: true, validate: bulkArg }) },
    resolve: async (_root, { accountId, input }, ctx, info) => {
      await requireAccount(ctx, accountId);
      const results = await upsertEndUsers(accountId, input);
      await attachEndUsers(accountId, results, ctx, info, ["results", "endUser"]);
      return { results };
    },
  }),
);

builder.mutationField("upsertEndUser", (t) =>
  t.field({
    type: EndUserResult,
    description: "Creates or updates one end user's custom fields. statusCode: 201 created, 200 updated, 400 invalid.",
    args: {
      accountId: t.arg.string({ required: true }),
      id: t.arg.string({ required: true }),
      custom: t.arg({ type: "CustomValues", required: true }),
    },
    resolve: async (_root, { accountId, id, custom }, ctx, info) => {
      await requireAccount(ctx, accountId);
      const [result] = await upsertEndUsers(accountId, [{ id, custom }]);
      await attachEndUsers(accountId, [result!], ctx, info, ["endUser"]);
      return result!;
    },
  }),
);

builder.mutationField("deleteEndUsers", (t) =>
  t.field({
    type: DeletePayload,
    description:
      "Deletes end users by id with their values and actions, and erases them from the engagement data and the audit log: " +
      "their events are kept under a random pseudonym without userName or comment (so report totals stay right), " +
      "and audit entries about them name the pseudonym, without the values. Per-item status: 204, 404, 400 an id an earlier item of the request names.",
    args: { accountId: t.arg.string({ required: true }), ids: t.arg.stringList({ required: true, validate: bulkArg }) },
    resolve: async (_root, { accountId, ids }, ctx) => {
      await requireAccount(ctx, accountId);
      return deleteByKeys(
        ids,
        // The account's event-order lock before whom to erase is read: an ingest request storing
        // events of these end users then commits wholly before this erasure (which anonymises its
        // events too) or starts after it (and creates anew the end users its events name), so no
        // event of an erased end user keeps their id (src/domains/events/schema.ts).
        { table: "EndUser", column: "externalId", accountId, before: (tx) => lockEventOrder(tx, accountId) },
        async (db, chunk) =>
          (await db.endUser.findMany({ where: { accountId, externalId: { in: chunk } }, select: { id: true, externalId: true } })).map((r) => ({
            key: r.externalId,
            id: r.id,
          })),
        async (tx, rowIds) => {
          // The webhook message names the ids being deleted: sent before they are erased.
          await emitEndUsersDeleted(tx, accountId, rowIds);
          await eraseEndUsers(tx, accountId, rowIds);
        },
        (id) => `no end user with id '${id}'`,
        "key",
      );
    },
  }),
);
