// Copy jobs in GraphQL: the request (validated, recorded, queued; B6 runs it), a job's status by
// id (the REST status route runs it), and a subscription that streams a job's progress (over
// server-sent events: POST /graphql with Accept: text/event-stream).
import { createHash } from "node:crypto";
import { Repeater } from "graphql-yoga";
import { dbErrorKind } from "../../db/errors.js";
import { prisma, withTransaction } from "../../db/index.js";
import { AppError, badRequest } from "../../errors.js";
import type { CopyJobItem as ItemRow, CopyJob as JobRow } from "../../generated/sqlite/client.js";
import { logger } from "../../logger.js";
import { currentTraceparent } from "../../observability/tracing.js";
import { builder } from "../../schema/builder.js";
import { chunksOf, MAX_BULK_ITEMS } from "../../schema/bulk.js";
import { Account, requireAccount } from "../accounts/schema.js";
import { jobStatusUrl, newJobId } from "./copy.js";
import { dispatch } from "./queue.js";

export const JOB_STATUSES = ["queued", "running", "completed", "failed"] as const;
const FINAL = new Set(["completed", "failed"]);

export const CopyJobStatus = builder.enumType("CopyJobStatus", {
  description:
    "queued: waiting for a worker; running: being copied; completed: every item was tried (see failed); failed: no item could be copied, or the job was given up.",
  values: JOB_STATUSES,
});

const CopyJobItemStatus = builder.enumType("CopyJobItemStatus", { values: ["pending", "copied", "failed"] as const });

const CopyJobItem = builder.objectRef<ItemRow>("CopyJobItem").implement({
  description: "One requested id of a copy job and its outcome.",
  fields: (t) => ({
    sourceId: t.exposeString("sourceId"),
    status: t.field({ type: CopyJobItemStatus, resolve: (i) => i.status as "pending" }),
    targetId: t.exposeString("targetId", { nullable: true, description: "Id of the copy in the destination account." }),
    created: t.exposeInt("created", { description: "Contents created (a folder counts its tree)." }),
    attempts: t.exposeInt("attempts"),
    error: t.exposeString("error", { nullable: true }),
  }),
});

export const CopyJob = builder.objectRef<JobRow>("CopyJob").implement({
  description: "A copy of contents, folders and widgets from this account to another, run asynchronously.",
  fields: (t) => ({
    id: t.exposeID("id"),
    status: t.field({ type: CopyJobStatus, resolve: (j) => j.status as "queued" }),
    sourceAccountId: t.exposeString("accountId"),
    destinationAccountId: t.exposeString("destinationAccountId"),
    destinationUserId: t.exposeString("destinationUserId"),
    copyUserTags: t.exposeBoolean("copyUserTags"),
    requestedBy: t.exposeString("requestedBy", { description: "E-mail of the user who asked; notified on completion." }),
    total: t.exposeInt("total"),
    copied: t.exposeInt("copied"),
    failed: t.exposeInt("failed"),
    pending: t.int({ resolve: (j) => j.total - j.copied - j.failed }),
    attempts: t.exposeInt("attempts", { description: "How many times a worker took the job." }),
    error: t.exposeString("error", { nullable: true }),
    items: t.field({
      type: [CopyJobItem],
      description: "Every requested id, in request order.",
      resolve: (j) => prisma.copyJobItem.findMany({ where: { jobId: j.id }, orderBy: { position: "asc" } }),
    }),
    createdAt: t.field({ type: "Timestamp", resolve: (j) => j.createdAt }),
    startedAt: t.field({ type: "Timestamp", nullable: true, resolve: (j) => j.startedAt }),
    finishedAt: t.field({ type: "Timestamp", nullable: true, resolve: (j) => j.finishedAt }),
    notifiedAt: t.field({ type: "Timestamp", nullable: true, description: "When the completion e-mail went out.", resolve: (j) => j.notifiedAt }),
  }),
});

