// A model's columns as the Prisma schema declares them, for the statements written by hand (the
// direct reads, ./direct.ts): the column list and the conversions of a row to what Prisma's
// findMany returns are derived from the datamodel, so a column added to the schema is read
// everywhere at once instead of silently null where a list was not updated.
import { getDatamodel } from "../generated/pothos-types.js";

export interface Column {
  name: string;
  /** Prisma's scalar type: String, Int, Float, Boolean, DateTime, BigInt, ... */
  type: string;
}

let models: Map<string, Column[]> | undefined;

/** The scalar columns of `model`, in the schema's order. */
export function modelColumns(model: string): Column[] {
  models ??= new Map(
    Object.entries(getDatamodel().datamodel.models).map(([name, m]) => [
      name,
      m.fields.filter((f) => f.kind === "scalar" || f.kind === "enum").map((f) => ({ name: f.name, type: f.type })),
    ]),
  );
  const columns = models.get(model);
  if (!columns) throw new Error(`no model ${model} in the Prisma schema`);
  return columns;
}

/** The column names of `model`, leaving out `except`. */
export const columnNames = (model: string, except: readonly string[] = []): string[] =>
  modelColumns(model)
    .map((c) => c.name)
    .filter((n) => !except.includes(n));

/**
 * A DateTime column as epoch milliseconds, exactly, in SQL: SQLite stores Prisma's ISO text
 * (`2026-01-01T00:00:00.000+00:00`), or CURRENT_TIMESTAMP's `2026-01-01 00:00:00` where a column's
 * default filled it: whole seconds by strftime (UTC either way), milliseconds from the text (none
 * in the second form). Prisma's raw queries would turn the second form into a Date in the
 * process's local time zone, so times read raw leave the database as numbers.
 */
export const epochMs = (dialect: "sqlite" | "postgres", column: string) =>
  dialect === "postgres"
    ? `(extract(epoch from ${column}) * 1000)::float8`
    : `(CAST(strftime('%s', ${column}) AS INTEGER) * 1000 + CAST(substr(${column}, 21, 3) AS INTEGER))`;
