// Content over REST: style A's five routes and style B's B1–B5, each a row running one GraphQL
// operation of this domain (schema.ts) and mapping its result with records.ts.

import { AppError } from "../../errors.js";
import { A, B, type RestInput, type RestRoute, route, type Style, unchecked, withRecord } from "../../rest/contract.js";
import { type BodyDoc, pageQuery, type QueryParamDoc } from "../../rest/docs.js";
import { exampleId } from "../../rest/examples.js";
import { type EnumValue, graphql, type ResultOf } from "../../rest/operation.js";
import { commaList, cursorParam, intParam, limitParam, objectArrayBody, pageVariables, pathParam, stringParam } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { MAX_TIMESTAMP } from "../../schema/builder.js";
import { LIST_LIMITS } from "../../schema/pagination.js";
import { CONTENT_FIELDS, CONTENT_READ_ONLY, contentInput, contentRecord } from "./records.js";
import { CONTENT_TYPES, STATIC_TYPES } from "./schema.js";

const CONTENT_PAGE = graphql(`query ContentPage($accountId: String!, $first: Int, $after: String, $filter: ContentFilter, $orderBy: ContentOrder) {
  account(id: $accountId) { contents(first: $first, after: $after, filter: $filter, orderBy: $orderBy) {
    nodes { ${CONTENT_FIELDS} } pageInfo { hasNextPage endCursor } } } }`);

const CREATE_CONTENT =
  graphql(`mutation CreateContent($accountId: String!, $input: [ContentInput!]!, $allowedTypes: [ContentType!], $descriptionTypes: [ContentType!]) {
  createContents(accountId: $accountId, input: $input, allowedTypes: $allowedTypes, descriptionTypes: $descriptionTypes) {
    results { index statusCode id errors content { ${CONTENT_FIELDS} } } } }`);

const UPDATE_CONTENT =
  graphql(`mutation UpdateContent($accountId: String!, $input: [ContentInput!]!, $allowedTypes: [ContentType!], $descriptionTypes: [ContentType!]) {
  updateContents(accountId: $accountId, input: $input, allowedTypes: $allowedTypes, descriptionTypes: $descriptionTypes) {
    results { index statusCode id errors content { ${CONTENT_FIELDS} } } } }`);

const DELETE_CONTENT = graphql(`mutation DeleteContent($accountId: String!, $ids: [String!]!) {
  deleteContents(accountId: $accountId, ids: $ids) { results { index statusCode id errors } } }`);

const GET_CONTENT = graphql(`query GetContent($accountId: String!, $id: String!) { account(id: $accountId) { content(id: $id) { ${CONTENT_FIELDS} } } }`);

const contentPage = (style: Style) => reply.page((d: ResultOf<typeof CONTENT_PAGE>) => d.account.contents, contentRecord(style));
const contentCreated = (style: Style) =>
  reply.bulk((d: ResultOf<typeof CREATE_CONTENT>) => d.createContents.results.map(withRecord("content")), contentRecord(style), {
    success: [201],
    failure: [400, 409],
    example: { ids: [exampleId("c"), null], error: "title is required" },
  });
const contentUpdated = (style: Style) =>
  reply.bulk((d: ResultOf<typeof UPDATE_CONTENT>) => d.updateContents.results.map(withRecord("content")), contentRecord(style), {
    success: [200],
    failure: [400, 404, 409],
    example: { ids: [exampleId("c"), exampleId("c", 1)], error: `no content with id '${exampleId("c", 1)}'`, failed: 404 },
  });
const contentWrite = (style: Style) => (input: RestInput) => ({
  accountId: pathParam(input, "accountId"),
  // Each item reshaped to ContentInput's names, its values left for GraphQL coercion to check.
  input: unchecked(objectArrayBody(input.body).map(contentInput(style))),
  allowedTypes: STATIC_TYPES,
  // The spec's variant B: "Description for link-type content only" (text content has description_md).
  ...(style === "B" ? { descriptionTypes: ["link" as const] } : {}),
});

/** B1's only valid state/stage pairs (spec, "B1 state and stage combinations"), as list filters. */
const STATE_STAGE: Record<string, { state: EnumValue<"ContentState">[]; stage?: EnumValue<"ContentStage"> }> = {
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
    const pairs = Object.keys(STATE_STAGE)
      .map((k) => k.replace("|", "/"))
      .join(", ");
    throw new AppError(400, `state and stage must be given together as one of the pairs (state/stage): ${pairs}`, [
      { path: "state", message: "invalid state/stage combination" },
    ]);
  }
  return filter;
}

