// REST rows for end users and the end-user schema (style A Group A tables; style B B10–B15).

import { AppError } from "../../errors.js";
import { ownEntry } from "../../lookup.js";
import { A, B, type RestInput, type RestRoute, route, type Style, unchecked, withRecord } from "../../rest/contract.js";
import { type BodyDoc, pageQuery } from "../../rest/docs.js";
import { type EnumValue, graphql } from "../../rest/operation.js";
import { commaList, cursorParam, limitParam, objectArrayBody, pathParam, stringParam } from "../../rest/params.js";
import { type MultiStatusExample, oneReply, readOnlyFields, reply } from "../../rest/responses.js";
import { LIST_LIMITS } from "../../schema/pagination.js";
import { updatedSinceQuery, updatedSinceVariables } from "../eventExport/updatedSince.js";
import { FIELD_TYPES } from "./fields.js";
import { END_USER_FIELDS, endUserRecord, SCHEMA_FIELD_FIELDS, schemaFieldRecord } from "./records.js";

const LIST =
  graphql(`query EndUserPage($accountId: String!, $first: Int, $after: String, $custom: Boolean! = true, $actions: Boolean!, $filter: EndUserFilter, $orderBy: EndUserOrder = CREATED) {
  account(id: $accountId) { endUsers(first: $first, after: $after, filter: $filter, orderBy: $orderBy) { nodes { ${END_USER_FIELDS} } pageInfo { hasNextPage endCursor } } } }`);
const GET = graphql(`query EndUser($accountId: String!, $id: String!, $idType: EndUserIdType, $custom: Boolean!, $actions: Boolean!) {
  account(id: $accountId) { endUser(id: $id, idType: $idType) { ${END_USER_FIELDS} } } }`);
const UPSERT_MANY = graphql(`mutation UpsertEndUsers($accountId: String!, $input: [EndUserInput!]!, $custom: Boolean! = true, $actions: Boolean!) {
  upsertEndUsers(accountId: $accountId, input: $input) { results { index statusCode id errors endUser { ${END_USER_FIELDS} } } } }`);
const UPSERT_ONE = graphql(`mutation UpsertEndUser($accountId: String!, $id: String!, $custom: CustomValues!) {
  upsertEndUser(accountId: $accountId, id: $id, custom: $custom) { index statusCode id errors } }`);
const DELETE = graphql(`mutation DeleteEndUsers($accountId: String!, $ids: [String!]!) {
  deleteEndUsers(accountId: $accountId, ids: $ids) { results { index statusCode id errors } } }`);
const SCHEMA = graphql(`query EndUserSchema($accountId: String!, $fieldName: String) {
  account(id: $accountId) { endUserSchema(fieldName: $fieldName) { ${SCHEMA_FIELD_FIELDS} } } }`);
const SCHEMA_UPSERT = graphql(`mutation UpsertEndUserFields($accountId: String!, $input: [SchemaFieldInput!]!) {
  upsertEndUserFields(accountId: $accountId, input: $input) { results { index statusCode id errors field { ${SCHEMA_FIELD_FIELDS} } } } }`);
const SCHEMA_DELETE = graphql(`mutation DeleteEndUserFields($accountId: String!, $names: [String!]!) {
  deleteEndUserFields(accountId: $accountId, names: $names) { results { index statusCode id errors } } }`);

export const ID_TYPES: Record<string, EnumValue<"EndUserIdType">> = { "svc-app-user-id": "APP", "svc-cookie-user-id": "COOKIE" };
const FIELD_SETS = ["custom", "useraction"] as const;

export function idType(value: unknown, name: string): EnumValue<"EndUserIdType"> | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const t = typeof value === "string" ? ownEntry(ID_TYPES, value) : undefined;
  if (!t) throw new AppError(400, `${name} must be one of ${Object.keys(ID_TYPES).join(", ")}`, [{ path: name, message: "unknown id type" }]);
  return t;
}

/** `fields` (custom, useraction) decides what is read: none given means both. */
function fieldSelection(value: unknown): { custom: boolean; actions: boolean } {
  if (value === undefined || value === null || value === "") return { custom: true, actions: true };
  const raw = (Array.isArray(value) ? value : [value]).flatMap((v) => (typeof v === "string" ? v.split(",") : [v]));
  const names = raw.map((v) => (typeof v === "string" ? v.trim().toLowerCase() : v));
  const unknown = names.filter((n) => !(FIELD_SETS as readonly unknown[]).includes(n));
  if (unknown.length || !names.length)
    throw new AppError(400, `fields must list ${FIELD_SETS.join(" and/or ")}`, [{ path: "fields", message: "unknown field set" }]);
  return { custom: names.includes("custom"), actions: names.includes("useraction") };
}

