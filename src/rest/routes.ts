// The REST compatibility layer as data: one row per path of the spec. Each row names its GraphQL
// document, how path, query and body become variables, and how the result becomes the response.
// Adding a route is adding a row; src/rest/router.ts executes them all the same way.
import { LIST_LIMITS } from "../schema/pagination.js";
import { MAX_TIMESTAMP } from "../schema/builder.js";
import { CONTENT_TYPES, STATIC_TYPES } from "../schema/content.js";
import type { KeyScope } from "../auth/keys.js";
import { HttpProblem } from "./problem.js";
import { commaList, cursorParam, intParam, limitParam, objectArrayBody, stringParam } from "./params.js";
import { CONTENT_FIELDS, TAG_FIELDS, contentInput, contentRecord, tagRecord, type Style } from "./records.js";
import { bulkReply, oneReply, pageReply, type RestReply } from "./responses.js";
import { endUserRoutes } from "./endUserRoutes.js";
import { pageQuery, type BodyDoc, type QueryParamDoc } from "./docs.js";

export interface RestInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

export interface RestRoute {
  /** Stable operation name (OpenAPI operationId, metrics label). */
  name: string;
  method: "get" | "post" | "put" | "delete";
  /** Express path; `:accountId` is in every account route. */
  path: string;
  summary: string;
  /** The GraphQL operation the route runs. */
  document: string;
  variables(input: RestInput): Record<string, unknown>;
  reply(data: any, input: RestInput): RestReply;
  /** Key scopes allowed on this route (default: integration keys only). */
  scopes?: readonly KeyScope[];
  /** Whether the route reads a JSON body. */
  jsonBody?: boolean;
  /** With jsonBody: an empty body is allowed. */
  optionalBody?: boolean;
  /** A body other than problem+json for failures (the spec's single end-user update shape). */
  errorBody?: (status: number, messages: string[], input: RestInput) => unknown;
  /** OpenAPI: the query parameters variables() reads (test/openapi.test.ts checks the two agree). */
  query?: Record<string, QueryParamDoc>;
  /** OpenAPI: the JSON body, as a GraphQL input type or a JSON Schema. */
  body?: BodyDoc;
  /** OpenAPI: descriptions of path parameters other than accountId. */
  params?: Record<string, { description: string; example?: string }>;
}

const A = "/api/v1/:accountId";
const B = "/v1/accounts/:accountId";

// ---- shared documents --------------------------------------------------------------------------

const CONTENT_PAGE = `query ContentPage($accountId: String!, $first: Int, $after: String, $filter: ContentFilter, $orderBy: ContentOrder) {
  account(id: $accountId) { contents(first: $first, after: $after, filter: $filter, orderBy: $orderBy) {
    nodes { ${CONTENT_FIELDS} } pageInfo { hasNextPage endCursor } } } }`;

const CREATE_CONTENT = `mutation CreateContent($accountId: String!, $input: [ContentInput!]!, $allowedTypes: [ContentType!]) {
  createContents(accountId: $accountId, input: $input, allowedTypes: $allowedTypes) {
    results { index statusCode id errors content { ${CONTENT_FIELDS} } } } }`;

const UPDATE_CONTENT = `mutation UpdateContent($accountId: String!, $input: [ContentInput!]!, $allowedTypes: [ContentType!]) {
  updateContents(accountId: $accountId, input: $input, allowedTypes: $allowedTypes) {
    results { index statusCode id errors content { ${CONTENT_FIELDS} } } } }`;

const DELETE_CONTENT = `mutation DeleteContent($accountId: String!, $ids: [String!]!) {
  deleteContents(accountId: $accountId, ids: $ids) { results { index statusCode id errors } } }`;

const contentPage = (style: Style) => (d: any) => pageReply(d.account.contents, contentRecord(style));
const contentWrite = (style: Style) => (input: RestInput) => ({
  accountId: input.params.accountId,
  input: objectArrayBody(input.body).map(contentInput(style)),
  allowedTypes: STATIC_TYPES,
});