builder.objectField(Account, "copyJob", (t) =>
  t.field({
    type: CopyJob,
    nullable: true,
    description: "A copy job started from this account (null when there is none with that id).",
    args: { id: t.arg.string({ required: true }) },
    resolve: (account, { id }) => prisma.copyJob.findFirst({ where: { id, accountId: account.id } }),
  }),
);

const CopyRequest = builder.inputType("CopyRequest", {
  description: "What to copy, where, and for whom.",
  fields: (t) => ({
    destinationAccountId: t.string({ required: true, description: "Destination account; the caller needs access to it too." }),
    destinationUserId: t.string({ required: true, description: "The user (id or e-mail) who owns the copies; must belong to the destination account." }),
    contentIds: t.stringList({
      required: true,
      description: `Ids of contents, folders (copied with their tree) or widgets in this account; 1 to ${MAX_BULK_ITEMS}.`,
    }),
    copyUserTags: t.boolean({ required: false, description: "Copy the contents' tags (matched by name; created as USER tags when missing). Default false." }),
  }),
});

const CopyAccepted = builder.objectRef<{ jobId: string; message: string }>("CopyAccepted").implement({
  fields: (t) => ({ jobId: t.exposeID("jobId"), message: t.exposeString("message") }),
});

const bad = (path: string, message: string) => badRequest(`${path} ${message}`, [{ path, message }]);

const IDEMPOTENCY_KEY_MAX = 255;
const IDEMPOTENCY_KEY = new RegExp(`^[\\x21-\\x7e]{1,${IDEMPOTENCY_KEY_MAX}}$`);

/** B6's answer for a queued job. */
const accepted = (job: Pick<JobRow, "id" | "accountId" | "destinationAccountId" | "requestedBy" | "total">) => ({
  jobId: job.id,
  message: `Copy of ${job.total} item(s) to account '${job.destinationAccountId}' queued; ${job.requestedBy} is e-mailed when it completes. Status: GET ${jobStatusUrl(job.accountId, job.id)}`,
});

/**
 * What makes two copy requests the same one: the caller and the request as it is read (ids trimmed,
 * once each; a destination user given by e-mail lower-cased, as it is looked up: `Ops@x` is `ops@x`).
 */
function fingerprint(caller: string, input: { destinationAccountId: string; destinationUserId: string; copyUserTags?: boolean | null }, ids: string[]) {
  const who = input.destinationUserId.trim();
  const request = [caller, input.destinationAccountId, who.includes("@") ? who.toLowerCase() : who, input.copyUserTags ?? false, ids];
  return createHash("sha256").update(JSON.stringify(request)).digest("hex");
}

/** The job an idempotency key queued (null: none yet); the key with another request is a 422. */
async function keyedJob(accountId: string, key: string, requestHash: string) {
  const job = await prisma.copyJob.findUnique({ where: { accountId_idempotencyKey: { accountId, idempotencyKey: key } } });
  if (!job) return null;
  if (job.requestHash !== requestHash)
    throw new AppError(422, `the idempotency key was used for another copy request (job ${job.id}); send a new key for a new request`, [
      { path: "idempotencyKey", message: "used for another request" },
    ]);
  return accepted(job);
}

