// Enterprise integration attributes: an account's attribute schema (at most 50 typed names, only
// descriptions change once added) and its records. A record is keyed by a primary attribute's name
// and value and carries secondary attributes (`additionalAttributes`), each checked against the
// schema's type and stored typed in its own row, so searches by any attribute use an index.

import { queryFromInfo } from "@pothos/plugin-prisma";
import type { GraphQLResolveInfo } from "graphql";
import { createRows, updateRows } from "../../audit/recorder.js";
import { currentScope } from "../../audit/requestScope.js";
import { dbKind, prisma, type Reader, withTransaction } from "../../db/index.js";
import { sqlValue } from "../../db/insert.js";
import { ConcurrentChange, lockAccount, lockRows } from "../../db/locks.js";
import { badRequest } from "../../errors.js";
import type { Prisma } from "../../generated/sqlite/client.js";
import { newId } from "../../ids.js";
import { builder } from "../../schema/builder.js";
import {
  bulkArg,
  chunksOf,
  DeletePayload,
  fail,
  firstOccurrences,
  type ItemResult,
  ItemResultInterface,
  inTurn,
  payloadType,
  repeatedEntry,
  repeatsOf,
} from "../../schema/bulk.js";
import { CONNECTION_RECORDS, connectionFrom, decodeCursor, LIST_LIMITS, pageExtensions, pageLimit, toPage } from "../../schema/pagination.js";
import { compareCodePoints } from "../../text.js";
import { Account, requireAccount } from "../accounts/schema.js";
import {
  decodeValue,
  encodeValue,
  type SchemaField,
  SchemaFieldInput,
  SchemaFieldsPayload,
  SchemaFieldType,
  type StoredValue,
  toField,
  upsertSchemaFields,
} from "../endUsers/fields.js";
import { fromText, parsePair, primaryValue } from "./values.js";

const TX = { timeout: 300_000, maxWait: 10_000 } as const;

// ---- the attribute schema ------------------------------------------------------------------------

/** The account's attribute schema, by name. */
export async function attributeSchema(accountId: string, db: Reader = prisma): Promise<SchemaField[]> {
  return (await db.attributeField.findMany({ where: { accountId }, orderBy: { name: "asc" } })).map(toField);
}

async function schemaMap(accountId: string, db: Reader = prisma): Promise<Map<string, SchemaField>> {
  return new Map((await attributeSchema(accountId, db)).map((f) => [f.name, f]));
}

builder.prismaObjectField(Account, "integrationAttributeSchema", (t) =>
  t.field({
    type: [SchemaFieldType],
    description: "The integration-attribute schema, by name. `attributeName` narrows it to one entry.",
    args: { attributeName: t.arg.string({ required: false }) },
    resolve: async (account, { attributeName }) => {
      const all = await attributeSchema(account.id);
      return attributeName ? all.filter((f) => f.name === attributeName) : all;
    },
  }),
);

builder.mutationField("upsertIntegrationAttributeFields", (t) =>
  t.field({
    type: SchemaFieldsPayload,
    description:
      "Adds attributes to the integration-attribute schema, or changes the description of existing ones (matched by name; a type never changes). At most 50 per account. Per-item status: 201 added, 200 updated, 400 invalid.",
    args: { accountId: t.arg.string({ required: true }), input: t.arg({ type: [SchemaFieldInput], required: true, validate: bulkArg }) },
    resolve: async (_root, { accountId, input }, ctx) => {
      await requireAccount(ctx, accountId);
      return upsertSchemaFields((tx) => tx.attributeField, accountId, input, { what: "integration attributes" });
    },
  }),
);

// ---- records -------------------------------------------------------------------------------------

export const IntegrationAttribute = builder.prismaObject("AttributeRecord", {
  name: "IntegrationAttribute",
  description: "An integration-attribute record: a primary attribute (name and value) and its secondary attributes.",
  fields: (t) => ({
    attributeName: t.exposeString("attributeName", { description: "The primary attribute's name (an entry of the attribute schema)." }),
    attributeValue: t.exposeString("attributeValue", { description: "The primary attribute's value, as text." }),
    additionalAttributes: t.field({
      type: "CustomValues",
      description: "Secondary attributes: name → value, typed by the attribute schema (encrypted values decrypted).",
      select: { values: true },
      // By name in code point order, whether the record was read back (in the database's order) or
      // is the one a create wrote (in the request's order).
      resolve: (r) => Object.fromEntries(byName(r.values).map((v) => [v.name, decodeValue(v as StoredValue)])),
    }),
    lastUpdateTime: t.expose("updatedAt", { type: "Timestamp" }),
    lastUpdatedBy: t.exposeString("updatedBy", { nullable: true, description: "The user whose request last changed the record." }),
  }),
});

