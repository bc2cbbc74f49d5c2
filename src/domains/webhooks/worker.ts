// The webhook delivery worker. A WebhookDelivery row is the delivery's truth (status, attempts,
// next attempt, who holds it until when). Each instance sweeps the table: it takes due deliveries
// by a conditional update (still pending and due, the attempt count it read, nobody holding it or
// the holder's lease over) and makes each attempt on its own, never waiting for the slowest: a
// delivery is sent once per attempt across instances. A worker that dies mid-attempt loses its
// lease and the attempt is made again (at least once).
//
// Fairness: the live leases are the attempts in flight. A sweep counts them per endpoint and per
// account and takes only from those under WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT / _PER_ACCOUNT (the
// due-query skips the saturated ones), accounts with the fewest in flight first; so a tenant whose
// endpoints answer slowly holds a bounded share of the slots and every other tenant's deliveries go
// out beside it. On PostgreSQL the sweeps of all instances take turns (an advisory lock around
// count-and-take), so the bounds hold across instances. (No queue in between: a FIFO queue of
// messages cannot be reordered for fairness once filled; the rows already say everything.)
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { hostname } from "node:os";
import { requestScope } from "../../audit/requestScope.js";
import { clock } from "../../clock.js";
import { decrypt } from "../../crypto.js";
import { dbKind, prisma, type Tx, withTransaction } from "../../db/index.js";
import type { Webhook, WebhookDelivery } from "../../generated/sqlite/client.js";
import { logger } from "../../logger.js";
import { tracing } from "../../observability/tracing.js";
import { webhookSettings } from "./settings.js";
import { signedHeaders } from "./sign.js";
import { guardedLookup, refusedLiteral } from "./ssrf.js";

/** Due rows read per query of a sweep. */
const SWEEP_BATCH = 100;
/** Attempts one instance makes at once (sockets and memory), whatever the accounts. */
const MAX_IN_FLIGHT = 100;
const PRUNE_MS = 3_600_000;
/** Finished deliveries (and their attempts) are kept this long in the delivery log. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 3_600_000;
/** Serialises the sweeps of all instances on PostgreSQL (pg_advisory_xact_lock key). */
const SWEEP_LOCK = 0x77_68_6b_73; // "whks"
const log = logger.child({ component: "webhooks" });

export interface WebhookWorkerOptions {
  /** How long a taken delivery is held without an answer (longer than the request timeout). */
  leaseMs?: number;
}

/** ±20% jitter, so endpoints that failed together are not retried in lockstep. */
const jitter = (ms: number) => Math.round(ms * (0.8 + Math.random() * 0.4));

const unheld = (now: Date) => ({ OR: [{ lockedBy: null }, { lockedUntil: { lt: now } }] });

export class WebhookWorker {
  readonly id = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private inFlight = new Set<Promise<void>>();
  private lastPrune = 0;
  private readonly leaseMs: number;
  private wake: (() => void) | undefined;
  /** An attempt ended during a sweep: sweep again at once (its slot may serve the next delivery). */
  private again = false;

  constructor(opts: WebhookWorkerOptions = {}) {
    this.leaseMs = opts.leaseMs ?? Math.max(30_000, webhookSettings().timeoutMs * 3);
  }

  async start(): Promise<void> {
    this.loop = this.pollLoop();
    log.info({ worker: this.id }, "webhook worker started");
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
    await Promise.all(this.inFlight);
    log.info({ worker: this.id }, "webhook worker stopped");
  }

  private track(p: Promise<void>): void {
    const t = p.catch((err) => log.error({ err }, "webhook delivery failed unexpectedly"));
    this.inFlight.add(t);
    void t.finally(() => {
      this.inFlight.delete(t);
      // A freed slot (of the endpoint, the account, the instance) is used now, not at the next poll.
      this.again = true;
      this.wake?.();
    });
  }

