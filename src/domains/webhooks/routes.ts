// Webhooks over REST: /v1/accounts/{accountId}/webhooks (create, list, get, update, delete,
// rotate secret, delivery log, replay).
import { AppError } from "../../errors.js";
import { B, type RestRoute, route, type Unchecked, unchecked } from "../../rest/contract.js";
import { pageQuery } from "../../rest/docs.js";
import { exampleId } from "../../rest/examples.js";
import { graphql } from "../../rest/operation.js";
import { pageVariables, pathParam } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { LIST_LIMITS } from "../../schema/pagination.js";
import { DELIVERY_FIELDS, deliveryRecord, EXAMPLE_REPLAYED, WEBHOOK_FIELDS, webhookRecord, webhookWithSecretRecord } from "./records.js";

const W = `${B}/webhooks`;
const ID = { id: { description: "The webhook's id.", example: exampleId("wh") } };
const CREATE = graphql(
  `mutation CreateWebhook($accountId: String!, $input: WebhookInput!) { createWebhook(accountId: $accountId, input: $input) { ${WEBHOOK_FIELDS} } }`,
);
const LIST = graphql(`query Webhooks($accountId: String!, $first: Int, $after: String) {
      account(id: $accountId) { webhooks(first: $first, after: $after) { nodes { ${WEBHOOK_FIELDS} } pageInfo { hasNextPage endCursor } } } }`);
const GET = graphql(`query Webhook($accountId: String!, $id: String!) { account(id: $accountId) { webhook(id: $id) { ${WEBHOOK_FIELDS} } } }`);
const UPDATE = graphql(
  `mutation UpdateWebhook($accountId: String!, $id: String!, $input: WebhookInput!) { updateWebhook(accountId: $accountId, id: $id, input: $input) { ${WEBHOOK_FIELDS} } }`,
);
const DELETE = graphql(`mutation DeleteWebhook($accountId: String!, $id: String!) { deleteWebhook(accountId: $accountId, id: $id) }`);
const ROTATE = graphql(
  `mutation RotateWebhookSecret($accountId: String!, $id: String!) { rotateWebhookSecret(accountId: $accountId, id: $id) { ${WEBHOOK_FIELDS} } }`,
);
const DELIVERIES = graphql(`query WebhookDeliveries($accountId: String!, $id: String!, $first: Int, $after: String) {
      account(id: $accountId) { webhookDeliveries(webhookId: $id, first: $first, after: $after) { nodes { ${DELIVERY_FIELDS} } pageInfo { hasNextPage endCursor } } } }`);
const REPLAY = graphql(`mutation Replay($accountId: String!, $id: String!, $deliveryId: String!) {
      replayWebhookDelivery(accountId: $accountId, webhookId: $id, deliveryId: $deliveryId) { ${DELIVERY_FIELDS} } }`);

const notFound = (i: { params: Record<string, string> }) => `No webhook '${i.params.id}' in this account.`;

/** A JSON object body, passed on as the GraphQL input (GraphQL checks the types and refuses unknown fields). */
function objectBody(body: unknown): Unchecked {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new AppError(400, "body must be a JSON object", [{ path: "body", message: "not an object" }]);
  const b = body as Record<string, unknown>;
  // GraphQL would take a lone string for a list of one: on the wire `events` is an array.
  if (b.events != null && !Array.isArray(b.events))
    throw new AppError(400, 'events must be an array of event types (or ["*"])', [{ path: "events", message: "not an array" }]);
  return unchecked(b);
}

export const webhookRoutes: RestRoute[] = [
  route(CREATE, {
    name: "createWebhook",
    method: "post",
    path: W,
    summary: "Create a webhook endpoint (answers its signing secret, once)",
    jsonBody: true,
    body: {
      input: "WebhookInput",
      omit: ["enabled"],
      required: ["url", "events"],
      example: { url: "https://hooks.example.com/guidegate", events: ["engagement.flow_completed", "content.created"], description: "CRM sync" },
    },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), input: objectBody(i.body) }),
    reply: reply.custom({ 201: { json: webhookWithSecretRecord.schema }, 400: "problem", 409: "problem" }, (d) => ({
      status: 201,
      body: webhookWithSecretRecord.map(d.createWebhook),
    })),
  }),
  route(LIST, {
    name: "listWebhooks",
    method: "get",
    path: W,
    summary: "List the account's webhook endpoints (paginated, oldest first; secrets are never listed)",
    query: pageQuery(LIST_LIMITS.standard),
    variables: pageVariables,
    reply: reply.page((d) => d.account.webhooks, webhookRecord),
  }),
  route(GET, {
    name: "getWebhook",
    method: "get",
    path: `${W}/:id`,
    summary: "One webhook endpoint",
    params: ID,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "id") }),
    reply: reply.one((d) => d.account.webhook, webhookRecord, notFound),
  }),
  route(UPDATE, {
    name: "updateWebhook",
    method: "put",
    path: `${W}/:id`,
    summary: "Change a webhook's url, events, description or enabled (absent fields stay)",
    params: ID,
    jsonBody: true,
    body: { input: "WebhookInput", example: { events: ["*"], enabled: true } },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "id"), input: objectBody(i.body) }),
    reply: reply.custom({ 200: { json: webhookRecord.schema }, 400: "problem", 404: "problem" }, (d) => ({
      status: 200,
      body: webhookRecord.map(d.updateWebhook),
    })),
  }),
  route(DELETE, {
    name: "deleteWebhook",
    method: "delete",
    path: `${W}/:id`,
    summary: "Delete a webhook endpoint and its delivery log",
    params: ID,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "id") }),
    reply: reply.custom({ 204: "empty", 404: "problem" }, () => ({ status: 204 })),
  }),
  route(ROTATE, {
    name: "rotateWebhookSecret",
    method: "post",
    path: `${W}/:id/rotateSecret`,
    summary: "Replace a webhook's signing secret (answers the new one, once)",
    params: ID,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "id") }),
    reply: reply.custom({ 200: { json: webhookWithSecretRecord.schema }, 404: "problem" }, (d) => ({
      status: 200,
      body: webhookWithSecretRecord.map(d.rotateWebhookSecret),
    })),
  }),
  route(DELIVERIES, {
    name: "listWebhookDeliveries",
    method: "get",
    path: `${W}/:id/deliveries`,
    summary: "A webhook's delivery log: deliveries newest first, each with every attempt (status, response code, latency, next attempt)",
    params: ID,
    query: pageQuery(LIST_LIMITS.standard),
    variables: (i) => ({ ...pageVariables(i), id: pathParam(i, "id") }),
    reply: reply.page((d) => d.account.webhookDeliveries, deliveryRecord),
  }),
  route(REPLAY, {
    name: "replayWebhookDelivery",
    method: "post",
    path: `${W}/:id/deliveries/:deliveryId/replay`,
    summary: "Send a delivery again (same webhook-id, a fresh retry schedule)",
    params: { ...ID, deliveryId: { description: "The delivery's id (its webhook-id header).", example: exampleId("msg") } },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "id"), deliveryId: pathParam(i, "deliveryId") }),
    reply: reply.custom({ 202: { json: deliveryRecord.schema, example: EXAMPLE_REPLAYED }, 404: "problem", 409: "problem" }, (d) => ({
      status: 202,
      body: deliveryRecord.map(d.replayWebhookDelivery),
    })),
  }),
];
