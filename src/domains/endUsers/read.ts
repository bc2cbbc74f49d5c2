// One end user with the values and actions a selection asks for, in ONE statement on the driver
// (src/db/direct.ts): values and actions are aggregated in SQL and the row comes back as Prisma
// shapes it for `{ include: { values: true, actions: … } }`, so `custom`, `userActionCount` and
// `userActions` resolve from the row itself. What B14 (and every segment evaluation's user)
// reads on each page view of a customer's users.
import { columnNames } from "../../db/columns.js";
import { asPrismaRow, directDialect, directRead } from "../../db/direct.js";
import { compareCodePoints } from "../../text.js";

type Row = Record<string, unknown>;

/** `many`: the end users whose external ids are the second parameter (an array on PostgreSQL, JSON text on SQLite). */
function sql(dialect: "sqlite" | "postgres", values: boolean, actions: boolean, many: boolean): string {
  const obj = (cols: string[], alias: string) => `json_object(${cols.map((c) => `'${c}', ${alias}."${c}"`).join(", ")})`;
  // Ordered by key in code points: the same answer on both databases, whatever the insertion order.
  // SQLite reads them in that order from the primary key (BINARY is code point order for UTF-8).
  // PostgreSQL aggregates each end user's rows unordered, as whole rows of a subquery (json_agg of
  // a row, not json_build_object per row), and shaped() sorts them: an ORDER BY inside the
  // aggregate is a sort per end user, and with json_build_object it took ~30 µs an end user, 0.3 s
  // of a 10,000-user bulk write's reply; so ~15 µs.
  const agg = (table: string, alias: string, cols: string[], key: string) =>
    dialect === "postgres"
      ? `COALESCE((SELECT json_agg(s) FROM (SELECT ${cols.map((c) => `${alias}."${c}"`).join(", ")} FROM "${table}" ${alias} WHERE ${alias}."endUserId" = u."id") s), '[]')::text`
      : `(SELECT json_group_array(${obj(cols, "s")}) FROM (SELECT * FROM "${table}" ${alias} WHERE ${alias}."endUserId" = u."id" ORDER BY ${alias}."${key}") s)`;
  const p = (n: number) => (dialect === "postgres" ? `$${n}` : "?");
  // Every column of the three models (src/db/columns.ts): the rows Prisma's include would return.
  return (
    `SELECT ${columnNames("EndUser")
      .map((c) => `u."${c}"`)
      .join(", ")}` +
    (values ? `, ${agg("EndUserValue", "v", columnNames("EndUserValue"), "field")} AS "values"` : "") +
    (actions ? `, ${agg("EndUserAction", "a", columnNames("EndUserAction"), "actionId")} AS "actions"` : "") +
    ` FROM "EndUser" u WHERE u."accountId" = ${p(1)} AND ` +
    (!many
      ? `u."externalId" = ${p(2)}`
      : dialect === "postgres"
        ? `u."externalId" = ANY(CAST(${p(2)} AS TEXT[]))`
        : `u."externalId" IN (SELECT value FROM json_each(${p(2)}))`)
  );
}

const statements = new Map<string, { name: string; sqlite: string; postgres: string }>();

function statement(with_: { values: boolean; actions: boolean }, many: boolean) {
  const dialect = directDialect();
  const key = `${dialect}:${with_.values}:${with_.actions}:${many}`;
  let stmt = statements.get(key);
  if (!stmt) {
    const text = sql(dialect, with_.values, with_.actions, many);
    stmt = { name: `end_user${many ? "s" : ""}_${Number(with_.values)}${Number(with_.actions)}`, sqlite: text, postgres: text };
    statements.set(key, stmt);
  }
  return stmt;
}

/**
 * A row of the statement as Prisma returns it. SQLite's JSON has no booleans (0/1) and both carry
 * times as text: converted by column type. Values by field and actions by action id, in code points.
 */
function shaped(row: Row, with_: { values: boolean; actions: boolean }): Row {
  asPrismaRow("EndUser", row);
  if (with_.values)
    row.values = byKey(
      (JSON.parse(row.values as string) as Row[]).map((v) => asPrismaRow("EndUserValue", v)),
      "field",
    );
  if (with_.actions)
    row.actions = byKey(
      (JSON.parse(row.actions as string) as Row[]).map((a) => asPrismaRow("EndUserAction", a)),
      "actionId",
    );
  return row;
}

/** Lists up to this long are sorted by insertion; longer ones by Array.prototype.sort. */
const INSERTION_MAX = 32;

/**
 * In place, by insertion: an end user has a few values and actions, and Array.prototype.sort
 * allocates its own work space on every call (~9 MB over a 10,000-user reply). Nothing bounds an
 * end user's actions, though: a long list (insertion is quadratic: 50,000 actions in the
 * database's collation order would stall the process) goes to the library sort.
 */
function byKey(rows: Row[], key: string): Row[] {
  if (rows.length > INSERTION_MAX) return rows.sort((a, b) => compareCodePoints(a[key] as string, b[key] as string));
  for (let i = 1; i < rows.length; i++) {
    const row = rows[i]!;
    let j = i;
    for (; j > 0 && compareCodePoints(rows[j - 1]![key] as string, row[key] as string) > 0; j--) rows[j] = rows[j - 1]!;
    rows[j] = row;
  }
  return rows;
}

/** The end user `externalId` of the account, with `values` and/or `actions` as Prisma returns them; null when none. */
export async function endUserWith(accountId: string, externalId: string, with_: { values: boolean; actions: boolean }): Promise<Row | null> {
  const [row] = await directRead<Row>(statement(with_, false), [accountId, externalId]);
  return row ? shaped(row, with_) : null;
}

/**
 * The end users of the account among `externalIds` (any order; unknown ids are left out), each as
 * endUserWith returns one: a bulk write's reply for the users it updated, in one statement per call
 * instead of Prisma's findMany with includes (which mapped each row at ~25 µs: 10,000 users with
 * their values took ~0.5 s of an update on PostgreSQL).
 */
export async function endUsersWith(accountId: string, externalIds: readonly string[], with_: { values: boolean; actions: boolean }): Promise<Row[]> {
  const ids = directDialect() === "postgres" ? externalIds : JSON.stringify(externalIds);
  return (await directRead<Row>(statement(with_, true), [accountId, ids])).map((row) => shaped(row, with_));
}