/** Fields of end-user records an upsert takes and ignores (a record from a GET may be sent back as it is). */
const END_USER_READ_ONLY = {
  A: readOnlyFields(endUserRecord("A"), ["creationTime", "lastUpdateTime"]),
  B: readOnlyFields(endUserRecord("B"), ["creationTime", "lastUpdateTime"]),
};

/** Style A end users carry no user-action maps; style B's do. */
function endUserItems(style: Style) {
  const allowed = new Set(["id", "custom", ...(style === "B" ? ["userActionCount", "userActions"] : [])]);
  return (input: RestInput) =>
    objectArrayBody(input.body).map((item, i) => {
      const rest = END_USER_READ_ONLY[style].without(item);
      const extra = Object.keys(rest).filter((k) => !allowed.has(k));
      if (extra.length)
        throw new AppError(400, `body[${i}]: unknown field(s) ${extra.join(", ")}`, [{ path: `[${i}]`, message: `allowed: ${[...allowed].join(", ")}` }]);
      return rest;
    });
}

const LOOKUP_FIELDS = ["id", "fields", "useridType"];

/** A 207 of an end-user upsert: the first created, the second refused. */
const END_USERS_207: MultiStatusExample = { ids: ["user-42", "user-43"], error: "unknown custom field 'tier' (add it to the end-user schema first)" };

function customBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new AppError(400, "body must be a JSON object of custom field name → value");
  }
  return body as Record<string, unknown>;
}

// OpenAPI descriptions of inputs (src/openapi reads them; test/openapi.test.ts checks them).
const END_USERS_BODY = (style: Style): BodyDoc => ({
  input: "EndUserInput",
  array: true,
  required: ["id"],
  omit: style === "A" ? ["userActionCount", "userActions"] : [],
  readOnly: END_USER_READ_ONLY[style].docs,
  // null clears a value inside a map, never a whole map (a 400 naming it).
  properties: {
    custom: { type: "object", description: "Field → value; null clears a value; absent fields stay." },
    ...(style === "B"
      ? {
          userActionCount: { type: "object", description: "User-action id → count (non-negative integer); absent ids stay." },
          userActions: { type: "object", description: "User-action id → integer; absent ids stay." },
        }
      : {}),
  },
  example: [
    { id: "user-42", custom: { plan: "gold" }, ...(style === "B" ? { userActionCount: { "action-1": 2 }, userActions: { "action-1": 1718000000000 } } : {}) },
  ],
});
const CUSTOM_BODY: BodyDoc = {
  schema: {
    type: "object",
    description: "Custom field name → value (null clears it).",
    additionalProperties: { type: ["string", "number", "boolean", "null"] },
  },
  example: { plan: "gold" },
};
const ID_PARAM = { id: { description: "The end user's id.", example: "user-42" } };
const FIELDS_DOC = "What to read: `custom`, `useraction` or both (default both); what is not asked for is not read.";

/** The spec's own failure shape for single end-user updates: {errors, id, statusCode}. */
const singleUpdateError = (status: number, messages: string[], input: RestInput) => ({ errors: messages, id: input.params.id ?? null, statusCode: status });

const schemaRows = (
  prefix: string,
  _style: Style,
  names: { list: string; get: string; put: string; del: string },
  labels: { list: string; put: string },
): RestRoute[] => [
  route(SCHEMA, {
    name: names.list,
    method: "get",
    path: `${prefix}/endUserSchema`,
    summary: labels.list,
    query: { fieldName: { description: "Only this field (404 when there is none).", schema: { type: "string" }, example: "plan" } },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), fieldName: stringParam(i.query, "fieldName") }),
    reply: reply.custom(
      { 200: { json: { type: "object", required: ["data"], properties: { data: { type: "array", items: schemaFieldRecord.schema } } } }, 404: "problem" },
      (d, i) => {
        const fields = d.account.endUserSchema;
        if (i.query.fieldName && !fields.length) return oneReply(null, schemaFieldRecord.map, `No end-user schema field named '${String(i.query.fieldName)}'.`);
        return { status: 200, body: { data: fields.map(schemaFieldRecord.map) } };
      },
    ),
  }),
  route(SCHEMA_UPSERT, {
    name: names.put,
    method: "put",
    path: `${prefix}/endUserSchema`,
    summary: labels.put,
    body: { input: "SchemaFieldInput", array: true, required: ["name"], example: [{ name: "plan", type: FIELD_TYPES[0], description: "Subscription plan" }] },
    jsonBody: true,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), input: unchecked(objectArrayBody(i.body)) }),
    // The spec answers 200 for schema PUTs, whether fields were added or updated.
    reply: reply.bulk((d) => d.upsertEndUserFields.results.map(withRecord("field")), schemaFieldRecord, {
      success: [200],
      failure: [400],
      created: 200,
      example: { ids: ["plan", "region"], error: "the type of 'region' is string and cannot change" },
    }),
  }),
  route(SCHEMA, {
    name: names.get,
    method: "get",
    path: `${prefix}/endUserSchema/:fieldName`,
    summary: "Get one end-user schema field",
    params: { fieldName: { description: "The field's name.", example: "plan" } },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), fieldName: pathParam(i, "fieldName") }),
    reply: reply.one(
      (d) => d.account.endUserSchema[0],
      schemaFieldRecord,
      (i) => `No end-user schema field named '${i.params.fieldName}'.`,
    ),
  }),
  route(SCHEMA_DELETE, {
    name: names.del,
    method: "delete",
    path: `${prefix}/endUserSchema/:fieldName`,
    summary: "Delete custom fields by comma-separated names (default fields cannot be deleted)",
    params: {
      fieldName: {
        description: "One field name, or several comma-separated (the spec's fieldsToDelete). An entry repeating an earlier one is a 400 item naming it.",
        example: "plan,region",
      },
    },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), names: commaList(i.params.fieldName, "fieldName") }),
    reply: reply.bulk((d) => d.deleteEndUserFields.results, null, {
      success: [204],
      failure: [400, 404, 409],
      example: { ids: ["plan", "region"], error: "no custom field named 'region'", failed: 404 },
    }),
  }),
];

