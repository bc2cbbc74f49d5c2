// Webhooks in GraphQL: an account's endpoints (list, one), their delivery log, and the mutations
// that create, change, delete them, rotate a secret and replay a delivery. The REST rows
// (routes.ts) run these. Secrets are stored encrypted and shown only by create and rotate.
import { clock } from "../../clock.js";
import { encrypt } from "../../crypto.js";
import { prisma, withTransaction } from "../../db/index.js";
import { lockAccountFor } from "../../db/locks.js";
import { AppError, badRequest, notFound } from "../../errors.js";
import type { WebhookAttempt as AttemptRow, WebhookDelivery as DeliveryRow, Webhook as HookRow } from "../../generated/sqlite/client.js";
import { newId } from "../../ids.js";
import { currentTraceparent } from "../../observability/tracing.js";
import { builder } from "../../schema/builder.js";
import { afterCursor, connectionFrom, LIST_LIMITS, pageExtensions, pageLimit, toPage } from "../../schema/pagination.js";
import { longerThan } from "../../text.js";
import { Account, requireAccount } from "../accounts/schema.js";
import { webhookSettings } from "./settings.js";
import { newSecret } from "./sign.js";
import { checkWebhookUrl } from "./ssrf.js";
import { eventsProblem, WEBHOOK_EVENT_TYPES } from "./types.js";

/** An endpoint row; `clearSecret` only on the answers of create and rotate. */
type HookNode = HookRow & { clearSecret?: string };
type DeliveryNode = DeliveryRow & { log?: AttemptRow[] };

const DESCRIPTION_MAX = 1_000;
/** Endpoints per account: each event is one delivery row per subscribed endpoint. */
export const MAX_WEBHOOKS = 20;

export const Webhook = builder.objectRef<HookNode>("Webhook").implement({
  description: "A webhook endpoint: events of the listed types are POSTed to `url`, signed per Standard Webhooks.",
  fields: (t) => ({
    id: t.exposeID("id"),
    url: t.exposeString("url"),
    events: t.stringList({
      description: `Subscribed event types, or ["*"] for all (${WEBHOOK_EVENT_TYPES.length} types).`,
      resolve: (h) => JSON.parse(h.events),
    }),
    description: t.exposeString("description", { nullable: true }),
    enabled: t.exposeBoolean("enabled"),
    disabledReason: t.exposeString("disabledReason", {
      nullable: true,
      description: "Why the service disabled the endpoint (its deliveries failed for a whole retry schedule).",
    }),
    secret: t.string({
      nullable: true,
      description: "The signing secret (whsec_...): only in the answers of createWebhook and rotateWebhookSecret.",
      resolve: (h) => h.clearSecret ?? null,
    }),
    createdTime: t.field({ type: "Timestamp", resolve: (h) => h.createdAt }),
    lastUpdateTime: t.field({ type: "Timestamp", resolve: (h) => h.updatedAt }),
  }),
});

const WebhookAttempt = builder.objectRef<AttemptRow>("WebhookAttempt").implement({
  description: "One attempt of a delivery.",
  fields: (t) => ({
    attempt: t.exposeInt("attempt"),
    time: t.field({ type: "Timestamp", resolve: (a) => a.at }),
    status: t.exposeString("status", { description: "delivered | failed" }),
    responseCode: t.exposeInt("responseCode", { nullable: true }),
    latencyMs: t.exposeInt("latencyMs"),
    error: t.exposeString("error", { nullable: true }),
    nextAttemptTime: t.field({ type: "Timestamp", nullable: true, resolve: (a) => a.nextAttemptAt }),
  }),
});

export const WebhookDelivery = builder.objectRef<DeliveryNode>("WebhookDelivery").implement({
  description: "One message to one endpoint; its id is the webhook-id header (the same on every retry).",
  fields: (t) => ({
    id: t.exposeID("id"),
    type: t.exposeString("type"),
    status: t.exposeString("status", {
      description:
        "pending | delivered | failed | dropped (not queued: the endpoint already had its maximum of pending deliveries, see error; replay sends it)",
    }),
    error: t.exposeString("error", {
      nullable: true,
      description: "Why a dropped delivery was not queued; null otherwise (attempts' errors are in the log).",
    }),
    attempts: t.exposeInt("attempts"),
    createdTime: t.field({ type: "Timestamp", resolve: (d) => d.createdAt }),
    deliveredTime: t.field({ type: "Timestamp", nullable: true, resolve: (d) => d.deliveredAt }),
    nextAttemptTime: t.field({ type: "Timestamp", nullable: true, resolve: (d) => (d.status === "pending" ? d.nextAttemptAt : null) }),
    payload: t.field({ type: "JSON", description: "The body sent.", resolve: (d) => JSON.parse(d.payload) }),
    log: t.field({
      type: [WebhookAttempt],
      description: "Every attempt, oldest first.",
      resolve: async (d) => d.log ?? prisma.webhookAttempt.findMany({ where: { deliveryId: d.id }, orderBy: { attempt: "asc" } }),
    }),
  }),
});

