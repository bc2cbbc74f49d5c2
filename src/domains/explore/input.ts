// The Explore questions' inputs (docs/explore.md): the contract's JSON form (conditions as arrays,
// `["is", "event:type", ["flow_started"]]`), parsed and checked here into a Question, one parser for
// REST and GraphQL. GraphQL's typed inputs are turned into the same JSON form first (toWire*), so
// both are checked alike; errors name the place as the caller wrote it: `body.filters[1][1]` for a
// REST body, `input.filters[1].dimension` for a GraphQL input (the same place, by field name).
import { badRequest } from "../../errors.js";
import { ownEntry } from "../../lookup.js";
import { foldDomain } from "../events/validate.js";
import { reportWindow } from "../reports/window.js";
import { bucketsOf, canonicalZone, INTERVALS, type Interval } from "./buckets.js";

/** How error paths are written: the REST body's JSON form, or the GraphQL input's field names. */
export type PathStyle = "body" | "input";
/** A step of a path: a key, an index, or a place in a condition array (its index; its field name in GraphQL). */
type Step = string | number | { w: number; g: string };
export type Path = readonly Step[];

export function pathText(style: PathStyle, path: Path): string {
  let out = style;
  for (const s of path) {
    if (typeof s === "number") out += `[${s}]`;
    else if (typeof s === "string") out += `.${s}`;
    else out += style === "body" ? `[${s.w}]` : `.${s.g}`;
  }
  return out;
}

export class Checker {
  constructor(readonly style: PathStyle) {}
  fail(path: Path, message: string): never {
    const p = pathText(this.style, path);
    throw badRequest(`${p}: ${message}`, [{ path: p, message }]);
  }
}

// ---- dimensions ---------------------------------------------------------------------------------

/** What a dimension's values are: text, integers (numeric conditions) or booleans. */
export type ValueKind = "text" | "number" | "bool" | "timestamp";

/** The event dimensions: the column each reads. `asDimension`: may group (event:resultCount only filters). */
export const EVENT_DIMENSIONS: Record<string, { column: string; kind: ValueKind; asDimension: boolean }> = {
  "event:type": { column: "type", kind: "text", asDimension: true },
  "event:flowId": { column: "flowId", kind: "text", asDimension: true },
  "event:contentId": { column: "contentId", kind: "text", asDimension: true },
  "event:widget": { column: "widget", kind: "text", asDimension: true },
  "event:domain": { column: "domain", kind: "text", asDimension: true },
  "event:step": { column: "step", kind: "number", asDimension: true },
  // Stored trimmed and lower-cased (ingestion), as reports group it.
  "event:searchTerm": { column: "searchTerm", kind: "text", asDimension: true },
  "event:actionId": { column: "actionId", kind: "text", asDimension: true },
  "event:useful": { column: "useful", kind: "bool", asDimension: true },
  "event:endUserId": { column: "endUserId", kind: "text", asDimension: true },
  "event:resultCount": { column: "resultCount", kind: "number", asDimension: false },
};

export type Dimension = { kind: "event"; name: string; column: string; valueKind: ValueKind } | { kind: "user"; name: string; field: string; path: Path };

const USER_FIELD = /^user:([A-Za-z][A-Za-z0-9_]{0,63})$/;

function parseDimension(c: Checker, v: unknown, path: Path, opts: { grouping: boolean; eventOnly?: boolean; userOnly?: boolean }): Dimension {
  if (typeof v !== "string") c.fail(path, "must be a dimension name such as event:type or user:<field>");
  const ev = ownEntry(EVENT_DIMENSIONS, v);
  if (ev) {
    if (opts.userOnly) c.fail(path, `must be a user:<field> dimension here (${v} is an event dimension)`);
    if (opts.grouping && !ev.asDimension) c.fail(path, `${v} can be filtered on but not grouped by`);
    return { kind: "event", name: v, column: ev.column, valueKind: ev.kind };
  }
  const m = USER_FIELD.exec(v);
  if (m) {
    if (opts.eventOnly) c.fail(path, `must be an event: dimension here (${v.slice(0, 80)} is a user dimension)`);
    return { kind: "user", name: v, field: m[1]!, path };
  }
  c.fail(path, `unknown dimension '${v.slice(0, 80)}': ${Object.keys(EVENT_DIMENSIONS).join(", ")} or user:<field>`);
}

