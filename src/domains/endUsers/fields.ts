// The end-user schema: service-provided default fields (constants, undeletable) plus at most 50
// custom fields per account. Every custom value written is checked against its field's type here.

import { clock } from "../../clock.js";
import { decrypt, encrypt } from "../../crypto.js";
import { storedDate } from "../../db/direct.js";
import { dbKind, prisma, type Reader, type Tx, withTransaction } from "../../db/index.js";
import { lockAccount } from "../../db/locks.js";
import type { EndUserField as FieldRow } from "../../generated/sqlite/client.js";
import { builder } from "../../schema/builder.js";
import {
  bulkArg,
  checkListSafeName,
  DeletePayload,
  fail,
  type ItemResult,
  ItemResultInterface,
  payloadType,
  repeatedEntry,
  repeatsOf,
} from "../../schema/bulk.js";
import { longerThan } from "../../text.js";
import { Account, requireAccount } from "../accounts/schema.js";
import { fieldsOf, type Rule } from "../segments/rules.js";
import { FIELD_TYPES, type FieldType, type SchemaField } from "./fieldTypes.js";

export { FIELD_TYPES, type FieldType, type SchemaField };
export const MAX_CUSTOM_FIELDS = 50;
export const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const FIELD_NAME_RULE = "a letter first, then letters, digits or _; at most 64 characters";
/**
 * A string value's size, in bytes of UTF-8: text values are indexed by (account, field, value) so
 * that filters, segments and the attribute search find them, and a PostgreSQL B-tree entry holds at
 * most 2,704 bytes (after compression, which random text escapes). The limit was 10,000 characters:
 * 3,000 random ASCII characters already failed the write with a 500 there. At 1,500 bytes an
 * encrypted value's ciphertext (base64 of the bytes and 28 more, behind a 45-character prefix) is
 * ~2,050 characters, and with the longest account id and field name the entry stays under the
 * limit. (SQLite has no such bound; the same limit holds there, so both databases take the same values.)
 */
export const STRING_VALUE_MAX_BYTES = 1_500;
const DESCRIPTION_MAX = 2_000;
/**
 * The range of a `timestamp` value (custom fields, integration attributes), in epoch ms: from
 * 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, four-digit years, what both databases hold
 * and give back to the millisecond and compare in time order. Before 1970 is negative (a birth
 * date); PostgreSQL has no year 0 and SQLite compares its stored ISO text, whose order breaks for a
 * signed year; Prisma does not write years past 9999.
 */
const TIMESTAMP_MIN = -62_135_596_800_000;
const TIMESTAMP_MAX = 253_402_300_799_999;
/** What a `timestamp` value must be, in the words of a refusal. */
export const TIMESTAMP_RULE = `an integer of epoch milliseconds from ${TIMESTAMP_MIN} (0001-01-01T00:00:00.000Z) to ${TIMESTAMP_MAX} (9999-12-31T23:59:59.999Z)`;
export const isTimestampValue = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= TIMESTAMP_MIN && v <= TIMESTAMP_MAX;

/** Service-provided fields every account has. */
export const DEFAULT_FIELDS: readonly SchemaField[] = [
  { name: "email", type: "string", description: "E-mail address of the end user.", default: true },
  { name: "name", type: "string", description: "Display name of the end user.", default: true },
  { name: "role", type: "string", description: "Role of the end user in the parent application.", default: true },
  { name: "locale", type: "string", description: "Preferred locale, e.g. en-US.", default: true },
  { name: "signupTime", type: "timestamp", description: "When the end user signed up (epoch ms).", default: true },
];
const DEFAULT_BY_NAME = new Map(DEFAULT_FIELDS.map((f) => [f.name, f]));

export const FieldTypeEnum = builder.enumType("FieldType", { values: FIELD_TYPES });

export const SchemaFieldType = builder.objectRef<SchemaField>("SchemaField").implement({
  description: "A field of a schema (end users, integration attributes).",
  fields: (t) => ({
    name: t.exposeString("name"),
    type: t.field({ type: FieldTypeEnum, resolve: (f) => f.type }),
    description: t.exposeString("description", { nullable: true }),
    default: t.exposeBoolean("default", { description: "Service-provided; cannot be changed or deleted." }),
  }),
});

