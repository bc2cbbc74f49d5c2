// SQL of the Explore questions, built from a checked question (./input.ts): values are always bound
// parameters; identifiers come only from the fixed dimension registry (EVENT_DIMENSIONS) and from
// field names checked against the account's end-user schema, which travel as parameters too (the
// join is on `"field" = ?`). Fragments hold parameter tokens, turned into the dialect's placeholders
// in the order the finished text holds them (finish()), so fragments can be built in any order; the
// few dialect differences are the helpers here.
import { badRequest } from "../../errors.js";
import type { SchemaField } from "../endUsers/fields.js";
import type { Rule } from "../segments/rules.js";
import type { Interval } from "./buckets.js";
import { type Checker, type Condition, type Dimension, type Path, type PathStyle, pathText, type ValueKind } from "./input.js";

/**
 * A column's text lower-cased as JavaScript's toLowerCase does it (Unicode's default case mapping,
 * which the needles of `contains` get), whatever the database's locale: SQLite's lower() folds ASCII
 * only ('Ärzte' stayed 'Ärzte'), so its question workers define unicode_lower (./run.ts);
 * PostgreSQL's follows the database's LC_CTYPE (ASCII only under "C"; a libc UTF-8 locale folds 'İ'
 * to 'i', not 'i̇'), ICU's root collation does not (./run.ts drops it on a server built without
 * ICU). ASCII text (as many bytes as characters) takes the plain ASCII fold, which is the same and
 * cheaper: over 1M short values 130-140 ms against 145-170 for PostgreSQL's lower() under the
 * database's locale and 280 through ICU alone; SQLite +30 ns a value, against +100 calling
 * JavaScript for every one.
 */
export const unicodeLower = (dialect: Dialect, col: string): string =>
  dialect === "postgres"
    ? `CASE WHEN octet_length(${col}) = char_length(${col}) THEN lower(${col} COLLATE "C") ELSE lower(${col} COLLATE ${ICU_ROOT}) COLLATE "C" END`
    : `CASE WHEN length(${col}) = length(CAST(${col} AS BLOB)) THEN lower(${col}) ELSE unicode_lower(${col}) END`;
export const ICU_ROOT = '"und-x-icu"';

export type Dialect = "sqlite" | "postgres";

/**
 * Values one statement may bind: SQLite takes 32,766, PostgreSQL 65,535 (one limit for both, so a
 * question answers alike on either). A condition takes 1,000 values and a question 100 conditions,
 * and a funnel's steps appear twice in its statement: 20 conditions of 1,000 values failed with a 500.
 */
const MAX_BOUND_VALUES = 30_000;
/**
 * Days added to a wall clock (epoch ms) before a bucket key's integer division (Builder.bucketKey),
 * so that it never divides a negative number: more than from 0000-01-01 (the earliest startDate)
 * to 1970-01-01, and whole weeks. Both databases truncate toward zero where the bucket list
 * (./buckets.ts keyOf) floors: an event in the first hours of 1970 in a zone west of UTC, still
 * 1969-12-31 there, was counted on 1970-01-01 (and a window before 1970 got keys one off).
 */
const KEY_SHIFT_DAYS = 719_530;

/** Values of an IN list bound one by one; a longer list is bound as one value (Builder.inList). */
export const INLINE_LIST = 32;

export interface Statement {
  sql: string;
  params: unknown[];
}

/** What the account's schema and segments say about the user parts of a question (checked in the resolver). */
export interface UserContext {
  fields: ReadonlyMap<string, SchemaField>;
  /** checked segment rules by id */
  segments: ReadonlyMap<string, Rule>;
}