/** B1's only valid state/stage pairs (spec, "B1 state and stage combinations"), as list filters. */
const STATE_STAGE: Record<string, { state: string[]; stage?: string }> = {
  "draft|design": { state: ["draft"], stage: "design" },
  "ready|design": { state: ["ready"], stage: "design" },
  "default|production": { state: ["production"], stage: "production" },
  "DRAFT:READY:PRODUCTION|ALL": { state: ["draft", "ready", "production"] },
  "READY:PRODUCTION|ALL": { state: ["ready", "production"] },
};

function stateStageFilter(query: Record<string, unknown>) {
  const state = stringParam(query, "state");
  const stage = stringParam(query, "stage");
  if (state === undefined && stage === undefined) return undefined;
  const filter = STATE_STAGE[`${state}|${stage}`];
  if (!filter) {
    const pairs = Object.keys(STATE_STAGE).map((k) => k.replace("|", "/")).join(", ");
    throw new HttpProblem(400, `state and stage must be given together as one of the pairs (state/stage): ${pairs}`, [
      { path: "state", message: "invalid state/stage combination" },
    ]);
  }
  return filter;
}

function changedAfter(field: "createdAfter" | "updatedAfter") {
  return (input: RestInput) => {
    const type = stringParam(input.query, "type");
    return {
      accountId: input.params.accountId,
      first: limitParam(input.query, LIST_LIMITS.standard),
      after: cursorParam(input.query),
      orderBy: field === "createdAfter" ? "CREATED" : "UPDATED",
      filter: { [field]: intParam(input.query, "fromTime", { required: true, min: 0, max: MAX_TIMESTAMP }), ...(type ? { type } : {}) },
    };
  };
}

// ---- tags ----------------------------------------------------------------------------------------

const TAG_PAGE = `query TagPage($accountId: String!, $first: Int, $after: String) {
  account(id: $accountId) { tags(first: $first, after: $after) { nodes { ${TAG_FIELDS} } pageInfo { hasNextPage endCursor } } } }`;
const UPSERT_TAGS = `mutation UpsertTags($accountId: String!, $input: [TagInput!]!) {
  upsertTags(accountId: $accountId, input: $input) { results { index statusCode id errors tag { ${TAG_FIELDS} } } } }`;
const DELETE_TAGS = `mutation DeleteTags($accountId: String!, $names: [String!]!) {
  deleteTags(accountId: $accountId, names: $names) { results { index statusCode id errors } } }`;

const listVars = (input: RestInput) => ({
  accountId: input.params.accountId,
  first: limitParam(input.query, LIST_LIMITS.standard),
  after: cursorParam(input.query),
});

// ---- OpenAPI descriptions of inputs (src/openapi reads them; test/openapi.test.ts checks them) -----

const LIST_QUERY = pageQuery(LIST_LIMITS.standard);
const pairPart = (i: 0 | 1) => [...new Set(Object.keys(STATE_STAGE).map((k) => k.split("|")[i]!))];
const STATE_STAGE_QUERY: Record<string, QueryParamDoc> = {
  ...LIST_QUERY,
  state: { description: "With `stage`, one of the pairs draft/design, ready/design, default/production, DRAFT:READY:PRODUCTION/ALL, READY:PRODUCTION/ALL.", schema: { type: "string", enum: pairPart(0) }, example: "draft" },
  stage: { description: "With `state` (see there).", schema: { type: "string", enum: pairPart(1) }, example: "design" },
};
const CHANGED_AFTER_QUERY: Record<string, QueryParamDoc> = {
  ...LIST_QUERY,
  fromTime: { description: "Epoch milliseconds; only content changed strictly after it.", required: true, schema: { type: "integer", minimum: 0 }, example: 1718000000000 },
  type: { description: "Only content of this type.", schema: { type: "string", enum: [...CONTENT_TYPES] } },
};
const contentBody = (style: Style, example: unknown): BodyDoc => ({
  input: "ContentInput", array: true, example,
  rename: { descriptionMd: "description_md", [style === "A" ? "tagIds" : "tagNames"]: "tags" },
  omit: [style === "A" ? "tagNames" : "tagIds"],
});
const CREATE_EXAMPLE = [{ title: "Getting started", type: "link", url: "https://example.com/help/getting-started" }, { title: "Release notes", type: "text", description_md: "**New** this week" }];
const UPDATE_EXAMPLE = [{ id: "c_1", title: "Getting started (updated)", state: "ready" }];

