// Wire shapes of webhooks: the endpoint record (with its secret only where the contract shows it)
// and the delivery record with its attempt log.

import { EXAMPLE_TIME, exampleId } from "../../rest/examples.js";
import type { Selected } from "../../rest/operation.js";
import { wireRecord } from "../../rest/responses.js";
import { WEBHOOK_EVENT_TYPES } from "./types.js";

export const WEBHOOK_FIELDS = "id url events description enabled disabledReason secret createdTime lastUpdateTime";
export const DELIVERY_FIELDS =
  "id type status error attempts createdTime deliveredTime nextAttemptTime payload log { attempt time status responseCode latencyMs error nextAttemptTime }";

type HookNode = Selected<"Webhook", typeof WEBHOOK_FIELDS>;

const HOOK_PROPERTIES = {
  id: { type: "string" },
  url: { type: "string", format: "uri", example: "https://hooks.example.com/guidegate" },
  events: { type: "array", items: { type: "string", enum: ["*", ...WEBHOOK_EVENT_TYPES] } },
  description: { type: ["string", "null"] },
  enabled: { type: "boolean" },
  disabledReason: { type: ["string", "null"], description: "Why the service disabled it (its deliveries failed for a whole retry schedule)." },
  createdTime: { type: "integer", description: "Epoch ms." },
  lastUpdateTime: { type: "integer", description: "Epoch ms." },
};
const base = (h: HookNode) => ({
  id: h.id,
  url: h.url,
  events: h.events,
  description: h.description,
  enabled: h.enabled,
  disabledReason: h.disabledReason,
  createdTime: h.createdTime,
  lastUpdateTime: h.lastUpdateTime,
});

const EXAMPLE_HOOK = {
  id: exampleId("wh"),
  url: "https://hooks.example.com/guidegate",
  events: ["engagement.flow_completed", "content.created"],
  description: "CRM sync",
  enabled: true,
  disabledReason: null,
  createdTime: EXAMPLE_TIME,
  lastUpdateTime: EXAMPLE_TIME,
};

export const webhookRecord = wireRecord(
  { type: "object", required: ["id", "url", "events", "description", "enabled", "createdTime"], properties: HOOK_PROPERTIES },
  base,
  EXAMPLE_HOOK,
);

export const webhookWithSecretRecord = wireRecord(
  {
    type: "object",
    required: ["id", "url", "events", "description", "enabled", "secret", "createdTime"],
    properties: {
      ...HOOK_PROPERTIES,
      secret: {
        type: "string",
        pattern: "^whsec_",
        description: "The signing secret: shown here only (store it now).",
        example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      },
    },
  },
  (h: HookNode) => ({ ...base(h), secret: h.secret }),
  { ...EXAMPLE_HOOK, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
);

const time = { type: ["integer", "null"], description: "Epoch ms." };
/** A delivery that failed once (HTTP 503) and went through on the retry 5 s later. */
const EXAMPLE_DELIVERY = {
  id: exampleId("msg"),
  type: "engagement.flow_completed",
  status: "delivered",
  error: null,
  attempts: 2,
  createdTime: EXAMPLE_TIME,
  deliveredTime: EXAMPLE_TIME + 5_310,
  nextAttemptTime: null,
  payload: {
    type: "engagement.flow_completed",
    timestamp: new Date(EXAMPLE_TIME).toISOString(),
    data: { type: "flow_completed", time: EXAMPLE_TIME, endUserId: "user-42", flowId: "c_flow1", widget: "self_help" },
  },
  log: [
    { attempt: 1, time: EXAMPLE_TIME + 120, status: "failed", responseCode: 503, latencyMs: 95, error: null, nextAttemptTime: EXAMPLE_TIME + 5_210 },
    { attempt: 2, time: EXAMPLE_TIME + 5_310, status: "delivered", responseCode: 200, latencyMs: 88, error: null, nextAttemptTime: null },
  ],
};
export const deliveryRecord = wireRecord(
  {
    type: "object",
    required: ["id", "type", "status", "attempts", "createdTime", "payload", "log"],
    properties: {
      id: { type: "string", description: "The webhook-id header of every attempt." },
      type: { type: "string" },
      status: {
        type: "string",
        enum: ["pending", "delivered", "failed", "dropped"],
        description: "dropped: not queued, the endpoint already had its maximum of pending deliveries (see error); replay sends it.",
      },
      error: { type: ["string", "null"], description: "Why a dropped delivery was not queued; null otherwise (attempts' errors are in the log)." },
      attempts: { type: "integer" },
      createdTime: { type: "integer" },
      deliveredTime: time,
      nextAttemptTime: time,
      payload: { type: "object", description: "The body sent: {type, timestamp, data}." },
      log: {
        type: "array",
        items: {
          type: "object",
          required: ["attempt", "time", "status", "latencyMs"],
          properties: {
            attempt: { type: "integer" },
            time: { type: "integer" },
            status: { type: "string", enum: ["delivered", "failed"] },
            responseCode: { type: ["integer", "null"] },
            latencyMs: { type: "integer" },
            error: { type: ["string", "null"] },
            nextAttemptTime: time,
          },
        },
      },
    },
  },
  (d: Selected<"WebhookDelivery", typeof DELIVERY_FIELDS>) => d,
  EXAMPLE_DELIVERY,
);

/** The delivery as a replay answers it: pending again, due now, its earlier attempts in the log. */
export const EXAMPLE_REPLAYED = { ...EXAMPLE_DELIVERY, status: "pending", deliveredTime: null, nextAttemptTime: EXAMPLE_TIME + 86_400_000 };