/** Values sorted by name (code point order), in place; sorted only when out of order. */
function byName<T extends { name: string }>(values: T[]): T[] {
  if (values.some((v, i) => i > 0 && compareCodePoints(values[i - 1]!.name, v.name) > 0)) values.sort((a, b) => compareCodePoints(a.name, b.name));
  return values;
}

/** Primary types whose records B23 lists in numeric order, by "attributeNum" (a timestamp's epoch ms). */
const NUMERIC_PRIMARY = new Set(["double", "timestamp"]);

const unknownAttribute = (name: string, path: string) =>
  badRequest(`unknown integration attribute '${name.slice(0, 80)}' (add it to the integration-attribute schema first)`, [
    { path, message: "unknown attribute" },
  ]);

builder.prismaObjectField(Account, "integrationAttributes", (t) =>
  t.connection({
    type: IntegrationAttribute,
    extensions: pageExtensions(LIST_LIMITS.standard),
    description: "The account's integration-attribute records, by primary value (keyset pagination); `primaryAttrName` keeps one primary attribute's records.",
    args: { primaryAttrName: t.arg.string({ required: false }) },
    resolve: async (account, args, ctx, info) => {
      const limit = pageLimit(args, LIST_LIMITS.standard);
      const field = args.primaryAttrName != null ? (await schemaMap(account.id)).get(args.primaryAttrName) : undefined;
      if (args.primaryAttrName != null && !field) throw unknownAttribute(args.primaryAttrName, "primaryAttrName");
      // One numeric primary's records in numeric order ("9" before "10"); otherwise by the value's text.
      const numeric = field !== undefined && NUMERIC_PRIMARY.has(field.type);
      const query = queryFromInfo({ context: ctx, info, paths: CONNECTION_RECORDS });
      let after: Prisma.AttributeRecordWhereInput = {};
      if (args.after) {
        const [value, id] = decodeCursor(args.after, account.id);
        if (typeof value !== (numeric ? "number" : "string"))
          throw badRequest("cursor does not belong to this list", [{ path: "cursor", message: "cursor from another list" }]);
        after = numeric
          ? { OR: [{ attributeNum: { gt: value as number } }, { attributeNum: value as number, id: { gt: id } }] }
          : { OR: [{ attributeValue: { gt: value as string } }, { attributeValue: value as string, id: { gt: id } }] };
      }
      const rows = await prisma.attributeRecord.findMany({
        ...query,
        where: { AND: [{ accountId: account.id }, args.primaryAttrName != null ? { attributeName: args.primaryAttrName } : {}, after] },
        orderBy: numeric ? [{ attributeNum: "asc" }, { id: "asc" }] : [{ attributeValue: "asc" }, { id: "asc" }],
        take: limit + 1,
      });
      return connectionFrom(toPage(rows, limit), account.id, (r) => (numeric ? (r.attributeNum ?? Number(r.attributeValue)) : r.attributeValue));
    },
  }),
);

builder.prismaObjectField(Account, "integrationAttribute", (t) =>
  t.prismaField({
    type: IntegrationAttribute,
    nullable: true,
    description: "One record by its primary attribute's name and value.",
    args: { attributeName: t.arg.string({ required: true }), attributeValue: t.arg.string({ required: true }) },
    resolve: (query, account, { attributeName, attributeValue }) =>
      prisma.attributeRecord.findUnique({
        ...query,
        where: { accountId_attributeName_attributeValue: { accountId: account.id, attributeName, attributeValue } },
      }),
  }),
);

// ---- search (B22) --------------------------------------------------------------------------------

/**
 * Values a search may name, all names together: each is bound twice (the record key, the typed
 * value), and a statement binds at most 65,535 values on PostgreSQL (32,766 on SQLite): 70,000
 * values of one name failed the search with a 500.
 */
const MAX_SEARCH_VALUES = 1_000;

