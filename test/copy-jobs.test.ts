// B6 and the job status: validation (403 without access to both accounts, 400 naming unknown ids,
// the destination user), the worker's copy (folder trees kept, widgets, tags by name, owner),
// per-item outcomes with backoff and a poisoned item failing alone, exactly-once items under a
// second delivery, draining on stop, the completion e-mail over a real SMTP peer (and the outbox
// without one), progress over server-sent events, and tenant isolation.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAccount, createKey, createUser, revokeKey } from "../src/admin.js";
import { onQuery, withTransaction } from "../src/db/index.js";
import { closeQueue } from "../src/domains/copyJobs/queue.js";
import { CopyJobWorker, MAX_JOB_ATTEMPTS } from "../src/domains/copyJobs/worker.js";
import { AppError } from "../src/errors.js";
import { configureMail } from "../src/mail/index.js";
import { configurePublicUrl } from "../src/publicUrl.js";
import { prisma, requester, type Server, startServer } from "./helpers.js";

interface Mail {
  from: string;
  to: string[];
  raw: string;
}
const mails: Mail[] = [];

/** A message as text: folded header lines unfolded, the quoted-printable body decoded. */
function readable(raw: string): string {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/);
  const body = rest
    .join("\n\n")
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  return `${head!.replace(/\r?\n[ \t]+/g, " ")}\n\n${body}`;
}
let smtp: SMTPServer;
let smtpRefuses = false;
let server: Server;
let worker: CopyJobWorker;
const req = requester(() => server);
const outbox = mkdtempSync(join(tmpdir(), "gg-outbox-"));
let n = 0;

interface World {
  src: string;
  dst: string;
  other: string;
  email: string;
  headers: Record<string, string>;
  destUser: { id: string; email: string };
  outsider: Record<string, string>;
}

/** Source and destination accounts, a caller with access to both, a destination user, and a caller with access to the source only. */
async function world(): Promise<World> {
  const tag = `${process.pid}-${++n}`;
  const [src, dst, other] = [`src-${tag}`, `dst-${tag}`, `oth-${tag}`];
  for (const a of [src, dst, other]) await createAccount(a);
  const email = `copier-${tag}@example.com`;
  await createUser(email, [src, dst]);
  const { key } = await createKey(email);
  const dest = await createUser(`owner-${tag}@example.com`, [dst]);
  await createUser(`stranger-${tag}@example.com`, [other]);
  const outsiderEmail = `outsider-${tag}@example.com`;
  await createUser(outsiderEmail, [src]);
  const outsiderKey = (await createKey(outsiderEmail)).key;
  return {
    src,
    dst,
    other,
    email,
    headers: { "x-service-integration-key": key, "x-service-user": email },
    destUser: { id: dest.id, email: dest.email },
    outsider: { "x-service-integration-key": outsiderKey, "x-service-user": outsiderEmail },
  };
}

type Seed = { id: string; type: string; parentId?: string; tags?: string[]; title?: string };

/** Contents (any type, trees through parentId) and their tags (created in the account as needed). */
async function seed(accountId: string, items: Seed[], tagTypes: Record<string, string> = {}) {
  await withTransaction(async (tx) => {
    const names = [...new Set(items.flatMap((i) => i.tags ?? []))];
    for (const name of names) {
      await tx.tag.upsert({
        where: { accountId_name: { accountId, name } },
        create: { id: `${accountId}-t-${name}`, accountId, name, type: tagTypes[name] ?? "USER" },
        update: {},
      });
    }
    for (const i of items) {
      await tx.content.create({
        data: {
          id: i.id,
          accountId,
          title: i.title ?? `Title ${i.id}`,
          type: i.type,
          parentId: i.parentId ?? null,
          url: i.type === "link" ? "https://x.test" : null,
        },
      });
      for (const t of i.tags ?? []) await tx.contentTag.create({ data: { contentId: i.id, tagId: `${accountId}-t-${t}` } });
    }
  });
}

async function waitForJob(w: World, jobId: string, done = (b: any) => b.notificationTime !== null, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await req(`/v1/accounts/${w.src}/jobs/${jobId}`, { headers: w.headers });
    expect(r.status).toBe(200);
    if (done(r.body)) return r.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} did not finish: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** What the workers run before each attempt of an item (a thrown error fails that attempt); set per test. */
const hooks: { beforeItem?: (sourceId: string, attempt: number) => void | Promise<void> } = {};
const newWorker = () => new CopyJobWorker({ leaseMs: 2_000, pollMs: 50, itemAttempts: 3, beforeItem: (id, attempt) => hooks.beforeItem?.(id, attempt) });
const copy = (w: World, body: unknown, headers = w.headers, account = w.src) => req(`/v1/accounts/${account}/content/copy`, { method: "POST", headers, body });

