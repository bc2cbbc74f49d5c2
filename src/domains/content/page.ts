// A page of the account's content with each content's tags, in ONE statement on the driver
// (src/db/direct.ts): the tags are aggregated in SQL (json_group_array on SQLite, json_agg on
// PostgreSQL) into the `tags` the row carries, so Content.tags resolves from the row itself,
// synchronously. The other columns are what Prisma's findMany returns. Rows are ordered by
// (createdAt or updatedAt, id), keyset after the cursor.
import { createHash } from "node:crypto";
import type { GraphQLResolveInfo } from "graphql";
import { epochMs, modelColumns } from "../../db/columns.js";
import { asPrismaRow, directDialect, directRead, storedDate } from "../../db/direct.js";
import { selectsChild } from "../../schema/selection.js";

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

/**
 * The Tag columns a read carries with each content's tags, from what the document selects: null
 * when it does not select `tags`; otherwise id and name (Content.tags orders by name, a tag's
 * other fields are keyed by id) and those of the Tag fields that read a column of their own. Building
 * the JSON of the unselected columns was a fifth of a 1,000-row page's SQL time.
 */
export type TagColumns = readonly string[] | null;
const OPTIONAL_TAG_COLUMNS = ["description", "type"] as const;
export function tagColumnsFor(info: GraphQLResolveInfo, paths: readonly (readonly string[])[]): TagColumns {
  if (!selectsChild(info, paths, "tags")) return null;
  const tags = paths.map((path) => [...path, "tags"]);
  return ["id", "name", ...OPTIONAL_TAG_COLUMNS.filter((column) => selectsChild(info, tags, column))];
}

type Row = Record<string, unknown>;
const q = (c: string) => `"${c}"`;

/**
 * The tags of the content row `alias` as one JSON array of Tag rows, by name (a correlated subquery).
 * Byte order on both databases (SQLite's BINARY, PostgreSQL's "C"); Content.tags checks it against
 * JavaScript's order, which differs only past U+FFFF.
 */
export function tagsJsonSql(dialect: "sqlite" | "postgres", alias: string, columns: readonly string[]): string {
  const tagObject = `${dialect === "postgres" ? "json_build_object" : "json_object"}(${columns.map((c) => `'${c}', t.${q(c)}`).join(", ")})`;
  const from = `FROM "ContentTag" ct JOIN "Tag" t ON t."id" = ct."tagId" WHERE ct."contentId" = ${alias}."id"`;
  return dialect === "postgres"
    ? `COALESCE((SELECT json_agg(${tagObject} ORDER BY t."name" COLLATE "C") ${from}), '[]')::text`
    : `(SELECT json_group_array(${tagObject} ORDER BY t."name") ${from})`;
}

/**
 * Every Content column of the schema (./columns.ts), as Prisma's findMany returns them once
 * asPrismaRow has converted the row: DateTime columns leave the database as epoch ms (parsing 2,000
 * ISO strings a page cost more than the read).
 */
export function contentColumnsSql(dialect: "sqlite" | "postgres", alias: string): string {
  return modelColumns("Content")
    .map(({ name, type }) => (type === "DateTime" ? `${epochMs(dialect, `${alias}.${q(name)}`)} AS ${q(name)}` : `${alias}.${q(name)}`))
    .join(", ");
}

/** The statement for one combination of filters (a prepared statement per combination, a handful in practice). */
function statement(dialect: "sqlite" | "postgres", f: ContentPageFilter, field: "createdAt" | "updatedAt", after: boolean, tags: TagColumns) {
  const params: string[] = [];
  let n = 0;
  const p = () => (dialect === "postgres" ? `$${++n}` : "?");
  const where = [`c."accountId" = ${p()}`];
  params.push("accountId");
  if (f.state?.length) {
    // One parameter whatever the list's length: the SQL text (and so the prepared statements and
    // this module's cache) must not grow with what a client sends.
    where.push(dialect === "postgres" ? `c."state" = ANY(${p()}::text[])` : `c."state" IN (SELECT value FROM json_each(${p()}))`);
    params.push("state");
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
  const tagsColumn = tags ? `, ${tagsJsonSql(dialect, "c", tags)} AS "tags"` : "";
  // The page is chosen first (a CTE), then its rows' tags are aggregated: one statement either way.
  const sql =
    `WITH c AS (SELECT ${contentColumnsSql(dialect, "c")} FROM "Content" c WHERE ${where.join(" AND ")} ` +
    `ORDER BY c.${q(field)}, c."id" LIMIT ${p()}) SELECT c.*${tagsColumn} FROM c ORDER BY c.${q(field)}, c."id"`;
  params.push("take");
  return { sql, params };
}

/**
 * One statement per combination of which filters are present: bounded (2^9 × the sort, cursor and
 * tag-column choices, about 5,000), and clients choose among them, so only the first ones a process
 * runs get names on PostgreSQL (src/db/readFunctions.ts, MAX_NAMED_STATEMENTS).
 */
const cache = new Map<string, { name: string; sqlite: string; postgres: string; params: string[]; open: true }>();

/**
 * The rows of one page (`take` rows after `after`), each with its `tags` (Tag rows by name) when
 * `tags` names columns. Dates are Dates, as Prisma returns them.
 */
export async function contentPage(
  accountId: string,
  f: ContentPageFilter,
  field: "createdAt" | "updatedAt",
  after: { sort: Date; id: string } | null,
  take: number,
  tags: TagColumns,
): Promise<Row[]> {
  const dialect = directDialect();
  const key = JSON.stringify([
    dialect,
    !!f.state?.length,
    !!f.stage,
    !!f.type,
    !!f.parentId,
    !!f.createdAfter,
    !!f.updatedAfter,
    !!f.tagId,
    !!f.tagName,
    field,
    !!after,
    tags,
  ]);
  let stmt = cache.get(key);
  if (!stmt) {
    const { sql, params } = statement(dialect, f, field, after !== null, tags);
    stmt = { name: `content_page_${createHash("sha1").update(sql).digest("hex").slice(0, 16)}`, sqlite: sql, postgres: sql, params, open: true };
    cache.set(key, stmt);
  }
  const values = stmt.params.map((name) => {
    switch (name) {
      case "state":
        return dialect === "postgres" ? [...new Set(f.state)] : JSON.stringify([...new Set(f.state)]);
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
    asPrismaRow("Content", r);
    if (tags) r.tags = JSON.parse(r.tags as string);
  }
  return rows;
}
