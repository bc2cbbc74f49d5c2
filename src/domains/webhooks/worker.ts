// The webhook delivery worker. A WebhookDelivery row is the delivery's truth (status, attempts,
// next attempt, who holds it until when); the queue only says "send delivery X, attempt n":
//   - PostgreSQL: pg-boss, the copy jobs' instance (src/domains/copyJobs/queue.ts). A sweep finds
//     due deliveries and sends each to the queue once across instances (a conditional bump of
//     nextAttemptAt decides which instance sends it); pg-boss hands the job to one worker.
//   - SQLite (embedded, one process): an in-process loop over the same table.
// Either way a worker takes a delivery by a conditional update (still pending, the attempt count
// it expects, nobody holding it or the holder's lease over): a delivery is sent once per attempt
// across instances, and a stale or doubled queue message finds nothing to take. A worker that dies
// mid-attempt loses its lease and the attempt is made again (at least once).
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { hostname } from "node:os";
import { requestScope } from "../../audit/requestScope.js";
import { decrypt } from "../../crypto.js";
import { dbKind, prisma, withTransaction } from "../../db/index.js";
import { logger } from "../../logger.js";
import { pgBoss } from "../copyJobs/queue.js";
import { webhookSettings } from "./settings.js";
import { signedHeaders } from "./sign.js";
import { guardedLookup, refusedLiteral } from "./ssrf.js";

export const WEBHOOK_QUEUE = "webhook-deliveries";
const SWEEP_BATCH = 100;
const PRUNE_MS = 3_600_000;
/** Finished deliveries (and their attempts) are kept this long in the delivery log. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 3_600_000;
const log = logger.child({ component: "webhooks" });

export interface WebhookWorkerOptions {
  /** How long a taken delivery is held without an answer (longer than the request timeout). */
  leaseMs?: number;
}

/** ±20% jitter, so endpoints that failed together are not retried in lockstep. */
const jitter = (ms: number) => Math.round(ms * (0.8 + Math.random() * 0.4));

const due = (now: Date) => ({ status: "pending", nextAttemptAt: { lte: now }, OR: [{ lockedBy: null }, { lockedUntil: { lt: now } }] });

export class WebhookWorker {
  readonly id = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private inFlight = new Set<Promise<void>>();
  private lastPrune = 0;
  private readonly leaseMs: number;

  constructor(opts: WebhookWorkerOptions = {}) {
    this.leaseMs = opts.leaseMs ?? Math.max(30_000, webhookSettings().timeoutMs * 3);
  }

  async start(): Promise<void> {
    if (dbKind() === "postgres") {
      const boss = await pgBoss();
      await boss.createQueue(WEBHOOK_QUEUE, { name: WEBHOOK_QUEUE, retryLimit: 3, retryDelay: 1, expireInSeconds: 300 });
      this.bossWorkerId = await boss.work<{ deliveryId: string; attempts: number }>(
        WEBHOOK_QUEUE,
        { batchSize: 5, pollingIntervalSeconds: Math.max(0.5, webhookSettings().pollMs / 1000) },
        async (jobs) => {
          await Promise.all(jobs.map((job) => (this.stopping ? undefined : this.track(this.runDelivery(job.data.deliveryId, job.data.attempts)))));
        },
      );
    }
    this.loop = this.pollLoop();
    log.info({ worker: this.id, queue: dbKind() === "postgres" ? "pg-boss" : "in-process" }, "webhook worker started");
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
    await Promise.all(this.inFlight);
    // By id: other workers of the queue in this process (tests run two) keep theirs.
    if (this.bossWorkerId) await (await pgBoss()).offWork({ id: this.bossWorkerId }).catch(() => undefined);
    log.info({ worker: this.id }, "webhook worker stopped");
  }

  private wake: (() => void) | undefined;
  private bossWorkerId: string | undefined;

  private track(p: Promise<void>): Promise<void> {
    const t = p.catch((err) => log.error({ err }, "webhook delivery failed unexpectedly"));
    this.inFlight.add(t);
    void t.finally(() => this.inFlight.delete(t));
    return t;
  }