// ---- conditions ---------------------------------------------------------------------------------

export const OPERATORS = ["is", "isNot", "contains", "gt", "gte", "lt", "lte", "inSegment", "or", "not"] as const;
export type Operator = (typeof OPERATORS)[number];
type Compare = "gt" | "gte" | "lt" | "lte";

export type Condition =
  | { op: "is" | "isNot"; dim: Dimension; values: (string | number | boolean | null)[]; path: Path }
  | { op: "contains"; dim: Dimension; values: string[]; path: Path }
  | { op: Compare; dim: Dimension; value: number; path: Path }
  | { op: "inSegment"; segmentId: string; path: Path }
  | { op: "or"; conditions: Condition[] }
  | { op: "not"; condition: Condition };

const MAX_VALUES = 1_000;
const MAX_CONDITIONS = 100;
/**
 * How deep `or` / `not` nest (the top-level conditions are depth 0). GraphQL's typed conditions are
 * one input type per level (the compiled executor cannot coerce a self-referencing input type), so
 * the depth is bounded for REST bodies alike.
 */
export const MAX_DEPTH = 4;

/** Where a condition's parts are: array index on the wire, field name in GraphQL. */
const AT = {
  dimension: { w: 1, g: "dimension" },
  values: { w: 2, g: "values" },
  value: { w: 2, g: "value" },
  segmentId: { w: 1, g: "segmentId" },
  conditions: { w: 1, g: "conditions" },
  condition: { w: 1, g: "condition" },
};

/**
 * A field of a GraphQL condition its operator does not take (`value` on `is`), carried in the JSON
 * form as one more item (../explore/schema.ts conditionToWire) so that it is refused by name, as
 * REST refuses an extra array item: ignored, it left a question other than the one asked.
 */
export class StrayField {
  constructor(
    readonly name: string,
    readonly takes: readonly string[],
  ) {}
}

interface CondOpts {
  eventOnly?: boolean;
  userOnly?: boolean;
}

export function parseConditions(c: Checker, v: unknown, path: Path, opts: CondOpts = {}): Condition[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) c.fail(path, "must be a list of conditions");
  const count = { n: 0 };
  return v.map((x, i) => parseCondition(c, x, [...path, i], opts, 0, count));
}