/** A statement under construction: its parameters and the joins of the user fields it reads. */
export class Builder {
  private readonly values: unknown[] = [];
  /** user field → alias of its EndUserValue join */
  private readonly fieldJoins = new Map<string, string>();
  private needsUser = false;
  /** Field join aliases handed out so far (takeJoins() starts a new set, the aliases stay unique). */
  private aliases = 0;
  constructor(
    readonly dialect: Dialect,
    readonly users: UserContext,
    /** How the question's paths are named (`body`, `input`): a refusal of the whole question names it. */
    readonly style: PathStyle = "body",
  ) {}

  /** A bound value (booleans as 0/1 on SQLite): a token finish() turns into a placeholder. */
  p(v: unknown): string {
    this.values.push(this.dialect === "sqlite" && typeof v === "boolean" ? (v ? 1 : 0) : v);
    return `\uE000${this.values.length - 1}\uE000`;
  }
  /** The statement: tokens as `?` (SQLite) or `$n` (PostgreSQL), parameters in their order. */
  finish(sql: string): Statement {
    const params: unknown[] = [];
    const text = sql.replace(/\uE000(\d+)\uE000/g, (_m, i: string) => {
      params.push(this.values[Number(i)]);
      return this.dialect === "postgres" ? `$${params.length}` : "?";
    });
    if (params.length > MAX_BOUND_VALUES) {
      // The values of every condition together: the whole question (`body`) is what to narrow.
      const message = `the question binds ${params.length} values where a statement takes ${MAX_BOUND_VALUES}: name fewer values in its conditions (a funnel's steps count twice) or in the rules of its segments`;
      throw badRequest(`${this.style}: ${message}`, [{ path: this.style, message }]);
    }
    return { sql: text, params };
  }
  /**
   * `expr IN (values)`, the values all strings or all numbers. A list past INLINE_LIST is bound as
   * one value (an array on PostgreSQL, which plans it as it plans an IN list; a JSON array on
   * SQLite, read by json_each), so that long lists (1,000 a condition, 1,000 an `in` of a segment's
   * rule, 100 conditions a rule) do not spend the statement's bound values: a segment of 31 such
   * conditions was refused with MAX_BOUND_VALUES's 400.
   */
  inList(expr: string, values: readonly (string | number)[]): string {
    if (values.length <= INLINE_LIST) return `${expr} IN (${values.map((v) => (typeof v === "number" ? this.num(v) : this.p(v))).join(", ")})`;
    if (this.dialect === "sqlite") return `${expr} IN (SELECT value FROM json_each(${this.p(JSON.stringify(values))}))`;
    return `${expr} = ANY(CAST(${this.p(values)} AS ${typeof values[0] === "number" ? "DOUBLE PRECISION" : "TEXT"}[]))`;
  }
  /** A bound number compared with numeric columns (PostgreSQL would otherwise infer the column's integer type). */
  num(v: number): string {
    return this.dialect === "postgres" ? `CAST(${this.p(v)} AS DOUBLE PRECISION)` : this.p(v);
  }
  /** A bound integer, typed as one (better-sqlite3 binds every JS number as REAL), so arithmetic with epoch ms stays integral. */
  int(v: number): string {
    return `CAST(${this.p(v)} AS ${this.dialect === "postgres" ? "BIGINT" : "INTEGER"})`;
  }
  /** `time` (epoch ms) as the zone's wall clock (epoch ms of the local date and time), by the window's offset segments. */
  local(time: string, offsets: readonly { until: number; offset: number }[]): string {
    if (offsets.length === 1) return offsets[0]!.offset ? `(${time} + ${this.int(offsets[0]!.offset)})` : time;
    const cases = offsets.slice(0, -1).map((o) => `WHEN ${time} < ${this.int(o.until)} THEN ${this.int(o.offset)}`);
    return `(${time} + CASE ${cases.join(" ")} ELSE ${this.int(offsets.at(-1)!.offset)} END)`;
  }
  /** The bucket key of a wall-clock time (./buckets.ts keyOf): integer arithmetic, or the calendar month. */
  bucketKey(local: string, interval: Interval): string {
    // Both databases' integer division truncates toward zero where keyOf floors: the wall clock is
    // shifted to a non-negative number first (KEY_SHIFT_DAYS), then the shift taken off the key.
    const shifted = `(${local} + ${KEY_SHIFT_DAYS * 86_400_000})`;
    switch (interval) {
      case "hour":
        return `(${shifted} / 3600000 - ${KEY_SHIFT_DAYS * 24})`;
      case "day":
        return `(${shifted} / 86400000 - ${KEY_SHIFT_DAYS})`;
      case "week":
        // 1970-01-01 was a Thursday, and the shift is whole weeks: (day + 3) % 7 is 0 on Mondays.
        return `((${shifted} / 86400000) - (((${shifted} / 86400000) + 3) % 7) - ${KEY_SHIFT_DAYS})`;
      case "month": {
        const seconds = `(${shifted} / 1000 - ${KEY_SHIFT_DAYS * 86_400})`;
        return this.dialect === "postgres"
          ? `CAST(EXTRACT(YEAR FROM to_timestamp(${seconds}) AT TIME ZONE 'UTC') * 12 + EXTRACT(MONTH FROM to_timestamp(${seconds}) AT TIME ZONE 'UTC') - 1 AS BIGINT)`
          : `(CAST(strftime('%Y', ${seconds}, 'unixepoch') AS INTEGER) * 12 + CAST(strftime('%m', ${seconds}, 'unixepoch') AS INTEGER) - 1)`;
      }
    }
  }
  /**
   * An end user's id where it is grouped, sorted, made distinct or joined on: in code point order on
   * PostgreSQL (`COLLATE "C"`: byte comparisons; the database's own collation sorts through
   * strcoll, a fifth of a funnel's time over 3M events). Equality is the same in every
   * deterministic collation, so the answers are too. SQLite compares bytes already (BINARY).
   */
  userKey(expr: string): string {
    return this.dialect === "postgres" ? `${expr} COLLATE "C"` : expr;
  }
  /** Case-insensitive "contains any of" (the values lower-cased here). */
  containsAny(expr: string, values: readonly string[]): string {
    const fn = this.dialect === "postgres" ? "strpos" : "instr";
    // (expr: a column, read three times.)
    const lowered = unicodeLower(this.dialect, expr);
    return `(${expr} IS NOT NULL AND ${balancedOr(values.map((v) => `${fn}(${lowered}, ${this.p(v.toLowerCase())}) > 0`))})`;
  }
  /** A DateTime column as epoch ms. */
  epochMs(col: string): string {
    return this.dialect === "postgres"
      ? `CAST(ROUND(EXTRACT(EPOCH FROM ${col}) * 1000) AS BIGINT)`
      : `(CASE WHEN typeof(${col}) = 'integer' THEN ${col} ELSE CAST(ROUND((julianday(${col}) - 2440587.5) * 86400000) AS INTEGER) END)`;
  }