beforeAll(async () => {
  smtp = new SMTPServer({
    // A test may have every recipient refused for good (550), as a server without that mailbox does.
    onRcptTo(_address, _session, callback) {
      callback(smtpRefuses ? Object.assign(new Error("no such mailbox"), { responseCode: 550 }) : undefined);
    },
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      let raw = "";
      stream.on("data", (c: Buffer) => void (raw += c.toString()));
      stream.on("end", () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: readable(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
  const { port } = smtp.server.address() as { port: number };
  server = await startServer({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: "guidegate <jobs@guidegate.test>" });
  worker = newWorker();
  await worker.start();
});

afterEach(() => {
  hooks.beforeItem = undefined;
});

afterAll(async () => {
  await worker.stop();
  await closeQueue();
  await server.close();
  await new Promise<void>((r) => smtp.close(() => r()));
  rmSync(outbox, { recursive: true, force: true });
});

describe("B6 validation", () => {
  it("403 without access to the destination or the source; nothing recorded", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-a`, type: "link" }]);
    const toOther = await copy(w, { destinationAccountId: w.other, destinationUserId: "x", contentIds: [`${w.src}-a`] });
    expect(toOther.status).toBe(403);
    expect(toOther.headers.get("content-type")).toMatch(/problem\+json/);
    // The outsider reaches the source but not the destination.
    expect((await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.email, contentIds: [`${w.src}-a`] }, w.outsider)).status).toBe(403);
    // A key for the destination cannot copy out of an account it has no access to.
    expect((await copy(w, { destinationAccountId: w.src, destinationUserId: w.email, contentIds: ["x"] }, w.headers, w.other)).status).toBe(403);
    expect((await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.email, contentIds: [`${w.src}-a`] }, {})).status).toBe(401);
    expect(await prisma.copyJob.count({ where: { accountId: { in: [w.src, w.other] } } })).toBe(0);
  });

  it("400 naming the unknown ids, the destination user's problems, and a malformed body", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-a`, type: "link" }]);
    await seed(w.other, [{ id: `${w.other}-b`, type: "link" }]);
    const unknown = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-a`, "nope-1", `${w.other}-b`] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toBe(`contentIds: unknown in account '${w.src}': nope-1, ${w.other}-b`);
    expect(unknown.body.errors).toEqual([
      { path: "contentIds", message: "unknown id 'nope-1'" },
      { path: "contentIds", message: `unknown id '${w.other}-b'` },
    ]);
    const noUser = await copy(w, { destinationAccountId: w.dst, destinationUserId: "ghost@example.com", contentIds: [`${w.src}-a`] });
    expect(noUser.status).toBe(400);
    expect(noUser.body.detail).toBe(`destinationUserId 'ghost@example.com' is not a user of account '${w.dst}'`);
    const wrongAccount = await copy(w, {
      destinationAccountId: w.dst,
      destinationUserId: `stranger-${w.src.slice(4)}@example.com`,
      contentIds: [`${w.src}-a`],
    });
    expect(wrongAccount.status).toBe(400);
    // A user of another tenant gets the same answer as no user at all (no telling which e-mails exist).
    expect(wrongAccount.body.detail).toBe(`destinationUserId 'stranger-${w.src.slice(4)}@example.com' is not a user of account '${w.dst}'`);
    for (const body of [
      {},
      { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [] },
      { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: "a" },
      [1],
    ]) {
      const r = await copy(w, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    // A lone id where the spec has an array (GraphQL would make it a one-item list and queue a job).
    const lone = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: `${w.src}-a` });
    expect([lone.status, lone.body.detail]).toEqual([400, "body.contentIds must be an array of strings"]);
    // A field B6 does not take (it queued a job before).
    const extra = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-a`], extra: 1 });
    expect([extra.status, extra.body.detail, extra.body.errors]).toEqual([
      400,
      "body: unknown field(s) extra (B6 takes destinationAccountId, destinationUserId, contentIds, copyUserTags)",
      [{ path: "extra", message: "unknown field" }],
    ]);
    const notJson = await req(`/v1/accounts/${w.src}/content/copy`, { method: "POST", headers: { ...w.headers, "content-type": "text/plain" }, raw: "x" });
    expect(notJson.status).toBe(415);
    expect(await prisma.copyJob.count({ where: { accountId: w.src } })).toBe(0);
  });
});

