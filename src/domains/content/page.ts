// A page of the account's content with each content's tags, in ONE statement on the driver
// (src/db/direct.ts): the tags are aggregated in SQL (json_group_array on SQLite, json_agg on
// PostgreSQL) and every row comes back as Prisma would shape it for the selection
// `{ include: { tags: { select: { tag: true } } } }`, so Content.tags resolves from the row itself,
// synchronously. Rows are ordered by (createdAt or updatedAt, id), keyset after the cursor.
import { createHash } from "node:crypto";
import { dateOf, directDialect, directRead, storedDate } from "../../db/direct.js";

export interface ContentPageFilter {
  state?: string[] | null;
  stage?: string | null;
  type?: string | null;
  createdAfter?: Date | null;
  updatedAfter?: Date | null;
  tagId?: string | null;
  tagName?: string | null;
  parentId?: string | null;
}

/** The Content columns a page row carries (what Prisma's findMany returns). */
export const CONTENT_COLUMNS = [
  "id",
  "accountId",
  "title",
  "type",
  "url",
  "source",
  "description",
  "descriptionMd",
  "state",
  "stage",
  "parentId",
  "ownerId",
  "createdAt",
  "updatedAt",
];
const TAG_COLUMNS = ["id", "accountId", "name", "description", "type", "createdAt", "updatedAt"];

type Row = Record<string, unknown>;
const q = (c: string) => `"${c}"`;

/** The tags of the content row `alias` as one JSON array of Tag rows (a correlated subquery). */
export function tagsJsonSql(dialect: "sqlite" | "postgres", alias: string): string {
  const tagObject = `${dialect === "postgres" ? "json_build_object" : "json_object"}(${TAG_COLUMNS.map((c) => `'${c}', t.${q(c)}`).join(", ")})`;
  return dialect === "postgres"
    ? `COALESCE((SELECT json_agg(${tagObject}) FROM "ContentTag" ct JOIN "Tag" t ON t."id" = ct."tagId" WHERE ct."contentId" = ${alias}."id"), '[]')::text`
    : `(SELECT json_group_array(${tagObject}) FROM "ContentTag" ct JOIN "Tag" t ON t."id" = ct."tagId" WHERE ct."contentId" = ${alias}."id")`;
}

/** A tags JSON array from tagsJsonSql() in Prisma's include shape: `[{ tag: Tag }]`, dates as Dates. */
export function tagsInIncludeShape(json: string): { tag: Row }[] {
  return (JSON.parse(json) as Row[]).map((t) => ({ tag: { ...t, createdAt: dateOf(t.createdAt), updatedAt: dateOf(t.updatedAt) } }));
}

/**
 * A DateTime column as epoch milliseconds, exactly: SQLite stores Prisma's ISO text
 * (`2026-01-01T00:00:00.000+00:00`): whole seconds by strftime, milliseconds from the text.
 */
export const epochMs = (dialect: "sqlite" | "postgres", column: string) =>
  dialect === "postgres"
    ? `(extract(epoch from ${column}) * 1000)::float8`
    : `(CAST(strftime('%s', ${column}) AS INTEGER) * 1000 + CAST(substr(${column}, 21, 3) AS INTEGER))`;

