// A segment evaluation for one end user in a constant number of statements on the driver
// (src/db/direct.ts), whatever the rule:
//   1. the values the rule reads: the user's values of the custom fields it names and, through a
//      join on the user's own value of each primary attribute it reaches through, the linked
//      records' secondary values; plus a marker row telling whether the user exists at all. The
//      field lists travel as parameters, so one prepared statement serves every rule; the rule is
//      then evaluated by the one evaluator (./rules.ts), with exactly its semantics (encrypted
//      values are decrypted first, which SQL could not do). When the request names the segment
//      and the end user together (B16, `segment(id) { contentOrder(endUserId) }`), the segment's
//      own row comes in the same statement, the field lists then read from its rule in SQL
//      (segmentWithValues): a round trip less on every page view (and, behind a pooler, a hop
//      less). Otherwise the segment's row is a statement of its own (segmentRow);
//   2. the segment's content in order, with its tags and, per content, whether the user completed
//      it (a flow_completed or task_completed event), in one statement.
import { columnNames } from "../../db/columns.js";
import { asPrismaRow, type DirectQuery, dateOf, directDialect, directRead } from "../../db/direct.js";
import { contentColumnsSql, type TagColumns, tagsJsonSql } from "../content/page.js";
import { decodeValue, type StoredValue } from "../endUsers/fields.js";
import { completionTypeSql } from "./progress.js";
import { fieldsOf, type Rule } from "./rules.js";

type Row = Record<string, unknown>;

/** A segment's row as Prisma returns it (a type, not an interface: a Record of its columns too). */
export type SegmentRow = {
  id: string;
  accountId: string;
  name: string;
  rule: string;
  createdAt: Date;
  updatedAt: Date;
};

/** The segment's row, every column of the schema (src/db/columns.ts); built on first use. */
let segment: { name: string; sqlite: string; postgres: string } | undefined;
function segmentStatement() {
  const columns = columnNames("Segment")
    .map((c) => `"${c}"`)
    .join(", ");
  segment ??= {
    name: "segment_row",
    sqlite: `SELECT ${columns} FROM "Segment" WHERE "id" = ? AND "accountId" = ?`,
    postgres: `SELECT ${columns} FROM "Segment" WHERE "id" = $1 AND "accountId" = $2`,
  };
  return segment;
}

/** The account's segment `id` as Prisma returns it (null: none), for reads of its own fields. */
export async function segmentRow(accountId: string, id: string) {
  const [row] = await directRead<SegmentRow>(segmentStatement(), [id, accountId]);
  return row ? asPrismaRow("Segment", row) : null;
}

type Dialect = "sqlite" | "postgres";

/**
 * The end user ("u") and their value rows ("v": `src`, `field` and the typed columns), for the
 * field lists of a CTE "f" before it (`kind` custom or attribute, `name`): a marker row 'x' when the
 * user exists, their values of the named fields ('c'; every name, the primaries' included), and
 * the secondary values of the records their string value of each attribute's primary links to ('a').
 */
function userValuesSql(dialect: Dialect, userWhere: string): string {
  const cast = (type: string) => (dialect === "postgres" ? `NULL::${type}` : "NULL");
  return `u AS (SELECT eu."id", eu."accountId" FROM "EndUser" eu WHERE ${userWhere}),
    v AS (
      SELECT 'x' AS "src", NULL AS "field", NULL AS "type", NULL AS "text", ${cast("double precision")} AS "num", ${cast("boolean")} AS "bool", ${cast("timestamp(3)")} AS "time" FROM u
      UNION ALL
      SELECT 'c', ev."field", ev."type", ev."text", ev."num", ev."bool", ev."time"
        FROM u JOIN "EndUserValue" ev ON ev."endUserId" = u."id" WHERE ev."field" IN (SELECT f."name" FROM f)
      UNION ALL
      SELECT 'a', r."attributeName" || '.' || rv."name", rv."type", rv."text", rv."num", rv."bool", rv."time"
        FROM u JOIN "EndUserValue" p ON p."endUserId" = u."id" AND p."type" = 'string' AND p."field" IN (SELECT f."name" FROM f WHERE f."kind" = 'attribute')
        JOIN "AttributeRecord" r ON r."accountId" = u."accountId" AND r."attributeName" = p."field" AND r."attributeValue" = p."text"
        JOIN "AttributeRecordValue" rv ON rv."recordId" = r."id")`;
}