/**
 * `{"company": "acme,globex", "region": "emea"}` → the ids of records matching every name (ANDed),
 * a name matching when the record's primary attribute or one of its secondary attributes has that
 * name and one of the values (ORed). Each name is two index lookups (the record key, the typed
 * value index), intersected in SQL; only the page's ids come back.
 */
async function searchIds(accountId: string, query: unknown, limit: number, after: string | undefined): Promise<string[]> {
  if (query === null || typeof query !== "object" || Array.isArray(query))
    throw badRequest('the search must be a JSON object of attribute name → comma-separated values, e.g. {"company":"acme,globex"}', [
      { path: "body", message: "must be a JSON object of attribute name → comma-separated values" },
    ]);
  const entries = Object.entries(query as Record<string, unknown>);
  if (!entries.length) throw badRequest("the search must name at least one attribute", [{ path: "body", message: "names no attribute" }]);
  const schema = await schemaMap(accountId);
  const pg = dbKind() === "postgres";
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(sqlValue(v, pg ? "postgres" : "sqlite"));
    return pg ? `$${params.length}` : "?";
  };
  let searched = 0;
  const selects = entries.map(([name, raw]) => {
    const field = schema.get(name);
    if (!field) throw unknownAttribute(name, name);
    if (field.type === "encrypted_string") throw badRequest(`attribute '${name}' is encrypted and cannot be searched`, [{ path: name, message: "encrypted" }]);
    if (typeof raw !== "string" && typeof raw !== "number" && typeof raw !== "boolean")
      throw badRequest(`${name} must be a comma-separated string of values`, [{ path: name, message: "not a string" }]);
    const values = String(raw)
      .split(",")
      .map((v) => v.trim())
      .filter((v) => v !== "");
    if (!values.length) throw badRequest(`${name} names no value`, [{ path: name, message: "empty" }]);
    searched += values.length;
    if (searched > MAX_SEARCH_VALUES)
      throw badRequest(`a search names at most ${MAX_SEARCH_VALUES} values in all`, [{ path: name, message: `past ${MAX_SEARCH_VALUES} values` }]);
    const parsed = values.map((v) => {
      const r = fromText(field, v);
      if ("problem" in r) throw badRequest(r.problem, [{ path: name, message: r.problem }]);
      return r;
    });
    const column = { string: "text", double: "num", boolean: "bool", timestamp: "time" }[field.type];
    const primary = `SELECT "id" FROM "AttributeRecord" WHERE "accountId" = ${p(accountId)} AND "attributeName" = ${p(name)} AND "attributeValue" IN (${parsed.map((v) => p(v.canonical)).join(", ")})`;
    const secondary = `SELECT "recordId" FROM "AttributeRecordValue" WHERE "accountId" = ${p(accountId)} AND "name" = ${p(name)} AND "${column}" IN (${parsed.map((v) => p(v.typed)).join(", ")})`;
    return `${primary} UNION ${secondary}`;
  });
  const matched = selects.map((s) => `SELECT "id" FROM (${s}) AS m`).join(" INTERSECT ");
  const sql = `SELECT "id" FROM (${matched}) AS hits${after ? ` WHERE "id" > ${p(after)}` : ""} ORDER BY "id" LIMIT ${p(limit + 1)}`;
  return ((await prisma.$queryRawUnsafe(sql, ...params)) as { id: string }[]).map((r) => r.id);
}

builder.prismaObjectField(Account, "searchIntegrationAttributes", (t) =>
  t.connection({
    type: IntegrationAttribute,
    extensions: pageExtensions(LIST_LIMITS.standard),
    description:
      'Records matching a search object such as `{"company": "acme,globex", "region": "emea"}`: values of one name are ORed, names are ANDed; a name matches the primary attribute or a secondary attribute. Unknown or encrypted names are a 400. Ordered by record id (keyset pagination).',
    args: { query: t.arg({ type: "JSON", required: true }) },
    resolve: async (account, args, ctx, info) => {
      const limit = pageLimit(args, LIST_LIMITS.standard);
      let after: string | undefined;
      if (args.after) {
        const [, id] = decodeCursor(args.after, account.id);
        after = id;
      }
      const ids = await searchIds(account.id, args.query, limit, after);
      const query = queryFromInfo({ context: ctx, info, paths: CONNECTION_RECORDS });
      const rows = ids.length
        ? await prisma.attributeRecord.findMany({ ...query, where: { accountId: account.id, id: { in: ids } }, orderBy: { id: "asc" } })
        : [];
      return connectionFrom(toPage(rows, limit), account.id, (r) => r.id);
    },
  }),
);