describe("copying", () => {
  it("copies a folder tree, a widget and tagged content to the destination user, records each item, and e-mails the caller", async () => {
    const w = await world();
    const s = (x: string) => `${w.src}-${x}`;
    await seed(
      w.src,
      [
        { id: s("folder"), type: "folder", title: "Onboarding" },
        { id: s("sub"), type: "folder", parentId: s("folder"), title: "Step 2" },
        { id: s("leaf1"), type: "link", parentId: s("folder"), tags: ["onboarding"] },
        { id: s("leaf2"), type: "text", parentId: s("sub") },
        { id: s("widget"), type: "widget", tags: ["admins"] },
        { id: s("link"), type: "link", tags: ["onboarding", "admins"] },
        { id: s("untouched"), type: "link" },
      ],
      { admins: "ROLE" },
    );
    // The destination already has "onboarding" (matched by name); "admins" is missing (created as USER).
    await seed(w.dst, [{ id: `${w.dst}-existing`, type: "link", tags: ["onboarding"] }]);
    const before = mails.length;
    const r = await copy(w, {
      destinationAccountId: w.dst,
      // E-mails match in any letter case, as the auth header's does.
      destinationUserId: ` ${w.destUser.email.toUpperCase()}`,
      contentIds: [s("folder"), s("widget"), s("link")],
      copyUserTags: true,
    });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ jobId: expect.stringMatching(/^[0-9a-f-]{36}$/), message: expect.stringContaining(w.email) });
    const { jobId } = r.body;
    const row = await prisma.copyJob.findUniqueOrThrow({ where: { id: jobId }, include: { items: true } });
    expect(row).toMatchObject({
      accountId: w.src,
      destinationAccountId: w.dst,
      destinationUserId: w.destUser.id,
      requestedBy: w.email,
      copyUserTags: true,
      total: 3,
    });
    expect(row.items.map((i) => i.sourceId).sort()).toEqual([s("folder"), s("link"), s("widget")].sort());

    const job = await waitForJob(w, jobId);
    expect(job).toMatchObject({
      jobId,
      status: "completed",
      sourceAccountId: w.src,
      destinationAccountId: w.dst,
      counts: { total: 3, copied: 3, failed: 0, pending: 0 },
      errors: [],
      attempts: 1,
    });
    expect(job.items.map((i: any) => [i.sourceId, i.status, i.created])).toEqual([
      [s("folder"), "copied", 4],
      [s("widget"), "copied", 1],
      [s("link"), "copied", 1],
    ]);
    expect(job.finishTime).toBeGreaterThanOrEqual(job.startTime);
    expect(job.startTime).toBeGreaterThanOrEqual(job.creationTime);

    // The destination: 6 new contents owned by the destination user, the tree kept, tags by name.
    const copies = await prisma.content.findMany({
      where: { accountId: w.dst, id: { not: `${w.dst}-existing` } },
      include: { tags: { include: { tag: true } } },
    });
    expect(copies).toHaveLength(6);
    expect(new Set(copies.map((c) => c.ownerId))).toEqual(new Set([w.destUser.id]));
    const byTitle = new Map(copies.map((c) => [c.title, c]));
    const folder = byTitle.get("Onboarding")!;
    const sub = byTitle.get("Step 2")!;
    expect(folder.parentId).toBeNull();
    expect(folder.id).toBe(job.items[0].targetId);
    expect(sub.parentId).toBe(folder.id);
    expect(byTitle.get(`Title ${s("leaf1")}`)!.parentId).toBe(folder.id);
    expect(byTitle.get(`Title ${s("leaf2")}`)!.parentId).toBe(sub.id);
    expect(byTitle.get(`Title ${s("widget")}`)!.type).toBe("widget");
    const tagsOf = (title: string) =>
      byTitle
        .get(title)!
        .tags.map((t) => t.tag.name)
        .sort();
    expect(tagsOf(`Title ${s("link")}`)).toEqual(["admins", "onboarding"]);
    expect(tagsOf(`Title ${s("leaf1")}`)).toEqual(["onboarding"]);
    const dstTags = await prisma.tag.findMany({ where: { accountId: w.dst }, orderBy: { name: "asc" } });
    expect(dstTags.map((t) => [t.name, t.type])).toEqual([
      ["admins", "USER"],
      ["onboarding", "USER"],
    ]);
    expect(byTitle.get(`Title ${s("link")}`)!.tags.find((t) => t.tag.name === "onboarding")!.tagId).toBe(`${w.dst}-t-onboarding`);
    // The source is untouched; the copies are audited in the destination as the caller's changes.
    expect(await prisma.content.count({ where: { accountId: w.src } })).toBe(7);
    const audit = await prisma.auditLog.findMany({ where: { accountId: w.dst, resourceType: "content", userId: w.email } });
    expect(audit).toHaveLength(6);
    expect(await prisma.auditLog.count({ where: { accountId: w.src, resourceType: "copyJob", resourceId: jobId, action: "create" } })).toBe(1);

    // The e-mail, over a real SMTP session.
    const mine = mails.slice(before).filter((m) => m.raw.includes(jobId));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.to).toEqual([w.email]);
    expect(mine[0]!.from).toBe("jobs@guidegate.test");
    expect(mine[0]!.raw).toMatch(new RegExp(`Subject: Copy job ${jobId} completed: 3 of 3 copied to ${w.dst}`));
    // Counts and the status link; no line per copied item (the status lists them).
    expect(mine[0]!.raw.split(/\r?\n/)).toEqual(expect.arrayContaining(["Copied: 3", "Failed: 0"]));
    expect(mine[0]!.raw).not.toContain(folder.id);
    expect(mine[0]!.raw.split(/\r?\n/)).toContain(`Status: GET /v1/accounts/${w.src}/jobs/${jobId}`);
  });

  it("without copyUserTags the copies carry no tags and no tag is created", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-x`, type: "link", tags: ["t1"] }]);
    const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-x`] });
    const job = await waitForJob(w, r.body.jobId);
    expect(job.status).toBe("completed");
    const copied = await prisma.content.findUniqueOrThrow({ where: { id: job.items[0].targetId }, include: { tags: true } });
    expect(copied.tags).toEqual([]);
    expect(await prisma.tag.count({ where: { accountId: w.dst } })).toBe(0);
  });

  it("retries a failing item with backoff; a poisoned item and a vanished source fail alone", async () => {
    const w = await world();
    const s = (x: string) => `${w.src}-${x}`;
    await seed(
      w.src,
      ["ok", "flaky", "poison", "gone"].map((x) => ({ id: s(x), type: "link" })),
    );
    const attempts: Record<string, number[]> = {};
    hooks.beforeItem = (id, attempt) => {
      (attempts[id] ??= []).push(Date.now());
      if (id === s("poison")) throw new Error("poisoned item");
      if (id === s("flaky") && attempt < 3) throw new Error("transient");
    };
    const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [s("ok"), s("flaky"), s("poison"), s("gone")] });
    expect(r.status).toBe(202);
    // Deleted after the request was accepted: a permanent failure, not retried.
    await withTransaction((tx) => tx.content.delete({ where: { id: s("gone") } }));
    const job = await waitForJob(w, r.body.jobId);
    expect(job.status).toBe("completed");
    expect(job.counts).toEqual({ total: 4, copied: 2, failed: 2, pending: 0 });
    expect(job.errors).toEqual([
      { sourceId: s("poison"), message: "poisoned item" },
      { sourceId: s("gone"), message: `content '${s("gone")}' no longer exists in account '${w.src}'` },
    ]);
    const items = await prisma.copyJobItem.findMany({ where: { jobId: r.body.jobId }, orderBy: { position: "asc" } });
    expect(items.map((i) => [i.status, i.attempts])).toEqual([
      ["copied", 1],
      ["copied", 3],
      ["failed", 3],
      ["failed", 1],
    ]);
    // Backoff: the pauses grow (≈100 ms, then ≈200 ms, jittered ±25%).
    const t = attempts[s("flaky")]!;
    expect(t[1]! - t[0]!).toBeGreaterThanOrEqual(70);
    expect(t[2]! - t[1]!).toBeGreaterThanOrEqual(140);
    expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(2);
  });

  it("a job whose every item fails is failed, and says so in the e-mail", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-p`, type: "link" }]);
    hooks.beforeItem = () => {
      throw new Error("always");
    };
    const before = mails.length;
    const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-p`] });
    const job = await waitForJob(w, r.body.jobId);
    expect(job.status).toBe("failed");
    expect(job.counts).toEqual({ total: 1, copied: 0, failed: 1, pending: 0 });
    const mail = mails.slice(before).find((m) => m.raw.includes(r.body.jobId))!;
    expect(mail.raw).toMatch(/Subject: Copy job \S+ failed: 0 of 1 copied/);
  });
});