  /** The end user of the event's `endUserId` (their current values); erased users' pseudonyms match none. */
  private userJoin(): void {
    this.needsUser = true;
  }
  fieldOf(name: string, path: Path, c: Checker): SchemaField {
    const f = this.users.fields.get(name);
    if (!f) c.fail(path, `the end-user schema has no field '${name}'`);
    if (f.type === "encrypted_string") c.fail(path, `'${name}' is an encrypted_string field: its values are ciphertext and cannot be grouped or compared`);
    return f;
  }
  private fieldAlias(name: string): string {
    this.userJoin();
    let alias = this.fieldJoins.get(name);
    if (!alias) {
      alias = `uv${this.aliases++}`;
      this.fieldJoins.set(name, alias);
    }
    return alias;
  }
  /** The SQL value of a dimension for event `e`, and what kind of value it is. */
  dim(d: Dimension, c: Checker): { expr: string; kind: ValueKind } {
    if (d.kind === "event") return { expr: `e."${d.column}"`, kind: d.valueKind };
    const f = this.fieldOf(d.field, d.path, c);
    const a = this.fieldAlias(d.field);
    switch (f.type) {
      case "double":
        return { expr: `${a}."num"`, kind: "number" };
      case "boolean":
        return { expr: `${a}."bool"`, kind: "bool" };
      case "timestamp":
        return { expr: this.epochMs(`${a}."time"`), kind: "timestamp" };
      default:
        return { expr: `${a}."text"`, kind: "text" };
    }
  }
  /** The joins the expressions built so far need (call after building them). */
  joins(): string {
    return this.joinsOn('e."accountId"', 'e."endUserId"');
  }

