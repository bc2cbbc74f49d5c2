// The bench data set: one account, its user and integration key, ~20 tags and N contents of mixed
// types with 0-3 tags each; for B14 and B16, 200 end users with custom values of every field type
// (one encrypted_string), the demo's integration attributes and 'EMEA gold' segment
// (src/seed/segments.ts: the first user by id is acme/gold and matches it) with 20 contents, and
// completion events of the measured user for some of them. Deterministic (seeded generator), and written with createMany in large
// batches because the admin/GraphQL write paths would make seeding slower than the bench itself.
// Writes go through withTransaction like every write of the service (the client refuses unaudited
// writes), so the seed also leaves one audit entry per record, as real data would have.
import { createAccount, createKey, createUser } from "../src/admin.js";
import { encrypt } from "../src/crypto.js";
import { withTransaction } from "../src/db/index.js";
import type { Prisma } from "../src/generated/sqlite/client.js";
import { newId } from "../src/ids.js";
import { consoleProgress } from "../src/seed/progress.js";
import { rng } from "../src/seed/random.js";
import { seedDemoSegments } from "../src/seed/segments.js";

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
  /** The end user B14 and B16 read: matches the segment, has completed some of its content. */
  endUserId: string;
  segmentId: string;
}

const END_USERS = 200;
const SEGMENT_CONTENTS = 20;

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
  const contentIds = rows.filter((r) => r.type !== "folder").map((r) => r.id);
  const { endUserId, segmentId } = await seedEndUsersAndSegment(contentIds, base);
  progress("end users and segment", 1, 1);
  return { accountId: BENCH_ACCOUNT, email: BENCH_EMAIL, key, endUserId, segmentId };
}

const stored = { text: null, num: null, bool: null, time: null };

/**
 * End users, their values, the demo's attribute records and segment (reused from the demo seed),
 * and completion events. Every user's values are written in field-name order (company, plan by the
 * demo seed, then score, signupTime, taxId, trial), so the order a database returns them in without
 * an ORDER BY is the name order too.
 */
async function seedEndUsersAndSegment(contentIds: string[], base: number): Promise<{ endUserId: string; segmentId: string }> {
  const accountId = BENCH_ACCOUNT;
  const users = Array.from({ length: END_USERS }, (_, i) => {
    const at = new Date(base + i * 1_000);
    return { id: newId("u"), accountId, externalId: `user-${String(i).padStart(4, "0")}`, createdAt: at, updatedAt: new Date(at.getTime() + 5_000) };
  });
  await withTransaction(async (tx) => {
    await tx.endUserField.createMany({
      data: [
        { accountId, name: "score", type: "double", description: "Engagement score." },
        { accountId, name: "taxId", type: "encrypted_string", description: "Tax id (encrypted at rest)." },
        { accountId, name: "trial", type: "boolean", description: "On a trial." },
      ],
    });
    await tx.endUser.createMany({ data: users });
  });
  // The attribute schema and company records, each user's company and plan, the segment (5 contents).
  await seedDemoSegments(accountId, contentIds);
  const segmentId = await withTransaction(async (tx) => {
    await tx.endUserValue.createMany({
      data: users.flatMap((u, i) => [
        { endUserId: u.id, accountId, field: "score", type: "double", ...stored, num: ((i * 37) % 1000) / 8 },
        { endUserId: u.id, accountId, field: "signupTime", type: "timestamp", ...stored, time: new Date(base - i * 86_400_000) },
        { endUserId: u.id, accountId, field: "taxId", type: "encrypted_string", ...stored, text: encrypt(`TX-${1000 + i}`) },
        { endUserId: u.id, accountId, field: "trial", type: "boolean", ...stored, bool: i % 2 === 0 },
      ]),
    });
    const segment = await tx.segment.findFirstOrThrow({ where: { accountId }, select: { id: true } });
    const have = await tx.segmentContent.count({ where: { segmentId: segment.id } });
    const more = contentIds.slice(have, SEGMENT_CONTENTS);
    await tx.segmentContent.createMany({ data: more.map((contentId, k) => ({ segmentId: segment.id, contentId, position: have + k })) });
    const inSegment = contentIds.slice(0, SEGMENT_CONTENTS);
    const [user, other] = [users[0]!.externalId, users[1]!.externalId];
    const event = (type: string, endUserId: string, flowId: string, k: number) => ({ accountId, type, time: BigInt(base + k * 60_000), endUserId, flowId });
    await tx.event.createMany({
      data: [
        // Completed by the measured user: these move after the rest (one of them twice).
        event("flow_completed", user, inSegment[1]!, 1),
        event("task_completed", user, inSegment[4]!, 2),
        event("flow_completed", user, inSegment[7]!, 3),
        event("flow_completed", user, inSegment[7]!, 4),
        // Not completions, or not this user's, or not the segment's content: no effect.
        event("flow_started", user, inSegment[0]!, 5),
        event("flow_completed", other, inSegment[2]!, 6),
        event("flow_completed", user, contentIds[SEGMENT_CONTENTS + 3]!, 7),
      ],
    });
    return segment.id;
  });
  return { endUserId: users[0]!.externalId, segmentId };
}
