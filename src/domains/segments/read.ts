// A segment evaluation for one end user in a constant number of statements on the driver
// (src/db/direct.ts), whatever the rule: after the segment's own row (segmentRow),
//   1. the values the rule reads: the user's values of the custom fields it names and, through a
//      join on the user's own value of each primary attribute it reaches through, the linked
//      records' secondary values; plus a marker row telling whether the user exists at all. The
//      field lists travel as parameters, so one prepared statement serves every rule; the rule is
//      then evaluated by the one evaluator (./rules.ts), with exactly its semantics (encrypted
//      values are decrypted first, which SQL could not do);
//   2. the segment's content in order, with its tags and, per content, whether the user completed
//      it (a flow_completed or task_completed event), in one statement.
import { columnNames } from "../../db/columns.js";
import { asPrismaRow, dateOf, directDialect, directRead } from "../../db/direct.js";
import { contentColumnsSql, type TagColumns, tagsJsonSql } from "../content/page.js";
import { decodeValue, type StoredValue } from "../endUsers/fields.js";
import { completionTypeSql } from "./progress.js";
import { fieldsOf, type Rule } from "./rules.js";

type Row = Record<string, unknown>;

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
  const [row] = await directRead<{ id: string; accountId: string; name: string; rule: string; createdAt: Date; updatedAt: Date }>(segmentStatement(), [
    id,
    accountId,
  ]);
  return row ? asPrismaRow("Segment", row) : null;
}

const VALUES = {
  name: "segment_values",
  sqlite: `SELECT 'x' AS "src", NULL AS "name", NULL AS "type", NULL AS "text", NULL AS "num", NULL AS "bool", NULL AS "time"
      FROM "EndUser" u WHERE u."accountId" = ? AND u."externalId" = ?
    UNION ALL
    SELECT 'c', v."field", v."type", v."text", v."num", v."bool", v."time"
      FROM "EndUser" u JOIN "EndUserValue" v ON v."endUserId" = u."id"
      WHERE u."accountId" = ? AND u."externalId" = ? AND v."field" IN (SELECT value FROM json_each(?))
    UNION ALL
    SELECT 'a', r."attributeName" || '.' || rv."name", rv."type", rv."text", rv."num", rv."bool", rv."time"
      FROM "EndUser" u JOIN "EndUserValue" p ON p."endUserId" = u."id" AND p."type" = 'string' AND p."field" IN (SELECT value FROM json_each(?))
      JOIN "AttributeRecord" r ON r."accountId" = u."accountId" AND r."attributeName" = p."field" AND r."attributeValue" = p."text"
      JOIN "AttributeRecordValue" rv ON rv."recordId" = r."id"
      WHERE u."accountId" = ? AND u."externalId" = ?`,
  sqliteArgs: [0, 1, 0, 1, 2, 3, 0, 1],
  postgres: `SELECT 'x' AS "src", NULL AS "name", NULL AS "type", NULL AS "text", NULL::double precision AS "num", NULL::boolean AS "bool", NULL::timestamp(3) AS "time"
      FROM "EndUser" u WHERE u."accountId" = $1 AND u."externalId" = $2
    UNION ALL
    SELECT 'c', v."field", v."type", v."text", v."num", v."bool", v."time"
      FROM "EndUser" u JOIN "EndUserValue" v ON v."endUserId" = u."id"
      WHERE u."accountId" = $1 AND u."externalId" = $2 AND v."field" = ANY($3::text[])
    UNION ALL
    SELECT 'a', r."attributeName" || '.' || rv."name", rv."type", rv."text", rv."num", rv."bool", rv."time"
      FROM "EndUser" u JOIN "EndUserValue" p ON p."endUserId" = u."id" AND p."type" = 'string' AND p."field" = ANY($4::text[])
      JOIN "AttributeRecord" r ON r."accountId" = u."accountId" AND r."attributeName" = p."field" AND r."attributeValue" = p."text"
      JOIN "AttributeRecordValue" rv ON rv."recordId" = r."id"
      WHERE u."accountId" = $1 AND u."externalId" = $2`,
};

/**
 * What a rule reads for one user, in one statement: a function from rule paths to values, or null
 * when the account has no such user. Primary attributes held in a field that is not a plain string
 * (a number, a timestamp, encrypted text) cannot be joined on in SQL: their records are returned
 * as `unlinked` for the caller to read (none in the shipped schemas' usual rules).
 */
export async function ruleValues(
  accountId: string,
  endUserId: string,
  rule: Rule,
): Promise<{ read: (path: string) => unknown; unlinked: { primary: string; value: unknown }[] } | null> {
  const refs = fieldsOf(rule);
  const custom = [...new Set(refs.flatMap((r) => (r.kind === "custom" ? [r.name] : [r.primary])))];
  const primaries = [...new Set(refs.flatMap((r) => (r.kind === "attribute" ? [r.primary] : [])))];
  const dialect = directDialect();
  const rows = await directRead<Row>(VALUES, [
    accountId,
    endUserId,
    dialect === "postgres" ? custom : JSON.stringify(custom),
    dialect === "postgres" ? primaries : JSON.stringify(primaries),
  ]);
  if (!rows.some((r) => r.src === "x")) return null;
  const values = new Map<string, unknown>();
  const types = new Map<string, string>();
  for (const r of rows) {
    if (r.src === "x") continue;
    const stored = {
      type: r.type,
      text: r.text ?? null,
      num: r.num ?? null,
      bool: r.bool == null ? null : Boolean(r.bool),
      time: r.time == null ? null : dateOf(r.time),
    } as StoredValue;
    const key = `${r.src === "c" ? "custom" : "attribute"}.${r.name}`;
    values.set(key, decodeValue(stored));
    if (r.src === "c") types.set(String(r.name), String(r.type));
  }
  const unlinked = primaries
    .filter((p) => types.has(p) && types.get(p) !== "string")
    .map((primary) => ({ primary, value: values.get(`custom.${primary}`) }))
    .filter((l) => l.value !== undefined && l.value !== null);
  return { read: (path) => values.get(path), unlinked };
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