/** The statement for one combination of filters (a prepared statement per combination, a handful in practice). */
function statement(dialect: "sqlite" | "postgres", f: ContentPageFilter, field: "createdAt" | "updatedAt", after: boolean, withTags: boolean) {
  const params: string[] = [];
  let n = 0;
  const p = () => (dialect === "postgres" ? `$${++n}` : "?");
  const where = [`c."accountId" = ${p()}`];
  params.push("accountId");
  if (f.state?.length) {
    where.push(`c."state" IN (${f.state.map(() => p()).join(", ")})`);
    params.push(...f.state.map((_, i) => `state.${i}`));
  }
  for (const k of ["stage", "type", "parentId"] as const) {
    if (f[k]) {
      where.push(`c.${q(k)} = ${p()}`);
      params.push(k);
    }
  }
  if (f.createdAfter) {
    where.push(`c."createdAt" > ${p()}`);
    params.push("createdAfter");
  }
  if (f.updatedAfter) {
    where.push(`c."updatedAt" > ${p()}`);
    params.push("updatedAfter");
  }
  if (f.tagId) {
    where.push(`EXISTS (SELECT 1 FROM "ContentTag" x WHERE x."contentId" = c."id" AND x."tagId" = ${p()})`);
    params.push("tagId");
  }
  if (f.tagName) {
    where.push(`EXISTS (SELECT 1 FROM "ContentTag" x JOIN "Tag" y ON y."id" = x."tagId" WHERE x."contentId" = c."id" AND y."name" = ${p()})`);
    params.push("tagName");
  }
  if (after) {
    const [a, b, id] = [p(), p(), p()];
    where.push(`(c.${q(field)} > ${a} OR (c.${q(field)} = ${b} AND c."id" > ${id}))`);
    params.push("after.sort", "after.sort", "after.id");
  }
  const tags = withTags ? `, ${tagsJsonSql(dialect, "c")} AS "tags"` : "";
  // The page is chosen first (a CTE), then its rows' tags are aggregated: one statement either way.
  // Times leave the database as epoch ms: parsing 2,000 ISO strings a page cost more than the read.
  const columns = CONTENT_COLUMNS.map((col) =>
    col === "createdAt" || col === "updatedAt" ? `${epochMs(dialect, `c.${q(col)}`)} AS ${q(col)}` : `c.${q(col)}`,
  );
  const sql =
    `WITH c AS (SELECT ${columns.join(", ")} FROM "Content" c WHERE ${where.join(" AND ")} ` +
    `ORDER BY c.${q(field)}, c."id" LIMIT ${p()}) SELECT c.*${tags} FROM c ORDER BY c.${q(field)}, c."id"`;
  params.push("take");
  return { sql, params };
}

const cache = new Map<string, { name: string; sqlite: string; postgres: string; params: string[] }>();

/**
 * The rows of one page (`take` rows after `after`), each with `tags` in Prisma's include shape when
 * `withTags`. Dates are Dates, as Prisma returns them.
 */
export async function contentPage(
  accountId: string,
  f: ContentPageFilter,
  field: "createdAt" | "updatedAt",
  after: { sort: Date; id: string } | null,
  take: number,
  withTags: boolean,
): Promise<Row[]> {
  const dialect = directDialect();
  const key = JSON.stringify([
    dialect,
    Boolean(f.state?.length) && f.state!.length,
    !!f.stage,
    !!f.type,
    !!f.parentId,
    !!f.createdAfter,
    !!f.updatedAfter,
    !!f.tagId,
    !!f.tagName,
    field,
    !!after,
    withTags,
  ]);
  let stmt = cache.get(key);
  if (!stmt) {
    const { sql, params } = statement(dialect, f, field, after !== null, withTags);
    stmt = { name: `content_page_${createHash("sha1").update(sql).digest("hex").slice(0, 16)}`, sqlite: sql, postgres: sql, params };
    cache.set(key, stmt);
  }
  const values = stmt.params.map((name) => {
    if (name.startsWith("state.")) return f.state![Number(name.slice(6))];
    switch (name) {
      case "accountId":
        return accountId;
      case "createdAfter":
        return storedDate(f.createdAfter!);
      case "updatedAfter":
        return storedDate(f.updatedAfter!);
      case "after.sort":
        return storedDate(after!.sort);
      case "after.id":
        return after!.id;
      case "take":
        return take;
      default:
        return f[name as "stage" | "type" | "parentId" | "tagId" | "tagName"];
    }
  });
  const rows = await directRead<Row>(stmt, values);
  for (const r of rows) {
    r.createdAt = new Date(Number(r.createdAt));
    r.updatedAt = new Date(Number(r.updatedAt));
    if (withTags) r.tags = tagsInIncludeShape(r.tags as string);
  }
  return rows;
}
