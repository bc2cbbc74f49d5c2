// Webhook messages are queued in the transaction of the change they report (an outbox): a
// delivery row per subscribed, enabled endpoint, committed or rolled back with the change. The
// worker (worker.ts) sends them. Callers in other domains make one call each.
import { clock } from "../../clock.js";
import { dbKind, type Tx } from "../../db/index.js";
import { keyValuePairs } from "../../db/insert.js";
import { newId } from "../../ids.js";
import { logger } from "../../logger.js";
import { webhookDeliveriesDropped } from "../../observability/counters.js";
import { currentTraceparent } from "../../observability/tracing.js";
import type { EventRow } from "../events/validate.js";
import { webhookSettings } from "./settings.js";
import { subscribes } from "./types.js";

const log = logger.child({ component: "webhooks" });

/**
 * Queues one message of `type` per item of `data` for each enabled endpoint of the account that
 * subscribes to it. One read of the account's endpoints; nothing more when none subscribes.
 */
export async function emitWebhook(tx: Tx, accountId: string, type: string, data: readonly unknown[]): Promise<void> {
  if (!data.length) return;
  await emitMany(tx, accountId, () => data.map((d) => ({ type, data: d })));
}

async function emitMany(tx: Tx, accountId: string, build: () => { type: string; data: unknown }[]): Promise<void> {
  const hooks = await tx.webhook.findMany({ where: { accountId, enabled: true }, select: { id: true, events: true } });
  // Built only for an account with endpoints (an ingest of 10,000 events would build 10,000 payloads for nobody).
  if (!hooks.length) return;
  const messages = build();
  const now = clock.now();
  // With tracing on, each attempt's trace links back to the request that made the change.
  const traceparent = currentTraceparent();
  const timestamp = now.toISOString();
  const cap = webhookSettings().maxPendingPerEndpoint;
  const rows = [];
  for (const hook of hooks) {
    const events = JSON.parse(hook.events) as string[];
    const subscribed = messages.filter((m) => subscribes(events, m.type));
    if (!subscribed.length) continue;
    // An endpoint that does not keep up may hold at most `cap` pending deliveries: the messages
    // beyond are stored as dropped, with the reason, in its delivery log (and counted, and logged),
    // so a backlog is bounded without losing anything silently; a replay sends one later. The count
    // reads at most `cap` index entries; concurrent emits may overshoot the cap by their own size.
    let room = cap - (await tx.webhookDelivery.count({ where: { webhookId: hook.id, status: "pending" }, take: cap }));
    let dropped = 0;
    for (const m of subscribed) {
      const queued = room-- > 0;
      if (!queued) dropped++;
      rows.push({
        id: newId("msg"),
        webhookId: hook.id,
        accountId,
        type: m.type,
        payload: JSON.stringify({ type: m.type, timestamp, data: m.data }),
        status: queued ? "pending" : "dropped",
        error: queued
          ? null
          : `not queued: the endpoint already had ${cap} pending deliveries (WEBHOOK_MAX_PENDING_PER_ENDPOINT); replay it once the endpoint catches up`,
        nextAttemptAt: queued ? now : null,
        createdAt: now,
        traceparent,
      });
    }
    if (dropped) {
      webhookDeliveriesDropped.inc(accountId, dropped);
      log.warn({ accountId, webhookId: hook.id, dropped, cap }, "webhook deliveries dropped: the endpoint has too many pending");
    }
  }
  for (let i = 0; i < rows.length; i += 2_000) await tx.webhookDelivery.createMany({ data: rows.slice(i, i + 2_000) });
}

/** `engagement.<type>` messages for stored events, each event in the contract's wire shape. */
export async function emitEngagementEvents(tx: Tx, accountId: string, rows: readonly EventRow[]): Promise<void> {
  if (!rows.length) return;
  await emitMany(tx, accountId, () => rows.map((r) => ({ type: `engagement.${r.type}`, data: eventWire(r) })));
}

/** An event row in the contract's shape: its fields that are set, without the account. */
export function eventWire(r: EventRow | Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) {
    if (k === "accountId" || v === null || v === undefined) continue;
    out[k] = typeof v === "bigint" ? Number(v) : v;
  }
  return out;
}

/** `end_user.deleted` for end users about to be deleted (row ids of EndUser), with their own ids. */
export async function emitEndUsersDeleted(tx: Tx, accountId: string, rowIds: readonly string[]): Promise<void> {
  if (!rowIds.length || !(await tx.webhook.count({ where: { accountId, enabled: true } }))) return;
  const users = await tx.endUser.findMany({ where: { accountId, id: { in: [...rowIds] } }, select: { externalId: true } });
  await emitWebhook(
    tx,
    accountId,
    "end_user.deleted",
    users.map((u) => ({ id: u.externalId })),
  );
}