  /**
   * The joins the expressions built since the last call need, on the end user `user` (an external
   * id) of account `account`, and a fresh start: the user parts built next get joins of their own.
   * Funnels and retention join user values once per end user (on their first step, or cohort) and
   * not once per event.
   */
  joinsOn(account: string, user: string): string {
    if (!this.needsUser) return "";
    let sql = ` LEFT JOIN "EndUser" eu ON eu."accountId" = ${account} AND eu."externalId" = ${user}`;
    for (const [field, alias] of this.fieldJoins)
      sql += ` LEFT JOIN "EndUserValue" ${alias} ON ${alias}."endUserId" = eu."id" AND ${alias}."field" = ${this.p(field)}`;
    this.needsUser = false;
    this.fieldJoins.clear();
    return sql;
  }

  /**
   * The event types the conditions admit, when they say so at their top level (an `is` on
   * event:type without null): a bound list that lets the database read the (accountId, type, time)
   * index instead of every event of the window. Null when any type may match.
   */
  static typesOf(list: readonly Condition[]): string[] | null {
    let types = null as Set<string> | null;
    for (const x of list) {
      if (x.op !== "is" || x.dim.kind !== "event" || x.dim.column !== "type" || x.values.some((v) => typeof v !== "string")) continue;
      const these = new Set(x.values as string[]);
      const before: Set<string> | null = types;
      types = before ? new Set([...before].filter((t) => these.has(t))) : these;
    }
    return types ? [...types] : null;
  }

  /**
   * The events table (alias e) of a `query` whose conditions are `filters`. On SQLite, when they
   * name no event type, through the (accountId, id, type) index: no index leads with the time, and
   * where sqlite_stat1 has no row for the (accountId, type, time, endUserId) index (its migration
   * rebuilt it) SQLite took that one for `accountId = ?` and looked every row up from it (5.2 s
   * against 0.7 s for a `contains` question over 1M events). The id index reads the account's rows
   * in rowid order, near a plain scan when one account holds the table and far less when many do.
   */
  eventsOf(filters: readonly Condition[]): string {
    return Builder.typesOf(filters) ? `"Event" e` : this.eventsInIdOrder();
  }
  /** The events table (alias e), on SQLite read through the (accountId, id, type) index by name (see eventsOf). */
  eventsInIdOrder(): string {
    return this.dialect === "sqlite" ? `"Event" e INDEXED BY "Event_accountId_id_type_idx"` : `"Event" e`;
  }

  /** `AND e."type" IN (…)` for the union of the types each list admits ("" when one admits any). */
  typeFilter(lists: readonly (readonly Condition[])[], alias = "e"): string {
    const all = new Set<string>();
    for (const l of lists) {
      const t = Builder.typesOf(l);
      if (!t) return "";
      for (const x of t) all.add(x);
    }
    // No type at all: a list that can never match; the IN of no value is not SQL, so say it plainly.
    if (all.size === 0) return " AND 1 = 0";
    return ` AND ${alias}."type" IN (${[...all].map((t) => this.p(t)).join(", ")})`;
  }

  /** A list of conditions, all of which hold (never NULL: each atom is TRUE or FALSE). */
  where(list: readonly Condition[], c: Checker): string {
    return list.length ? list.map((x) => this.cond(x, c)).join(" AND ") : "1 = 1";
  }