/** A rule's values for one user, the field lists as parameters (custom fields, primaries). */
const VALUES: DirectQuery = {
  name: "segment_values",
  sqlite: `WITH f AS (SELECT 'custom' AS "kind", value AS "name" FROM json_each(?) UNION ALL SELECT 'attribute', value FROM json_each(?)),
    ${userValuesSql("sqlite", 'eu."accountId" = ? AND eu."externalId" = ?')}
    SELECT v.* FROM v`,
  sqliteArgs: [2, 3, 0, 1],
  postgres: `WITH f AS (SELECT 'custom' AS "kind", n AS "name" FROM unnest($3::text[]) n UNION ALL SELECT 'attribute', n FROM unnest($4::text[]) n),
    ${userValuesSql("postgres", 'eu."accountId" = $1 AND eu."externalId" = $2')}
    SELECT v.* FROM v`,
};

/** What a rule reads for one user: a function from rule paths to values, and the records to read apart. */
export interface RuleValues {
  read: (path: string) => unknown;
  unlinked: { primary: string; value: unknown }[];
}

/** The primary attributes a rule reaches through (`attribute.<primary>.<secondary>`). */
const primariesOf = (rule: Rule) => [...new Set(fieldsOf(rule).flatMap((r) => (r.kind === "attribute" ? [r.primary] : [])))];

/**
 * What a rule reads for one user, in one statement: a function from rule paths to values, or null
 * when the account has no such user. Primary attributes held in a field that is not a plain string
 * (a number, a timestamp, encrypted text) cannot be joined on in SQL: their records are returned
 * as `unlinked` for the caller to read (none in the shipped schemas' usual rules).
 */
export async function ruleValues(accountId: string, endUserId: string, rule: Rule): Promise<RuleValues | null> {
  const refs = fieldsOf(rule);
  const custom = [...new Set(refs.flatMap((r) => (r.kind === "custom" ? [r.name] : [r.primary])))];
  const primaries = primariesOf(rule);
  const dialect = directDialect();
  const rows = await directRead<Row>(VALUES, [
    accountId,
    endUserId,
    dialect === "postgres" ? custom : JSON.stringify(custom),
    dialect === "postgres" ? primaries : JSON.stringify(primaries),
  ]);
  return valuesOf(rows, primaries);
}

/** Value rows (userValuesSql's `v`) as RuleValues; null without the user's marker row. */
function valuesOf(rows: Row[], primaries: string[]): RuleValues | null {
  if (!rows.some((r) => r.src === "x")) return null;
  const values = new Map<string, unknown>();
  const types = new Map<string, string>();
  for (const r of rows) {
    if (r.src !== "c" && r.src !== "a") continue;
    const stored = {
      type: r.type,
      text: r.text ?? null,
      num: r.num ?? null,
      bool: r.bool == null ? null : Boolean(r.bool),
      time: r.time == null ? null : dateOf(r.time),
    } as StoredValue;
    const key = `${r.src === "c" ? "custom" : "attribute"}.${r.field}`;
    values.set(key, decodeValue(stored));
    if (r.src === "c") types.set(String(r.field), String(r.type));
  }
  const unlinked = primaries
    .filter((p) => types.has(p) && types.get(p) !== "string")
    .map((primary) => ({ primary, value: values.get(`custom.${primary}`) }))
    .filter((l) => l.value !== undefined && l.value !== null);
  return { read: (path) => values.get(path), unlinked };
}

/**
 * The segment's row and the end user's values for what its rule reads, in one statement: the
 * rule's field paths (`custom.<field>`, `attribute.<primary>.<secondary>`) are read from its JSON
 * in SQL (PostgreSQL's JSON path `$.**.field`, SQLite's json_tree), split at their dots as
 * fieldsOf does, and take the place of VALUES' parameter lists. Every row carries the segment's
 * columns (none: no such segment), joined to the value rows (a row with `src` null: the segment
 * exists and the account has no such user).
 */