export const toField = (r: FieldRow): SchemaField => ({ name: r.name, type: r.type as FieldType, description: r.description, default: false });

/** The whole schema of an account: defaults first, then custom fields by name. */
export async function endUserSchema(accountId: string, db: Reader = prisma): Promise<SchemaField[]> {
  const rows = await db.endUserField.findMany({ where: { accountId }, orderBy: { name: "asc" } });
  return [...DEFAULT_FIELDS, ...rows.map(toField)];
}

builder.prismaObjectField(Account, "endUserSchema", (t) =>
  t.field({
    type: [SchemaFieldType],
    description: "The end-user schema: default fields, then custom fields by name. `fieldName` narrows it to one field.",
    args: { fieldName: t.arg.string({ required: false }) },
    resolve: async (account, { fieldName }) => {
      const all = await endUserSchema(account.id);
      return fieldName ? all.filter((f) => f.name === fieldName) : all;
    },
  }),
);

// ---- values ------------------------------------------------------------------------------------

export interface StoredValue {
  type: FieldType;
  text: string | null;
  num: number | null;
  bool: boolean | null;
  time: Date | null;
}

/**
 * The clear text of values this request has just encrypted, by the object that carries the stored
 * columns: a write's reply shows what it wrote without decrypting it again (10,000 AES-GCM
 * decryptions, 50 ms of a bulk create). Held only as long as that object lives.
 */
const clearTextOf = new WeakMap<object, string>();

const encrypted = (stored: StoredValue, clear: string): StoredValue => {
  clearTextOf.set(stored, clear);
  return stored;
};

/** `row`, built from `stored` (its columns spread into it), known to hold the same clear text. */
export function withClearText<T extends object>(stored: StoredValue, row: T): T {
  const clear = clearTextOf.get(stored);
  if (clear !== undefined) clearTextOf.set(row, clear);
  return row;
}

/** Checks a value against its field's type and returns the columns to store, or the problem. */
export function encodeValue(field: SchemaField, value: unknown, path = "custom"): { stored: StoredValue } | { problem: string } {
  const bad = (what: string) => ({ problem: `${path}.${field.name} must be ${what}` });
  const base = { type: field.type, text: null, num: null, bool: null, time: null };
  switch (field.type) {
    case "string":
    case "encrypted_string":
      if (typeof value !== "string") return bad("a string");
      // (A UTF-16 unit is at most 3 bytes of UTF-8: short values are not measured.)
      if (value.length * 3 > STRING_VALUE_MAX_BYTES && Buffer.byteLength(value, "utf8") > STRING_VALUE_MAX_BYTES)
        return bad(`at most ${STRING_VALUE_MAX_BYTES} bytes in UTF-8`);
      if (field.type === "string") return { stored: { ...base, text: value } };
      return { stored: encrypted({ ...base, text: encrypt(value) }, value) };
    case "double":
      if (typeof value !== "number" || !Number.isFinite(value)) return bad("a number");
      return { stored: { ...base, num: value } };
    case "boolean":
      if (typeof value !== "boolean") return bad("true or false");
      return { stored: { ...base, bool: value } };
    case "timestamp":
      if (!isTimestampValue(value)) return bad(TIMESTAMP_RULE);
      return { stored: { ...base, time: new Date(value) } };
  }
}

export function decodeValue(v: StoredValue): unknown {
  switch (v.type) {
    case "string":
      return v.text;
    case "encrypted_string":
      return v.text == null ? null : (clearTextOf.get(v) ?? decrypt(v.text));
    case "double":
      return v.num;
    case "boolean":
      return v.bool;
    case "timestamp":
      return v.time ? v.time.getTime() : null;
  }
}

// ---- mutations -----------------------------------------------------------------------------------

export const SchemaFieldInput = builder.inputType("SchemaFieldInput", {
  fields: (t) => ({
    name: t.string({ required: false, description: `Required; ${FIELD_NAME_RULE}.` }),
    type: t.field({ type: FieldTypeEnum, required: false, description: "Required when adding a field; cannot change afterwards." }),
    description: t.string({ required: false }),
  }),
});