// ---- writes (B20, B21) ---------------------------------------------------------------------------

const IntegrationAttributeInput = builder.inputType("IntegrationAttributeInput", {
  fields: (t) => ({
    attributeName: t.string({ required: false, description: "Required: the primary attribute (an entry of the attribute schema)." }),
    attributeValue: t.field({
      type: "JSON",
      required: false,
      description: "Required: the primary attribute's value (text, or a number or boolean of its type).",
    }),
    additionalAttributes: t.field({
      type: "CustomValues",
      required: false,
      description: "Secondary attributes: name → value of the schema's type; null removes one; absent names stay.",
    }),
  }),
});

type RecordItem = ItemResult<unknown>;
const IntegrationAttributeResult = builder.objectRef<RecordItem>("IntegrationAttributeResult").implement({
  interfaces: [ItemResultInterface],
  isTypeOf: () => true,
  fields: (t) => ({
    integrationAttribute: t.field({ type: IntegrationAttribute, nullable: true, resolve: (r, _a, ctx) => inTurn(ctx, r.index, (r.record ?? null) as never) }),
  }),
});
const IntegrationAttributesPayload = payloadType<RecordItem>("IntegrationAttributesPayload", IntegrationAttributeResult);

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const pairKey = (name: string, value: string) => `${name}\u0000${value}`;

interface WriteItem {
  attributeName?: string | null;
  attributeValue?: unknown;
  additionalAttributes?: unknown;
}

/**
 * Creates or updates records by primary name and value. Every item is checked alone against the
 * schema; the valid ones are written in one transaction, set-based: new records in multi-row
 * inserts, the named secondary attributes replaced, the others kept.
 */