describe("access at run time", () => {
  /** Queues a copy of three links with no worker running, changes access with `revoke`, then runs the job. */
  async function runAfter(revoke: (w: World) => Promise<void>) {
    const w = await world();
    const ids = [1, 2, 3].map((i) => `${w.src}-acc${i}`);
    await seed(
      w.src,
      ids.map((id) => ({ id, type: "link" })),
    );
    await worker.stop(); // the job is queued now and runs after the change
    const before = mails.length;
    try {
      const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: ids });
      expect(r.status, r.text).toBe(202);
      await revoke(w);
      await newWorker().runJob(r.body.jobId);
    } finally {
      worker = newWorker();
      await worker.start();
    }
    const job = await prisma.copyJob.findFirstOrThrow({ where: { accountId: w.src }, include: { items: true } });
    const mail = mails.slice(before).find((m) => m.raw.includes(job.id));
    return { w, job, mail };
  }

  it("a key revoked between request and run: the job fails saying so (status, items, e-mail); nothing is copied", async () => {
    const { w, job, mail } = await runAfter(async (w) => {
      const key = await prisma.apiKey.findFirstOrThrow({ where: { user: { email: w.email } } });
      await revokeKey(key.prefix);
    });
    expect(job).toMatchObject({
      status: "failed",
      copied: 0,
      failed: 3,
      error: `access lost: the API key ${w.email} asked for the copy with has been revoked`,
    });
    expect(job.notifiedAt).not.toBeNull();
    expect(job.items.map((i) => [i.status, i.error])).toEqual(Array(3).fill(["failed", "not copied: the job was given up (access lost)"]));
    expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(0);
    expect(mail?.raw).toMatch(/Subject: Copy job \S+ failed: 0 of 3 copied/);
    expect(mail?.raw).toContain(`Error: access lost: the API key ${w.email} asked for the copy with has been revoked`);
  });

  it("a membership removed between request and run (destination or source): the job fails naming the account", async () => {
    for (const side of ["destination", "source"] as const) {
      const { w, job, mail } = await runAfter(async (w) => {
        const user = await prisma.user.findUniqueOrThrow({ where: { email: w.email } });
        const accountId = side === "source" ? w.src : w.dst;
        await withTransaction((tx) => tx.membership.delete({ where: { userId_accountId: { userId: user.id, accountId } } }));
      });
      const reason = `access lost: ${w.email} no longer has access to the ${side} account '${side === "source" ? w.src : w.dst}'`;
      expect(job).toMatchObject({ status: "failed", copied: 0, failed: 3, error: reason });
      expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(0);
      expect(mail?.raw).toContain(`Error: ${reason}`);
    }
  });
});