async function findHook(accountId: string, id: string): Promise<HookRow> {
  const hook = await prisma.webhook.findFirst({ where: { id, accountId } });
  if (!hook) throw notFound(`No webhook '${id}' in this account.`);
  return hook;
}

builder.prismaObjectField(Account, "webhooks", (t) =>
  t.connection(
    {
      type: Webhook,
      extensions: pageExtensions(LIST_LIMITS.standard),
      description: "The account's webhook endpoints, oldest first.",
      resolve: async (account, args) => {
        const limit = pageLimit(args, LIST_LIMITS.standard);
        const rows = await prisma.webhook.findMany({
          where: { AND: [{ accountId: account.id }, afterCursor("createdAt", args.after, true, account.id)] },
          orderBy: [{ createdAt: "asc" }, { id: "asc" }],
          take: limit + 1,
        });
        return connectionFrom(toPage(rows, limit), account.id, (r) => r.createdAt);
      },
    },
    {},
    {},
  ),
);

builder.prismaObjectField(Account, "webhook", (t) =>
  t.field({
    type: Webhook,
    nullable: true,
    args: { id: t.arg.string({ required: true }) },
    resolve: (account, { id }) => prisma.webhook.findFirst({ where: { id, accountId: account.id } }),
  }),
);

builder.prismaObjectField(Account, "webhookDeliveries", (t) =>
  t.connection(
    {
      type: WebhookDelivery,
      extensions: pageExtensions(LIST_LIMITS.standard),
      description: "The delivery log of an endpoint, newest first, each delivery with its attempts. 404 for an unknown endpoint.",
      args: { webhookId: t.arg.string({ required: true }) },
      resolve: async (account, args) => {
        const limit = pageLimit(args, LIST_LIMITS.standard);
        await findHook(account.id, args.webhookId);
        // Each endpoint's log is a list of its own: another endpoint's cursor is a 400, not a
        // position in this one (one issued before cursors named the endpoint is read as this one's).
        const list = { name: `webhook:${args.webhookId}`, untagged: true };
        const rows = await prisma.webhookDelivery.findMany({
          where: { AND: [{ webhookId: args.webhookId, accountId: account.id }, afterCursor("createdAt", args.after, true, account.id, "desc", "id", list)] },
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
          include: { log: { orderBy: { attempt: "asc" } } },
          take: limit + 1,
        });
        return connectionFrom(toPage(rows, limit), account.id, (r) => r.createdAt, undefined, list.name);
      },
    },
    {},
    {},
  ),
);

const WebhookInput = builder.inputType("WebhookInput", {
  fields: (t) => ({
    url: t.string({ required: false, description: "https:// URL resolving to public addresses (required on create)." }),
    events: t.stringList({ required: false, description: 'Event types, or ["*"] (required on create).' }),
    description: t.string({ required: false }),
    enabled: t.boolean({
      required: false,
      description:
        "Updates only: false stops deliveries (messages still pending are dropped as failed; replay them later); true re-enables an endpoint, also one the service disabled.",
    }),
  }),
});

function checkDescription(d: string | null | undefined): string | null {
  if (d == null) return null;
  if (longerThan(d, DESCRIPTION_MAX))
    throw badRequest(`description must be at most ${DESCRIPTION_MAX} characters`, [{ path: "description", message: "too long" }]);
  return d;
}
function checkEvents(events: unknown): string {
  const problem = eventsProblem(events);
  if (problem) throw badRequest(problem, [{ path: "events", message: problem }]);
  return JSON.stringify(events);
}

builder.mutationField("createWebhook", (t) =>
  t.field({
    type: Webhook,
    description: "Creates an endpoint; the answer carries its secret (shown this once, and again only by rotateWebhookSecret).",
    args: { accountId: t.arg.string({ required: true }), input: t.arg({ type: WebhookInput, required: true }) },
    resolve: async (_root, { accountId, input }, ctx) => {
      await requireAccount(ctx, accountId);
      if (input.enabled != null)
        throw badRequest("enabled cannot be set on create (a new endpoint is enabled)", [{ path: "enabled", message: "not on create" }]);
      const events = checkEvents(input.events);
      const description = checkDescription(input.description);
      const url = await checkWebhookUrl(input.url, webhookSettings().allowPrivate);
      const secret = newSecret();
      const now = clock.now();
      const row = await withTransaction(async (tx) => {
        // Creates of the account's endpoints one at a time (PostgreSQL; SQLite runs one write
        // transaction at a time): the cap is decided on the count read here, and concurrent creates
        // that all counted 19 would otherwise all insert.
        await lockAccountFor(tx, accountId, "webhooks");
        if ((await tx.webhook.count({ where: { accountId } })) >= MAX_WEBHOOKS)
          throw new AppError(409, `An account has at most ${MAX_WEBHOOKS} webhooks; delete one first.`);
        return tx.webhook.create({ data: { id: newId("wh"), accountId, url, events, description, secret: encrypt(secret), createdAt: now, updatedAt: now } });
      });
      return { ...row, clearSecret: secret };
    },
  }),
);

