// REST row for segments: B16, the personalised content order (segments are managed over GraphQL).
import { B, type RestRoute, route } from "../../rest/contract.js";
import { exampleId } from "../../rest/examples.js";
import { graphql } from "../../rest/operation.js";
import { pathParam, stringParam } from "../../rest/params.js";
import { problem } from "../../rest/problem.js";
import { reply } from "../../rest/responses.js";
import { CONTENT_FIELDS, contentRecord } from "../content/records.js";
import { ID_TYPES, idType } from "../endUsers/routes.js";

const ORDER = graphql(`query SegmentContentOrder($accountId: String!, $segmentId: String!, $endUserId: String!, $idType: EndUserIdType) {
  account(id: $accountId) { segment(id: $segmentId) { contentOrder(endUserId: $endUserId, idType: $idType) { ${CONTENT_FIELDS} } } } }`);

const content = contentRecord("B");

export const segmentRoutes: RestRoute[] = [
  route(ORDER, {
    name: "segmentContentOrder",
    method: "get",
    path: `${B}/segments/:segmentId/contentOrder`,
    summary: "B16: the segment's content in order for an end user (empty when the user does not match)",
    params: { segmentId: { description: "The segment's id.", example: exampleId("seg") } },
    query: {
      id: { description: "The end user's id.", schema: { type: "string" }, required: true, example: "user-42" },
      userIdSrc: {
        description: "The identification method the caller used; must match the account's.",
        schema: { type: "string", enum: Object.keys(ID_TYPES) },
        example: "svc-cookie-user-id",
      },
    },
    variables: (i) => ({
      accountId: pathParam(i, "accountId"),
      segmentId: pathParam(i, "segmentId"),
      endUserId: stringParam(i.query, "id", { required: true })!,
      idType: idType(i.query.userIdSrc, "userIdSrc"),
    }),
    names: { endUserId: "id", idType: "userIdSrc" },
    reply: reply.custom(
      { 200: { json: { type: "object", required: ["data"], properties: { data: { type: "array", items: content.schema } } } }, 404: "problem" },
      (d, i) => {
        const segment = d.account.segment;
        if (!segment) return { status: 404, problem: problem(404, `No segment with id '${i.params.segmentId}'.`) };
        if (!segment.contentOrder) return { status: 404, problem: problem(404, `No end user with id '${String(i.query.id)}'.`) };
        return { status: 200, body: { data: segment.contentOrder.map(content.map) } };
      },
    ),
  }),
];