describe("a job taken too many times", () => {
  it("is given up whole: the items not copied yet fail with the reason, the counts add up, the e-mail lists them", async () => {
    const w = await world();
    const ids = [1, 2, 3].map((i) => `${w.src}-tired${i}`);
    await seed(
      w.src,
      ids.map((id) => ({ id, type: "link" })),
    );
    await worker.stop(); // the job is queued now; the test makes it one taken MAX_JOB_ATTEMPTS times already
    const before = mails.length;
    try {
      const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: ids });
      expect(r.status, r.text).toBe(202);
      // Its earlier runs copied the first item, then each ended without finishing (crashes, lost leases).
      await prisma.copyJob.update({ where: { id: r.body.jobId }, data: { status: "running", attempts: MAX_JOB_ATTEMPTS, copied: 1 } });
      await prisma.copyJobItem.update({ where: { jobId_sourceId: { jobId: r.body.jobId, sourceId: ids[0]! } }, data: { status: "copied", attempts: 1 } });
      await newWorker().runJob(r.body.jobId);
    } finally {
      worker = newWorker();
      await worker.start();
    }
    const job = await prisma.copyJob.findFirstOrThrow({ where: { accountId: w.src }, include: { items: { orderBy: { position: "asc" } } } });
    const given = `not copied: the job was given up (taken ${MAX_JOB_ATTEMPTS} times without finishing)`;
    expect(job).toMatchObject({ status: "failed", total: 3, copied: 1, failed: 2, error: `gave up after ${MAX_JOB_ATTEMPTS} attempts` });
    expect(job.notifiedAt).not.toBeNull();
    expect(job.items.map((i) => [i.sourceId, i.status, i.error])).toEqual([
      [ids[0], "copied", null],
      [ids[1], "failed", given],
      [ids[2], "failed", given],
    ]);
    expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(0); // the test's "copied" item made no copy; nothing else ran
    const status = await req(`/v1/accounts/${w.src}/jobs/${job.id}`, { headers: w.headers });
    expect(status.body.counts).toEqual({ total: 3, copied: 1, failed: 2, pending: 0 });
    expect(status.body.items.map((i: { status: string }) => i.status)).toEqual(["copied", "failed", "failed"]);
    const mail = mails.slice(before).find((m) => m.raw.includes(job.id))!;
    expect(mail.raw).toMatch(/Subject: Copy job \S+ failed: 1 of 3 copied/);
    expect(mail.raw.split(/\r?\n/)).toEqual(expect.arrayContaining(["Copied: 1", "Failed: 2", `  ${ids[1]}: ${given}`, `  ${ids[2]}: ${given}`]));
  });
});

describe("the completion e-mail", () => {
  it("stays short for a large job: the counts, the first 100 failures and how many more, the status link; no line per copied item", async () => {
    const w = await world();
    const ids = Array.from({ length: 105 }, (_, i) => `${w.src}-big${String(i).padStart(3, "0")}`);
    await seed(
      w.src,
      ids.map((id) => ({ id, type: "link" })),
    );
    // Two items are copied; the others fail at once (a 4xx is not retried).
    hooks.beforeItem = (id) => {
      if (id !== ids[0] && id !== ids[50]) throw new AppError(409, `refused ${id.slice(-6)}`);
    };
    const before = mails.length;
    const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: ids });
    const job = await waitForJob(w, r.body.jobId);
    expect(job.counts).toEqual({ total: 105, copied: 2, failed: 103, pending: 0 });
    const mail = mails.slice(before).find((m) => m.raw.includes(r.body.jobId))!;
    const body = mail.raw.slice(mail.raw.indexOf("Your copy of"));
    const lines = body.split(/\r?\n/);
    const failed = ids.filter((_, i) => i !== 0 && i !== 50);
    expect(lines).toEqual([
      `Your copy of 105 item(s) from account ${w.src} to account ${w.dst} has completed.`,
      "",
      "Copied: 2",
      "Failed: 103",
      "",
      "The first 100 failed items:",
      ...failed.slice(0, 100).map((id) => `  ${id}: refused ${id.slice(-6)}`),
      "  ... and 3 more",
      "",
      "Every item's outcome and the copies' ids:",
      `Status: GET /v1/accounts/${w.src}/jobs/${r.body.jobId}`,
      "",
    ]);
  });

  it("refused for good by SMTP (550) is given up at once: the job's error says so, no retries", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-m`, type: "link" }]);
    const before = mails.length;
    smtpRefuses = true;
    try {
      const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-m`] });
      const job = await waitForJob(w, r.body.jobId);
      expect(job.status).toBe("completed");
      expect(job.error).toMatch(new RegExp(`^the completion e-mail to ${w.email.replace(/[.+]/g, "\\$&")} was not sent: .*550`));
      expect(job.attempts).toBe(1);
      expect(mails.length).toBe(before);
    } finally {
      smtpRefuses = false;
    }
  });
});

