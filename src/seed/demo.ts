// The demo account: `demo`, user admin@example.com, tags and content of every type and state, and
// an engagement history (./events.ts), made from a seeded random generator so every seed is the
// same. Shows progress as it goes.
//
// Seeded once: while it is seeded the account is named SEEDING_NAME, and it gets its real name in
// the last transaction, with the demo key. A seed that was interrupted (a first start killed half
// way) is finished by the next start (or `seed --demo`): every step is all or nothing and skipped
// when done. A finished demo account is never seeded again (`seed --demo` refuses: its content
// would be doubled). On PostgreSQL one process seeds at a time (an advisory lock).
import pg from "pg";
import { AdminError, createAccount, createKey, createUser } from "../admin.js";
import { isPostgresUrl, loadConfig, sessionDatabaseUrl } from "../config.js";
import { prisma, withTransaction } from "../db/index.js";
import type { Prisma } from "../generated/sqlite/client.js";
import { newId } from "../ids.js";
import { seedDemoEvents } from "./events.js";
import type { Progress } from "./progress.js";
import { seeded } from "./random.js";
import { seedDemoSegments } from "./segments.js";

export const DEMO_ACCOUNT = "demo";
export const DEMO_EMAIL = "admin@example.com";
const DEMO_NAME = "Demo account";
/** The demo account's name until its seed has finished: the mark of an interrupted seed. */
export const SEEDING_NAME = "Demo account (seed unfinished)";
const SEED_LOCK_KEY = 482_901_378; // arbitrary, fixed (the migrations' lock is ...377)

const TAGS = [
  "onboarding",
  "billing",
  "reports",
  "admin",
  "sales",
  "support",
  "hr",
  "security",
  "mobile",
  "beta",
  "finance",
  "crm",
  "analytics",
  "release-notes",
  "training",
  "faq",
  "integrations",
  "settings",
  "search",
  "dashboard",
];
const TOPICS = [
  "Create an invoice",
  "Export a report",
  "Reset your password",
  "Invite a teammate",
  "Set up SSO",
  "Import contacts",
  "Build a dashboard",
  "Approve expenses",
  "Schedule a meeting",
  "Configure alerts",
];

/** Whether a demo seed began and did not finish (a start killed while seeding): the next start finishes it. */
export async function demoSeedUnfinished(): Promise<boolean> {
  const account = await prisma.account.findUnique({ where: { id: DEMO_ACCOUNT }, select: { name: true } });
  return account?.name === SEEDING_NAME;
}

/**
 * Seeds the demo account, or finishes a seed that was interrupted; refuses (AdminError) when the
 * demo account exists already, or while another process seeds it.
 */
export async function seedDemo(opts: { contents?: number; sessions?: number; progress?: Progress } = {}): Promise<{ key: string; accountId: string }> {
  return withSeedLock(() => seed(opts));
}

/** On PostgreSQL, a session lock (on the direct connection: a pooler in transaction mode cannot hold one). */
async function withSeedLock<T>(fn: () => Promise<T>): Promise<T> {
  const url = sessionDatabaseUrl(loadConfig());
  if (!isPostgresUrl(url)) return fn(); // SQLite: one writer; each step re-checks inside its transaction
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [SEED_LOCK_KEY]);
    if (!rows[0]?.locked) throw new AdminError(`the demo account '${DEMO_ACCOUNT}' is being seeded by another process`);
    try {
      return await fn();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [SEED_LOCK_KEY]).catch(() => {});
    }
  } finally {
    await client.end().catch(() => {});
  }
}