  private cond(x: Condition, c: Checker): string {
    switch (x.op) {
      case "or":
        return `(${x.conditions.map((y) => this.cond(y, c)).join(" OR ")})`;
      case "not":
        return `(NOT ${this.cond(x.condition, c)})`;
      case "inSegment":
        return this.segment(x.segmentId, x.path, c);
      case "contains": {
        const { expr, kind } = this.dim(x.dim, c);
        if (kind !== "text") c.fail([...x.path, { w: 1, g: "dimension" }], `contains applies to text dimensions; ${x.dim.name} is not text`);
        return this.containsAny(expr, x.values);
      }
      case "is":
      case "isNot": {
        const { expr, kind } = this.dim(x.dim, c);
        const present = x.values.filter((v) => v !== null);
        present.forEach((v) => {
          const ok = kind === "text" ? typeof v === "string" : kind === "bool" ? typeof v === "boolean" : typeof v === "number";
          if (!ok) {
            const i = x.values.indexOf(v);
            c.fail(
              [...x.path, { w: 2, g: "values" }, i],
              `must be ${kind === "text" ? "a string" : kind === "bool" ? "true or false" : "a number"} or null (${x.dim.name} is ${kind})`,
            );
          }
        });
        const parts: string[] = [];
        // (Booleans: true and false at most, inline.)
        if (present.length)
          parts.push(
            `(${expr} IS NOT NULL AND ${kind === "bool" ? `${expr} IN (${present.map((v) => this.p(v)).join(", ")})` : this.inList(expr, present as (string | number)[])})`,
          );
        if (present.length < x.values.length) parts.push(`${expr} IS NULL`);
        const is = `(${parts.join(" OR ")})`;
        return x.op === "is" ? is : `(NOT ${is})`;
      }
      default: {
        const { expr, kind } = this.dim(x.dim, c);
        if (kind !== "number" && kind !== "timestamp")
          c.fail([...x.path, { w: 1, g: "dimension" }], `${x.op} compares numbers; ${x.dim.name} is ${kind === "bool" ? "boolean" : kind}`);
        const op = { gt: ">", gte: ">=", lt: "<", lte: "<=" }[x.op];
        return `(${expr} IS NOT NULL AND ${expr} ${op} ${this.num(x.value)})`;
      }
    }
  }

  /** Membership of the event's end user in a segment now: its rule over their values, in SQL. */
  private segment(id: string, path: Path, c: Checker): string {
    const rule = this.users.segments.get(id);
    if (!rule) c.fail([...path, { w: 1, g: "segmentId" }], `no segment with id '${id.slice(0, 80)}'`);
    this.userJoin();
    return `(eu."id" IS NOT NULL AND ${this.rule(rule, id, path, c)})`;
  }