describe("exactly once", () => {
  it("two workers handed the same job copy each item once", async () => {
    const w = await world();
    const ids = Array.from({ length: 6 }, (_, i) => `${w.src}-${i}`);
    await seed(
      w.src,
      ids.map((id) => ({ id, type: "link" })),
    );
    await worker.stop(); // the test drives the two workers itself
    try {
      const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: ids });
      const one = newWorker();
      const two = newWorker();
      await Promise.all([one.runJob(r.body.jobId), two.runJob(r.body.jobId), one.runJob(r.body.jobId)]);
      const job = await waitForJob(w, r.body.jobId);
      expect(job.counts).toEqual({ total: 6, copied: 6, failed: 0, pending: 0 });
      expect(job.attempts).toBe(1); // the others found it held and left it
      expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(6);
      // A late redelivery of a finished job changes nothing.
      await two.runJob(r.body.jobId);
      expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(6);
    } finally {
      worker = newWorker();
      await worker.start();
    }
  });

  it("stop() drains the running item and hands the job back; the next worker finishes it without duplicates", async () => {
    const w = await world();
    const ids = Array.from({ length: 8 }, (_, i) => `${w.src}-${i}`);
    await seed(
      w.src,
      ids.map((id) => ({ id, type: "link" })),
    );
    let started = 0;
    hooks.beforeItem = async () => {
      started++;
      await new Promise((res) => setTimeout(res, 60));
    };
    const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: ids });
    while (started < 3) await new Promise((res) => setTimeout(res, 10));
    await worker.stop();
    const mid = await prisma.copyJob.findUniqueOrThrow({ where: { id: r.body.jobId } });
    expect(mid.status).toBe("running");
    expect(mid.lockedBy).toBeNull();
    expect(mid.copied).toBeGreaterThanOrEqual(3); // the item under way when stop() came finished
    expect(mid.copied).toBeLessThan(8);
    expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(mid.copied);
    worker = newWorker();
    await worker.start();
    const job = await waitForJob(w, r.body.jobId);
    expect(job.counts).toEqual({ total: 8, copied: 8, failed: 0, pending: 0 });
    expect(job.attempts).toBe(2);
    expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(8);
    expect(new Set(job.items.map((i: any) => i.targetId)).size).toBe(8);
  });
});

describe("watching a job", () => {
  it("streams progress over server-sent events until the job completes", async () => {
    const w = await world();
    const ids = Array.from({ length: 3 }, (_, i) => `${w.src}-${i}`);
    await seed(
      w.src,
      ids.map((id) => ({ id, type: "link" })),
    );
    hooks.beforeItem = () => new Promise((res) => setTimeout(res, 300));
    const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: ids });
    const res = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...w.headers, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        query: `subscription($a: String!, $j: String!) { copyJobProgress(accountId: $a, jobId: $j) { status copied failed total } }`,
        variables: { a: w.src, j: r.body.jobId },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await res.text(); // the stream ends when the job is final
    const events = text
      .split("\n")
      .filter((l) => l.startsWith("data: ") && l.includes("copyJobProgress"))
      .map((l) => JSON.parse(l.slice(6)).data.copyJobProgress);
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.at(-1)).toEqual({ status: "completed", copied: 3, failed: 0, total: 3 });
    const copiedCounts = events.map((e) => e.copied);
    expect(copiedCounts).toEqual([...copiedCounts].sort((a, b) => a - b));
    // Another tenant cannot watch it.
    const foreign = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...w.outsider, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        query: `subscription($a: String!, $j: String!) { copyJobProgress(accountId: $a, jobId: $j) { status } }`,
        variables: { a: w.dst, j: r.body.jobId },
      }),
    });
    expect(await foreign.text()).toMatch(/FORBIDDEN|403/);
  });

  it("a watcher that leaves stops the watch: its job is not read again (it was polled every 250 ms until the job ended)", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-w`, type: "link" }]);
    await worker.stop(); // the job stays queued: nothing changes it while it is watched
    try {
      const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-w`] });
      expect(r.status, r.text).toBe(202);
      const leave = new AbortController();
      const res = await fetch(`${server.url}/graphql`, {
        method: "POST",
        signal: leave.signal,
        headers: { ...w.headers, "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({
          query: `subscription($a: String!, $j: String!) { copyJobProgress(accountId: $a, jobId: $j) { status } }`,
          variables: { a: w.src, j: r.body.jobId },
        }),
      });
      expect(res.status).toBe(200);
      // The job's state now, then the watcher leaves.
      const reader = res.body!.getReader();
      let seen = "";
      while (!seen.includes('"status":"queued"')) seen += new TextDecoder().decode((await reader.read()).value);
      leave.abort();
      await new Promise((res) => setTimeout(res, 400));
      let reads = 0;
      const stop = onQuery((q) => {
        if (q.includes("CopyJob")) reads++;
      });
      await new Promise((res) => setTimeout(res, 1_000));
      stop();
      expect(reads).toBe(0);
      // A job the account does not have ends the stream with an error naming it, as before.
      const unknown = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...w.headers, "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({
          query: `subscription($a: String!, $j: String!) { copyJobProgress(accountId: $a, jobId: $j) { status } }`,
          variables: { a: w.src, j: "nope" },
        }),
      });
      expect(await unknown.text()).toContain(`No copy job 'nope' in account '${w.src}'.`);
    } finally {
      worker = newWorker();
      await worker.start();
    }
  });

  it("a job is visible only in its source account", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-a`, type: "link" }]);
    const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-a`] });
    await waitForJob(w, r.body.jobId);
    expect((await req(`/v1/accounts/${w.dst}/jobs/${r.body.jobId}`, { headers: w.headers })).status).toBe(404);
    expect((await req(`/v1/accounts/${w.other}/jobs/${r.body.jobId}`, { headers: w.headers })).status).toBe(403);
    expect((await req(`/v1/accounts/${w.src}/jobs/nope`, { headers: w.headers })).status).toBe(404);
  });
});