function changedAfter(field: "createdAfter" | "updatedAfter") {
  return (input: RestInput) => {
    const type = stringParam(input.query, "type");
    const orderBy: EnumValue<"ContentOrder"> = field === "createdAfter" ? "CREATED" : "UPDATED";
    const since = (fromTime: number | undefined) => (field === "createdAfter" ? { createdAfter: fromTime } : { updatedAfter: fromTime });
    return {
      accountId: pathParam(input, "accountId"),
      first: limitParam(input.query, LIST_LIMITS.standard),
      after: cursorParam(input.query),
      orderBy,
      // `type` as given: GraphQL coercion refuses a value that is no ContentType.
      filter: { ...since(intParam(input.query, "fromTime", { required: true, min: 0, max: MAX_TIMESTAMP })), ...(type ? { type: unchecked(type) } : {}) },
    };
  };
}

// ---- OpenAPI descriptions of inputs (src/openapi reads them; test/openapi.test.ts checks them) -----

const LIST_QUERY = pageQuery(LIST_LIMITS.standard);
const pairPart = (i: 0 | 1) => [...new Set(Object.keys(STATE_STAGE).map((k) => k.split("|")[i]!))];
const STATE_STAGE_QUERY: Record<string, QueryParamDoc> = {
  ...LIST_QUERY,
  state: {
    description: "With `stage`, one of the pairs draft/design, ready/design, default/production, DRAFT:READY:PRODUCTION/ALL, READY:PRODUCTION/ALL.",
    schema: { type: "string", enum: pairPart(0) },
    example: "draft",
  },
  stage: { description: "With `state` (see there).", schema: { type: "string", enum: pairPart(1) }, example: "design" },
};
const CHANGED_AFTER_QUERY: Record<string, QueryParamDoc> = {
  ...LIST_QUERY,
  fromTime: {
    description: "Epoch milliseconds; only content changed strictly after it.",
    required: true,
    schema: { type: "integer", minimum: 0 },
    example: 1718000000000,
  },
  type: { description: "Only content of this type.", schema: { type: "string", enum: [...CONTENT_TYPES] } },
};
/** B4/B5's query parameters, by the variables they fill (a `type` that is no ContentType is named `type`, not `filter`). */
const CHANGED_AFTER_NAMES = {
  "filter.type": "type",
  "filter.createdAfter": "fromTime",
  "filter.updatedAfter": "fromTime",
};
/** The writable types and the title, narrower than ContentInput's: what the server refuses, a generated client refuses too. */
const WRITABLE = {
  type: { type: "string", enum: [...STATIC_TYPES], description: `One of ${STATIC_TYPES.join(", ")} (the other types are not written here).` },
  title: { type: "string", minLength: 1, maxLength: 500 },
};
const contentBody = (style: Style, example: unknown, mode: "create" | "update"): BodyDoc => ({
  input: "ContentInput",
  array: true,
  example,
  rename: { descriptionMd: "description_md", [style === "A" ? "tagIds" : "tagNames"]: "tags" },
  // Style A has no description_md (the spec's variant A: "Does not exist"; a 400 as any unknown field).
  omit: [style === "A" ? "tagNames" : "tagIds", ...(style === "A" ? ["descriptionMd"] : []), ...(mode === "create" ? ["id"] : [])],
  required: mode === "create" ? ["title", "type"] : ["id"],
  readOnly: CONTENT_READ_ONLY[style].docs,
  properties:
    mode === "create"
      ? WRITABLE
      : {
          id: { type: "string" },
          ...WRITABLE,
          type: { ...WRITABLE.type, description: "The content's type, unchanged (a type cannot change)." },
          // null clears other fields; a state cannot be cleared (a 400 naming it).
          state: { type: "string", enum: ["draft", "ready", "production"], description: "The stage follows. Cannot be null (a state cannot be cleared)." },
        },
});
const CREATE_EXAMPLE = (style: Style) => [
  { title: "Getting started", type: "link", url: "https://example.com/help/getting-started" },
  style === "A"
    ? { title: "Release notes", type: "text", description: "New this week" }
    : { title: "Release notes", type: "text", description_md: "**New** this week" },
];
const UPDATE_EXAMPLE = [{ id: exampleId("c"), title: "Getting started (updated)", state: "ready" }];