// ---- the table -----------------------------------------------------------------------------------

export const routes: RestRoute[] = [
  // Style A: content
  {
    name: "listContentA", method: "get", path: `${A}/content`, summary: "List content (paginated)", query: LIST_QUERY,
    document: CONTENT_PAGE, variables: listVars, reply: contentPage("A"),
  },
  {
    name: "updateContentA", method: "put", path: `${A}/content`, summary: "Update content (array; id identifies each)",
    body: contentBody("A", UPDATE_EXAMPLE),
    document: UPDATE_CONTENT, jsonBody: true, variables: contentWrite("A"),
    reply: (d) => bulkReply(d.updateContents.results.map(withRecord("content")), contentRecord("A")),
  },
  {
    name: "createContentA", method: "post", path: `${A}/content`, summary: "Create links, videos and text (array)",
    body: contentBody("A", CREATE_EXAMPLE),
    document: CREATE_CONTENT, jsonBody: true, variables: contentWrite("A"),
    reply: (d) => bulkReply(d.createContents.results.map(withRecord("content")), contentRecord("A")),
  },
  {
    name: "deleteContentA", method: "delete", path: `${A}/content/:contentIDArray`, summary: "Delete content by comma-separated ids",
    params: { contentIDArray: { description: "Comma-separated content ids.", example: "c_1,c_2" } },
    document: DELETE_CONTENT,
    variables: (i) => ({ accountId: i.params.accountId, ids: commaList(i.params.contentIDArray, "contentIDArray") }),
    reply: (d) => bulkReply(d.deleteContents.results, null),
  },
  {
    name: "getContentA", method: "get", path: `${A}/content/:id`, summary: "Get one content by id",
    params: { id: { description: "The content id.", example: "c_1" } },
    document: `query GetContent($accountId: String!, $id: String!) { account(id: $accountId) { content(id: $id) { ${CONTENT_FIELDS} } } }`,
    variables: (i) => ({ accountId: i.params.accountId, id: i.params.id }),
    reply: (d, i) => oneReply(d.account.content, contentRecord("A"), `No content with id '${i.params.id}'.`),
  },

  // Style B: content (B1–B5)
  {
    name: "listContentB", method: "get", path: `${B}/content`, summary: "B1: list content (paginated), filtered by a state/stage pair",
    query: STATE_STAGE_QUERY,
    document: CONTENT_PAGE,
    variables: (i) => ({ ...listVars(i), filter: stateStageFilter(i.query) }),
    reply: contentPage("B"),
  },
  {
    name: "updateContentB", method: "put", path: `${B}/content`, summary: "B2: update content (array, variant B)",
    body: contentBody("B", UPDATE_EXAMPLE),
    document: UPDATE_CONTENT, jsonBody: true, variables: contentWrite("B"),
    reply: (d) => bulkReply(d.updateContents.results.map(withRecord("content")), contentRecord("B")),
  },
  {
    name: "createContentB", method: "post", path: `${B}/content`, summary: "B3: create static content (array, variant B)",
    body: contentBody("B", CREATE_EXAMPLE),
    document: CREATE_CONTENT, jsonBody: true, variables: contentWrite("B"),
    reply: (d) => bulkReply(d.createContents.results.map(withRecord("content")), contentRecord("B")),
  },
  {
    name: "listContentCreatedAfter", method: "get", path: `${B}/content/createdAfter`, summary: "B4: content created after fromTime (paginated)",
    query: CHANGED_AFTER_QUERY,
    document: CONTENT_PAGE, variables: changedAfter("createdAfter"), reply: contentPage("B"),
  },
  {
    name: "listContentUpdatedAfter", method: "get", path: `${B}/content/updatedAfter`, summary: "B5: content updated after fromTime (paginated)",
    query: CHANGED_AFTER_QUERY,
    document: CONTENT_PAGE, variables: changedAfter("updatedAfter"), reply: contentPage("B"),
  },

  // Style B: tags (B7 and the list / delete the contract adds)
  {
    name: "upsertTags", method: "put", path: `${B}/tags`, summary: "B7: add or update content tags (bulk)",
    body: { input: "TagInput", array: true, required: ["name"], example: [{ name: "onboarding", description: "For new users" }, { name: "billing", newName: "payments" }] },
    document: UPSERT_TAGS, jsonBody: true,
    variables: (i) => ({ accountId: i.params.accountId, input: objectArrayBody(i.body) }),
    reply: (d) => bulkReply(d.upsertTags.results.map(withRecord("tag")), tagRecord),
  },
  {
    name: "listTags", method: "get", path: `${B}/tags`, summary: "List content tags (paginated, by name)", query: LIST_QUERY,
    document: TAG_PAGE, variables: listVars, reply: (d) => pageReply(d.account.tags, tagRecord),
  },
  {
    name: "deleteTags", method: "delete", path: `${B}/tags/:names`, summary: "Delete content tags by comma-separated names",
    params: { names: { description: "Comma-separated tag names.", example: "onboarding,billing" } },
    document: DELETE_TAGS,
    variables: (i) => ({ accountId: i.params.accountId, names: commaList(i.params.names, "names") }),
    reply: (d) => bulkReply(d.deleteTags.results, null),
  },

  ...endUserRoutes,

  // B25: audit logs (POST so personal data is not cached and long filters fit)
  {
    name: "auditLogs", method: "post", path: `${B}/auditlogs`, summary: "B25: audit-log entries of the account (newest first; 90-day default window)",
    document: `query AuditLogs($accountId: String!, $first: Int, $after: String, $filter: AuditLogFilter) {
      auditLogs(accountId: $accountId, first: $first, after: $after, filter: $filter) {
        nodes { id timestamp accountId userId action resourceType resourceId sourceIp details } pageInfo { hasNextPage endCursor } } }`,
    jsonBody: true, optionalBody: true, scopes: ["integration", "auditlogs"],
    query: pageQuery(LIST_LIMITS.auditLogs),
    body: {
      schema: {
        type: "object", additionalProperties: false,
        properties: {
          startDate: { type: "string", description: "`YYYY-MM-DD HH:MM` or `YYYY-MM-DD`, UTC." },
          endDate: { type: "string", description: "`YYYY-MM-DD HH:MM` or `YYYY-MM-DD`, UTC." },
          userId: { type: "string", description: "Only entries of this user." },
        },
      },
      example: { startDate: "2024-06-01", endDate: "2024-06-30" },
    },
    variables: (i) => ({
      accountId: i.params.accountId,
      first: limitParam(i.query, LIST_LIMITS.auditLogs),
      after: cursorParam(i.query),
      filter: auditFilterBody(i.body),
    }),
    reply: (d) => ({ ...pageReply(d.auditLogs, (e) => e), headers: { "Cache-Control": "no-store" } }),
  },
];

function auditFilterBody(body: unknown) {
  if (body === undefined || body === null || (typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0)) return {};
  if (typeof body !== "object" || Array.isArray(body)) throw new HttpProblem(400, "body must be a JSON object {startDate, endDate, userId}");
  const { startDate, endDate, userId, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) throw new HttpProblem(400, `unknown body field(s): ${unknown.join(", ")} (allowed: startDate, endDate, userId)`);
  for (const [k, v] of Object.entries({ startDate, endDate, userId })) {
    if (v !== undefined && v !== null && typeof v !== "string") throw new HttpProblem(400, `${k} must be a string`, [{ path: k, message: "must be a string" }]);
  }
  return { startDate, endDate, userId };
}

/** Moves a result's named record field to `record`, the shape bulkReply reads. */
function withRecord(field: string) {
  return (r: any) => ({ ...r, record: r[field] });
}
