// The copy-job worker. The CopyJob row is the truth (status, counts, who holds the job until
// when); the queue only says "look at job X":
//   - PostgreSQL: pg-boss. A job is delivered to one worker among all instances (SKIP LOCKED);
//     failures retry with exponential backoff. A sweep re-sends jobs nobody holds (a crashed
//     worker's, or one whose send was lost), at most once per SWEEP_MS across instances.
//   - SQLite (embedded, one process): an in-process loop over the same table.
// A worker takes a job by a conditional update (free, or its holder's lease expired) and renews
// its lease while it runs; a crashed worker's job is taken over when the lease runs out. Each
// item is copied in its own transaction that also marks the item done (only if it was still
// pending), so a restarted or doubly delivered job never copies an item twice. A failing item is
// retried with backoff, then recorded as failed alone; the rest of the job goes on. On completion
// the initiating user is e-mailed, and the job is marked notified.
import { hostname } from "node:os";
import { requestScope } from "../../audit/requestScope.js";
import { dbKind, prisma, withTransaction } from "../../db/index.js";
import { knownError } from "../../errors.js";
import type { CopyJob } from "../../generated/sqlite/client.js";
import { logger } from "../../logger.js";
import { sendMail } from "../../mail/index.js";
import { setJobQueueDepth } from "../../observability/metrics.js";
import { tracing } from "../../observability/tracing.js";
import { emitCopyJobFinished } from "../webhooks/emit.js";
import { ACCESS_CHECK_ITEMS, accessLost } from "./access.js";
import { type CopyPlan, copyItem, jobStatusUrl } from "./copy.js";
import { dispatch, onDispatch, pgBoss, QUEUE, startedBoss } from "./queue.js";

/** A job taken this many times without finishing is given up (failed). */
export const MAX_JOB_ATTEMPTS = 10;
/**
 * Takes in all after which a finished job's completion e-mail is given up (SMTP down for that long:
 * with the backoff below, about a day); a permanent refusal (an SMTP 5xx reply) gives it up at once.
 */
export const MAX_NOTIFY_ATTEMPTS = MAX_JOB_ATTEMPTS + 20;
const SWEEP_MS = 5_000;
const log = logger.child({ component: "copy-jobs" });

export interface WorkerOptions {
  leaseMs: number;
  pollMs: number;
  itemAttempts: number;
  /** Tests only: a pause before each item. */
  itemDelayMs?: number;
  /** Tests only: runs before each attempt of an item (a thrown error fails that attempt). */
  beforeItem?: (sourceId: string, attempt: number) => void | Promise<void>;
}

