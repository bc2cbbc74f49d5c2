// Content fixtures, written straight to the database through the audited transaction every write
// takes (for rows the REST layer cannot write): many at once (seedContents: fixed creation times a
// minute apart, update times in a seeded shuffled order, 2-3 seeded tags per content), or one
// (makeContent).
import { withTransaction } from "../../src/db/index.js";
import { newId } from "../../src/ids.js";
import { seeded } from "../../src/seed/random.js";
import type { TagRow } from "./tags.js";
import { MINUTE, pad, T0 } from "./values.js";

export interface ContentRow {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  tags: TagRow[];
}

export async function seedContents(accountId: string, count: number, tags: TagRow[], seed = 1): Promise<ContentRow[]> {
  const rand = seeded(seed);
  const updateOrder = rand.shuffle(Array.from({ length: count }, (_, i) => i));
  const rows: ContentRow[] = Array.from({ length: count }, (_, i) => ({
    id: `${accountId}-c-${pad(i)}`,
    title: `Content ${pad(i)}`,
    createdAt: T0 + i * MINUTE,
    updatedAt: T0 + 1_000 * MINUTE + updateOrder[i]! * MINUTE,
    tags: tags.length ? rand.sample(tags, Math.min(tags.length, 2 + rand.int(2))) : [],
  }));
  const links = rows.flatMap((r) => r.tags.map((t) => ({ contentId: r.id, tagId: t.id })));
  await withTransaction(async (tx) => {
    await tx.content.createMany({
      data: rows.map((r) => ({ id: r.id, accountId, title: r.title, type: "text", createdAt: new Date(r.createdAt), updatedAt: new Date(r.updatedAt) })),
    });
    if (links.length) await tx.contentTag.createMany({ data: links });
  });
  return rows;
}

/** One content row of the account (types, states and times the REST layer cannot write). */
export async function makeContent(accountId: string, data: { title?: string; type?: string; state?: string; createdAt?: Date; updatedAt?: Date } = {}) {
  const state = data.state ?? "draft";
  const createdAt = data.createdAt ?? new Date();
  return withTransaction((tx) =>
    tx.content.create({
      data: {
        id: newId("c"),
        accountId,
        title: data.title ?? "seeded",
        type: data.type ?? "text",
        state,
        stage: state === "production" ? "production" : "design",
        createdAt,
        updatedAt: data.updatedAt ?? createdAt,
      },
    }),
  );
}