  private async pollLoop(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.tick();
      } catch (err) {
        if (!this.stopping) log.error({ err }, "webhook sweep failed");
      }
      if (this.stopping) break;
      await new Promise<void>((resolve) => {
        this.timer = setTimeout(resolve, webhookSettings().pollMs);
        this.wake = resolve;
      });
    }
  }

  /** One sweep: due deliveries go to the queue (PostgreSQL) or are sent here (SQLite); old deliveries are pruned. */
  async tick(): Promise<void> {
    const now = new Date();
    if (now.getTime() - this.lastPrune > PRUNE_MS) {
      this.lastPrune = now.getTime();
      await pruneDeliveries(now);
    }
    const rows = await prisma.webhookDelivery.findMany({
      where: due(now),
      orderBy: [{ nextAttemptAt: "asc" }, { id: "asc" }],
      take: SWEEP_BATCH,
      select: { id: true, attempts: true },
    });
    if (dbKind() === "postgres") {
      const boss = await pgBoss();
      for (const d of rows) {
        // Only the instance whose bump lands sends it; a lost queue message is swept again after the bump.
        const bumped = await prisma.webhookDelivery.updateMany({
          where: { id: d.id, status: "pending", attempts: d.attempts, nextAttemptAt: { lte: now } },
          data: { nextAttemptAt: new Date(now.getTime() + this.leaseMs) },
        });
        if (bumped.count) await boss.send(WEBHOOK_QUEUE, { deliveryId: d.id, attempts: d.attempts });
      }
    } else {
      await Promise.all(rows.map((d) => this.track(this.runDelivery(d.id, d.attempts))));
    }
  }

  /** Takes delivery `id` if it still waits for attempt `attempts + 1`, makes the attempt and records it. */
  async runDelivery(id: string, attempts: number): Promise<void> {
    const now = new Date();
    const taken = await prisma.webhookDelivery.updateMany({
      where: { id, status: "pending", attempts, OR: [{ lockedBy: null }, { lockedUntil: { lt: now } }] },
      data: { lockedBy: this.id, lockedUntil: new Date(now.getTime() + this.leaseMs) },
    });
    if (!taken.count) return;
    const d = await prisma.webhookDelivery.findUniqueOrThrow({ where: { id }, include: { webhook: true } });
    if (!d.webhook.enabled) {
      await prisma.webhookDelivery.updateMany({
        where: { id, lockedBy: this.id },
        data: { status: "failed", nextAttemptAt: null, lockedBy: null, lockedUntil: null },
      });
      return;
    }
    const settings = webhookSettings();
    const started = Date.now();
    const outcome = await post(d.webhook.url, decrypt(d.webhook.secret), d.id, d.payload, settings.timeoutMs, settings.allowPrivate);
    const at = new Date();
    const latencyMs = Date.now() - started;
    const attempt = d.attempts + 1;
    const round = d.round + 1;
    const delivered = outcome.code !== undefined && outcome.code >= 200 && outcome.code < 300;
    const retryIn = settings.schedule[round - 1];
    const nextAttemptAt = delivered || retryIn === undefined ? null : new Date(at.getTime() + jitter(retryIn));
    const status = delivered ? "delivered" : nextAttemptAt ? "pending" : "failed";
    const totalSchedule = settings.schedule.reduce((s, x) => s + x, 0);
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
          // Failed for the whole schedule with no success on the endpoint meanwhile: disable it.
          const hook = await tx.webhook.findUnique({ where: { id: d.webhookId }, select: { lastSuccessAt: true, enabled: true } });
          if (hook?.enabled && (!hook.lastSuccessAt || hook.lastSuccessAt.getTime() < at.getTime() - totalSchedule)) {
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

/** Deletes finished deliveries older than the log's retention (harmless on several instances at once). */
export async function pruneDeliveries(now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - DELIVERY_LOG_RETENTION_MS);
  return (await prisma.webhookDelivery.deleteMany({ where: { status: { not: "pending" }, createdAt: { lt: before } } })).count;
}

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
        headers: { "content-type": "application/json", "user-agent": "guidegate-webhooks/1", ...signedHeaders(secret, id, body) },
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
