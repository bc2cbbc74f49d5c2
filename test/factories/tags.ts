// Tag fixtures, written with createMany (through the audited transaction every write takes).
import { withTransaction } from "../../src/db/index.js";
import { pad } from "./random.js";

export interface TagRow {
  id: string;
  name: string;
}

/** `count` tags named `${prefix}-000`, `${prefix}-001`, ... (name order = index order). */
export async function seedTags(accountId: string, count: number, prefix = "tag"): Promise<TagRow[]> {
  const rows = Array.from({ length: count }, (_, i) => ({ id: `${accountId}-${prefix}-${pad(i)}`, name: `${prefix}-${pad(i)}` }));
  await withTransaction((tx) => tx.tag.createMany({ data: rows.map((r) => ({ ...r, accountId })) }));
  return rows;
}
