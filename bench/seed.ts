// The bench data set: one account, its user and integration key, ~20 tags and N contents of mixed
// types with 0-3 tags each. Deterministic (seeded generator), and written with createMany in large
// batches because the admin/GraphQL write paths would make seeding slower than the bench itself.
// Writes go through withTransaction like every write of the service (the client refuses unaudited
// writes), so the seed also leaves one audit entry per record, as real data would have.
import { createAccount, createKey, createUser } from "../src/admin.js";
import { withTransaction } from "../src/db/index.js";
import type { Prisma } from "../src/generated/sqlite/client.js";
import { newId } from "../src/ids.js";
import { consoleProgress, rng } from "../src/seed/demo.js";

export const BENCH_ACCOUNT = "bench";
export const BENCH_EMAIL = "bench@example.com";

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
const TYPES = ["link", "video", "text", "flow", "widget"] as const;
const STATES = ["draft", "ready", "production"] as const;
/** Rows per transaction: well under SQLite's and PostgreSQL's bound-parameter limits. */
const BATCH = 500;

export interface Seeded {
  accountId: string;
  email: string;
  key: string;
}

export async function seedBench(contents: number): Promise<Seeded> {
  const progress = consoleProgress();
  const random = rng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

  await createAccount(BENCH_ACCOUNT, { name: "Bench account" });
  await createUser(BENCH_EMAIL, [BENCH_ACCOUNT]);
  const { key } = await createKey(BENCH_EMAIL);

  const tags = TAGS.map((name, i) => ({
    id: newId("t"),
    accountId: BENCH_ACCOUNT,
    name,
    description: `Content about ${name}`,
    type: i % 7 === 0 ? "PAGE" : "USER",
  }));
  await withTransaction((tx) => tx.tag.createMany({ data: tags }));
  progress("tags", tags.length, tags.length);

  // Distinct creation times give a well-defined page order; a few folders serve as parents.
  const base = Date.UTC(2026, 0, 1);
  const folders: string[] = [];
  const rows: Prisma.ContentCreateManyInput[] = [];
  const links: Prisma.ContentTagCreateManyInput[] = [];
  for (let i = 0; i < contents; i++) {
    const id = newId("c");
    const createdAt = new Date(base + i * 60_000);
    const updatedAt = new Date(createdAt.getTime() + Math.floor(random() * 86_400_000));
    if (i % 250 === 0) {
      folders.push(id);
      rows.push({
        id,
        accountId: BENCH_ACCOUNT,
        title: `Folder ${folders.length}`,
        type: "folder",
        state: "production",
        stage: "production",
        createdAt,
        updatedAt,
      });
      continue;
    }
    const type = pick(TYPES);
    const state = pick(STATES);
    rows.push({
      id,
      accountId: BENCH_ACCOUNT,
      type,
      state,
      stage: state === "production" ? "production" : "design",
      title: `${pick(TOPICS)} #${i + 1}`,
      url: type === "link" || type === "video" ? `https://help.example.com/${type}/${i + 1}` : null,
      source: type === "link" ? pick(["default", "knowledgebase"] as const) : null,
      description: type === "video" ? null : `How to ${pick(TOPICS).toLowerCase()}.`,
      descriptionMd: type === "text" ? `## Steps\n1. Open the app\n2. ${pick(TOPICS)}` : null,
      parentId: random() < 0.3 ? pick(folders) : null,
      createdAt,
      updatedAt,
    });
    const tagCount = Math.floor(random() * 4);
    for (const tag of new Set(Array.from({ length: tagCount }, () => pick(tags)))) links.push({ contentId: id, tagId: tag.id });
  }

  const linksOf = new Map<string, Prisma.ContentTagCreateManyInput[]>();
  for (const l of links) linksOf.set(l.contentId, [...(linksOf.get(l.contentId) ?? []), l]);
  for (let i = 0; i < rows.length; i += BATCH) {
    const chunk = rows.slice(i, i + BATCH);
    await withTransaction(async (tx) => {
      await tx.content.createMany({ data: chunk });
      await tx.contentTag.createMany({ data: chunk.flatMap((r) => linksOf.get(r.id) ?? []) });
    });
    progress("contents", Math.min(i + BATCH, rows.length), rows.length);
  }
  return { accountId: BENCH_ACCOUNT, email: BENCH_EMAIL, key };
}
