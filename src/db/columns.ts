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
