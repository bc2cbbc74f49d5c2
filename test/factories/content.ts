// Content fixtures, written with createMany (through the audited transaction every write takes): fixed creation times a
// minute apart, update times in a seeded shuffled order, 2-3 seeded tags per content.
import { withTransaction } from "../../src/db/index.js";
import { MINUTE, pad, seeded, T0 } from "./random.js";
import type { TagRow } from "./tags.js";

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