describe("B6: ids below a requested folder", () => {
  it("are a 400 naming each and its folder (the folder's tree brings them: they would be copied twice); nothing recorded", async () => {
    const w = await world();
    const s = (x: string) => `${w.src}-${x}`;
    await seed(w.src, [
      { id: s("f"), type: "folder" },
      { id: s("sub"), type: "folder", parentId: s("f") },
      { id: s("leaf"), type: "link", parentId: s("sub") },
      { id: s("x"), type: "link" },
    ]);
    const body = (contentIds: string[]) => ({ destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds });
    const r = await copy(w, body([s("leaf"), s("x"), s("f"), s("sub")]));
    expect(r.status, r.text).toBe(400);
    expect(r.body.detail).toBe(
      `contentIds: inside folders that are copied with their tree, so they would be copied twice; leave them out: ${s("leaf")} (in ${s("sub")}), ${s("sub")} (in ${s("f")})`,
    );
    expect(r.body.errors).toEqual([
      { path: "contentIds", message: `'${s("leaf")}' is inside folder '${s("sub")}', which is copied with it` },
      { path: "contentIds", message: `'${s("sub")}' is inside folder '${s("f")}', which is copied with it` },
    ]);
    expect((await copy(w, body([s("f"), s("leaf")]))).body.errors).toEqual([
      { path: "contentIds", message: `'${s("leaf")}' is inside folder '${s("f")}', which is copied with it` },
    ]);
    expect(await prisma.copyJob.count({ where: { accountId: w.src } })).toBe(0);
    // A subfolder whose parent is not asked for is copied as any folder: once, with its tree.
    const ok = await copy(w, body([s("sub"), s("x")]));
    expect(ok.status, ok.text).toBe(202);
    const job = await waitForJob(w, ok.body.jobId);
    expect(job.items.map((i: any) => [i.sourceId, i.status, i.created])).toEqual([
      [s("sub"), "copied", 2],
      [s("x"), "copied", 1],
    ]);
    expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(3);
  });
});

