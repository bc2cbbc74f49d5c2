// Audit classification of webhooks. An endpoint is account configuration: its creation, changes,
// secret rotations and deletion are audited (the secret never appears). Its delivery state
// (last success) is bookkeeping; deliveries and their attempt log are the log of the worker's
// own work, exempt.
import { audited, exempt } from "../../audit/classification.js";

const BOOKKEEPING = new Set(["lastSuccessAt", "updatedAt"]);

export const webhooksAudit = {
  Webhook: audited({
    type: "webhook",
    identity: ["id", "accountId"],
    resourceId: (r) => String(r.id),
    accountId: (r) => String(r.accountId),
    redact: ["secret"],
    bookkeeping: (args) => args.data !== undefined && !("id" in args.data) && Object.keys(args.data).every((k) => BOOKKEEPING.has(k)),
  }),
  WebhookDelivery: exempt("a message queued for an endpoint and its delivery state: the worker's own bookkeeping (the delivery log)"),
  WebhookAttempt: exempt("one delivery attempt: the delivery log itself, append-only"),
};