function parseCondition(c: Checker, v: unknown, path: Path, opts: CondOpts, depth: number, count: { n: number }): Condition {
  if (depth > MAX_DEPTH) c.fail(path, `conditions nest at most ${MAX_DEPTH} levels deep`);
  if (++count.n > MAX_CONDITIONS) c.fail(path, `at most ${MAX_CONDITIONS} conditions`);
  if (!Array.isArray(v) || typeof v[0] !== "string")
    c.fail(
      path,
      'must be a condition: ["is", dimension, [values]], ["contains", …], ["gt", dimension, number], ["inSegment", id], ["or", [...]], ["not", condition]',
    );
  const opPath: Path = [...path, { w: 0, g: "op" }];
  if (!(OPERATORS as readonly string[]).includes(v[0])) c.fail(opPath, `unknown operator '${String(v[0]).slice(0, 40)}': ${OPERATORS.join(", ")}`);
  const op = v[0] as Operator;
  const stray = v.at(-1);
  if (stray instanceof StrayField) c.fail([...path, { w: v.length - 1, g: stray.name }], `${op} takes ${stray.takes.join(" and ")}, not ${stray.name}`);
  const arity = op === "inSegment" || op === "or" || op === "not" ? 2 : 3;
  if (v.length !== arity) c.fail(path, `${op} takes ${arity - 1} argument${arity === 2 ? "" : "s"}`);
  switch (op) {
    case "is":
    case "isNot":
    case "contains": {
      const dim = parseDimension(c, v[1], [...path, AT.dimension], { grouping: false, ...opts });
      const vp: Path = [...path, AT.values];
      if (!Array.isArray(v[2]) || v[2].length === 0 || v[2].length > MAX_VALUES) c.fail(vp, `must be a list of 1 to ${MAX_VALUES} values`);
      const values = v[2] as unknown[];
      if (op === "contains") {
        if (dim.kind === "event" && dim.valueKind !== "text") c.fail([...path, AT.dimension], `contains applies to text dimensions; ${dim.name} is not`);
        values.forEach((x, i) => {
          if (typeof x !== "string" || x === "") c.fail([...vp, i], "must be a non-empty string");
        });
        return { op: "contains", dim, values: values as string[], path };
      }
      values.forEach((x, i) => {
        if (x === null) return;
        const kind = dim.kind === "event" ? dim.valueKind : null;
        const ok =
          kind === null
            ? ["string", "number", "boolean"].includes(typeof x) && (typeof x !== "number" || Number.isFinite(x))
            : kind === "text"
              ? typeof x === "string"
              : kind === "bool"
                ? typeof x === "boolean"
                : typeof x === "number" && Number.isFinite(x);
        if (!ok)
          c.fail(
            [...vp, i],
            `must be ${kind === "text" ? "a string" : kind === "bool" ? "true or false" : kind ? "a number" : "a string, number or boolean"} or null`,
          );
      });
      // Stored trimmed and lower-cased (src/domains/events/validate.ts): a value is compared as stored.
      const folded = dim.kind === "event" && (dim.name === "event:searchTerm" || dim.name === "event:domain");
      const fold = dim.name === "event:domain" ? foldDomain : (x: string) => x.trim().toLowerCase();
      const norm = folded ? values.map((x) => (typeof x === "string" ? fold(x) : x)) : values;
      return { op, dim, values: norm as (string | number | boolean | null)[], path } as Condition;
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const dim = parseDimension(c, v[1], [...path, AT.dimension], { grouping: false, ...opts });
      if (dim.kind === "event" && dim.valueKind !== "number")
        c.fail([...path, AT.dimension], `${op} compares numbers: event:step, event:resultCount or a number field; ${dim.name} is not`);
      if (typeof v[2] !== "number" || !Number.isFinite(v[2])) c.fail([...path, AT.value], "must be a number");
      return { op, dim, value: v[2], path };
    }
    case "inSegment": {
      if (opts.eventOnly) c.fail(opPath, "inSegment is a user condition: put it in the question's filters");
      if (typeof v[1] !== "string" || v[1] === "") c.fail([...path, AT.segmentId], "must be a segment id");
      return { op, segmentId: v[1], path };
    }
    case "or": {
      const lp: Path = [...path, AT.conditions];
      if (!Array.isArray(v[1]) || v[1].length === 0) c.fail(lp, "must be a non-empty list of conditions");
      return { op, conditions: (v[1] as unknown[]).map((x, i) => parseCondition(c, x, [...lp, i], opts, depth + 1, count)) };
    }
    case "not":
      return { op, condition: parseCondition(c, v[1], [...path, AT.condition], opts, depth + 1, count) };
  }
}

/** The dimensions conditions read (user ones need the account's schema). */
export function conditionDimensions(list: readonly Condition[]): Dimension[] {
  return list.flatMap((x) =>
    x.op === "or" ? conditionDimensions(x.conditions) : x.op === "not" ? conditionDimensions([x.condition]) : x.op === "inSegment" ? [] : [x.dim],
  );
}