export async function upsertIntegrationAttributes(accountId: string, items: WriteItem[]): Promise<RecordItem[]> {
  const actor = currentScope()?.actor ?? null;
  return withTransaction(async (tx) => {
    // The schema cannot change under the check (schema writes hold the account lock exclusively).
    await lockAccount(tx, accountId, "share");
    const schema = await schemaMap(accountId, tx);
    type Valid = { index: number; name: string; value: string; num: number | null; values: Map<string, StoredValue | null> };
    const valid: Valid[] = [];
    const keys = items.map((it) => {
      const field = typeof it.attributeName === "string" ? schema.get(it.attributeName) : undefined;
      const v = field ? primaryValue(field, it.attributeValue) : null;
      return v && "value" in v ? pairKey(field!.name, v.value) : null;
    });
    const first = firstOccurrences(keys);
    const results: RecordItem[] = items.map((it, index) => {
      const problems: string[] = [];
      const name = it.attributeName;
      if (typeof name !== "string" || name === "") return fail(index, 400, ["attributeName is required"]);
      const field = schema.get(name);
      if (!field) return fail(index, 400, [`unknown integration attribute '${name.slice(0, 80)}' (add it to the integration-attribute schema first)`]);
      const primary = primaryValue(field, it.attributeValue);
      if ("problem" in primary) return fail(index, 400, [primary.problem], name);
      const id = `${name}__svc__${primary.value}`;
      if (first.get(keys[index]!) !== index) problems.push(`${id} appears more than once in this request`);
      const values = new Map<string, StoredValue | null>();
      if (it.additionalAttributes != null) {
        if (!isPlainObject(it.additionalAttributes)) problems.push("additionalAttributes must be an object of attribute name → value");
        else
          for (const [attr, value] of Object.entries(it.additionalAttributes)) {
            const f = schema.get(attr);
            if (!f) problems.push(`unknown integration attribute '${attr.slice(0, 80)}' in additionalAttributes`);
            else if (attr === name) problems.push(`additionalAttributes cannot repeat the primary attribute '${name}'`);
            else if (value === null) values.set(attr, null);
            else {
              const enc = encodeValue(f, value, "additionalAttributes");
              if ("problem" in enc) problems.push(enc.problem);
              else values.set(attr, enc.stored);
            }
          }
      }
      if (problems.length) return fail(index, 400, problems, id);
      valid.push({ index, name, value: primary.value, num: NUMERIC_PRIMARY.has(field.type) ? Number(primary.value) : null, values });
      return { index, statusCode: 0, id, errors: [] };
    });
    if (!valid.length) return results;

    // Existing records of the named keys, locked (key order) so concurrent upserts merge.
    // (Read by the locking statement itself, one JSON list: src/db/locks.ts.)
    const existing = new Map<string, string>();
    for (const r of await lockRows(
      tx,
      "AttributeRecord",
      "attributeValue",
      valid.map((v) => v.value),
      { accountId, select: ["id", "attributeName", "attributeValue"] },
    ))
      existing.set(pairKey(r.attributeName as string, r.attributeValue as string), r.id as string);
    const now = new Date();
    const rowId = new Map<Valid, string>();
    const created: Prisma.AttributeRecordCreateManyInput[] = [];
    for (const v of valid) {
      const id = existing.get(pairKey(v.name, v.value));
      results[v.index]!.statusCode = id ? 200 : 201;
      if (id) rowId.set(v, id);
      else {
        const nid = newId("ia");
        rowId.set(v, nid);
        created.push({
          id: nid,
          accountId,
          attributeName: v.name,
          attributeValue: v.value,
          attributeNum: v.num,
          createdAt: now,
          updatedAt: now,
          updatedBy: actor,
        });
      }
    }
    if ((await createRows("AttributeRecord", created, { skipDuplicates: true })) < created.length)
      throw new ConcurrentChange("an integration attribute was created by a concurrent request");
    // The records that existed are updated now, audited as `update` of these columns, in one
    // statement from a JSON parameter (updateRows), not an updateMany per chunk through Prisma.
    await updateRows(
      "AttributeRecord",
      valid
        .filter((v) => existing.has(pairKey(v.name, v.value)))
        .map((v) => ({ id: rowId.get(v)!, accountId, attributeName: v.name, attributeValue: v.value, updatedAt: now, updatedBy: actor })),
    );

    // Secondary attributes: the named ones of existing records are replaced, grouped by name set.
    const groups = new Map<string, { names: string[]; ids: string[] }>();
    for (const v of valid) {
      if (!v.values.size || !existing.has(pairKey(v.name, v.value))) continue;
      const names = [...v.values.keys()].sort();
      const g = groups.get(names.join("\u0000")) ?? { names, ids: [] };
      g.ids.push(rowId.get(v)!);
      groups.set(names.join("\u0000"), g);
    }
    for (const g of groups.values())
      for (const part of chunksOf(g.ids)) await tx.attributeRecordValue.deleteMany({ where: { recordId: { in: part }, name: { in: g.names } } });
    const rows = valid.flatMap((v) =>
      [...v.values.entries()].filter(([, s]) => s !== null).map(([name, s]) => ({ recordId: rowId.get(v)!, accountId, name, ...s! })),
    );
    if (rows.length) await tx.attributeRecordValue.createMany({ data: rows });
    // A created record's reply is exactly what this transaction wrote (attachRecords reads back
    // only the records that existed): 10,000 new records read back through Prisma took ~0.5 s.
    const valuesOf = new Map<string, (typeof rows)[number][]>();
    for (const r of rows) {
      const list = valuesOf.get(r.recordId);
      if (list) list.push(r);
      else valuesOf.set(r.recordId, [r]);
    }
    const createdRows = new Map(created.map((c) => [c.id, c]));
    for (const v of valid) {
      const row = createdRows.get(rowId.get(v)!);
      if (row) results[v.index]!.record = { ...row, values: valuesOf.get(row.id!) ?? [] };
    }
    return results;
  }, TX);
}

/** Whether a planned query of records selects nothing beyond their columns and `values`, all of which a write knows. */
function writtenSelection(query: object): boolean {
  const keys = Object.keys(query);
  if (keys.length === 0) return true;
  if (keys.length !== 1 || keys[0] !== "include") return false;
  const include = (query as { include: Record<string, unknown> }).include;
  return Object.keys(include).every((k) => k === "values" && include[k] === true);
}