builder.mutationField("copyContents", (t) =>
  t.field({
    type: CopyAccepted,
    description:
      "Queues a copy of contents to another account (B6). The caller needs access to both accounts; the job runs asynchronously and e-mails the caller when done.",
    args: {
      accountId: t.arg.string({ required: true }),
      input: t.arg({ type: CopyRequest, required: true }),
      idempotencyKey: t.arg.string({
        required: false,
        description: `A key of the client's (1 to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters, e.g. a UUID): a repeat of the request with the same key queues nothing and answers the job the first one queued; the key with another request is a 422. (REST: the Idempotency-Key header.)`,
      }),
    },
    resolve: async (_root, { accountId, input, idempotencyKey }, ctx) => {
      const identity = await requireAccount(ctx, accountId);
      await requireAccount(ctx, input.destinationAccountId);
      if (idempotencyKey != null && !IDEMPOTENCY_KEY.test(idempotencyKey))
        throw badRequest(`the idempotency key must be 1 to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters`, [
          { path: "idempotencyKey", message: `must be 1 to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters` },
        ]);
      const ids = [...new Set(input.contentIds.map((s) => s.trim()))];
      if (ids.length === 0 || ids.some((s) => s === "")) throw bad("contentIds", "must list at least one id, none of them empty");
      if (ids.length > MAX_BULK_ITEMS) throw bad("contentIds", `must list at most ${MAX_BULK_ITEMS} ids`);
      // A repeat (a client retrying after a lost answer) finds the job its key queued: nothing is copied twice.
      const requestHash = idempotencyKey == null ? null : fingerprint(identity.email, input, ids);
      if (idempotencyKey != null) {
        const earlier = await keyedJob(accountId, idempotencyKey, requestHash!);
        if (earlier) return earlier;
      }
      // Looked up among the destination account's users only, and one answer for every miss: whether
      // an e-mail is a user of some other tenant is not the caller's to learn.
      const user = await prisma.user.findFirst({
        where: {
          // E-mails are stored lower-cased (src/admin.ts), as the auth header is compared.
          OR: [{ id: input.destinationUserId }, { email: input.destinationUserId.trim().toLowerCase() }],
          memberships: { some: { accountId: input.destinationAccountId } },
        },
        select: { id: true },
      });
      if (!user) throw bad("destinationUserId", `'${input.destinationUserId}' is not a user of account '${input.destinationAccountId}'`);
      const rows = await prisma.content.findMany({ where: { accountId, id: { in: ids } }, select: { id: true, parentId: true, type: true } });
      const found = new Set(rows.map((c) => c.id));
      const unknown = ids.filter((id) => !found.has(id));
      if (unknown.length) {
        const shown = unknown.slice(0, 20).join(", ") + (unknown.length > 20 ? ` and ${unknown.length - 20} more` : "");
        throw badRequest(
          `contentIds: unknown in account '${accountId}': ${shown}`,
          unknown.slice(0, 1000).map((id) => ({ path: "contentIds", message: `unknown id '${id}'` })),
        );
      }
      // A folder brings its whole tree: an id below a folder also asked for would be copied twice
      // (once in the folder's copy, once at the top of the destination).
      const byId = new Map(rows.map((r) => [r.id, r]));
      const inside = await insideRequestedFolders(
        accountId,
        ids.map((id) => byId.get(id)!),
      );
      if (inside.length) {
        const shown =
          inside
            .slice(0, 20)
            .map((i) => `${i.id} (in ${i.folder})`)
            .join(", ") + (inside.length > 20 ? ` and ${inside.length - 20} more` : "");
        throw badRequest(
          `contentIds: inside folders that are copied with their tree, so they would be copied twice; leave them out: ${shown}`,
          inside.slice(0, 1000).map((i) => ({ path: "contentIds", message: `'${i.id}' is inside folder '${i.folder}', which is copied with it` })),
        );
      }
      const jobId = newJobId();
      try {
        await withTransaction(async (tx) => {
          await tx.copyJob.create({
            data: {
              id: jobId,
              accountId,
              destinationAccountId: input.destinationAccountId,
              destinationUserId: user.id,
              requestedBy: identity.email,
              requestedKeyId: identity.keyId,
              copyUserTags: input.copyUserTags ?? false,
              total: ids.length,
              // With tracing on, the job's trace links back to this request.
              traceparent: currentTraceparent(),
              idempotencyKey,
              requestHash,
            },
          });
          await tx.copyJobItem.createMany({ data: ids.map((sourceId, position) => ({ jobId, sourceId, position })) });
        });
      } catch (err) {
        // The same key sent twice at once: the first request's job is the answer to both.
        const earlier = idempotencyKey != null && dbErrorKind(err) === "unique" ? await keyedJob(accountId, idempotencyKey, requestHash!) : null;
        if (earlier) return earlier;
        throw err;
      }
      // After the commit. If this is lost, the workers' sweep finds the queued job all the same.
      await dispatch(jobId).catch((err) => logger.error({ err, jobId }, "could not queue a copy job; the sweep will"));
      return accepted({ id: jobId, accountId, destinationAccountId: input.destinationAccountId, requestedBy: identity.email, total: ids.length });
    },
  }),
);

