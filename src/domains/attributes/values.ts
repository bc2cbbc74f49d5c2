// How integration-attribute values are checked and compared. A record is keyed by its primary
// attribute's name and value; the value is kept as canonical text (it travels in paths as
// `name__svc__value` and in search bodies as comma lists), checked against the attribute's type.
// Secondary attributes are stored typed, like end-user custom values.
import { checkListSafeName } from "../../schema/bulk.js";
import { longerThan } from "../../text.js";
import type { SchemaField } from "../endUsers/fields.js";
import { isTimestampValue, TIMESTAMP_RULE } from "../endUsers/fields.js";

/** Joins a primary attribute's name and value in B21's path list. */
export const PAIR_SEPARATOR = "__svc__";
export const PRIMARY_VALUE_MAX = 256;

/** A decimal number as text: `10`, `-2.5`, `10.`, `.5`, `1e1`. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A value given as text (a path, a comma list) in the attribute's type, or why it is not one. */
export type TextValue = { canonical: string; typed: string | number | boolean | Date } | { problem: string };

export function fromText(field: SchemaField, text: string): TextValue {
  const bad = (what: string): TextValue => ({ problem: `'${text.slice(0, 80)}' is not ${what} (the type of attribute '${field.name}' is ${field.type})` });
  switch (field.type) {
    case "string":
    case "encrypted_string":
      return { canonical: text, typed: text };
    case "double": {
      // Decimal notation only, as JSON writes numbers: Number() alone also reads "0x10", "0b11"
      // and "0o7" (as 16, 3, 7), which would store or find the record of another value.
      const n = DECIMAL.test(text) ? Number(text) : Number.NaN;
      return Number.isFinite(n) ? { canonical: String(n), typed: n } : bad("a number");
    }
    case "boolean":
      return text === "true" || text === "false" ? { canonical: text, typed: text === "true" } : bad("true or false");
    case "timestamp": {
      const n = /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
      return isTimestampValue(n) ? { canonical: String(n), typed: new Date(n) } : bad(TIMESTAMP_RULE);
    }
  }
}

/**
 * The primary value of a written record, as canonical text: a JSON string, or a number or boolean
 * for attributes of those types. Encrypted attributes cannot be primary (the value is the key).
 */
export function primaryValue(field: SchemaField, raw: unknown): { value: string } | { problem: string } {
  if (field.type === "encrypted_string") return { problem: `attribute '${field.name}' is encrypted and cannot be a primary attribute` };
  if (raw === undefined || raw === null || raw === "") return { problem: "attributeValue is required" };
  if (typeof raw !== "string" && typeof raw !== "number" && typeof raw !== "boolean")
    return { problem: "attributeValue must be a string (or a number or boolean of the attribute's type)" };
  // A number for a number's type (double, timestamp), a boolean for a boolean's: not a string's.
  const jsonType = { double: "number", timestamp: "number", boolean: "boolean" }[field.type as string] ?? "string";
  if (typeof raw !== "string" && typeof raw !== jsonType)
    return {
      problem: `attributeValue must be a ${jsonType === "string" ? "string" : `string or a ${jsonType}`} (the type of attribute '${field.name}' is ${field.type})`,
    };
  const text = String(raw);
  // Characters are code points (`length` counts UTF-16 units: an emoji is two).
  if (longerThan(text, PRIMARY_VALUE_MAX)) return { problem: `attributeValue must be at most ${PRIMARY_VALUE_MAX} characters` };
  const listSafe = checkListSafeName(text, "attributeValue");
  if (listSafe) return { problem: listSafe };
  if (text.includes(PAIR_SEPARATOR)) return { problem: `attributeValue must not contain '${PAIR_SEPARATOR}'` };
  const parsed = fromText(field, text);
  return "problem" in parsed ? parsed : { value: parsed.canonical };
}

/** `name__svc__value` → its parts, or why it is malformed. */
export function parsePair(key: string): { name: string; value: string } | { problem: string } {
  const at = key.indexOf(PAIR_SEPARATOR);
  if (at <= 0 || at + PAIR_SEPARATOR.length >= key.length || key.indexOf(PAIR_SEPARATOR, at + 1) !== -1)
    return { problem: `'${key.slice(0, 80)}' is not a pair of the form <attributeName>${PAIR_SEPARATOR}<attributeValue>` };
  return { name: key.slice(0, at), value: key.slice(at + PAIR_SEPARATOR.length) };
}