/** The spec's own answer of single end-user updates, success and failure alike. */
const SINGLE_UPDATE_RESULT = {
  type: "object",
  required: ["errors", "id", "statusCode"],
  properties: { errors: { type: "array", items: { type: "string" } }, id: { type: ["string", "null"] }, statusCode: { type: "integer" } },
};

const singleUpdate = (prefix: string, name: string, summary: string): RestRoute =>
  route(UPSERT_ONE, {
    name,
    method: "put",
    path: `${prefix}/endUsers/:id`,
    summary,
    jsonBody: true,
    errorBody: singleUpdateError,
    errorSchema: SINGLE_UPDATE_RESULT,
    body: CUSTOM_BODY,
    params: ID_PARAM,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "id"), custom: customBody(i.body) }),
    reply: reply.custom(
      {
        200: { json: SINGLE_UPDATE_RESULT, example: { errors: [], id: "user-42", statusCode: 200 } },
        201: { json: SINGLE_UPDATE_RESULT, example: { errors: [], id: "user-42", statusCode: 201 } },
      },
      (d) => {
        const r = d.upsertEndUser;
        return { status: r.statusCode, body: { errors: r.errors, id: r.id, statusCode: r.statusCode } };
      },
    ),
  });

export const endUserRoutes: RestRoute[] = [
  // Style A
  route(LIST, {
    name: "listEndUsersA",
    method: "get",
    path: `${A}/endUsers`,
    summary: "List end users (paginated; with updatedSince, those changed since a time, for incremental syncs)",
    query: { ...pageQuery(LIST_LIMITS.standard), ...updatedSinceQuery },
    variables: (i) => ({
      accountId: pathParam(i, "accountId"),
      first: limitParam(i.query, LIST_LIMITS.standard),
      after: cursorParam(i.query),
      actions: false,
      ...updatedSinceVariables(i),
    }),
    reply: reply.page((d) => d.account.endUsers, endUserRecord("A")),
  }),
  route(UPSERT_MANY, {
    name: "upsertEndUsersA",
    method: "put",
    path: `${A}/endUsers`,
    summary: "Create or update end users (array)",
    body: END_USERS_BODY("A"),
    jsonBody: true,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), input: unchecked(endUserItems("A")(i)), actions: false }),
    reply: reply.bulk((d) => d.upsertEndUsers.results.map(withRecord("endUser")), endUserRecord("A"), {
      success: [200, 201],
      failure: [400],
      example: END_USERS_207,
    }),
  }),
  route(DELETE, {
    name: "deleteEndUsersA",
    method: "delete",
    path: `${A}/endUsers/:id`,
    summary: "Delete end users by comma-separated ids",
    params: {
      id: {
        description: "One end-user id, or several comma-separated. An entry repeating an earlier one is a 400 item naming it.",
        example: "user-42,user-43",
      },
    },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), ids: commaList(i.params.id, "id") }),
    reply: reply.bulk((d) => d.deleteEndUsers.results, null, {
      success: [204],
      failure: [404],
      example: { ids: ["user-42", "user-43"], error: "no end user with id 'user-43'" },
    }),
  }),
  route(GET, {
    name: "getEndUserA",
    method: "get",
    path: `${A}/endUsers/:id`,
    summary: "Get one end user",
    params: ID_PARAM,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "id"), custom: true, actions: false }),
    reply: reply.one(
      (d) => d.account.endUser,
      endUserRecord("A"),
      (i) => `No end user with id '${i.params.id}'.`,
    ),
  }),
  singleUpdate(A, "upsertEndUserA", "Create or update one end user's custom fields"),
  ...schemaRows(
    A,
    "A",
    { list: "getEndUserSchemaA", get: "getEndUserSchemaFieldA", put: "upsertEndUserSchemaA", del: "deleteEndUserSchemaA" },
    { list: "Get the end-user schema (optionally one field via fieldName)", put: "Add or update custom fields (max 50 custom fields)" },
  ),

  // Style B
  ...schemaRows(
    B,
    "B",
    { list: "getEndUserSchemaB", get: "getEndUserSchemaFieldB", put: "upsertEndUserSchemaB", del: "deleteEndUserSchemaB" },
    { list: "B10: get the end-user schema (fieldName narrows it)", put: "B11: add or update custom fields" },
  ),
  route(UPSERT_MANY, {
    name: "upsertEndUsersB",
    method: "put",
    path: `${B}/endUsers`,
    summary: "B12: update or add end users (with userActionCount, userActions)",
    body: END_USERS_BODY("B"),
    jsonBody: true,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), input: unchecked(endUserItems("B")(i)), actions: true }),
    reply: reply.bulk((d) => d.upsertEndUsers.results.map(withRecord("endUser")), endUserRecord("B"), {
      success: [200, 201],
      failure: [400],
      example: END_USERS_207,
    }),
  }),
  route(GET, {
    name: "lookupEndUser",
    method: "post",
    path: `${B}/endUsers/lookup`,
    // B14 (GET) and B15 (PUT) still reach the end user whose id is "lookup".
    literalIsAlsoParam: true,
    summary: "B13: fetch an end user by id for segmentation (fields decide what is read)",
    body: {
      schema: {
        type: "object",
        required: ["id"],
        properties: {
          id: { type: "string", description: "The end user's id." },
          fields: { description: FIELDS_DOC, oneOf: [{ type: "array", items: { type: "string", enum: [...FIELD_SETS] } }, { type: "string" }] },
          useridType: { type: "string", enum: Object.keys(ID_TYPES), description: "The identification method the caller used; must match the account's." },
        },
      },
      example: { id: "user-42", fields: ["custom"], useridType: "svc-cookie-user-id" },
    },
    jsonBody: true,
    variables: (i) => {
      const body = customBody(i.body);
      // A field B13 does not take is a 400, as on every route (a misspelt `field` was read as absent).
      const extra = Object.keys(body).filter((k) => !LOOKUP_FIELDS.includes(k));
      if (extra.length)
        throw new AppError(400, `body: unknown field(s) ${extra.map((k) => k.slice(0, 64)).join(", ")} (B13 takes ${LOOKUP_FIELDS.join(", ")})`, [
          { path: extra[0]!.slice(0, 64), message: "unknown field" },
        ]);
      if (typeof body.id !== "string" || !body.id) throw new AppError(400, "id is required", [{ path: "id", message: "required" }]);
      return { accountId: pathParam(i, "accountId"), id: body.id, idType: idType(body.useridType, "useridType"), ...fieldSelection(body.fields) };
    },
    names: { idType: "useridType" },
    reply: reply.one(
      (d) => d.account.endUser,
      endUserRecord("B"),
      (i) => `No end user with id '${String((i.body as { id?: unknown }).id)}'.`,
    ),
  }),
  route(GET, {
    name: "getEndUserB",
    method: "get",
    path: `${B}/endUsers/:id`,
    summary: "B14: fetch custom and user-action fields of an end user (fields decide what is read)",
    params: ID_PARAM,
    query: {
      fields: { description: `${FIELDS_DOC} Comma-separated.`, schema: { type: "string" }, example: "custom,useraction" },
      "userid-type": {
        description: "The identification method the caller used; must match the account's.",
        schema: { type: "string", enum: Object.keys(ID_TYPES) },
        example: "svc-cookie-user-id",
      },
    },
    variables: (i) => ({
      accountId: pathParam(i, "accountId"),
      id: pathParam(i, "id"),
      idType: idType(i.query["userid-type"], "userid-type"),
      ...fieldSelection(i.query.fields),
    }),
    names: { idType: "userid-type" },
    reply: reply.one(
      (d) => d.account.endUser,
      endUserRecord("B"),
      (i) => `No end user with id '${i.params.id}'.`,
    ),
  }),
  singleUpdate(B, "upsertEndUserB", "B15: update or add one end user's custom fields"),
];
