// OpenAPI of what the route table does not describe: the Segment-format ingestion paths (served by
// src/ingest/router.ts) and the webhook messages the service sends (OpenAPI 3.1 `webhooks`).
import { WEBHOOK_EVENT_TYPES } from "../domains/webhooks/types.js";
import { MESSAGE_ID_MAX } from "./idempotency.js";
import { BROWSER_PATHS, CALL_TYPES, type CallType, MAX_BATCH_CALLS } from "./segment.js";

const PROBLEM = { $ref: "#/components/schemas/Problem" };
const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: PROBLEM } } });

const CALL = {
  type: "object",
  description: "A Segment call. `userId` (else `anonymousId`) names the end user.",
  required: ["type"],
  properties: {
    type: { type: "string", enum: [...CALL_TYPES] },
    userId: { type: "string" },
    anonymousId: { type: "string" },
    event: {
      type: "string",
      description:
        "track: the event name. `Flow Completed`, `flow_completed`, `flowCompleted` all name flow_completed; other names become a user_action with that actionId.",
    },
    properties: {
      type: "object",
      description: "track: the event's fields (flowId/flow_id, widget, step, searchTerm, resultCount, contentId, useful, comment, actionId; userName, domain).",
    },
    traits: { type: "object", description: "identify: end-user fields by name (others are ignored and counted)." },
    context: { type: "object", description: "context.page.url gives the domain; context.traits.name the userName." },
    timestamp: { type: "string", format: "date-time" },
    originalTimestamp: { type: "string", format: "date-time", description: "Corrected for the client's clock skew by receivedAt − sentAt." },
    sentAt: { type: "string", format: "date-time" },
    writeKey: { type: "string", description: "The write key, when it is not sent as Basic auth (Segment's browser library puts it in every call)." },
    messageId: {
      type: "string",
      maxLength: MESSAGE_ID_MAX,
      description:
        "Idempotency key of track and identify calls: a repeat within 7 days is counted in `duplicates`, not stored. Longer than the maximum: the call is rejected.",
    },
  },
};
const ANSWER = {
  type: "object",
  required: ["success", "accepted", "duplicates", "rejected", "ignoredTraits"],
  properties: {
    success: { type: "boolean", const: true },
    accepted: { type: "integer" },
    duplicates: { type: "integer", description: "track and identify calls whose messageId was seen before (page, screen, group and alias keep none)." },
    rejected: {
      type: "array",
      items: {
        type: "object",
        required: ["index", "errors"],
        properties: { index: { type: "integer" }, errors: { type: "array", items: { type: "string" } } },
      },
    },
    ignoredTraits: { type: "integer", description: "identify traits that name no end-user field." },
  },
};
const responses = {
  200: { description: "Stored (calls that failed validation are listed in `rejected`).", content: { "application/json": { schema: ANSWER } } },
  400: problem("The body is not JSON, not a batch, or (single calls) the call is invalid."),
  401: problem("No write key, or an unknown, expired or revoked one."),
  403: problem("A key of another scope, or its owner lost access to the account."),
  413: problem("Over 500 KB a request or 32 KB a call."),
  415: problem("A Content-Encoding other than gzip, deflate, br or identity."),
  429: problem("The account's ingest rate limit (INGEST_RATE_LIMIT_PER_MINUTE; not the API's budget)."),
};
const op = (operationId: string, summary: string, schema: unknown, example: unknown) => ({
  operationId,
  tags: ["segment"],
  summary,
  security: [{ writeKey: [] }],
  requestBody: { required: true, content: { "application/json": { schema, example } } },
  responses,
});
/** The same operation at the path Segment's browser library posts to (text/plain, `writeKey` in the body). */
const browserOp = (operation: ReturnType<typeof op>, operationId: string, full: string) => {
  const { schema, example } = operation.requestBody.content["application/json"];
  const withKey = { ...(example as object), writeKey: "YOUR_WRITE_KEY" };
  return {
    ...operation,
    operationId,
    summary: `${operation.summary} (Segment's browser library)`,
    description:
      `The same as \`/segment/v1/${full}\`, at the path Segment's browser library (analytics.js 2.0, \`@segment/analytics-next\`) posts to under its \`apiHost\` ` +
      '(`apiHost: "<service host>/segment/v1"`): the body as text/plain, the write key as `writeKey` in it (from version 1.84 also as Basic auth).',
    requestBody: { required: true, content: { "text/plain": { schema, example: withKey }, "application/json": { schema, example: withKey } } },
  };
};