export function conditionSegments(list: readonly Condition[]): { segmentId: string; path: Path }[] {
  return list.flatMap((x) =>
    x.op === "or" ? conditionSegments(x.conditions) : x.op === "not" ? conditionSegments([x.condition]) : x.op === "inSegment" ? [x] : [],
  );
}

// ---- common parts -------------------------------------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

export function checkKeys(c: Checker, v: unknown, path: Path, allowed: readonly string[]): Record<string, unknown> {
  if (!isObject(v)) c.fail(path, "must be a JSON object");
  for (const k of Object.keys(v)) if (!allowed.includes(k)) c.fail([...path, k], `unknown field; expected ${allowed.join(", ")}`);
  return v;
}

function dateParam(c: Checker, v: unknown, name: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") c.fail([name], "must be YYYY-MM-DD or YYYY-MM-DD HH:MM (UTC)");
  return v;
}

/** [from, to) as reports read it (their parser and defaults), its errors under this style's path. */
export function windowOf(c: Checker, body: Record<string, unknown>, now?: Date): { from: number; to: number } {
  const start = dateParam(c, body.startDate, "startDate");
  const end = dateParam(c, body.endDate, "endDate");
  try {
    const w = reportWindow(start, end, now);
    return { from: w.from.getTime(), to: w.to.getTime() };
  } catch (err) {
    // reportWindow names the parameter at the start of its message ("endDate must not be ...").
    const field = (err as { fieldErrors?: { path: string }[] }).fieldErrors?.[0]?.path ?? "startDate";
    c.fail([field], (err as Error).message.replace(new RegExp(`^${field} `), ""));
  }
}

export function timeZoneOf(c: Checker, v: unknown): string {
  if (v === undefined || v === null) return "UTC";
  const zone = typeof v === "string" ? canonicalZone(v) : null;
  if (zone === null) return c.fail(["timeZone"], "must be an IANA time zone name such as Europe/Berlin");
  // Its canonical spelling: answers and cursors name one zone however it was written.
  return zone;
}

function intIn(c: Checker, v: unknown, path: Path, min: number, max: number, fallback: number): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) c.fail(path, `must be an integer from ${min} to ${max}`);
  return v;
}

// ---- query --------------------------------------------------------------------------------------

export const METRICS = ["events", "users", "eventsPerUser", "sum:step", "sum:resultCount", "avg:step", "avg:resultCount"] as const;
export type Metric = (typeof METRICS)[number];
export const DEFAULT_LIMIT = 1_000;
export const MAX_LIMIT = 10_000;

export interface QueryQuestion {
  metrics: Metric[];
  dimensions: Dimension[];
  filters: Condition[];
  interval: Interval | null;
  timeZone: string;
  /** column index (in `columns`) and direction */
  orderBy: { column: number; desc: boolean }[];
  limit: number;
  cursor: string | null;
  from: number;
  to: number;
  /**
   * What the window is made of (reportWindow): `fixed` (an endDate: both ends are dates), `sinceStart`
   * (a startDate alone: it ends now), `lastDays` (no date: the 30 days up to now). The ends that are
   * "now" move between the pages of one question, which is what its cursor may differ by.
   */
  window: "fixed" | "sinceStart" | "lastDays";
  /** names of the answer's columns */
  columns: string[];
}

const QUERY_KEYS = ["metrics", "dimensions", "filters", "interval", "timeZone", "orderBy", "limit", "cursor", "startDate", "endDate"];

