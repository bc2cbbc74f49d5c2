// The segment rule language: a JSON tree over an end user's custom fields and the integration
// attributes linked to the user, checked against both schemas when a segment is written and
// evaluated for one user at a time (docs/segments.md has the reference and examples).
//
//   rule      := {"and": [rule, ...]} | {"or": [rule, ...]} | {"not": rule} | condition
//   condition := {"field": path, "op": op, "value": v}        ("value" absent for "exists")
//   path      := "custom.<field>"                              an end-user custom or default field
//              | "attribute.<primary>.<secondary>"             a secondary attribute of the record
//                                                              whose primary attribute <primary> has
//                                                              the value of the user's field <primary>
//   op        := eq | ne | in | exists | gt | gte | lt | lte | contains
import { badRequest } from "../../errors.js";
import type { FieldType, SchemaField } from "../endUsers/fieldTypes.js";

export type Rule = { and: Rule[] } | { or: Rule[] } | { not: Rule } | Condition;
export interface Condition {
  field: string;
  op: Op;
  value?: unknown;
}

export const OPS = ["eq", "ne", "in", "exists", "gt", "gte", "lt", "lte", "contains"] as const;
export type Op = (typeof OPS)[number];
const ORDERED: readonly FieldType[] = ["double", "timestamp"];
const TEXT: readonly FieldType[] = ["string", "encrypted_string"];
const MAX_DEPTH = 10;
const MAX_CONDITIONS = 100;
const MAX_IN = 1_000;

/** A parsed path: a custom field, or a secondary attribute reached through the primary attribute of the same name. */
export type FieldRef = { kind: "custom"; name: string } | { kind: "attribute"; primary: string; secondary: string };

