// REST rows for integration attributes and their schema (style B, B17–B23).
import { AppError } from "../../errors.js";
import { B, type RestRoute, route, unchecked, withRecord } from "../../rest/contract.js";
import { pageQuery } from "../../rest/docs.js";
import { graphql } from "../../rest/operation.js";
import { commaList, objectArrayBody, pageVariables, pathParam, stringParam } from "../../rest/params.js";
import { oneReply, readOnlyFields, reply } from "../../rest/responses.js";
import { LIST_LIMITS } from "../../schema/pagination.js";
import { FIELD_TYPES } from "../endUsers/fields.js";
import { SCHEMA_FIELD_FIELDS, schemaFieldRecord } from "../endUsers/records.js";
import { ATTRIBUTE_FIELDS, attributeRecord } from "./records.js";
import { PAIR_SEPARATOR } from "./values.js";

const SCHEMA = graphql(`query IntegrationAttributeSchema($accountId: String!, $attributeName: String) {
  account(id: $accountId) { integrationAttributeSchema(attributeName: $attributeName) { ${SCHEMA_FIELD_FIELDS} } } }`);
const SCHEMA_UPSERT = graphql(`mutation UpsertIntegrationAttributeFields($accountId: String!, $input: [SchemaFieldInput!]!) {
  upsertIntegrationAttributeFields(accountId: $accountId, input: $input) { results { index statusCode id errors field { ${SCHEMA_FIELD_FIELDS} } } } }`);
const UPSERT = graphql(`mutation UpsertIntegrationAttributes($accountId: String!, $input: [IntegrationAttributeInput!]!) {
  upsertIntegrationAttributes(accountId: $accountId, input: $input) { results { index statusCode id errors integrationAttribute { ${ATTRIBUTE_FIELDS} } } } }`);
const DELETE = graphql(`mutation DeleteIntegrationAttributes($accountId: String!, $pairs: [String!]!) {
  deleteIntegrationAttributes(accountId: $accountId, pairs: $pairs) { results { index statusCode id errors } } }`);
const SEARCH = graphql(`query SearchIntegrationAttributes($accountId: String!, $query: JSON!, $first: Int, $after: String) {
  account(id: $accountId) { searchIntegrationAttributes(query: $query, first: $first, after: $after) {
    nodes { ${ATTRIBUTE_FIELDS} } pageInfo { hasNextPage endCursor } } } }`);
const LIST = graphql(`query IntegrationAttributes($accountId: String!, $primaryAttrName: String!, $first: Int, $after: String) {
  account(id: $accountId) { integrationAttributes(primaryAttrName: $primaryAttrName, first: $first, after: $after) {
    nodes { ${ATTRIBUTE_FIELDS} } pageInfo { hasNextPage endCursor } } } }`);

const schemaList = { type: "object", required: ["data"], properties: { data: { type: "array", items: schemaFieldRecord.schema } } };

/** Fields of records an upsert takes and ignores (a record from B23 may be sent back as it is). */
const RECORD_READ_ONLY = readOnlyFields(attributeRecord, ["lastUpdateTime", "lastUpdatedBy"]);