export type FieldItem = ItemResult<SchemaField>;
export const SchemaFieldResult = builder.objectRef<FieldItem>("SchemaFieldResult").implement({
  interfaces: [ItemResultInterface],
  isTypeOf: () => true,
  fields: (t) => ({ field: t.field({ type: SchemaFieldType, nullable: true, resolve: (r) => r.record ?? null }) }),
});
export const SchemaFieldsPayload = payloadType<FieldItem>("SchemaFieldsPayload", SchemaFieldResult);

export function nameProblem(name: string | null | undefined): string | null {
  if (name == null || name === "") return "name is required";
  if (!FIELD_NAME.test(name)) return `name '${name.slice(0, 80)}' is invalid: ${FIELD_NAME_RULE}`;
  return checkListSafeName(name, "name");
}

/** A schema's table (EndUserField, AttributeField: the same columns), as its Prisma delegate. */
export interface FieldTable {
  findMany(args: { where: { accountId: string } }): Promise<FieldRow[]>;
  create(args: { data: { accountId: string; name: string; type: string; description: string | null } }): Promise<FieldRow>;
  update(args: { where: { accountId_name: { accountId: string; name: string } }; data: { description: string | null } }): Promise<FieldRow>;
}

/**
 * Adds fields or changes the description of existing ones (matched by name), item by item:
 * 201 added, 200 updated, 400 invalid (bad name, a default field, a type change, past the cap).
 * One schema change per account at a time (the 50-field cap counts what is there), and none while
 * records are written against the schema (they hold the account lock shared).
 */
export function upsertSchemaFields(
  table: (tx: Tx) => FieldTable,
  accountId: string,
  input: { name?: string | null; type?: FieldType | null; description?: string | null }[],
  opts: { defaults?: ReadonlyMap<string, SchemaField>; what: string },
): Promise<{ results: FieldItem[] }> {
  return withTransaction(
    async (tx) => {
      await lockAccount(tx, accountId, "exclusive");
      return { results: await upsertFields(table(tx), accountId, input, opts) };
    },
    { timeout: 60_000, maxWait: 10_000 },
  );
}

async function upsertFields(
  store: FieldTable,
  accountId: string,
  input: { name?: string | null; type?: FieldType | null; description?: string | null }[],
  opts: { defaults?: ReadonlyMap<string, SchemaField>; what: string },
): Promise<FieldItem[]> {
  const existing = new Map((await store.findMany({ where: { accountId } })).map((r) => [r.name, r]));
  let count = existing.size;
  const results: FieldItem[] = [];
  for (const [index, it] of input.entries()) {
    const problem = nameProblem(it.name);
    if (problem) {
      results.push(fail(index, 400, [problem]));
      continue;
    }
    const name = it.name!;
    // Characters are code points (`length` counts UTF-16 units: an emoji is two).
    if (it.description != null && longerThan(it.description, DESCRIPTION_MAX)) {
      results.push(fail(index, 400, [`description must be at most ${DESCRIPTION_MAX} characters`], name));
      continue;
    }
    if (opts.defaults?.has(name)) {
      results.push(fail(index, 400, [`'${name}' is a default field and cannot be changed`], name));
      continue;
    }
    const cur = existing.get(name);
    if (cur) {
      if (it.type != null && it.type !== cur.type) {
        results.push(fail(index, 400, [`the type of '${name}' is ${cur.type} and cannot change`], name));
        continue;
      }
      const row =
        it.description !== undefined ? await store.update({ where: { accountId_name: { accountId, name } }, data: { description: it.description } }) : cur;
      existing.set(name, row);
      results.push({ index, statusCode: 200, id: name, errors: [], record: toField(row) });
      continue;
    }
    if (it.type == null) {
      results.push(fail(index, 400, [`type is required to add '${name}' (one of ${FIELD_TYPES.join(", ")})`], name));
      continue;
    }
    if (count >= MAX_CUSTOM_FIELDS) {
      results.push(fail(index, 400, [`the account already has ${MAX_CUSTOM_FIELDS} ${opts.what}, the maximum`], name));
      continue;
    }
    const row = await store.create({ data: { accountId, name, type: it.type, description: it.description ?? null } });
    existing.set(name, row);
    count++;
    results.push({ index, statusCode: 201, id: name, errors: [], record: toField(row) });
  }
  return results;
}

