// Tag fixtures, written straight to the database through the audited transaction every write takes:
// many at once (seedTags) or one (makeTag).
import { withTransaction } from "../../src/db/index.js";
import { newId } from "../../src/ids.js";
import { pad } from "./values.js";

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

/** One tag of the account. */
export async function makeTag(accountId: string, name: string, type: "USER" | "PAGE" | "ROLE" = "USER", description: string | null = null) {
  return withTransaction((tx) => tx.tag.create({ data: { id: newId("t"), accountId, name, type, description } }));
}