export interface Schemas {
  endUser: ReadonlyMap<string, SchemaField>;
  attribute: ReadonlyMap<string, SchemaField>;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Checks a rule against the account's schemas: every path names a field that exists, every operator
 * suits the field's type, every value has it. Throws a 400 naming the place in the rule
 * (`rule.and[1].value`); returns the rule and the primary attributes it reaches through.
 */
export function checkRule(rule: unknown, schemas: Schemas): { rule: Rule; links: string[] } {
  let conditions = 0;
  const links = new Set<string>();
  const bad = (path: string, message: string) => badRequest(`${path}: ${message}`, [{ path, message }]);

  const check = (node: unknown, path: string, depth: number): void => {
    if (depth > MAX_DEPTH) throw bad(path, `rules nest at most ${MAX_DEPTH} levels deep`);
    if (!isObject(node)) throw bad(path, 'must be an object: {"and": [...]}, {"or": [...]}, {"not": {...}} or {"field", "op", "value"}');
    const keys = Object.keys(node);
    if (keys.length === 1 && (keys[0] === "and" || keys[0] === "or")) {
      const list = node[keys[0]];
      if (!Array.isArray(list) || !list.length) throw bad(`${path}.${keys[0]}`, "must be a non-empty array of rules");
      list.forEach((r, i) => {
        check(r, `${path}.${keys[0]}[${i}]`, depth + 1);
      });
      return;
    }
    if (keys.length === 1 && keys[0] === "not") {
      check(node.not, `${path}.not`, depth + 1);
      return;
    }
    const extra = keys.filter((k) => !["field", "op", "value"].includes(k));
    if (extra.length) throw bad(path, `unknown key(s) ${extra.join(", ")}: a condition has field, op and value`);
    if (++conditions > MAX_CONDITIONS) throw bad(path, `a rule holds at most ${MAX_CONDITIONS} conditions`);
    const ref = parseField(node.field, `${path}.field`, schemas, bad);
    if (ref.kind === "attribute") links.add(ref.primary);
    const field = ref.kind === "custom" ? schemas.endUser.get(ref.name)! : schemas.attribute.get(ref.secondary)!;
    const op = node.op;
    if (typeof op !== "string" || !(OPS as readonly string[]).includes(op)) throw bad(`${path}.op`, `must be one of ${OPS.join(", ")}`);
    const valuePath = `${path}.value`;
    if (op === "exists") {
      if ("value" in node) throw bad(valuePath, "exists takes no value");
      return;
    }
    if (!("value" in node)) throw bad(valuePath, `${op} needs a value`);
    if (ORDERED_OPS.has(op) && !ORDERED.includes(field.type))
      throw bad(`${path}.op`, `${op} compares numbers and timestamps; '${node.field}' is ${field.type}`);
    if (op === "contains" && !TEXT.includes(field.type)) throw bad(`${path}.op`, `contains applies to strings; '${node.field}' is ${field.type}`);
    if (op === "in") {
      if (!Array.isArray(node.value) || !node.value.length || node.value.length > MAX_IN) throw bad(valuePath, `in needs an array of 1 to ${MAX_IN} values`);
      node.value.forEach((v, i) => {
        checkValue(field, v, `${valuePath}[${i}]`, bad);
      });
      return;
    }
    checkValue(field, node.value, valuePath, bad);
  };
  check(rule, "rule", 0);
  return { rule: rule as Rule, links: [...links] };
}

const ORDERED_OPS = new Set(["gt", "gte", "lt", "lte"]);

function parseField(raw: unknown, path: string, schemas: Schemas, bad: (p: string, m: string) => Error): FieldRef {
  if (typeof raw !== "string") throw bad(path, 'must be "custom.<field>" or "attribute.<primary>.<secondary>"');
  const parts = raw.split(".");
  if (parts[0] === "custom" && parts.length === 2) {
    if (!schemas.endUser.has(parts[1]!)) throw bad(path, `the end-user schema has no field '${parts[1]}'`);
    return { kind: "custom", name: parts[1]! };
  }
  if (parts[0] === "attribute" && parts.length === 3) {
    const [, primary, secondary] = parts as [string, string, string];
    if (!schemas.attribute.has(primary)) throw bad(path, `the integration-attribute schema has no attribute '${primary}'`);
    if (!schemas.endUser.has(primary))
      throw bad(path, `end users are linked to '${primary}' records through their field '${primary}', which the end-user schema lacks`);
    if (!schemas.attribute.has(secondary)) throw bad(path, `the integration-attribute schema has no attribute '${secondary}'`);
    return { kind: "attribute", primary, secondary };
  }
  throw bad(path, `'${raw.slice(0, 80)}' is not "custom.<field>" or "attribute.<primary>.<secondary>"`);
}

function checkValue(field: SchemaField, v: unknown, path: string, bad: (p: string, m: string) => Error): void {
  const ok = TEXT.includes(field.type)
    ? typeof v === "string"
    : field.type === "double"
      ? typeof v === "number" && Number.isFinite(v)
      : field.type === "boolean"
        ? typeof v === "boolean"
        : typeof v === "number" && Number.isSafeInteger(v);
  if (!ok) {
    const want = TEXT.includes(field.type)
      ? "a string"
      : field.type === "double"
        ? "a number"
        : field.type === "boolean"
          ? "true or false"
          : "an integer of epoch milliseconds";
    throw bad(path, `must be ${want} (the field '${field.name}' is ${field.type})`);
  }
}

/** The fields a checked rule reads (to load only those). */
export function fieldsOf(rule: Rule): FieldRef[] {
  if ("and" in rule) return rule.and.flatMap(fieldsOf);
  if ("or" in rule) return rule.or.flatMap(fieldsOf);
  if ("not" in rule) return fieldsOf(rule.not);
  const parts = rule.field.split(".");
  return [parts[0] === "custom" ? { kind: "custom", name: parts[1]! } : { kind: "attribute", primary: parts[1]!, secondary: parts[2]! }];
}

/**
 * Evaluates a checked rule. `read` gives a path's value for the user (timestamps as epoch ms),
 * undefined when the user has none: then every comparison is false, `ne` true and `exists` false.
 */
export function evaluate(rule: Rule, read: (path: string) => unknown): boolean {
  if ("and" in rule) return rule.and.every((r) => evaluate(r, read));
  if ("or" in rule) return rule.or.some((r) => evaluate(r, read));
  if ("not" in rule) return !evaluate(rule.not, read);
  const actual = read(rule.field);
  const has = actual !== undefined && actual !== null;
  switch (rule.op) {
    case "exists":
      return has;
    case "eq":
      return has && actual === rule.value;
    case "ne":
      return !has || actual !== rule.value;
    case "in":
      return has && (rule.value as unknown[]).includes(actual);
    case "contains":
      return has && typeof actual === "string" && actual.includes(rule.value as string);
    case "gt":
      return has && (actual as number) > (rule.value as number);
    case "gte":
      return has && (actual as number) >= (rule.value as number);
    case "lt":
      return has && (actual as number) < (rule.value as number);
    case "lte":
      return has && (actual as number) <= (rule.value as number);
  }
}