builder.mutationField("updateWebhook", (t) =>
  t.field({
    type: Webhook,
    description: "Changes an endpoint's url, events, description or enabled (absent fields stay). 404 for an unknown id.",
    args: { accountId: t.arg.string({ required: true }), id: t.arg.string({ required: true }), input: t.arg({ type: WebhookInput, required: true }) },
    resolve: async (_root, { accountId, id, input }, ctx) => {
      await requireAccount(ctx, accountId);
      await findHook(accountId, id);
      const data: Record<string, unknown> = {};
      if (input.events !== undefined) data.events = checkEvents(input.events);
      if (input.description !== undefined) data.description = checkDescription(input.description);
      if (input.url !== undefined) data.url = await checkWebhookUrl(input.url, webhookSettings().allowPrivate);
      if (input.enabled != null) {
        data.enabled = input.enabled;
        if (input.enabled) data.disabledReason = null;
      }
      if (input.enabled === null) throw badRequest("enabled must be true or false", [{ path: "enabled", message: "null" }]);
      data.updatedAt = clock.now();
      return withTransaction(async (tx) => {
        const changed = await tx.webhook.updateMany({ where: { id, accountId }, data });
        if (!changed.count) throw notFound(`No webhook '${id}' in this account.`);
        return tx.webhook.findUniqueOrThrow({ where: { id } });
      });
    },
  }),
);

builder.mutationField("deleteWebhook", (t) =>
  t.boolean({
    description: "Deletes an endpoint with its delivery log. 404 for an unknown id.",
    args: { accountId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    resolve: async (_root, { accountId, id }, ctx) => {
      await requireAccount(ctx, accountId);
      return withTransaction(async (tx) => {
        const gone = await tx.webhook.deleteMany({ where: { id, accountId } });
        if (!gone.count) throw notFound(`No webhook '${id}' in this account.`);
        return true;
      });
    },
  }),
);

builder.mutationField("rotateWebhookSecret", (t) =>
  t.field({
    type: Webhook,
    description: "Replaces the endpoint's secret at once (deliveries from now on are signed with the new one) and answers it.",
    args: { accountId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    resolve: async (_root, { accountId, id }, ctx) => {
      await requireAccount(ctx, accountId);
      const secret = newSecret();
      const row = await withTransaction(async (tx) => {
        const changed = await tx.webhook.updateMany({ where: { id, accountId }, data: { secret: encrypt(secret), updatedAt: clock.now() } });
        if (!changed.count) throw notFound(`No webhook '${id}' in this account.`);
        return tx.webhook.findUniqueOrThrow({ where: { id } });
      });
      return { ...row, clearSecret: secret };
    },
  }),
);

builder.mutationField("replayWebhookDelivery", (t) =>
  t.field({
    type: WebhookDelivery,
    description:
      "Sends a delivery again (same webhook-id) with a fresh retry schedule; also a dropped one. 404 unknown, 409 while it is still pending or the endpoint is disabled.",
    args: { accountId: t.arg.string({ required: true }), webhookId: t.arg.string({ required: true }), deliveryId: t.arg.string({ required: true }) },
    resolve: async (_root, { accountId, webhookId, deliveryId }, ctx) => {
      await requireAccount(ctx, accountId);
      const hook = await findHook(accountId, webhookId);
      if (!hook.enabled) throw new AppError(409, `Webhook '${webhookId}' is disabled: enable it (PUT with "enabled": true) before replaying.`);
      const traceOf = () => {
        const traceparent = currentTraceparent();
        return traceparent ? { traceparent } : {};
      };
      return withTransaction(async (tx) => {
        const changed = await tx.webhookDelivery.updateMany({
          where: { id: deliveryId, webhookId, accountId, status: { not: "pending" } },
          // A replay's attempts link to the replaying request's trace (the original one when tracing is off).
          data: { status: "pending", error: null, round: 0, nextAttemptAt: clock.now(), deliveredAt: null, ...traceOf() },
        });
        if (!changed.count) {
          const d = await tx.webhookDelivery.findFirst({ where: { id: deliveryId, webhookId, accountId }, select: { id: true } });
          if (!d) throw notFound(`No delivery '${deliveryId}' of webhook '${webhookId}'.`);
          throw new AppError(409, `Delivery '${deliveryId}' is still pending: it will be attempted as scheduled.`);
        }
        return tx.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
      });
    },
  }),
);
