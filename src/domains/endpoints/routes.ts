// Saved endpoints over REST: /v1/accounts/{accountId}/endpoints (save by PUT, list, show, delete).
import { AppError, type FieldError } from "../../errors.js";
import { ownEntry } from "../../lookup.js";
import { B, type RestRoute, route } from "../../rest/contract.js";
import { pageQuery } from "../../rest/docs.js";
import { graphql } from "../../rest/operation.js";
import { pageVariables, pathParam } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { LIST_LIMITS } from "../../schema/pagination.js";
import { ENDPOINT_FIELDS, EXAMPLE_ENDPOINT_DOCUMENT, endpointRecord } from "./records.js";
import { type EndpointInput, MAX_AGE_SECONDS } from "./store.js";

const E = `${B}/endpoints`;
const NAME = {
  name: {
    description: "The endpoint's name: 1 to 64 of ASCII letters, digits, `-`, `_` (no other letters: the name is a path segment and an operationId as it is).",
    example: "topTags",
  },
};
const PUT = graphql(`mutation PutEndpoint($accountId: String!, $name: String!, $input: EndpointInput!) {
      putEndpoint(accountId: $accountId, name: $name, input: $input) { created endpoint { ${ENDPOINT_FIELDS} } } }`);
const LIST = graphql(`query Endpoints($accountId: String!, $first: Int, $after: String) {
      account(id: $accountId) { endpoints(first: $first, after: $after) { nodes { ${ENDPOINT_FIELDS} } pageInfo { hasNextPage endCursor } } } }`);
const GET = graphql(`query Endpoint($accountId: String!, $name: String!) { account(id: $accountId) { endpoint(name: $name) { ${ENDPOINT_FIELDS} } } }`);
const DELETE = graphql(`mutation DeleteEndpoint($accountId: String!, $name: String!) { deleteEndpoint(accountId: $accountId, name: $name) }`);

const EXAMPLE_DOCUMENT = EXAMPLE_ENDPOINT_DOCUMENT;

/** What each body field must be on the wire: checked here so that a 400 names the field (GraphQL coercion of an object names only `body`). */
const FIELDS: Record<keyof EndpointInput, (v: unknown) => string | null> = {
  document: (v) => (typeof v === "string" ? null : "must be a string (a GraphQL document)"),
  documentId: (v) => (typeof v === "string" ? null : "must be a string (`sha256:<hex>`)"),
  method: (v) => (v === "GET" || v === "POST" ? null : "must be GET or POST"),
  description: (v) => (v === null || typeof v === "string" ? null : "must be a string or null"),
  maxAgeSeconds: (v) =>
    Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_AGE_SECONDS ? null : `must be an integer between 0 and ${MAX_AGE_SECONDS}`,
};

function endpointBody(body: unknown): EndpointInput {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new AppError(400, 'body must be a JSON object: {"document": "query …"} or {"documentId": "sha256:<hex>"}', [
      { path: "body", message: "not an object" },
    ]);
  const errors: FieldError[] = [];
  for (const [field, value] of Object.entries(body)) {
    const check = ownEntry(FIELDS, field);
    const problem = check ? check(value) : `is not a field of an endpoint (fields: ${Object.keys(FIELDS).join(", ")})`;
    if (problem) errors.push({ path: field, message: problem });
  }
  if (errors.length) throw new AppError(400, errors.map((e) => `${e.path} ${e.message}`).join("; "), errors);
  return body as EndpointInput;
}

const notFound = (i: { params: Record<string, string> }) => `No endpoint '${i.params.name}' in this account.`;

export const endpointRoutes: RestRoute[] = [
  route(PUT, {
    name: "putEndpoint",
    method: "put",
    path: `${E}/:name`,
    summary: "Save a GraphQL operation as the endpoint `name` (201 new, 200 replaced)",
    params: NAME,
    jsonBody: true,
    body: {
      input: "EndpointInput",
      example: { document: EXAMPLE_DOCUMENT, description: "The account's first tags", maxAgeSeconds: 60 },
    },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), name: pathParam(i, "name"), input: endpointBody(i.body) }),
    reply: reply.custom({ 200: { json: endpointRecord.schema }, 201: { json: endpointRecord.schema }, 400: "problem", 409: "problem" }, (d) => ({
      status: d.putEndpoint.created ? 201 : 200,
      body: endpointRecord.map(d.putEndpoint.endpoint),
    })),
  }),
  route(LIST, {
    name: "listEndpoints",
    method: "get",
    path: E,
    summary: "List the account's saved endpoints (paginated, oldest first)",
    query: pageQuery(LIST_LIMITS.standard),
    variables: pageVariables,
    reply: reply.page((d) => d.account.endpoints, endpointRecord),
  }),
  route(GET, {
    name: "getEndpoint",
    method: "get",
    path: `${E}/:name`,
    summary: "One saved endpoint",
    params: NAME,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), name: pathParam(i, "name") }),
    reply: reply.one((d) => d.account.endpoint, endpointRecord, notFound),
  }),
  route(DELETE, {
    name: "deleteEndpoint",
    method: "delete",
    path: `${E}/:name`,
    summary: "Delete a saved endpoint (its persisted document stays)",
    params: NAME,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), name: pathParam(i, "name") }),
    reply: reply.custom({ 204: "empty", 404: "problem" }, () => ({ status: 204 })),
  }),
];
