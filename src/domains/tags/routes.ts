// Tags over REST: B7 (bulk upsert) and the list and delete routes the contract adds.

import { B, type RestRoute, route, unchecked, withRecord } from "../../rest/contract.js";
import { pageQuery } from "../../rest/docs.js";
import { exampleId } from "../../rest/examples.js";
import { graphql } from "../../rest/operation.js";
import { commaList, objectArrayBody, pageVariables, pathParam } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { LIST_LIMITS } from "../../schema/pagination.js";
import { TAG_FIELDS, tagRecord } from "./records.js";

const TAG_PAGE = graphql(`query TagPage($accountId: String!, $first: Int, $after: String) {
  account(id: $accountId) { tags(first: $first, after: $after) { nodes { ${TAG_FIELDS} } pageInfo { hasNextPage endCursor } } } }`);
const UPSERT_TAGS = graphql(`mutation UpsertTags($accountId: String!, $input: [TagInput!]!) {
  upsertTags(accountId: $accountId, input: $input) { results { index statusCode id errors tag { ${TAG_FIELDS} } } } }`);
const DELETE_TAGS = graphql(`mutation DeleteTags($accountId: String!, $names: [String!]!) {
  deleteTags(accountId: $accountId, names: $names) { results { index statusCode id errors } } }`);

export const tagRoutes: RestRoute[] = [
  // Style B: tags (B7 and the list / delete the contract adds)
  route(UPSERT_TAGS, {
    name: "upsertTags",
    method: "put",
    path: `${B}/tags`,
    summary: "B7: add or update content tags (bulk)",
    body: {
      input: "TagInput",
      array: true,
      required: ["name"],
      example: [
        { name: "onboarding", description: "For new users" },
        { name: "billing", newName: "payments" },
      ],
    },
    jsonBody: true,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), input: unchecked(objectArrayBody(i.body)) }),
    reply: reply.bulk((d) => d.upsertTags.results.map(withRecord("tag")), tagRecord, {
      success: [200, 201],
      failure: [400, 404, 409],
      example: { ids: [exampleId("t"), null], error: "no tag named 'billing' to rename", failed: 404 },
    }),
  }),
  route(TAG_PAGE, {
    name: "listTags",
    method: "get",
    path: `${B}/tags`,
    summary: "List content tags (paginated, by name)",
    query: pageQuery(LIST_LIMITS.standard),
    variables: pageVariables,
    reply: reply.page((d) => d.account.tags, tagRecord),
  }),
  route(DELETE_TAGS, {
    name: "deleteTags",
    method: "delete",
    path: `${B}/tags/:names`,
    summary: "Delete content tags by comma-separated names",
    params: { names: { description: "Comma-separated tag names. An entry repeating an earlier one is a 400 item naming it.", example: "onboarding,billing" } },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), names: commaList(i.params.names, "names") }),
    reply: reply.bulk((d) => d.deleteTags.results, null, {
      success: [204],
      failure: [404],
      example: { ids: ["onboarding", "billing"], error: "no tag named 'billing'" },
    }),
  }),
];