async function seed(opts: { contents?: number; sessions?: number; progress?: Progress }): Promise<{ key: string; accountId: string }> {
  const progress = opts.progress ?? (() => {});
  const total = opts.contents ?? 200;
  const { next: random, pick } = seeded(42);

  const existing = await prisma.account.findUnique({ where: { id: DEMO_ACCOUNT }, select: { name: true } });
  if (existing && existing.name !== SEEDING_NAME)
    throw new AdminError(`the demo account '${DEMO_ACCOUNT}' exists: it is seeded once (its key: 'key create ${DEMO_EMAIL}')`);
  if (!existing) await createAccount(DEMO_ACCOUNT, { name: SEEDING_NAME });
  await createUser(DEMO_EMAIL, [DEMO_ACCOUNT]);

  const tagIds: string[] = [];
  for (const [i, name] of TAGS.entries()) {
    const tag = await withTransaction((tx) =>
      tx.tag.upsert({
        where: { accountId_name: { accountId: DEMO_ACCOUNT, name } },
        create: {
          id: newId("t"),
          accountId: DEMO_ACCOUNT,
          name,
          description: `Content about ${name}`,
          type: i % 7 === 0 ? "PAGE" : i % 5 === 0 ? "ROLE" : "USER",
        },
        update: {},
      }),
    );
    tagIds.push(tag.id);
    progress("tags", i + 1, TAGS.length);
  }

  const folders = ["Getting started", "Advanced", "Admin guides"].map((title) => ({ id: newId("c"), title }));
  const base = Date.UTC(2026, 0, 1);
  const rows: Prisma.ContentCreateManyInput[] = folders.map((f, i) => ({
    id: f.id,
    accountId: DEMO_ACCOUNT,
    title: f.title,
    type: "folder",
    state: "production",
    stage: "production",
    createdAt: new Date(base + i),
    updatedAt: new Date(base + i),
  }));
  const links: Prisma.ContentTagCreateManyInput[] = [];
  const types = ["link", "video", "text", "flow", "flow", "widget"] as const;
  for (let i = 0; i < total; i++) {
    const type = pick(types);
    const state = pick(["draft", "ready", "production"] as const);
    const at = new Date(base + (i + 3) * 3_600_000);
    const id = newId("c");
    rows.push({
      id,
      accountId: DEMO_ACCOUNT,
      type,
      state,
      stage: state === "production" ? "production" : "design",
      title: `${pick(TOPICS)} #${i + 1}`,
      url: type === "link" || type === "video" ? `https://help.example.com/${type}/${i + 1}` : null,
      source: type === "link" ? pick(["default", "knowledgebase"] as const) : null,
      description: type === "video" ? null : `How to ${pick(TOPICS).toLowerCase()}.`,
      descriptionMd: type === "text" ? `## Steps\n1. Open the app\n2. ${pick(TOPICS)}` : null,
      parentId: random() < 0.5 ? pick(folders).id : null,
      createdAt: at,
      updatedAt: at,
    });
    for (const tagId of new Set([pick(tagIds), pick(tagIds)])) links.push({ contentId: id, tagId });
  }
  // All the content in one transaction, written only if the account has none (an interrupted seed
  // that got this far wrote all of it).
  const BATCH = 100;
  const wrote = await withTransaction(async (tx) => {
    if (await tx.content.count({ where: { accountId: DEMO_ACCOUNT } })) return false;
    for (let i = 0; i < rows.length; i += BATCH) {
      const chunk = rows.slice(i, i + BATCH);
      const ids = new Set(chunk.map((r) => r.id));
      await tx.content.createMany({ data: chunk });
      await tx.contentTag.createMany({ data: links.filter((l) => ids.has(l.contentId)) });
    }
    return true;
  });
  if (!wrote) progress("content", rows.length, rows.length);
  else for (let i = BATCH; i < rows.length + BATCH; i += BATCH) progress("content", Math.min(i, rows.length), rows.length);
  // What was written, this time or by the interrupted seed, in creation order.
  const stored = await prisma.content.findMany({
    where: { accountId: DEMO_ACCOUNT },
    select: { id: true, type: true, description: true },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  // Flows get a change history (the flowEditors report): each is edited once after its creation.
  const flows = stored.filter((r) => r.type === "flow").slice(0, 8);
  await withTransaction(async (tx) => {
    for (const f of flows) {
      if (f.description?.endsWith(" (reviewed)")) continue;
      await tx.content.update({ where: { id: f.id }, data: { description: `${f.description ?? ""} (reviewed)` } });
    }
  });
  await seedDemoEvents(DEMO_ACCOUNT, { sessions: opts.sessions, progress });
  await seedDemoSegments(
    DEMO_ACCOUNT,
    stored.filter((r) => r.type !== "folder").map((r) => r.id),
  );
  // Finished: the account's real name and the demo key, together.
  const { key } = await withTransaction(async (tx) => {
    await tx.account.update({ where: { id: DEMO_ACCOUNT }, data: { name: DEMO_NAME } });
    return createKey(DEMO_EMAIL);
  });
  return { key, accountId: DEMO_ACCOUNT };
}