let segmentValues: DirectQuery | undefined;
function segmentValuesStatement(): DirectQuery {
  if (segmentValues) return segmentValues;
  const columns = columnNames("Segment")
    .map((c) => `"${c}"`)
    .join(", ");
  segmentValues = {
    name: "segment_with_values",
    postgres: `WITH s AS (SELECT ${columns} FROM "Segment" WHERE "id" = $1 AND "accountId" = $2),
    f AS (SELECT split_part(x."path", '.', 1) AS "kind", split_part(x."path", '.', 2) AS "name"
      FROM s, LATERAL (SELECT j #>> '{}' AS "path" FROM jsonb_path_query(s."rule"::jsonb, 'lax $.**.field') j WHERE jsonb_typeof(j) = 'string') x),
    ${userValuesSql("postgres", 'eu."accountId" = $2 AND eu."externalId" = $3')}
    SELECT s.*, v.* FROM s LEFT JOIN v ON TRUE`,
    sqlite: `WITH s AS (SELECT ${columns} FROM "Segment" WHERE "id" = ? AND "accountId" = ?),
    f AS (SELECT x."kind", CASE WHEN instr(x."rest", '.') > 0 THEN substr(x."rest", 1, instr(x."rest", '.') - 1) ELSE x."rest" END AS "name"
      FROM (SELECT substr(t."value", 1, instr(t."value", '.') - 1) AS "kind", substr(t."value", instr(t."value", '.') + 1) AS "rest"
        FROM s, json_tree(s."rule") t WHERE t."key" = 'field' AND t."type" = 'text') x),
    ${userValuesSql("sqlite", 'eu."accountId" = ? AND eu."externalId" = ?')}
    SELECT s.*, v.* FROM s LEFT JOIN v ON TRUE`,
    sqliteArgs: [0, 1, 1, 2],
  };
  return segmentValues;
}

/**
 * The account's segment `id` as Prisma returns it (null: none) and, when it exists, what its rule
 * reads for the end user (null: the account has no such user), in one statement.
 */
export async function segmentWithValues(accountId: string, id: string, endUserId: string): Promise<{ segment: SegmentRow; values: RuleValues | null } | null> {
  const rows = await directRead<Row>(segmentValuesStatement(), [id, accountId, endUserId]);
  const first = rows[0];
  if (!first) return null;
  const segment = asPrismaRow("Segment", Object.fromEntries(columnNames("Segment").map((c) => [c, first[c]]))) as SegmentRow;
  return { segment, values: valuesOf(rows, primariesOf(JSON.parse(segment.rule) as Rule)) };
}

/** Adds the values of records linked through non-string primaries (a second statement, rare). */
export function withLinked(read: (path: string) => unknown, linked: Map<string, unknown>): (path: string) => unknown {
  return (path) => (path.startsWith("attribute.") && linked.has(path.slice("attribute.".length)) ? linked.get(path.slice("attribute.".length)) : read(path));
}

function contentSql(dialect: "sqlite" | "postgres", tagColumns: TagColumns): string {
  const p = (n: number) => (dialect === "postgres" ? `$${n}` : "?");
  const tags = tagColumns ? `${tagsJsonSql(dialect, "c", tagColumns)} AS "tags",` : "";
  // The segment's rows first (a CTE), then their tags and the user's completions: one statement.
  return `WITH c AS (SELECT ${contentColumnsSql(dialect, "x")}, sc."position" FROM "SegmentContent" sc JOIN "Content" x ON x."id" = sc."contentId" WHERE sc."segmentId" = ${p(1)})
    SELECT c.*, ${tags}
    EXISTS (SELECT 1 FROM "Event" e WHERE e."accountId" = ${p(2)} AND e."flowId" = c."id" AND ${completionTypeSql("e")} AND e."endUserId" = ${p(3)}) AS "done"
    FROM c ORDER BY c."position"`;
}

/** The content statement per set of tag columns (a handful in practice). */
const contentStatements = new Map<string, { name: string; sqlite: string; postgres: string }>();
function contentStatement(tags: TagColumns) {
  const key = tags ? tags.join(",") : "";
  let statement = contentStatements.get(key);
  if (!statement) {
    statement = { name: `segment_content_${tags ? tags.join("_") : "no_tags"}`, sqlite: contentSql("sqlite", tags), postgres: contentSql("postgres", tags) };
    contentStatements.set(key, statement);
  }
  return statement;
}

/**
 * The segment's content in its order for a user who matches, completed content moved after the
 * rest (each part keeping the segment's order), rows as Prisma returns them with their `tags` (Tag
 * rows by name, with the `tags` columns) when asked.
 */
export async function orderedContentFor(segmentId: string, accountId: string, endUserId: string, tags: TagColumns): Promise<Row[]> {
  const rows = await directRead<Row>(contentStatement(tags), [segmentId, accountId, endUserId]);
  const shaped = rows.map((r): Row & { id: string } => {
    const { done: _done, tags: tagsJson, position: _position, ...content } = r;
    return {
      ...asPrismaRow("Content", content),
      id: String(r.id),
      ...(tags ? { tags: JSON.parse(tagsJson as string) } : {}),
    };
  });
  const done = new Set(rows.filter((r) => Boolean(r.done)).map((r) => r.id));
  return done.size ? [...shaped.filter((c) => !done.has(c.id)), ...shaped.filter((c) => done.has(c.id))] : shaped;
}