describe("B6: Idempotency-Key", () => {
  it("a repeat with the key queues nothing and answers the first job, even at once or after it completed; the contents are copied once", async () => {
    const w = await world();
    await seed(w.src, [
      { id: `${w.src}-a`, type: "link" },
      { id: `${w.src}-b`, type: "link" },
    ]);
    const headers = { ...w.headers, "idempotency-key": "retry-me-1" };
    const body = { destinationAccountId: w.dst, destinationUserId: w.destUser.email, contentIds: [`${w.src}-a`, `${w.src}-b`] };
    // Sent several times at once (a client retrying on a timeout): one job.
    const answers = await Promise.all([1, 2, 3, 4].map(() => copy(w, body, headers)));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    const jobId = answers[0]!.body.jobId;
    for (const r of answers) expect(r.body).toEqual(answers[0]!.body);
    await waitForJob(w, jobId);
    // The same request again later, ids in the same order with the same white space read away: the same answer.
    const later = await copy(w, { ...body, contentIds: [` ${w.src}-a`, `${w.src}-b`, `${w.src}-a`] }, headers);
    expect([later.status, later.body]).toEqual([202, answers[0]!.body]);
    // The destination user's e-mail in other letter case is the same user, so the same request.
    const shouted = await copy(w, { ...body, destinationUserId: ` ${w.destUser.email.toUpperCase()}` }, headers);
    expect([shouted.status, shouted.body]).toEqual([202, answers[0]!.body]);
    expect(await prisma.copyJob.count({ where: { accountId: w.src } })).toBe(1);
    expect(await prisma.content.count({ where: { accountId: w.dst } })).toBe(2);
    // Without a key, or with another one, a request is a new job.
    expect((await copy(w, body, { ...w.headers, "idempotency-key": "retry-me-2" })).body.jobId).not.toBe(jobId);
    expect((await copy(w, body)).body.jobId).not.toBe(jobId);
    expect(await prisma.copyJob.count({ where: { accountId: w.src } })).toBe(3);
  });

  it("the key with another request is a 422, a malformed key a 400, both naming the header; nothing recorded", async () => {
    const w = await world();
    await seed(w.src, [
      { id: `${w.src}-a`, type: "link" },
      { id: `${w.src}-b`, type: "link" },
    ]);
    const body = { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-a`] };
    const first = await copy(w, body, { ...w.headers, "idempotency-key": "k1" });
    expect(first.status).toBe(202);
    for (const other of [
      { ...body, contentIds: [`${w.src}-b`] },
      { ...body, copyUserTags: true },
      { ...body, destinationUserId: w.destUser.email },
    ]) {
      const r = await copy(w, other, { ...w.headers, "idempotency-key": "k1" });
      expect(r.status, r.text).toBe(422);
      expect(r.headers.get("content-type")).toMatch(/problem\+json/);
      expect(r.body.detail).toBe(`the idempotency key was used for another copy request (job ${first.body.jobId}); send a new key for a new request`);
      expect(r.body.errors).toEqual([{ path: "Idempotency-Key", message: "used for another request" }]);
    }
    for (const key of ["x".repeat(256), "with space", " "]) {
      const r = await copy(w, body, { ...w.headers, "idempotency-key": key });
      expect(r.status, r.text).toBe(400);
      expect(r.body.detail).toBe("the idempotency key must be 1 to 255 visible ASCII characters");
      expect(r.body.errors).toEqual([{ path: "Idempotency-Key", message: "must be 1 to 255 visible ASCII characters" }]);
    }
    expect(await prisma.copyJob.count({ where: { accountId: w.src } })).toBe(1);
    // A key belongs to its account: the same key in another account is another job.
    const back = await copy(
      w,
      { destinationAccountId: w.src, destinationUserId: w.email, contentIds: [`${w.dst}-none`] },
      { ...w.headers, "idempotency-key": "k1" },
      w.dst,
    );
    expect(back.status).toBe(400); // (an unknown id there: the key did not answer the source's job)
  });

  it("a browser may send it: the CORS preflight allows the header", async () => {
    const r = await req("/v1/accounts/x/content/copy", {
      method: "OPTIONS",
      headers: { origin: "https://app.example.com", "access-control-request-method": "POST", "access-control-request-headers": "idempotency-key,content-type" },
    });
    expect(r.status).toBe(204);
    expect((r.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/)).toContain("idempotency-key");
  });
});

describe("the status link", () => {
  it("is absolute under PUBLIC_URL in B6's message and in the completion e-mail (a path does not open from a mail client)", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-a`, type: "link" }]);
    configurePublicUrl("https://api.example.test/gg/");
    try {
      const before = mails.length;
      const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-a`] });
      expect(r.status).toBe(202);
      const link = `https://api.example.test/gg/v1/accounts/${w.src}/jobs/${r.body.jobId}`;
      expect(r.body.message).toContain(`Status: GET ${link}`);
      await waitForJob(w, r.body.jobId);
      const mine = mails.slice(before).filter((m) => m.raw.includes(r.body.jobId));
      expect(mine).toHaveLength(1);
      expect(mine[0]!.raw.split(/\r?\n/)).toContain(`Status: GET ${link}`);
    } finally {
      configurePublicUrl(undefined);
    }
  });

  it("is a path without PUBLIC_URL", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-a`, type: "link" }]);
    const before = mails.length;
    const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-a`] });
    expect(r.body.message).toContain(`Status: GET /v1/accounts/${w.src}/jobs/${r.body.jobId}`);
    await waitForJob(w, r.body.jobId);
    expect(
      mails
        .slice(before)
        .find((m) => m.raw.includes(r.body.jobId))!
        .raw.split(/\r?\n/),
    ).toContain(`Status: GET /v1/accounts/${w.src}/jobs/${r.body.jobId}`);
  });
});

describe("outbox", () => {
  it("without SMTP_URL the e-mail is an .eml file in OUTBOX_DIR", async () => {
    const w = await world();
    await seed(w.src, [{ id: `${w.src}-a`, type: "link" }]);
    configureMail({ SMTP_URL: undefined, MAIL_FROM: "guidegate <jobs@guidegate.test>", OUTBOX_DIR: outbox });
    try {
      const r = await copy(w, { destinationAccountId: w.dst, destinationUserId: w.destUser.id, contentIds: [`${w.src}-a`] });
      await waitForJob(w, r.body.jobId);
      const files = readdirSync(outbox).filter((f) => f.includes(r.body.jobId));
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/\.eml$/);
      const eml = readable(readFileSync(join(outbox, files[0]!), "utf8"));
      expect(eml).toMatch(new RegExp(`^To: ${w.email}$`, "m"));
      expect(eml).toMatch(new RegExp(`^Subject: Copy job ${r.body.jobId} completed`, "m"));
    } finally {
      const { port } = smtp.server.address() as { port: number };
      configureMail({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: "guidegate <jobs@guidegate.test>", OUTBOX_DIR: outbox });
    }
  });
});