builder.mutationField("upsertEndUserFields", (t) =>
  t.field({
    type: SchemaFieldsPayload,
    description: `Adds custom fields, or updates the description of existing ones, matched by name. At most ${MAX_CUSTOM_FIELDS} custom fields per account: items past the limit fail (400) while earlier ones stay. Per-item status: 201 added, 200 updated, 400 invalid.`,
    args: { accountId: t.arg.string({ required: true }), input: t.arg({ type: [SchemaFieldInput], required: true, validate: bulkArg }) },
    resolve: async (_root, { accountId, input }, ctx) => {
      await requireAccount(ctx, accountId);
      return upsertSchemaFields((tx) => tx.endUserField, accountId, input, { defaults: DEFAULT_BY_NAME, what: "custom fields" });
    },
  }),
);

builder.mutationField("deleteEndUserFields", (t) =>
  t.field({
    type: DeletePayload,
    description:
      "Deletes custom fields and every end user's value of them. Default fields cannot be deleted (400), nor fields a segment's rule reads (409). Per-item status: 204, 400 (a default field, or a name an earlier item of the request names), 404, 409.",
    args: { accountId: t.arg.string({ required: true }), names: t.arg.stringList({ required: true, validate: bulkArg }) },
    resolve: async (_root, { accountId, names }, ctx) => {
      await requireAccount(ctx, accountId);
      const { found, usedBy } = await withTransaction(async (tx) => {
        await lockAccount(tx, accountId, "exclusive");
        const found = new Set((await tx.endUserField.findMany({ where: { accountId, name: { in: names } }, select: { name: true } })).map((r) => r.name));
        // A field a segment's rule reads (`custom.<name>`, or `attribute.<name>.…` through it) stays:
        // its rules were checked against the schema when written, and without the field (or with it
        // added again as another type) they would compare values across types unseen.
        const usedBy = new Map<string, string[]>();
        for (const segment of await tx.segment.findMany({ where: { accountId }, select: { name: true, rule: true }, orderBy: { name: "asc" } }))
          for (const ref of fieldsOf(JSON.parse(segment.rule) as Rule)) {
            const field = ref.kind === "custom" ? ref.name : ref.primary;
            if (!found.has(field)) continue;
            const list = usedBy.get(field) ?? usedBy.set(field, []).get(field)!;
            if (!list.includes(segment.name)) list.push(segment.name);
          }
        const doomed = [...found].filter((name) => !usedBy.has(name));
        if (doomed.length) {
          // Losing a value is a change of the end user: a new lastUpdateTime, so that a sync by
          // `updatedSince` sees the value gone. One statement, and no entry per user: the field's own
          // deletion entry records what happened to every value of it.
          const pg = dbKind() === "postgres";
          await tx.$executeRawUnsafe(
            `UPDATE "EndUser" SET "updatedAt" = ${pg ? "CAST($1 AS TIMESTAMP(3))" : "?"} WHERE "id" IN (SELECT v."endUserId" FROM "EndUserValue" v
               WHERE v."accountId" = ${pg ? "$2" : "?"} AND v."field" IN (SELECT value FROM ${pg ? "json_array_elements_text(CAST($3 AS json))" : "json_each(?)"}))`,
            storedDate(clock.now()),
            accountId,
            JSON.stringify(doomed),
          );
          await tx.endUserValue.deleteMany({ where: { accountId, field: { in: doomed } } });
          await tx.endUserField.deleteMany({ where: { accountId, name: { in: doomed } } });
        }
        return { found, usedBy };
      });
      const inUse = (name: string, segments: string[]) =>
        `custom field '${name}' is used by the rule of segment${segments.length > 1 ? "s" : ""} ${segments.map((s) => `'${s}'`).join(", ")}: change or delete ${segments.length > 1 ? "them" : "it"} first`;
      const repeatOf = repeatsOf(names);
      return {
        results: names.map((name, index) => {
          const earlier = repeatOf(index);
          if (earlier !== undefined) return repeatedEntry(names, index, earlier);
          if (DEFAULT_BY_NAME.has(name)) return fail(index, 400, [`'${name}' is a default field and cannot be deleted`], name);
          const segments = usedBy.get(name);
          if (segments) return fail(index, 409, [inUse(name, segments)], name);
          return found.has(name) ? { index, statusCode: 204, id: name, errors: [] } : fail(index, 404, [`no custom field named '${name}'`], name);
        }),
      };
    },
  }),
);