/**
 * The requested contents that lie below a requested folder (at any depth), each with the nearest
 * such folder above it, in request order: the ancestors are read level by level, one query a level.
 */
async function insideRequestedFolders(accountId: string, requested: { id: string; parentId: string | null; type: string }[]) {
  const folders = new Set(requested.filter((r) => r.type === "folder").map((r) => r.id));
  const inside = new Map<string, string>();
  if (!folders.size) return [];
  // Each ancestor met so far → the requested ids below it.
  let level = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, ancestor: string, below: string[]) => map.set(ancestor, [...(map.get(ancestor) ?? []), ...below]);
  for (const r of requested) if (r.parentId) add(level, r.parentId, [r.id]);
  const seen = new Set<string>(); // a cycle in bad data ends the walk
  while (level.size) {
    for (const [ancestor, below] of level) if (folders.has(ancestor)) for (const id of below) if (!inside.has(id)) inside.set(id, ancestor);
    const next = new Map<string, string[]>();
    const up = [...level.keys()].filter((id) => !seen.has(id));
    for (const id of up) seen.add(id);
    for (const part of chunksOf(up))
      for (const c of await prisma.content.findMany({ where: { accountId, id: { in: part } }, select: { id: true, parentId: true } }))
        if (c.parentId) add(next, c.parentId, level.get(c.id)!);
    level = next;
  }
  return requested.filter((r) => inside.has(r.id)).map((r) => ({ id: r.id, folder: inside.get(r.id)! }));
}

builder.subscriptionField("copyJobProgress", (t) =>
  t.field({
    type: CopyJob,
    description:
      "Streams a copy job: its state now, then each change (counts, status) until it is completed or failed. Over server-sent events: POST /graphql with Accept: text/event-stream.",
    args: { accountId: t.arg.string({ required: true }), jobId: t.arg.string({ required: true }) },
    subscribe: (_root, { accountId, jobId }, ctx) => progress(accountId, jobId, ctx),
    resolve: (job) => job,
  }),
);

/**
 * Polls the job row (any instance may be running it) and pushes each change; ends when it is final,
 * or as soon as the watcher leaves. (Not an async generator: the return() that a client's leaving
 * makes waits for the generator's next yield, and a job that does not change yields nothing, so
 * its poll went on, four reads a second, until the job ended: hours for a large one.)
 */
function progress(accountId: string, jobId: string, ctx: Parameters<typeof requireAccount>[0]): Repeater<JobRow> {
  return new Repeater<JobRow>(async (push, stop) => {
    let left = false;
    void stop.then(() => {
      left = true;
    });
    await requireAccount(ctx, accountId);
    let last = "";
    while (!left) {
      const job = await prisma.copyJob.findFirst({ where: { id: jobId, accountId } });
      if (!job) throw new AppError(404, `No copy job '${jobId}' in account '${accountId}'.`);
      const state = `${job.status}:${job.copied}:${job.failed}:${job.notifiedAt?.getTime() ?? ""}`;
      if (state !== last) {
        last = state;
        await push(job);
      }
      if (FINAL.has(job.status)) return stop();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise((r) => (timer = setTimeout(r, 250))), stop]);
      clearTimeout(timer);
    }
  });
}