export function parseQuery(c: Checker, raw: unknown, now?: Date): QueryQuestion {
  const body = checkKeys(c, raw, [], QUERY_KEYS);
  if (!Array.isArray(body.metrics) || body.metrics.length < 1 || body.metrics.length > 6) c.fail(["metrics"], "must list 1 to 6 metrics");
  const metrics = (body.metrics as unknown[]).map((m, i) => {
    if (typeof m !== "string" || !(METRICS as readonly string[]).includes(m)) c.fail(["metrics", i], `must be one of ${METRICS.join(", ")}`);
    return m as Metric;
  });
  metrics.forEach((m, i) => {
    if (metrics.indexOf(m) !== i) c.fail(["metrics", i], `repeats ${m}`);
  });
  const dimsRaw = body.dimensions ?? [];
  if (!Array.isArray(dimsRaw) || dimsRaw.length > 3) c.fail(["dimensions"], "must list 0 to 3 dimensions");
  const dimensions = dimsRaw.map((d, i) => parseDimension(c, d, ["dimensions", i], { grouping: true }));
  dimensions.forEach((d, i) => {
    if (dimensions.findIndex((x) => x.name === d.name) !== i) c.fail(["dimensions", i], `repeats ${d.name}`);
  });
  const filters = parseConditions(c, body.filters, ["filters"]);
  let interval: Interval | null = null;
  if (body.interval !== undefined && body.interval !== null) {
    if (!(INTERVALS as readonly unknown[]).includes(body.interval)) c.fail(["interval"], `must be one of ${INTERVALS.join(", ")}`);
    interval = body.interval as Interval;
  }
  const timeZone = timeZoneOf(c, body.timeZone);
  const { from, to } = windowOf(c, body, now);
  // The bucket count is checked here, before anything is read.
  if (interval) bucketsOf(from, to, interval, timeZone, pathText(c.style, ["interval"]));
  const columns = [...(interval ? ["time"] : []), ...dimensions.map((d) => d.name), ...metrics];
  const orderBy: { column: number; desc: boolean }[] = [];
  if (body.orderBy !== undefined && body.orderBy !== null) {
    if (!Array.isArray(body.orderBy) || body.orderBy.length > columns.length)
      c.fail(["orderBy"], `must be a list of at most ${columns.length} [column, "asc"|"desc"] pairs`);
    (body.orderBy as unknown[]).forEach((o, i) => {
      if (!Array.isArray(o) || o.length !== 2) c.fail(["orderBy", i], 'must be [metric, dimension or "time", "asc" or "desc"]');
      const col = columns.indexOf(o[0] as string);
      if (typeof o[0] !== "string" || col < 0) c.fail(["orderBy", i, { w: 0, g: "by" }], `must be one of the answer's columns: ${columns.join(", ")}`);
      if (o[1] !== "asc" && o[1] !== "desc") c.fail(["orderBy", i, { w: 1, g: "direction" }], 'must be "asc" or "desc"');
      if (orderBy.some((x) => x.column === col)) c.fail(["orderBy", i], `orders by ${o[0]} twice`);
      orderBy.push({ column: col, desc: o[1] === "desc" });
    });
  }
  // Then the default order for whatever the caller left unsaid: time ascending, the first metric
  // descending, the dimensions ascending; then every other column, so the order is total.
  const dimStart = interval ? 1 : 0;
  const metricStart = dimStart + dimensions.length;
  const defaults = [
    ...(interval ? [{ column: 0, desc: false }] : []),
    { column: metricStart, desc: true },
    ...dimensions.map((_, i) => ({ column: dimStart + i, desc: false })),
  ];
  for (const d of defaults) if (!orderBy.some((x) => x.column === d.column)) orderBy.push(d);
  const limit = intIn(c, body.limit, ["limit"], 1, MAX_LIMIT, DEFAULT_LIMIT);
  if (body.cursor !== undefined && body.cursor !== null && typeof body.cursor !== "string") c.fail(["cursor"], "must be the cursor of a previous answer");
  // (As reportWindow reads the dates: an empty one is none.)
  const window = body.endDate ? "fixed" : body.startDate ? "sinceStart" : "lastDays";
  return {
    metrics,
    dimensions,
    filters,
    interval,
    timeZone,
    orderBy,
    limit,
    cursor: (body.cursor as string | null | undefined) ?? null,
    from,
    to,
    window,
    columns,
  };
}

// ---- funnel -------------------------------------------------------------------------------------