/** Reads the written records back for the reply, with what the caller selected. */
async function attachRecords(accountId: string, results: RecordItem[], ctx: object, info: GraphQLResolveInfo) {
  const ok = results.filter((r) => r.statusCode < 300 && r.id);
  if (!ok.length) return;
  // (Also records, for the fields below the path, that their selection is loaded: created rows included.)
  const query = queryFromInfo({ context: ctx, info, path: ["results", "integrationAttribute"], typeName: "IntegrationAttribute" });
  const toRead = writtenSelection(query) ? ok.filter((r) => !r.record) : ok;
  const byKey = new Map<string, unknown>();
  for (const part of chunksOf(toRead, 500)) {
    const pairs = part.map((r) => parsePair(r.id!) as { name: string; value: string });
    const rows = await prisma.attributeRecord.findMany({
      ...query,
      where: { accountId, attributeValue: { in: [...new Set(pairs.map((p) => p.value))] } },
    });
    for (const r of rows) byKey.set(`${r.attributeName}__svc__${r.attributeValue}`, r);
  }
  for (const r of toRead) r.record = byKey.get(r.id!) ?? null;
}

builder.mutationField("upsertIntegrationAttributes", (t) =>
  t.field({
    type: IntegrationAttributesPayload,
    description:
      "Creates or updates integration-attribute records (up to 10,000), matched by primary name and value. Per-item status: 201 created, 200 updated, 400 invalid. `id` of a result is `name__svc__value`.",
    args: { accountId: t.arg.string({ required: true }), input: t.arg({ type: [IntegrationAttributeInput], required: true, validate: bulkArg }) },
    resolve: async (_root, { accountId, input }, ctx, info) => {
      await requireAccount(ctx, accountId);
      const results = await upsertIntegrationAttributes(accountId, input);
      await attachRecords(accountId, results, ctx, info);
      return { results };
    },
  }),
);

builder.mutationField("deleteIntegrationAttributes", (t) =>
  t.field({
    type: DeletePayload,
    description:
      "Deletes records by `name__svc__value` pairs, with their secondary attributes. Per-item status: 204 deleted, 400 malformed pair or a record an earlier pair of the request names, 404 no such record.",
    args: { accountId: t.arg.string({ required: true }), pairs: t.arg.stringList({ required: true, validate: bulkArg }) },
    resolve: async (_root, { accountId, pairs }, ctx) => {
      await requireAccount(ctx, accountId);
      // Each value read in its attribute's type, as writes and searches read it (`tier__svc__10.0`
      // names the record of `10`); one that is not of that type is a 400. A name the schema lacks
      // has no records: its pairs are 404s.
      const schema = await schemaMap(accountId);
      const parsed = pairs.map((pair): { name: string; value: string } | { problem: string } => {
        const p = parsePair(pair);
        if ("problem" in p) return p;
        const field = schema.get(p.name);
        if (!field) return p;
        const typed = fromText(field, p.value);
        return "problem" in typed ? typed : { name: p.name, value: typed.canonical };
      });
      // A record named twice (`a__svc__x,a__svc__x`, or `seats__svc__10,seats__svc__10.0`: one record)
      // is deleted once, by its first pair; a later pair naming it is a 400 of its own, as a repeated
      // item of the upserts is, never a second 204.
      const repeatOf = repeatsOf(parsed.map((p) => ("name" in p ? pairKey(p.name, p.value) : null)));
      const wanted = parsed.filter((p, index): p is { name: string; value: string } => "name" in p && repeatOf(index) === undefined);
      const deleted = await withTransaction(async (tx) => {
        // Found after locking: a pair reported deleted was deleted by this request.
        const names = new Set(wanted.map((p) => pairKey(p.name, p.value)));
        const found = new Map<string, string>();
        for (const r of await lockRows(
          tx,
          "AttributeRecord",
          "attributeValue",
          wanted.map((p) => p.value),
          { accountId, mode: "delete", select: ["id", "attributeName", "attributeValue"] },
        )) {
          const key = pairKey(r.attributeName as string, r.attributeValue as string);
          if (names.has(key)) found.set(key, r.id as string);
        }
        for (const ids of chunksOf([...found.values()])) await tx.attributeRecord.deleteMany({ where: { accountId, id: { in: ids } } });
        return found;
      });
      return {
        results: parsed.map((p, index) => {
          if ("problem" in p) return fail(index, 400, [p.problem], pairs[index]!);
          const earlier = repeatOf(index);
          if (earlier !== undefined) return repeatedEntry(pairs, index, earlier);
          return deleted.has(pairKey(p.name, p.value))
            ? { index, statusCode: 204, id: pairs[index]!, errors: [] }
            : fail(index, 404, [`no integration attribute record '${pairs[index]}'`], pairs[index]!);
        }),
      };
    },
  }),
);
