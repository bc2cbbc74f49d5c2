// Wire shapes of webhooks: the endpoint record (with its secret only where the contract shows it)
// and the delivery record with its attempt log.
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

export const webhookRecord = wireRecord(
  { type: "object", required: ["id", "url", "events", "description", "enabled", "createdTime"], properties: HOOK_PROPERTIES },
  base,
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
);

const time = { type: ["integer", "null"], description: "Epoch ms." };
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
);