const backoff = (attempt: number, base = 100, cap = 10_000) => Math.min(base * 2 ** (attempt - 1), cap) * (0.75 + Math.random() / 2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The job_queue_depth metric: jobs not finished and notified yet. */
async function reportDepth(): Promise<void> {
  setJobQueueDepth(await prisma.copyJob.count({ where: { notifiedAt: null } }), QUEUE);
}

// ---- the worker ------------------------------------------------------------------------------------

/** Jobs that want a worker: not notified yet, due, and held by nobody (or by a lease that ran out). */
const wanted = (now: Date) => ({
  notifiedAt: null,
  runAfter: { lte: now },
  OR: [{ lockedBy: null }, { lockedUntil: { lt: now } }],
});

export class CopyJobWorker {
  readonly id = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  private stopping = false;
  private running: Promise<void> = Promise.resolve();
  private wake: () => void = () => {};
  private sweepTimer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: WorkerOptions) {}

  async start(): Promise<void> {
    if (dbKind() === "postgres") {
      const b = await pgBoss();
      await b.work<{ jobId: string }>(QUEUE, { batchSize: 1, pollingIntervalSeconds: Math.max(0.5, this.opts.pollMs / 1000) }, async ([job]) => {
        if (job && !this.stopping) await this.track(this.runJob(job.data.jobId));
      });
      this.sweepTimer = setInterval(() => void this.sweep().catch((err) => log.error({ err }, "copy-job sweep failed")), Math.min(SWEEP_MS, this.opts.leaseMs));
      void this.sweep().catch((err) => log.error({ err }, "copy-job sweep failed"));
    } else {
      this.loop = this.pollLoop();
    }
    log.info({ worker: this.id, queue: dbKind() === "postgres" ? "pg-boss" : "in-process" }, "copy-job worker started");
  }

  /** Drains: the item being copied finishes, the job is handed back (another worker or a restart resumes it). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    clearInterval(this.sweepTimer);
    await this.loop;
    await this.running;
    const boss = startedBoss();
    if (boss) await (await boss).offWork(QUEUE).catch(() => undefined);
    log.info({ worker: this.id }, "copy-job worker stopped");
  }

  private track(p: Promise<void>): Promise<void> {
    this.running = p.catch(() => undefined);
    return p;
  }

  private async pollLoop(): Promise<void> {
    const stopListening = onDispatch(() => this.wake());
    try {
      while (!this.stopping) {
        const next = await prisma.copyJob.findFirst({ where: wanted(new Date()), orderBy: [{ createdAt: "asc" }, { id: "asc" }], select: { id: true } });
        await reportDepth();
        if (next) {
          await this.track(this.runJob(next.id)).catch(() => undefined);
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.opts.pollMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } catch (err) {
      if (!this.stopping) log.error({ err }, "copy-job poll loop stopped");
    } finally {
      stopListening();
    }
  }

  /** PostgreSQL: re-sends wanted jobs to pg-boss; the runAfter bump lets one instance in SWEEP_MS do it. */
  private async sweep(): Promise<void> {
    await reportDepth();
    const now = new Date();
    const jobs = await prisma.copyJob.findMany({
      where: { ...wanted(now), createdAt: { lt: new Date(now.getTime() - 2_000) } },
      select: { id: true },
      take: 100,
    });
    for (const { id } of jobs) {
      const bumped = await prisma.copyJob.updateMany({ where: { id, runAfter: { lte: now } }, data: { runAfter: new Date(now.getTime() + SWEEP_MS) } });
      if (bumped.count) await dispatch(id);
    }
  }

  /** Takes the job (if free) and runs what is left of it: pending items, the final status, the e-mail. */
  async runJob(jobId: string): Promise<void> {
    if (!tracing) return this.work(jobId);
    // With tracing on, a job's run is a trace of its own, linked to the request that queued it.
    const cause = await prisma.copyJob.findUnique({ where: { id: jobId }, select: { traceparent: true, accountId: true } });
    return tracing.inLinkedTrace("copy job", { "guidegate.job.id": jobId, "guidegate.account_id": cause?.accountId }, cause?.traceparent, () =>
      this.work(jobId),
    );
  }

  private async work(jobId: string): Promise<void> {
    const now = new Date();
    const taken = await prisma.copyJob.updateMany({
      where: { id: jobId, notifiedAt: null, OR: [{ lockedBy: null }, { lockedUntil: { lt: now } }] },
      data: { lockedBy: this.id, lockedUntil: new Date(now.getTime() + this.opts.leaseMs), attempts: { increment: 1 } },
    });
    if (!taken.count) return; // done, or another worker holds it
    let lost = false;
    const heartbeat = setInterval(
      () =>
        void prisma.copyJob
          .updateMany({ where: { id: jobId, lockedBy: this.id }, data: { lockedUntil: new Date(Date.now() + this.opts.leaseMs) } })
          .then((r) => {
            if (!r.count) lost = true;
          })
          .catch((err) => log.warn({ err, jobId }, "could not renew the lease of a copy job")),
      Math.max(100, Math.floor(this.opts.leaseMs / 3)),
    );
    try {
      const job = await prisma.copyJob.findUniqueOrThrow({ where: { id: jobId } });
      if (job.status === "queued" || job.status === "running") {
        if (job.attempts > MAX_JOB_ATTEMPTS) {
          // As a job whose access was lost: its pending items fail too, so a final job has none
          // pending and its counts, status and e-mail add up.
          await this.giveUp(job, `gave up after ${MAX_JOB_ATTEMPTS} attempts`, `taken ${MAX_JOB_ATTEMPTS} times without finishing`);
        } else {
          if (job.status === "queued") {
            await prisma.copyJob.updateMany({ where: { id: jobId, lockedBy: this.id }, data: { status: "running", startedAt: job.startedAt ?? new Date() } });
          }
          const done = await this.runItems(job, () => this.stopping || lost);
          if (done === false) return void (await this.release(jobId, 0)); // drained or lost: handed back
          if (typeof done === "string") {
            await this.giveUp(job, done, "access lost");
          } else {
            const counts = await prisma.copyJob.findUniqueOrThrow({ where: { id: jobId }, select: { copied: true, failed: true } });
            await this.finish(job, counts.copied === 0 && counts.failed > 0 ? "failed" : "completed", null);
          }
        }
      }
      await this.notify(jobId);
      await this.release(jobId, 0);
      log.info({ worker: this.id, jobId }, "copy job done");
    } catch (err) {
      // The job itself could not go on (database, SMTP): hand it back with a backoff.
      const attempts = (await prisma.copyJob.findUnique({ where: { id: jobId }, select: { attempts: true } }))?.attempts ?? 1;
      log.error({ err, jobId, attempts }, "copy job interrupted; it will be retried");
      // (Up to an hour apart: an SMTP server down for hours gets the e-mail when it is back.)
      await this.release(jobId, backoff(attempts, 1_000, 3_600_000)).catch(() => undefined);
      throw err;
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async release(jobId: string, delayMs: number): Promise<void> {
    await prisma.copyJob.updateMany({
      where: { id: jobId, lockedBy: this.id },
      data: { lockedBy: null, lockedUntil: null, runAfter: new Date(Date.now() + delayMs) },
    });
  }

  /**
   * Copies the pending items in request order; false when it stopped early (draining, lease lost),
   * or why the requesting user may no longer copy (checked before the first item and every
   * ACCESS_CHECK_ITEMS items: src/domains/copyJobs/access.ts), which ends the job.
   */
  private async runItems(job: CopyJob, stop: () => boolean): Promise<boolean | string> {
    const plan: CopyPlan = {
      sourceAccountId: job.accountId,
      destinationAccountId: job.destinationAccountId,
      ownerId: job.destinationUserId,
      copyUserTags: job.copyUserTags,
    };
    const items = await prisma.copyJobItem.findMany({ where: { jobId: job.id, status: "pending" }, orderBy: { position: "asc" } });
    for (const [n, item] of items.entries()) {
      if (stop()) return false;
      if (n % ACCESS_CHECK_ITEMS === 0) {
        const lostAccess = await accessLost(job);
        if (lostAccess) return lostAccess;
      }
      await this.runItem(job, plan, item.sourceId, item.attempts);
    }
    return !stop() || (await prisma.copyJobItem.count({ where: { jobId: job.id, status: "pending" } })) === 0;
  }

  private async runItem(job: CopyJob, plan: CopyPlan, sourceId: string, attemptsBefore: number): Promise<void> {
    const where = { jobId_sourceId: { jobId: job.id, sourceId } };
    for (let attempt = attemptsBefore + 1; ; attempt++) {
      try {
        if (this.opts.itemDelayMs) await sleep(this.opts.itemDelayMs);
        await this.opts.beforeItem?.(sourceId, attempt);
        // The copies are audited in the destination account as the initiating user's changes.
        await requestScope.run({ requestId: `copy-job:${job.id}`, ip: null, actor: job.requestedBy }, () =>
          withTransaction(async (tx) => {
            // Only a pending item is copied: a second delivery of the job finds it done and copies nothing.
            const mine = await tx.copyJobItem.updateMany({
              where: { jobId: job.id, sourceId, status: "pending" },
              data: { status: "copied", attempts: attempt, finishedAt: new Date(), error: null },
            });
            if (!mine.count) return;
            const { targetId, created } = await copyItem(tx, plan, sourceId);
            await tx.copyJobItem.update({ where, data: { targetId, created } });
            await tx.copyJob.update({ where: { id: job.id }, data: { copied: { increment: 1 } } });
          }),
        );
        return;
      } catch (err) {
        const known = knownError(err);
        const permanent = known !== null && known.status < 500;
        const message = known?.message ?? (err instanceof Error ? err.message : String(err));
        if (permanent || attempt >= this.opts.itemAttempts) {
          log.warn({ jobId: job.id, sourceId, attempt, err: message }, "copy-job item failed");
          await withTransaction(async (tx) => {
            const mine = await tx.copyJobItem.updateMany({
              where: { jobId: job.id, sourceId, status: "pending" },
              data: { status: "failed", attempts: attempt, error: message.slice(0, 1000), finishedAt: new Date() },
            });
            if (mine.count) await tx.copyJob.update({ where: { id: job.id }, data: { failed: { increment: 1 } } });
          });
          return;
        }
        // Remembered, so a crash loop on this item cannot retry it forever.
        await prisma.copyJobItem.updateMany({ where: { jobId: job.id, sourceId, status: "pending" }, data: { attempts: attempt } });
        await sleep(backoff(attempt));
      }
    }
  }

  /**
   * Ends a job that may not run on (its user lost access, or it was taken too many times): the
   * items not copied yet fail, naming `cause`, and the job fails with `reason` (its status and
   * completion e-mail say why). What was copied stays copied.
   */
  private async giveUp(job: CopyJob, reason: string, cause: string): Promise<void> {
    log.warn({ jobId: job.id, reason }, `copy job given up: ${cause}`);
    await withTransaction(async (tx) => {
      const failed = await tx.copyJobItem.updateMany({
        where: { jobId: job.id, status: "pending" },
        data: { status: "failed", error: `not copied: the job was given up (${cause})`, finishedAt: new Date() },
      });
      await tx.copyJob.update({ where: { id: job.id }, data: { failed: { increment: failed.count } } });
    });
    await this.finish(job, "failed", reason);
  }

  private async finish(job: CopyJob, status: "completed" | "failed", error: string | null): Promise<void> {
    // With its copy_job.* webhook message, in one transaction: the message goes out if and only if the job is final.
    await withTransaction(async (tx) => {
      const done = await tx.copyJob.updateMany({ where: { id: job.id, lockedBy: this.id }, data: { status, error, finishedAt: new Date() } });
      if (done.count) await emitCopyJobFinished(tx, job.id);
    });
  }

  /** E-mails the initiating user once the job is final (at least once: a crash right after sending sends again). */
  private async notify(jobId: string): Promise<void> {
    const job = await prisma.copyJob.findUniqueOrThrow({ where: { id: jobId } });
    if (job.notifiedAt || (job.status !== "completed" && job.status !== "failed")) return;
    // The first failures only (the e-mail lists no more): a 10,000-item job reads 100 rows, not 10,000.
    const failures = await prisma.copyJobItem.findMany({
      where: { jobId, status: "failed" },
      orderBy: { position: "asc" },
      take: MAIL_FAILURES_MAX,
      select: { sourceId: true, error: true },
    });
    try {
      await sendMail({ id: job.id, to: job.requestedBy, ...jobMail(job, failures) });
    } catch (err) {
      // Retried with the job's backoff, unless SMTP refused the message for good (a 5xx reply: no
      // such mailbox, policy) or it failed on every take up to MAX_NOTIFY_ATTEMPTS: then it is
      // given up, and the job's error says so (its notificationTime is when).
      const permanent = Number((err as { responseCode?: unknown }).responseCode) >= 500;
      if (!permanent && job.attempts < MAX_NOTIFY_ATTEMPTS) throw err;
      const why = `the completion e-mail to ${job.requestedBy} was not sent: ${(err as Error).message.slice(0, 300)}`;
      log.warn({ err, jobId, attempts: job.attempts }, "copy job e-mail given up");
      await prisma.copyJob.updateMany({
        where: { id: jobId, lockedBy: this.id },
        data: { notifiedAt: new Date(), error: job.error ? `${job.error}; ${why}` : why },
      });
      return;
    }
    await prisma.copyJob.updateMany({ where: { id: jobId, lockedBy: this.id }, data: { notifiedAt: new Date() } });
  }
}

/** The completion e-mail lists at most this many failed items; the status link has every item. */
export const MAIL_FAILURES_MAX = 100;

/**
 * The completion e-mail: the counts, the job's error, the first MAIL_FAILURES_MAX failed items
 * (`failures`, in request order) with "and N more", and the status link for every item's outcome.
 * Copied items are not listed: a job of 10,000 would be a 10,000-line e-mail nobody reads.
 */
export function jobMail(job: CopyJob, failures: readonly { sourceId: string; error: string | null }[]) {
  const subject = `Copy job ${job.id} ${job.status}: ${job.copied} of ${job.total} copied to ${job.destinationAccountId}`;
  const shown = failures.slice(0, MAIL_FAILURES_MAX);
  const more = job.failed - shown.length;
  const lines = [
    `Your copy of ${job.total} item(s) from account ${job.accountId} to account ${job.destinationAccountId} has ${job.status}.`,
    "",
    `Copied: ${job.copied}`,
    `Failed: ${job.failed}`,
    ...(job.error ? [`Error: ${job.error}`] : []),
    ...(shown.length
      ? [
          "",
          job.failed > shown.length ? `The first ${shown.length} failed items:` : "Failed items:",
          ...shown.map((i) => `  ${i.sourceId}${i.error ? `: ${i.error}` : ""}`),
        ]
      : []),
    ...(more > 0 ? [`  ... and ${more} more`] : []),
    "",
    "Every item's outcome and the copies' ids:",
    `Status: GET ${jobStatusUrl(job.accountId, job.id)}`,
  ];
  return { subject, text: `${lines.join("\n")}\n` };
}