  private async pollLoop(): Promise<void> {
    while (!this.stopping) {
      this.again = false;
      try {
        await this.tick();
      } catch (err) {
        if (!this.stopping) log.error({ err }, "webhook sweep failed");
      }
      if (this.stopping) break;
      if (this.again) continue;
      await new Promise<void>((resolve) => {
        this.timer = setTimeout(resolve, webhookSettings().pollMs);
        this.wake = resolve;
      });
    }
  }

  /** One sweep: takes the due deliveries it may (see the top) and starts their attempts; old deliveries are pruned. */
  async tick(): Promise<void> {
    // The service's clock (as emit and replay schedule by it), so that due times, leases and the
    // attempts' times are on one clock, which tests can move through a whole retry schedule.
    const now = clock.now();
    if (now.getTime() - this.lastPrune > PRUNE_MS) {
      this.lastPrune = now.getTime();
      await pruneDeliveries(now);
    }
    const room = MAX_IN_FLIGHT - this.inFlight.size;
    if (room <= 0 || this.stopping) return;
    const taken = await withTransaction((tx) => this.take(tx, now, room));
    for (const id of taken) this.track(this.attempt(id));
  }

  /** Takes (leases) up to `room` due deliveries, fairly across accounts and endpoints under their in-flight bounds. */
  private async take(tx: Tx, now: Date, room: number): Promise<string[]> {
    if (dbKind() === "postgres") await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(${SWEEP_LOCK})::text`);
    const { maxInFlightPerEndpoint: perHook, maxInFlightPerAccount: perAccount } = webhookSettings();
    const held = await tx.webhookDelivery.groupBy({
      by: ["accountId", "webhookId"],
      where: { status: "pending", lockedBy: { not: null }, lockedUntil: { gte: now } },
      _count: { _all: true },
    });
    const hookCount = new Map<string, number>();
    const accountCount = new Map<string, number>();
    for (const h of held) {
      hookCount.set(h.webhookId, (hookCount.get(h.webhookId) ?? 0) + h._count._all);
      accountCount.set(h.accountId, (accountCount.get(h.accountId) ?? 0) + h._count._all);
    }
    const fullHooks = new Set([...hookCount].filter(([, n]) => n >= perHook).map(([k]) => k));
    const fullAccounts = new Set([...accountCount].filter(([, n]) => n >= perAccount).map(([k]) => k));
    const taken: string[] = [];
    // Each pass reads the oldest due rows of endpoints and accounts not yet saturated; one that
    // saturates during a pass is left out of the next query, so a long backlog of one endpoint
    // costs an index range, never a slot. The rows taken are held, so the next pass skips them.
    for (let pass = 0; pass < 5 && taken.length < room; pass++) {
      const rows = await tx.webhookDelivery.findMany({
        where: {
          status: "pending",
          nextAttemptAt: { lte: now },
          ...unheld(now),
          webhookId: { notIn: [...fullHooks] },
          accountId: { notIn: [...fullAccounts] },
        },
        orderBy: [{ nextAttemptAt: "asc" }, { id: "asc" }],
        take: SWEEP_BATCH,
        select: { id: true, attempts: true, accountId: true, webhookId: true },
      });
      if (!rows.length) break;
      // Round robin over the accounts, the fewest in flight first; each account's rows oldest first.
      const byAccount = new Map<string, typeof rows>();
      for (const r of rows) byAccount.set(r.accountId, [...(byAccount.get(r.accountId) ?? []), r]);
      const queues = [...byAccount.values()].sort((x, y) => (accountCount.get(x[0]!.accountId) ?? 0) - (accountCount.get(y[0]!.accountId) ?? 0));
      for (let progressed = true; progressed && taken.length < room; ) {
        progressed = false;
        for (const q of queues) {
          if (taken.length >= room) break;
          let r = q.shift();
          while (r && (fullHooks.has(r.webhookId) || fullAccounts.has(r.accountId))) r = q.shift();
          if (!r) continue;
          progressed = true;
          const got = await tx.webhookDelivery.updateMany({
            where: { id: r.id, status: "pending", attempts: r.attempts, nextAttemptAt: { lte: now }, ...unheld(now) },
            data: { lockedBy: this.id, lockedUntil: new Date(now.getTime() + this.leaseMs) },
          });
          if (!got.count) continue;
          taken.push(r.id);
          const h = (hookCount.get(r.webhookId) ?? 0) + 1;
          const a = (accountCount.get(r.accountId) ?? 0) + 1;
          hookCount.set(r.webhookId, h);
          accountCount.set(r.accountId, a);
          if (h >= perHook) fullHooks.add(r.webhookId);
          if (a >= perAccount) fullAccounts.add(r.accountId);
        }
      }
      if (rows.length < SWEEP_BATCH) break;
    }
    return taken;
  }

  /** Makes the attempt of delivery `id`, which this worker holds, and records it (unless the lease was lost meanwhile). */
  private async attempt(id: string): Promise<void> {
    const d = await prisma.webhookDelivery.findUnique({ where: { id }, include: { webhook: true } });
    if (d?.lockedBy !== this.id) return; // deleted with its endpoint, or the lease was lost
    // With tracing on, the attempt is a trace of its own, linked to the request that queued the message.
    const attributes = {
      "guidegate.account_id": d.accountId,
      "guidegate.webhook.id": d.webhookId,
      "guidegate.delivery.id": id,
      "guidegate.webhook.type": d.type,
    };
    if (tracing) return tracing.inLinkedTrace("webhook attempt", { ...attributes, "guidegate.attempt": d.attempts + 1 }, d.traceparent, () => this.make(d));
    return this.make(d);
  }

  private async make(d: WebhookDelivery & { webhook: Webhook }): Promise<void> {
    const id = d.id;
    if (!d.webhook.enabled) {
      await prisma.webhookDelivery.updateMany({
        where: { id, lockedBy: this.id },
        data: { status: "failed", nextAttemptAt: null, lockedBy: null, lockedUntil: null },
      });
      return;
    }
    const settings = webhookSettings();
    const started = Date.now();
    const send = () => post(d.webhook.url, decrypt(d.webhook.secret), d.id, d.payload, settings.timeoutMs, settings.allowPrivate);
    const outcome = tracing
      ? await tracing.inSpan(
          "POST webhook",
          { "http.request.method": "POST", "server.address": hostOf(d.webhook.url) },
          async (span) => {
            const o = await send();
            if (o.code !== undefined) span.setAttribute("http.response.status_code", o.code);
            if (o.error) span.setAttribute("error.type", o.error.slice(0, 100));
            return o;
          },
          "client",
        )
      : await send();
    const at = clock.now();
    const latencyMs = Date.now() - started;
    const attempt = d.attempts + 1;
    const round = d.round + 1;
    const delivered = outcome.code !== undefined && outcome.code >= 200 && outcome.code < 300;
    const retryIn = settings.schedule[round - 1];
    const nextAttemptAt = delivered || retryIn === undefined ? null : new Date(at.getTime() + jitter(retryIn));
    const status = delivered ? "delivered" : nextAttemptAt ? "pending" : "failed";
    await requestScope.run({ requestId: `webhook:${id}`, ip: null, actor: "system:webhooks" }, () =>
      withTransaction(async (tx) => {
        const mine = await tx.webhookDelivery.updateMany({
          where: { id, lockedBy: this.id },
          data: { status, attempts: attempt, round, nextAttemptAt, deliveredAt: delivered ? at : null, lockedBy: null, lockedUntil: null },
        });
        if (!mine.count) return; // the lease ran out and another worker took it: its attempt is the one recorded
        await tx.webhookAttempt.create({
          data: {
            deliveryId: id,
            attempt,
            at,
            status: delivered ? "delivered" : "failed",
            responseCode: outcome.code ?? null,
            latencyMs,
            error: outcome.error?.slice(0, 500) ?? null,
            nextAttemptAt,
          },
        });
        if (delivered) {
          await tx.webhook.updateMany({ where: { id: d.webhookId }, data: { lastSuccessAt: at } });
        } else if (status === "failed") {
          // Failed for the whole schedule with no success on the endpoint since this round's first
          // attempt began: disable it. Measured from that attempt as it was made (its log entry:
          // answered at `at`, sent `latencyMs` before), not from `at` less the nominal schedule: the
          // pauses were jittered (±20%) and attempts run late when the worker was down or busy,
          // so the nominal start fell up to hours either side of the real one.
          const hook = await tx.webhook.findUnique({ where: { id: d.webhookId }, select: { lastSuccessAt: true, enabled: true } });
          const first = await tx.webhookAttempt.findUnique({
            where: { deliveryId_attempt: { deliveryId: id, attempt: attempt - round + 1 } },
            select: { at: true, latencyMs: true },
          });
          const firstSent = first ? first.at.getTime() - first.latencyMs : at.getTime() - latencyMs;
          if (hook?.enabled && (!hook.lastSuccessAt || hook.lastSuccessAt.getTime() < firstSent)) {
            await tx.webhook.update({
              where: { id: d.webhookId },
              data: {
                enabled: false,
                disabledReason: `every delivery failed for the whole retry schedule (last: ${outcome.error ?? `HTTP ${outcome.code}`})`.slice(0, 500),
                updatedAt: at,
              },
            });
          }
        }
      }),
    );
    log.info({ deliveryId: id, attempt, status, code: outcome.code, latencyMs }, "webhook delivery attempt");
  }
}

/**
 * Deletes finished deliveries whose last activity is older than the log's retention (harmless on
 * several instances at once): created before it and with no attempt since, so a delivery replayed
 * near the end of its retention keeps its new attempts a whole retention, not until the next day.
 */
export async function pruneDeliveries(now = clock.now()): Promise<number> {
  const before = new Date(now.getTime() - DELIVERY_LOG_RETENTION_MS);
  return (
    await prisma.webhookDelivery.deleteMany({
      where: { status: { not: "pending" }, createdAt: { lt: before }, log: { none: { at: { gte: before } } } },
    })
  ).count;
}

/** The receiver can continue the attempt's trace (tracing on): a W3C traceparent header. */
function traceHeader(): { traceparent?: string } {
  const traceparent = tracing?.traceparent();
  return traceparent ? { traceparent } : {};
}

const hostOf = (url: string) => {
  try {
    return new URL(url).hostname;
  } catch {
    return "invalid";
  }
};

/** One POST of a delivery: the response code, or what went wrong (timeout, refused address, connection). */
function post(url: string, secret: string, id: string, body: string, timeoutMs: number, allowPrivate: boolean): Promise<{ code?: number; error?: string }> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ error: "invalid URL" });
    }
    if (!allowPrivate) {
      if (target.protocol !== "https:") return resolve({ error: "refused: not https" });
      const literal = refusedLiteral(target.hostname);
      if (literal) return resolve({ error: `refused: ${literal} is not a public address` });
    }
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const signal = AbortSignal.timeout(timeoutMs);
    const req = send(
      target,
      {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "guidegate-webhooks/1", ...signedHeaders(secret, id, body), ...traceHeader() },
        signal,
        ...(allowPrivate ? {} : { lookup: guardedLookup as never }),
      },
      (res) => {
        // The body is not kept; it is read (to its end, within the timeout) so the connection closes cleanly.
        res.on("data", () => {});
        res.on("end", () => resolve({ code: res.statusCode }));
        res.on("error", (err) => resolve({ code: res.statusCode, error: err.message }));
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) =>
      resolve({ error: signal.aborted ? `timed out after ${timeoutMs} ms` : err.code === "EADDRNOTPUBLIC" ? `refused: ${err.message}` : err.message }),
    );
    req.end(body);
  });
}
