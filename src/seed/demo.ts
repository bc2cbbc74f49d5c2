// The demo account: `demo`, user admin@example.com, tags and content of every type and state, and
// an engagement history (./events.ts), made from a seeded random generator so every seed is the
// same. Shows progress as it goes.
import { createAccount, createKey, createUser } from "../admin.js";
import { prisma, withTransaction } from "../db/index.js";
import type { Prisma } from "../generated/sqlite/client.js";
import { newId } from "../ids.js";
import { seedDemoEvents } from "./events.js";
import type { Progress } from "./progress.js";
import { seeded } from "./random.js";
import { seedDemoSegments } from "./segments.js";

export const DEMO_ACCOUNT = "demo";
export const DEMO_EMAIL = "admin@example.com";

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

export async function seedDemo(opts: { contents?: number; sessions?: number; progress?: Progress } = {}): Promise<{ key: string; accountId: string }> {
  const progress = opts.progress ?? (() => {});
  const total = opts.contents ?? 200;
  const { next: random, pick } = seeded(42);

  if (!(await prisma.account.findUnique({ where: { id: DEMO_ACCOUNT } }))) {
    await createAccount(DEMO_ACCOUNT, { name: "Demo account" });
  }
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
  const BATCH = 100;
  for (let i = 0; i < rows.length; i += BATCH) {
    const chunk = rows.slice(i, i + BATCH);
    const ids = new Set(chunk.map((r) => r.id));
    await withTransaction(async (tx) => {
      await tx.content.createMany({ data: chunk });
      await tx.contentTag.createMany({ data: links.filter((l) => ids.has(l.contentId)) });
    });
    progress("content", Math.min(i + BATCH, rows.length), rows.length);
  }
  // Flows get a change history (the flowEditors report): each is edited once after its creation.
  const flows = rows.filter((r) => r.type === "flow").slice(0, 8);
  for (const f of flows) await withTransaction((tx) => tx.content.update({ where: { id: f.id }, data: { description: `${f.description ?? ""} (reviewed)` } }));
  await seedDemoEvents(DEMO_ACCOUNT, { sessions: opts.sessions, progress });
  await seedDemoSegments(
    DEMO_ACCOUNT,
    rows.filter((r) => r.type !== "folder").map((r) => r.id),
  );
  const { key } = await createKey(DEMO_EMAIL);
  return { key, accountId: DEMO_ACCOUNT };
}