export const attributeRoutes: RestRoute[] = [
  route(SCHEMA, {
    name: "getIntegrationAttributeSchema",
    method: "get",
    path: `${B}/integrationAttributeSchema`,
    summary: "B17: get the integration-attribute schema (attributeName narrows it)",
    query: { attributeName: { description: "Only this attribute (404 when there is none).", schema: { type: "string" }, example: "company" } },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), attributeName: stringParam(i.query, "attributeName") }),
    reply: reply.custom({ 200: { json: schemaList }, 404: "problem" }, (d, i) => {
      const fields = d.account.integrationAttributeSchema;
      if (i.query.attributeName && !fields.length)
        return oneReply(null, schemaFieldRecord.map, `No integration attribute named '${String(i.query.attributeName)}'.`);
      return { status: 200, body: { data: fields.map(schemaFieldRecord.map) } };
    }),
  }),
  route(SCHEMA_UPSERT, {
    name: "upsertIntegrationAttributeSchema",
    method: "put",
    path: `${B}/integrationAttributeSchema`,
    summary: "B18: add attributes to the schema, or change the description of existing ones (max 50)",
    body: {
      input: "SchemaFieldInput",
      array: true,
      required: ["name"],
      example: [{ name: "company", type: FIELD_TYPES[0], description: "The customer company" }],
    },
    jsonBody: true,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), input: unchecked(objectArrayBody(i.body)) }),
    // As for the end-user schema (B11): 200 whether entries were added or changed.
    reply: reply.bulk((d) => d.upsertIntegrationAttributeFields.results.map(withRecord("field")), schemaFieldRecord, {
      success: [200],
      failure: [400],
      created: 200,
      example: { ids: ["company", "region"], error: "the type of 'region' is string and cannot change" },
    }),
  }),
  route(SCHEMA, {
    name: "getIntegrationAttributeSchemaEntry",
    method: "get",
    path: `${B}/integrationAttributeSchema/:attributeName`,
    summary: "B19: get one entry of the integration-attribute schema",
    params: { attributeName: { description: "The attribute's name.", example: "company" } },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), attributeName: pathParam(i, "attributeName") }),
    reply: reply.one(
      (d) => d.account.integrationAttributeSchema[0],
      schemaFieldRecord,
      (i) => `No integration attribute named '${i.params.attributeName}'.`,
    ),
  }),
  route(UPSERT, {
    name: "upsertIntegrationAttributes",
    method: "put",
    path: `${B}/integrationAttributes`,
    summary: "B20: create or update integration-attribute records (matched by attributeName and attributeValue)",
    body: {
      input: "IntegrationAttributeInput",
      array: true,
      required: ["attributeName", "attributeValue"],
      properties: {
        attributeValue: { type: ["string", "number", "boolean"], description: "The primary attribute's value (text, or a number or boolean of its type)." },
      },
      example: [{ attributeName: "company", attributeValue: "acme", additionalAttributes: { region: "emea", seats: 250 } }],
      readOnly: RECORD_READ_ONLY.docs,
    },
    jsonBody: true,
    // A record as B23 answers it may be sent back: its read-only fields are dropped, as content's and
    // end users' are (they were refused as unknown fields of the input).
    variables: (i) => ({
      accountId: pathParam(i, "accountId"),
      input: unchecked(objectArrayBody(i.body).map(RECORD_READ_ONLY.without)),
    }),
    reply: reply.bulk((d) => d.upsertIntegrationAttributes.results.map(withRecord("integrationAttribute")), attributeRecord, {
      success: [200, 201],
      failure: [400],
      example: {
        ids: [`company${PAIR_SEPARATOR}acme`, `company${PAIR_SEPARATOR}globex`],
        error: "unknown integration attribute 'seat' in additionalAttributes",
      },
    }),
  }),
  route(DELETE, {
    name: "deleteIntegrationAttributes",
    method: "delete",
    path: `${B}/integrationAttributes/:primaryAttrNameValue`,
    summary: `B21: delete records by primary name and value (name${PAIR_SEPARATOR}value, comma-separated)`,
    params: {
      primaryAttrNameValue: {
        description: `One or more comma-separated pairs of a primary attribute's name and value joined by \`${PAIR_SEPARATOR}\`.`,
        example: `company${PAIR_SEPARATOR}acme,company${PAIR_SEPARATOR}globex`,
      },
    },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), pairs: commaList(i.params.primaryAttrNameValue, "primaryAttrNameValue") }),
    reply: reply.bulk((d) => d.deleteIntegrationAttributes.results, null, {
      success: [204],
      failure: [400, 404],
      example: {
        ids: [`company${PAIR_SEPARATOR}acme`, `company${PAIR_SEPARATOR}globex`],
        error: `no integration attribute record 'company${PAIR_SEPARATOR}globex'`,
        failed: 404,
      },
    }),
  }),
  route(SEARCH, {
    name: "searchIntegrationAttributes",
    method: "post",
    path: `${B}/integrationAttributes/search`,
    summary: "B22: search records by attribute values (values of a name ORed, names ANDed; paginated)",
    query: pageQuery(LIST_LIMITS.standard),
    body: {
      schema: {
        type: "object",
        minProperties: 1,
        description:
          "Attribute name → comma-separated values. A record matches a name when its primary attribute, or one of its secondary attributes, has that name and one of the values; it must match every name.",
        additionalProperties: { type: ["string", "number", "boolean"] },
      },
      example: { company: "acme,globex", region: "emea" },
    },
    jsonBody: true,
    variables: (i) => {
      if (i.body === null || typeof i.body !== "object" || Array.isArray(i.body))
        throw new AppError(400, 'body must be a JSON object of attribute name → comma-separated values, e.g. {"company":"acme,globex"}', [
          { path: "body", message: "must be a JSON object of attribute name → comma-separated values" },
        ]);
      return { ...pageVariables(i), query: i.body };
    },
    reply: reply.page((d) => d.account.searchIntegrationAttributes, attributeRecord),
  }),
  route(LIST, {
    name: "listIntegrationAttributes",
    method: "get",
    path: `${B}/integrationAttributes`,
    summary: "B23: records of one primary attribute, by value (paginated)",
    query: {
      primaryAttrName: { description: "The primary attribute whose records to list.", schema: { type: "string" }, required: true, example: "company" },
      ...pageQuery(LIST_LIMITS.standard),
    },
    variables: (i) => ({ ...pageVariables(i), primaryAttrName: stringParam(i.query, "primaryAttrName", { required: true })! }),
    reply: reply.page((d) => d.account.integrationAttributes, attributeRecord),
  }),
];
