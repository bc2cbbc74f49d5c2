// One end user with the values and actions a selection asks for, in ONE statement on the driver
// (src/db/direct.ts): values and actions are aggregated in SQL and the row comes back as Prisma
// shapes it for `{ include: { values: true, actions: … } }`, so `custom`, `userActionCount` and
// `userActions` resolve from the row itself. What B14 (and every segment evaluation's user)
// reads on each page view of a customer's users.
import { columnNames } from "../../db/columns.js";
import { asPrismaRow, directDialect, directRead } from "../../db/direct.js";

type Row = Record<string, unknown>;

function sql(dialect: "sqlite" | "postgres", values: boolean, actions: boolean): string {
  const obj = (cols: string[], alias: string) =>
    `${dialect === "postgres" ? "json_build_object" : "json_object"}(${cols.map((c) => `'${c}', ${alias}."${c}"`).join(", ")})`;
  // Ordered by key (code points): the same answer on both databases, whatever the insertion order.
  const agg = (table: string, alias: string, cols: string[], key: string) =>
    dialect === "postgres"
      ? `COALESCE((SELECT json_agg(${obj(cols, alias)} ORDER BY ${alias}."${key}" COLLATE "C") FROM "${table}" ${alias} WHERE ${alias}."endUserId" = u."id"), '[]')::text`
      : `(SELECT json_group_array(${obj(cols, "s")}) FROM (SELECT * FROM "${table}" ${alias} WHERE ${alias}."endUserId" = u."id" ORDER BY ${alias}."${key}") s)`;
  const p = (n: number) => (dialect === "postgres" ? `$${n}` : "?");
  // Every column of the three models (src/db/columns.ts): the rows Prisma's include would return.
  return (
    `SELECT ${columnNames("EndUser")
      .map((c) => `u."${c}"`)
      .join(", ")}` +
    (values ? `, ${agg("EndUserValue", "v", columnNames("EndUserValue"), "field")} AS "values"` : "") +
    (actions ? `, ${agg("EndUserAction", "a", columnNames("EndUserAction"), "actionId")} AS "actions"` : "") +
    ` FROM "EndUser" u WHERE u."accountId" = ${p(1)} AND u."externalId" = ${p(2)}`
  );
}

const statements = new Map<string, { name: string; sqlite: string; postgres: string }>();

/** The end user `externalId` of the account, with `values` and/or `actions` as Prisma returns them; null when none. */
export async function endUserWith(accountId: string, externalId: string, with_: { values: boolean; actions: boolean }): Promise<Row | null> {
  const dialect = directDialect();
  const key = `${dialect}:${with_.values}:${with_.actions}`;
  let stmt = statements.get(key);
  if (!stmt) {
    const text = sql(dialect, with_.values, with_.actions);
    stmt = { name: `end_user_${Number(with_.values)}${Number(with_.actions)}`, sqlite: text, postgres: text };
    statements.set(key, stmt);
  }
  const [row] = await directRead<Row>(stmt, [accountId, externalId]);
  if (!row) return null;
  asPrismaRow("EndUser", row);
  // SQLite's JSON has no booleans (0/1) and both carry times as text: converted by column type.
  if (with_.values) row.values = (JSON.parse(row.values as string) as Row[]).map((v) => asPrismaRow("EndUserValue", v));
  if (with_.actions) row.actions = (JSON.parse(row.actions as string) as Row[]).map((a) => asPrismaRow("EndUserAction", a));
  return row;
}