export const DEFAULT_CONVERSION_WINDOW_MS = 7 * 86_400_000;
export const MAX_CONVERSION_WINDOW_MS = 366 * 86_400_000;

export interface FunnelQuestion {
  steps: Condition[][];
  conversionWindowMs: number;
  filters: Condition[];
  breakdown: Dimension | null;
  from: number;
  to: number;
}

export function parseFunnel(c: Checker, raw: unknown, now?: Date): FunnelQuestion {
  const body = checkKeys(c, raw, [], ["steps", "conversionWindowMs", "filters", "breakdown", "startDate", "endDate"]);
  if (!Array.isArray(body.steps) || body.steps.length < 2 || body.steps.length > 10) c.fail(["steps"], "must list 2 to 10 steps");
  const steps = (body.steps as unknown[]).map((s, i) => {
    const step = checkKeys(c, s, ["steps", i], ["filters"]);
    return parseConditions(c, step.filters, ["steps", i, "filters"], { eventOnly: true });
  });
  const w = body.conversionWindowMs;
  if (w !== undefined && w !== null && (typeof w !== "number" || !Number.isSafeInteger(w) || w < 1 || w > MAX_CONVERSION_WINDOW_MS))
    c.fail(["conversionWindowMs"], `must be an integer of milliseconds from 1 to ${MAX_CONVERSION_WINDOW_MS} (366 days)`);
  const filters = parseConditions(c, body.filters, ["filters"]);
  let breakdown: Dimension | null = null;
  if (body.breakdown !== undefined && body.breakdown !== null) {
    breakdown = parseDimension(c, body.breakdown, ["breakdown"], { grouping: true });
    if (breakdown.kind === "event" && breakdown.name !== "event:domain") c.fail(["breakdown"], "must be a user:<field> dimension or event:domain");
  }
  const { from, to } = windowOf(c, body, now);
  return { steps, conversionWindowMs: (w as number | undefined) ?? DEFAULT_CONVERSION_WINDOW_MS, filters, breakdown, from, to };
}

// ---- retention ----------------------------------------------------------------------------------

export const PERIODS = ["day", "week", "month"] as const;
export type Period = (typeof PERIODS)[number];

export interface RetentionQuestion {
  startEvent: Condition[];
  returnEvent: Condition[];
  period: Period;
  periods: number;
  filters: Condition[];
  timeZone: string;
  from: number;
  to: number;
}

export function parseRetention(c: Checker, raw: unknown, now?: Date): RetentionQuestion {
  const body = checkKeys(c, raw, [], ["startEvent", "returnEvent", "period", "periods", "filters", "timeZone", "startDate", "endDate"]);
  const event = (name: string, required: boolean) => {
    if (body[name] === undefined || body[name] === null) {
      if (required) c.fail([name], 'is required: {"filters": [conditions on event: dimensions]}');
      return [];
    }
    const e = checkKeys(c, body[name], [name], ["filters"]);
    return parseConditions(c, e.filters, [name, "filters"], { eventOnly: true });
  };
  const startEvent = event("startEvent", true);
  const returnEvent = event("returnEvent", false);
  let period: Period = "week";
  if (body.period !== undefined && body.period !== null) {
    if (!(PERIODS as readonly unknown[]).includes(body.period)) c.fail(["period"], `must be one of ${PERIODS.join(", ")}`);
    period = body.period as Period;
  }
  const periods = intIn(c, body.periods, ["periods"], 1, 52, 8);
  const filters = parseConditions(c, body.filters, ["filters"], { userOnly: true });
  const timeZone = timeZoneOf(c, body.timeZone);
  const { from, to } = windowOf(c, body, now);
  // The cohorts are periods of the window: at most MAX_BUCKETS of them.
  bucketsOf(from, to, period, timeZone, pathText(c.style, ["period"]));
  return { startEvent, returnEvent, period, periods, filters, timeZone, from, to };
}