// ---- the rows -------------------------------------------------------------------------------------

export const contentRoutes: RestRoute[] = [
  // Style A: content
  route(CONTENT_PAGE, {
    name: "listContentA",
    method: "get",
    path: `${A}/content`,
    summary: "List content (paginated)",
    query: LIST_QUERY,
    variables: pageVariables,
    reply: contentPage("A"),
  }),
  route(UPDATE_CONTENT, {
    name: "updateContentA",
    method: "put",
    path: `${A}/content`,
    summary: "Update content (array; id identifies each)",
    body: contentBody("A", UPDATE_EXAMPLE, "update"),
    jsonBody: true,
    variables: contentWrite("A"),
    reply: contentUpdated("A"),
  }),
  route(CREATE_CONTENT, {
    name: "createContentA",
    method: "post",
    path: `${A}/content`,
    summary: "Create links, videos and text (array)",
    body: contentBody("A", CREATE_EXAMPLE("A"), "create"),
    jsonBody: true,
    variables: contentWrite("A"),
    reply: contentCreated("A"),
  }),
  route(DELETE_CONTENT, {
    name: "deleteContentA",
    method: "delete",
    path: `${A}/content/:id`,
    summary: "Delete content by comma-separated ids",
    // One path per URL pattern (the spec calls this list contentIDArray): GET /content/{id} shares it.
    params: {
      id: {
        description: "One content id, or several comma-separated (the spec's contentIDArray). An entry repeating an earlier one is a 400 item naming it.",
        example: `${exampleId("c")},${exampleId("c", 1)}`,
      },
    },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), ids: commaList(i.params.id, "id") }),
    reply: reply.bulk((d) => d.deleteContents.results, null, {
      success: [204],
      failure: [404],
      example: { ids: [exampleId("c"), exampleId("c", 1)], error: `no content with id '${exampleId("c", 1)}'` },
    }),
  }),
  route(GET_CONTENT, {
    name: "getContentA",
    method: "get",
    path: `${A}/content/:id`,
    summary: "Get one content by id",
    params: { id: { description: "The content id.", example: exampleId("c") } },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "id") }),
    reply: reply.one(
      (d) => d.account.content,
      contentRecord("A"),
      (i) => `No content with id '${i.params.id}'.`,
    ),
  }),

  // Style B: content (B1–B5)
  route(CONTENT_PAGE, {
    name: "listContentB",
    method: "get",
    path: `${B}/content`,
    summary: "B1: list content (paginated), filtered by a state/stage pair",
    query: STATE_STAGE_QUERY,
    variables: (i) => ({ ...pageVariables(i), filter: stateStageFilter(i.query) }),
    reply: contentPage("B"),
  }),
  route(UPDATE_CONTENT, {
    name: "updateContentB",
    method: "put",
    path: `${B}/content`,
    summary: "B2: update content (array, variant B)",
    body: contentBody("B", UPDATE_EXAMPLE, "update"),
    jsonBody: true,
    variables: contentWrite("B"),
    reply: contentUpdated("B"),
  }),
  route(CREATE_CONTENT, {
    name: "createContentB",
    method: "post",
    path: `${B}/content`,
    summary: "B3: create static content (array, variant B)",
    body: contentBody("B", CREATE_EXAMPLE("B"), "create"),
    jsonBody: true,
    variables: contentWrite("B"),
    reply: contentCreated("B"),
  }),
  route(CONTENT_PAGE, {
    name: "listContentCreatedAfter",
    method: "get",
    path: `${B}/content/createdAfter`,
    summary: "B4: content created after fromTime (paginated)",
    query: CHANGED_AFTER_QUERY,
    variables: changedAfter("createdAfter"),
    names: CHANGED_AFTER_NAMES,
    reply: contentPage("B"),
  }),
  route(CONTENT_PAGE, {
    name: "listContentUpdatedAfter",
    method: "get",
    path: `${B}/content/updatedAfter`,
    summary: "B5: content updated after fromTime (paginated)",
    query: CHANGED_AFTER_QUERY,
    variables: changedAfter("updatedAfter"),
    names: CHANGED_AFTER_NAMES,
    reply: contentPage("B"),
  }),
];
