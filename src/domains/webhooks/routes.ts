// Webhooks over REST: /v1/accounts/{accountId}/webhooks (create, list, get, update, delete,
// rotate secret, delivery log, replay).
import { AppError } from "../../errors.js";
import { B, type RestRoute } from "../../rest/contract.js";
import { pageQuery } from "../../rest/docs.js";
import { pageVariables } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { LIST_LIMITS } from "../../schema/pagination.js";
import { DELIVERY_FIELDS, deliveryRecord, WEBHOOK_FIELDS, webhookRecord, webhookWithSecretRecord } from "./records.js";

const W = `${B}/webhooks`;
const ID = { id: { description: "The webhook's id.", example: "wh_0lx3k2a9b00001a2b3c4d" } };
const notFound = (i: { params: Record<string, string> }) => `No webhook '${i.params.id}' in this account.`;

/** A JSON object body, passed on as the GraphQL input (GraphQL checks the types and refuses unknown fields). */
function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new AppError(400, "body must be a JSON object", [{ path: "body", message: "not an object" }]);
  const b = body as Record<string, unknown>;
  // GraphQL would take a lone string for a list of one: on the wire `events` is an array.
  if (b.events != null && !Array.isArray(b.events))
    throw new AppError(400, 'events must be an array of event types (or ["*"])', [{ path: "events", message: "not an array" }]);
  return b;
}

export const webhookRoutes: RestRoute[] = [
  {
    name: "createWebhook",
    method: "post",
    path: W,
    summary: "Create a webhook endpoint (answers its signing secret, once)",
    document: `mutation CreateWebhook($accountId: String!, $input: WebhookInput!) { createWebhook(accountId: $accountId, input: $input) { ${WEBHOOK_FIELDS} } }`,
    jsonBody: true,
    body: {
      input: "WebhookInput",
      omit: ["enabled"],
      required: ["url", "events"],
      example: { url: "https://hooks.example.com/guidegate", events: ["engagement.flow_completed", "content.created"], description: "CRM sync" },
    },
    variables: (i) => ({ accountId: i.params.accountId, input: objectBody(i.body) }),
    reply: reply.custom({ 201: { json: webhookWithSecretRecord.schema }, 400: "problem", 409: "problem" }, (d) => ({
      status: 201,
      body: webhookWithSecretRecord.map(d.createWebhook),
    })),
  },
  {
    name: "listWebhooks",
    method: "get",
    path: W,
    summary: "List the account's webhook endpoints (paginated, oldest first; secrets are never listed)",
    query: pageQuery(LIST_LIMITS.standard),
    document: `query Webhooks($accountId: String!, $first: Int, $after: String) {
      account(id: $accountId) { webhooks(first: $first, after: $after) { nodes { ${WEBHOOK_FIELDS} } pageInfo { hasNextPage endCursor } } } }`,
    variables: pageVariables,
    reply: reply.page((d) => d.account.webhooks, webhookRecord),
  },
  {
    name: "getWebhook",
    method: "get",
    path: `${W}/:id`,
    summary: "One webhook endpoint",
    params: ID,
    document: `query Webhook($accountId: String!, $id: String!) { account(id: $accountId) { webhook(id: $id) { ${WEBHOOK_FIELDS} } } }`,
    variables: (i) => ({ accountId: i.params.accountId, id: i.params.id }),
    reply: reply.one((d) => d.account.webhook, webhookRecord, notFound),
  },
  {
    name: "updateWebhook",
    method: "put",
    path: `${W}/:id`,
    summary: "Change a webhook's url, events, description or enabled (absent fields stay)",
    params: ID,
    document: `mutation UpdateWebhook($accountId: String!, $id: String!, $input: WebhookInput!) { updateWebhook(accountId: $accountId, id: $id, input: $input) { ${WEBHOOK_FIELDS} } }`,
    jsonBody: true,
    body: { input: "WebhookInput", example: { events: ["*"], enabled: true } },
    variables: (i) => ({ accountId: i.params.accountId, id: i.params.id, input: objectBody(i.body) }),
    reply: reply.custom({ 200: { json: webhookRecord.schema }, 400: "problem", 404: "problem" }, (d) => ({
      status: 200,
      body: webhookRecord.map(d.updateWebhook),
    })),
  },
  {
    name: "deleteWebhook",
    method: "delete",
    path: `${W}/:id`,
    summary: "Delete a webhook endpoint and its delivery log",
    params: ID,
    document: `mutation DeleteWebhook($accountId: String!, $id: String!) { deleteWebhook(accountId: $accountId, id: $id) }`,
    variables: (i) => ({ accountId: i.params.accountId, id: i.params.id }),
    reply: reply.custom({ 204: "empty", 404: "problem" }, () => ({ status: 204 })),
  },
  {
    name: "rotateWebhookSecret",
    method: "post",
    path: `${W}/:id/rotateSecret`,
    summary: "Replace a webhook's signing secret (answers the new one, once)",
    params: ID,
    document: `mutation RotateWebhookSecret($accountId: String!, $id: String!) { rotateWebhookSecret(accountId: $accountId, id: $id) { ${WEBHOOK_FIELDS} } }`,
    variables: (i) => ({ accountId: i.params.accountId, id: i.params.id }),
    reply: reply.custom({ 200: { json: webhookWithSecretRecord.schema }, 404: "problem" }, (d) => ({
      status: 200,
      body: webhookWithSecretRecord.map(d.rotateWebhookSecret),
    })),
  },
  {
    name: "listWebhookDeliveries",
    method: "get",
    path: `${W}/:id/deliveries`,
    summary: "A webhook's delivery log: deliveries newest first, each with every attempt (status, response code, latency, next attempt)",
    params: ID,
    query: pageQuery(LIST_LIMITS.standard),
    document: `query WebhookDeliveries($accountId: String!, $id: String!, $first: Int, $after: String) {
      account(id: $accountId) { webhookDeliveries(webhookId: $id, first: $first, after: $after) { nodes { ${DELIVERY_FIELDS} } pageInfo { hasNextPage endCursor } } } }`,
    variables: (i) => ({ ...pageVariables(i), id: i.params.id }),
    reply: reply.page((d) => d.account.webhookDeliveries, deliveryRecord),
  },
  {
    name: "replayWebhookDelivery",
    method: "post",
    path: `${W}/:id/deliveries/:deliveryId/replay`,
    summary: "Send a delivery again (same webhook-id, a fresh retry schedule)",
    params: { ...ID, deliveryId: { description: "The delivery's id (its webhook-id header).", example: "msg_0lx3k2a9b00001a2b3c4d" } },
    document: `mutation Replay($accountId: String!, $id: String!, $deliveryId: String!) {
      replayWebhookDelivery(accountId: $accountId, webhookId: $id, deliveryId: $deliveryId) { ${DELIVERY_FIELDS} } }`,
    variables: (i) => ({ accountId: i.params.accountId, id: i.params.id, deliveryId: i.params.deliveryId }),
    reply: reply.custom({ 202: { json: deliveryRecord.schema }, 404: "problem", 409: "problem" }, (d) => ({
      status: 202,
      body: deliveryRecord.map(d.replayWebhookDelivery),
    })),
  },
];