/** Whether any enabled endpoint of the account subscribes to `type` (spares building payloads nobody gets). */
async function anySubscriber(tx: Tx, accountId: string, type: string): Promise<boolean> {
  const hooks = await tx.webhook.findMany({ where: { accountId, enabled: true }, select: { events: true } });
  return hooks.some((h) => subscribes(JSON.parse(h.events) as string[], type));
}

/**
 * `content.created|updated|deleted` for the contents `ids`, each as the style-B content record
 * (tags by name), read inside `tx`: after the write for created/updated, before it for deleted.
 */
export async function emitContent(
  tx: Tx,
  accountId: string,
  type: "content.created" | "content.updated" | "content.deleted",
  ids: readonly string[],
): Promise<void> {
  if (!ids.length || !(await anySubscriber(tx, accountId, type))) return;
  const rows = await tx.content.findMany({
    where: { accountId, id: { in: [...ids] } },
    include: { tags: { select: { tag: { select: { name: true } } } } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  await emitWebhook(
    tx,
    accountId,
    type,
    rows.map((c) => ({
      id: c.id,
      title: c.title,
      type: c.type,
      url: c.url,
      source: c.source,
      description: c.description,
      description_md: c.descriptionMd,
      tags: c.tags.map((t) => t.tag.name).sort(),
      state: c.state,
      stage: c.stage,
      parentId: c.parentId,
      creationTime: c.createdAt.getTime(),
      lastUpdateTime: c.updatedAt.getTime(),
    })),
  );
}

/** `copy_job.completed|failed` with the job's final status (in the transaction that makes it final). */
export async function emitCopyJobFinished(tx: Tx, jobId: string): Promise<void> {
  const job = await tx.copyJob.findUnique({ where: { id: jobId } });
  if (!job || (job.status !== "completed" && job.status !== "failed")) return;
  await emitWebhook(tx, job.accountId, `copy_job.${job.status}`, [
    {
      jobId: job.id,
      status: job.status,
      sourceAccountId: job.accountId,
      destinationAccountId: job.destinationAccountId,
      counts: { total: job.total, copied: job.copied, failed: job.failed },
      error: job.error,
      creationTime: job.createdAt.getTime(),
      finishedTime: job.finishedAt?.getTime() ?? null,
    },
  ]);
}

/**
 * Erasure of end users (src/domains/endUsers/schema.ts): the engagement messages queued or logged
 * for them (the delivery log shows each message's body) carry the pseudonym instead of their id,
 * and no userName or comment (absent, as in a message of an event without them), like their events. One statement, whatever the number of users.
 * The `end_user.deleted` message itself keeps the id: telling the customer's systems which user to
 * forget is its purpose.
 */
export async function anonymiseWebhookMessages(tx: Tx, accountId: string, users: readonly { endUserId: string; pseudonym: string }[]): Promise<void> {
  if (!users.length) return;
  const dialect = dbKind();
  const m = await keyValuePairs(
    tx,
    dialect,
    users.map((u) => [u.endUserId, u.pseudonym] as const),
  );
  // The body keeps its bytes but for those fields: the same keys in the same order, compact, each
  // other value's text as it was, so a retry after the erasure differs from the attempts before it
  // only in what was erased, on both databases. SQLite's json_set/json_remove keep the text so;
  // PostgreSQL's jsonb would not (it sorts keys by length and spaces them), hence its `json` (the
  // text as stored) taken apart with json_each in order and joined back.
  const sql =
    dialect === "postgres"
      ? `UPDATE "WebhookDelivery" d SET "payload" = (
           SELECT '{' || string_agg(to_json(o.k)::text || ':' || CASE WHEN o.k = 'data' THEN (
               SELECT '{' || string_agg(to_json(i.k)::text || ':' || CASE WHEN i.k = 'endUserId' THEN to_json(m.v)::text ELSE i.v::text END, ',' ORDER BY i.n) || '}'
               FROM json_each(o.v) WITH ORDINALITY AS i(k, v, n) WHERE i.k NOT IN ('userName', 'comment')
             ) ELSE o.v::text END, ',' ORDER BY o.n) || '}'
           FROM json_each(d."payload"::json) WITH ORDINALITY AS o(k, v, n))
         FROM ${m.from} m WHERE d."accountId" = $2 AND d."type" LIKE 'engagement.%' AND (d."payload"::json #>> '{data,endUserId}') = m.k`
      : `UPDATE "WebhookDelivery" SET "payload" = json_remove(json_set("payload", '$.data.endUserId', m.v), '$.data.userName', '$.data.comment')
         FROM ${m.from} AS m WHERE "WebhookDelivery"."accountId" = ? AND "WebhookDelivery"."type" LIKE 'engagement.%'
         AND json_extract("WebhookDelivery"."payload", '$.data.endUserId') = m.k`;
  await tx.$executeRawUnsafe(sql, ...m.params, accountId);
}