  private rule(r: Rule, id: string, path: Path, c: Checker): string {
    if ("and" in r) return `(${r.and.map((x) => this.rule(x, id, path, c)).join(" AND ")})`;
    if ("or" in r) return `(${r.or.map((x) => this.rule(x, id, path, c)).join(" OR ")})`;
    if ("not" in r) return `(NOT ${this.rule(r.not, id, path, c)})`;
    const where = pathText(c.style, [...path, { w: 1, g: "segmentId" }]);
    const unsupported = (why: string) => {
      throw badRequest(`${where}: segment '${id}' cannot be decided in a question: ${why}`, [{ path: where, message: "segment rule not supported" }]);
    };
    const [kind, name] = r.field.split(".");
    if (kind !== "custom" || !name) return unsupported(`its rule reads ${r.field}, an integration attribute (only end-user fields are supported)`);
    const f = this.users.fields.get(name);
    if (!f) return unsupported(`its rule reads '${name}', which the end-user schema no longer has`);
    if (f.type === "encrypted_string") return unsupported(`its rule reads the encrypted_string field '${name}', whose values only the service can decrypt`);
    const col = f.type === "double" ? `sv."num"` : f.type === "boolean" ? `sv."bool"` : f.type === "timestamp" ? this.epochMs(`sv."time"`) : `sv."text"`;
    const bind = (v: unknown) => (typeof v === "number" ? this.num(v) : this.p(v));
    const field = this.p(name);
    const has = (test: string) =>
      `EXISTS (SELECT 1 FROM "EndUserValue" sv WHERE sv."endUserId" = eu."id" AND sv."field" = ${field} AND ${col} IS NOT NULL${test})`;
    // The evaluator's semantics (../segments/rules.ts): a missing value fails every comparison,
    // passes `ne`, fails `exists`.
    switch (r.op) {
      case "exists":
        return has("");
      case "eq":
        return has(` AND ${col} = ${bind(r.value)}`);
      case "ne":
        return `(NOT ${has(` AND ${col} = ${bind(r.value)}`)})`;
      case "in":
        return f.type === "boolean"
          ? has(` AND ${col} IN (${(r.value as unknown[]).map(bind).join(", ")})`)
          : has(` AND ${this.inList(col, r.value as (string | number)[])}`);
      case "contains":
        return has(` AND ${this.dialect === "postgres" ? "strpos" : "instr"}(${col}, ${this.p(r.value)}) > 0`);
      default:
        return has(` AND ${col} ${{ gt: ">", gte: ">=", lt: "<", lte: "<=" }[r.op]} ${bind(r.value)}`);
    }
  }
}

/** Whether conditions read only the end user (user fields, segments): the same for each of a user's events. */
export function userOnly(list: readonly Condition[]): boolean {
  const one = (x: Condition): boolean => {
    switch (x.op) {
      case "or":
        return x.conditions.every(one);
      case "not":
        return one(x.condition);
      case "inSegment":
        return true;
      default:
        return x.dim.kind === "user";
    }
  };
  return list.every(one);
}

/** `AS MATERIALIZED`: computed once and read by several parts of the statement (both databases know the hint). */
export const MATERIALIZED = "AS MATERIALIZED";

/** A cell as the answer gives it: numbers from PostgreSQL's bigint/numeric text, booleans from SQLite's 0/1. */
export function cell(v: unknown, kind: ValueKind): unknown {
  if (v === null || v === undefined) return null;
  if (kind === "bool") return v === true || v === 1 || v === "1" || v === "t";
  if (kind === "number" || kind === "timestamp") return Number(v);
  return v;
}

/** Cells in code point order, nulls first, false before true: what the statements' ORDER BY does, for rows ordered in JS. */
export function compareCells(x: unknown, y: unknown): number {
  if (x === y) return 0;
  if (x === null) return -1;
  if (y === null) return 1;
  if (typeof x === "number" && typeof y === "number") return x - y;
  if (typeof x === "boolean") return Number(x) - Number(y);
  const [a, b] = [String(x), String(y)];
  // Code points, not UTF-16 units (they differ past U+FFFF).
  const ca = [...a].map((ch) => ch.codePointAt(0)!);
  const cb = [...b].map((ch) => ch.codePointAt(0)!);
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) if (ca[i] !== cb[i]) return ca[i]! - cb[i]!;
  return ca.length - cb.length;
}

/**
 * `parts` ORed as a balanced tree of parentheses. SQLite refuses an expression nested past 1,000
 * levels, and a flat chain of n ORs nests n deep: `contains` with 1,000 values (its limit) failed
 * the question with a 500 there. Balanced, 1,000 parts nest 10 deep.
 */
function balancedOr(parts: readonly string[]): string {
  if (parts.length <= 2) return `(${parts.join(" OR ")})`;
  const mid = Math.ceil(parts.length / 2);
  return `(${balancedOr(parts.slice(0, mid))} OR ${balancedOr(parts.slice(mid))})`;
}