const BATCH_EXAMPLE = {
  batch: [
    { type: "identify", userId: "user-42", traits: { name: "Ada", plan: "pro" }, messageId: "4f1c7c1e-0c1e-4c1e-9c1e-0c1e4c1e9c1e" },
    {
      type: "track",
      userId: "user-42",
      event: "Flow Completed",
      properties: { flowId: "c_flow1", widget: "self_help" },
      context: { page: { url: "https://app.example.com/invoices" } },
      timestamp: "2024-06-10T12:00:00.000Z",
      messageId: "5a2d8d2f-1d2f-4d2f-8d2f-1d2f5d2f8d2f",
    },
  ],
  sentAt: "2024-06-10T12:00:01.000Z",
};

const capital = (t: string) => `${t[0]!.toUpperCase()}${t.slice(1)}`;
const FULL_PATHS: Record<CallType | "batch", ReturnType<typeof op>> = {
  batch: op(
    "segmentBatch",
    `A batch of up to ${MAX_BATCH_CALLS} Segment calls`,
    {
      type: "object",
      required: ["batch"],
      properties: {
        batch: { type: "array", maxItems: MAX_BATCH_CALLS, items: CALL },
        sentAt: { type: "string" },
        context: { type: "object" },
        writeKey: { type: "string" },
      },
    },
    BATCH_EXAMPLE,
  ),
  ...(Object.fromEntries(
    CALL_TYPES.map((t) => [t, op(`segment${capital(t)}`, `One ${t} call`, CALL, { ...BATCH_EXAMPLE.batch[t === "identify" ? 0 : 1], type: t })]),
  ) as Record<CallType, ReturnType<typeof op>>),
};

export const ingestOpenApi = {
  tags: [
    {
      name: "segment",
      description:
        "Segment-format ingestion: point a Segment source or library at the service (`host` = the service, `path` = `/segment/v1/batch`; " +
        "Segment's browser library: `apiHost` = `<service host>/segment/v1`, which posts to `/t`, `/p`, `/i`, `/g`, `/a`, `/s` and, batching, `/b`). " +
        "Authenticate with a write key (`npm run cli -- key create <email> --scope ingest --account <accountId>`) as the Basic-auth user name, or `writeKey` in the body.",
    },
  ],
  securitySchemes: {
    writeKey: { type: "http", scheme: "basic", description: "The write key as the user name, an empty password (Segment's own scheme)." },
  },
  paths: {
    ...Object.fromEntries(Object.entries(FULL_PATHS).map(([path, operation]) => [`/segment/v1/${path}`, { post: operation }])),
    ...Object.fromEntries(
      Object.entries(BROWSER_PATHS).map(([short, full]) => [
        `/segment/v1/${short}`,
        { post: browserOp(FULL_PATHS[full], `segmentBrowser${capital(full)}`, full) },
      ]),
    ),
  },
  webhooks: {
    event: {
      post: {
        operationId: "webhookMessage",
        summary: "A message the service POSTs to a webhook endpoint",
        description:
          "Signed per Standard Webhooks: verify `webhook-signature` with the endpoint's `whsec_` secret (the `standardwebhooks` or `svix` libraries do). " +
          "`webhook-id` is the same on every retry: use it to drop duplicates. Answer 2xx within 5 s; anything else is retried with backoff for about a day.",
        parameters: [
          { name: "webhook-id", in: "header", required: true, schema: { type: "string" } },
          { name: "webhook-timestamp", in: "header", required: true, schema: { type: "string" }, description: "Epoch seconds." },
          {
            name: "webhook-signature",
            in: "header",
            required: true,
            schema: { type: "string" },
            description: "`v1,<base64 HMAC-SHA256 of id.timestamp.body>`.",
          },
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["type", "timestamp", "data"],
                properties: {
                  type: { type: "string", enum: [...WEBHOOK_EVENT_TYPES] },
                  timestamp: { type: "string", format: "date-time" },
                  data: {
                    type: "object",
                    description: "The event (contract shape), the content record, {id} of the deleted end user, or the copy job's status.",
                  },
                },
              },
              example: {
                type: "engagement.flow_completed",
                timestamp: "2024-06-10T12:00:02.000Z",
                data: { type: "flow_completed", time: 1718020800000, endUserId: "user-42", flowId: "c_flow1", widget: "self_help" },
              },
            },
          },
        },
        responses: { 200: { description: "Received (any 2xx)." } },
      },
    },
  },
};
