// Webhook messages are queued in the transaction of the change they report (an outbox): a
// delivery row per subscribed, enabled endpoint, committed or rolled back with the change. The
// worker (worker.ts) sends them. Callers in other domains make one call each.
import { clock } from "../../clock.js";
import type { Tx } from "../../db/index.js";
import { newId } from "../../ids.js";
import type { EventRow } from "../events/validate.js";
import { subscribes } from "./types.js";

/**
 * Queues one message of `type` per item of `data` for each enabled endpoint of the account that
 * subscribes to it. One read of the account's endpoints; nothing more when none subscribes.
 */
export async function emitWebhook(tx: Tx, accountId: string, type: string, data: readonly unknown[]): Promise<void> {
  await emitMany(
    tx,
    accountId,
    data.map((d) => ({ type, data: d })),
  );
}

async function emitMany(tx: Tx, accountId: string, messages: { type: string; data: unknown }[]): Promise<void> {
  if (!messages.length) return;
  const hooks = await tx.webhook.findMany({ where: { accountId, enabled: true }, select: { id: true, events: true } });
  if (!hooks.length) return;
  const now = clock.now();
  const timestamp = now.toISOString();
  const rows = [];
  for (const hook of hooks) {
    const events = JSON.parse(hook.events) as string[];
    for (const m of messages) {
      if (!subscribes(events, m.type)) continue;
      rows.push({
        id: newId("msg"),
        webhookId: hook.id,
        accountId,
        type: m.type,
        payload: JSON.stringify({ type: m.type, timestamp, data: m.data }),
        status: "pending",
        nextAttemptAt: now,
        createdAt: now,
      });
    }
  }
  for (let i = 0; i < rows.length; i += 2_000) await tx.webhookDelivery.createMany({ data: rows.slice(i, i + 2_000) });
}

/** `engagement.<type>` messages for stored events, each event in the contract's wire shape. */
export async function emitEngagementEvents(tx: Tx, accountId: string, rows: readonly EventRow[]): Promise<void> {
  if (!rows.length) return;
  await emitMany(
    tx,
    accountId,
    rows.map((r) => ({ type: `engagement.${r.type}`, data: eventWire(r) })),
  );
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
