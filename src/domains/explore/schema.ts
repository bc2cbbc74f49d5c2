// Explore in GraphQL: `account(id:) { analytics { query(input:) } }`, typed inputs (operators and
// intervals as enums; dimensions and metrics as strings checked against the registry, since
// `event:type` and `sum:step` are no GraphQL names; conditions as a typed input). Each input is
// turned into the contract's JSON form (toWire*) and checked by the one parser (./input.ts) the REST
// routes use; the REST routes map their bodies the other way (fromWire*) to run these fields.
import { clock } from "../../clock.js";
import { prisma } from "../../db/index.js";
import { builder } from "../../schema/builder.js";
import { Account } from "../accounts/schema.js";
import { endUserSchema } from "../endUsers/fields.js";
import type { Rule } from "../segments/rules.js";
import { INTERVALS } from "./buckets.js";
import { type FunnelAnswer, type FunnelStep, runFunnel } from "./funnel.js";
import {
  Checker,
  type Condition,
  conditionDimensions,
  conditionSegments,
  DEFAULT_LIMIT,
  type Dimension,
  MAX_DEPTH,
  MAX_LIMIT,
  METRICS,
  OPERATORS,
  type Operator,
  type PathStyle,
  PERIODS,
  parseFunnel,
  parseQuery,
  parseRetention,
  StrayField,
} from "./input.js";
import { type QueryAnswer, runQuery } from "./query.js";
import { type RetentionAnswer, retentionReadMs, runRetention } from "./retention.js";
import { dialect, type Scan, scanCost } from "./run.js";
import type { UserContext } from "./sql.js";

// ---- typed inputs and their JSON form --------------------------------------------------------------

export interface ConditionInput {
  op: Operator;
  dimension?: string | null;
  values?: readonly unknown[] | null;
  value?: number | null;
  segmentId?: string | null;
  conditions?: readonly ConditionInput[] | null;
  condition?: ConditionInput | null;
}

const OperatorEnum = builder.enumType("AnalyticsOperator", {
  description: "A condition's operator (docs/explore.md).",
  values: OPERATORS,
});

const CONDITION_DOC =
  "A condition, by operator: is / isNot (dimension, values; null in values matches a missing value), contains (dimension, values: substrings, " +
  "case-insensitive, any of them), gt / gte / lt / lte (dimension, value), inSegment (segmentId), or (conditions), not (condition).";

/**
 * The condition types, one per nesting level (AnalyticsCondition, then AnalyticsConditionLevel2 …):
 * graphql-jit, which runs compiled documents, cannot coerce a self-referencing input type. At the
 * deepest level `conditions` / `condition` are JSON: whatever is nested there is refused by the one
 * parser ("conditions nest at most 4 levels deep") with its `input.…` path, as REST names its body
 * path, rather than by GraphQL's coercion ("Field "condition" is not defined by type …").
 */
type ConditionRefType = ReturnType<ReturnType<typeof builder.inputRef<ConditionInput>>["implement"]>;
function conditionType(level: number): ConditionRefType {
  const inner: ConditionRefType | null = level <= MAX_DEPTH ? conditionType(level + 1) : null;
  return builder.inputRef<ConditionInput>(level === 1 ? "AnalyticsCondition" : `AnalyticsConditionLevel${level}`).implement({
    description: level === 1 ? CONDITION_DOC : `A condition nested ${level - 1} level(s) deep in or / not (see AnalyticsCondition).`,
    fields: (t) => ({
      op: t.field({ type: OperatorEnum, required: true }),
      dimension: t.string({ required: false, description: "event:<name> or user:<field>." }),
      values: t.field({ type: ["JSON"], required: { list: false, items: false }, description: "Strings, numbers, booleans or null, as the dimension holds." }),
      value: t.float({ required: false, description: "The number gt/gte/lt/lte compare with." }),
      segmentId: t.string({ required: false }),
      ...(inner
        ? {
            conditions: t.field({ type: [inner], required: false, description: "or: any of them holds." }),
            condition: t.field({ type: inner, required: false, description: "not: it does not hold." }),
          }
        : {
            // (Typed as the levels above: conditionToWire passes what is not a condition through.)
            conditions: t.field({
              type: ["JSON"],
              required: { list: false, items: false },
              description: `Refused: conditions nest at most ${MAX_DEPTH} levels deep.`,
            }) as never,
            condition: t.field({ type: "JSON", required: false, description: `Refused: conditions nest at most ${MAX_DEPTH} levels deep.` }) as never,
          }),
    }),
  });
}
const ConditionRef = conditionType(1);

/** The fields each operator takes (the others must be absent or null). */
const FIELDS_OF = (op: Operator): readonly (keyof ConditionInput)[] =>
  op === "is" || op === "isNot" || op === "contains"
    ? ["dimension", "values"]
    : op === "inSegment"
      ? ["segmentId"]
      : op === "or"
        ? ["conditions"]
        : op === "not"
          ? ["condition"]
          : ["dimension", "value"];
const CONDITION_FIELDS = ["dimension", "values", "value", "segmentId", "conditions", "condition"] as const;

/**
 * A typed condition in the contract's JSON form (`["is", "event:type", ["flow_started"]]`). A field
 * the operator does not take becomes a last item the parser refuses by name (StrayField).
 */
export function conditionToWire(x: ConditionInput): unknown[] {
  // (Past the deepest level a condition is any JSON, left as it is for the parser to refuse.)
  if (typeof x !== "object" || x === null) return x as never;
  const wire = conditionArgs(x);
  const takes = FIELDS_OF(x.op);
  const stray = CONDITION_FIELDS.find((k) => !takes.includes(k) && x[k] !== undefined && x[k] !== null);
  return stray ? [...wire, new StrayField(stray, takes)] : wire;
}

function conditionArgs(x: ConditionInput): unknown[] {
  switch (x.op) {
    case "is":
    case "isNot":
    case "contains":
      return [x.op, x.dimension ?? undefined, x.values ?? undefined];
    case "inSegment":
      return [x.op, x.segmentId ?? undefined];
    case "or":
      // (Past the deepest level `conditions` is any JSON, a list or not: left for the parser to refuse.)
      return [x.op, Array.isArray(x.conditions) ? x.conditions.map(conditionToWire) : x.conditions];
    case "not":
      return [x.op, x.condition ? conditionToWire(x.condition) : undefined];
    default:
      return [x.op, x.dimension ?? undefined, x.value ?? undefined];
  }
}

/** A checked JSON-form condition as the typed input (REST bodies, after parsing). */
export function conditionFromWire(v: readonly unknown[]): ConditionInput {
  const op = v[0] as Operator;
  switch (op) {
    case "is":
    case "isNot":
    case "contains":
      return { op, dimension: v[1] as string, values: v[2] as unknown[] };
    case "inSegment":
      return { op, segmentId: v[1] as string };
    case "or":
      return { op, conditions: (v[1] as unknown[][]).map(conditionFromWire) };
    case "not":
      return { op, condition: conditionFromWire(v[1] as unknown[]) };
    default:
      return { op, dimension: v[1] as string, value: v[2] as number };
  }
}

const IntervalEnum = builder.enumType("AnalyticsInterval", { values: INTERVALS });
const DirectionEnum = builder.enumType("AnalyticsDirection", { values: ["asc", "desc"] as const });
const PathStyleEnum = builder.enumType("AnalyticsErrorPaths", {
  description: "How errors name the place of a bad value: `input` by the GraphQL input's fields (default), `body` as the REST body's JSON form.",
  values: ["input", "body"] as const,
});

const OrderRef = builder.inputType("AnalyticsOrder", {
  fields: (t) => ({
    by: t.string({ required: true, description: 'A metric, a dimension of the question, or "time".' }),
    direction: t.field({ type: DirectionEnum, required: false, defaultValue: "asc" }),
  }),
});

const windowFields = (t: any) => ({
  startDate: t.string({ required: false, description: "UTC, YYYY-MM-DD or YYYY-MM-DD HH:MM, inclusive; default 30 days before endDate." }),
  endDate: t.string({ required: false, description: "UTC, exclusive (a date alone includes that day); default now." }),
});

const QueryInput = builder.inputType("AnalyticsQueryInput", {
  description: "A question over the account's events (docs/explore.md).",
  fields: (t) => ({
    metrics: t.stringList({ required: true, description: `1 to 6 of ${METRICS.join(", ")}, each once.` }),
    dimensions: t.stringList({ required: false, description: "0 to 3 dimensions: event:<name> or user:<field>." }),
    filters: t.field({ type: [ConditionRef], required: false, description: "Conditions every counted event meets." }),
    interval: t.field({ type: IntervalEnum, required: false, description: "Time buckets (the `time` column) in timeZone." }),
    timeZone: t.string({ required: false, description: "IANA time zone of the buckets; default UTC." }),
    orderBy: t.field({ type: [OrderRef], required: false, description: "Default: time ascending, the first metric descending, the dimensions ascending." }),
    limit: t.int({ required: false, description: `Rows per page, 1 to ${MAX_LIMIT}; default ${DEFAULT_LIMIT}.` }),
    cursor: t.string({ required: false, description: "The previous answer's cursor: the rows after it." }),
    ...windowFields(t),
  }),
});

type QueryInputShape = typeof QueryInput.$inferInput;

const strip = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

export function queryToWire(i: QueryInputShape): Record<string, unknown> {
  return strip({
    ...i,
    filters: i.filters?.map((x) => conditionToWire(x as ConditionInput)),
    orderBy: i.orderBy?.map((o) => [o.by, o.direction ?? "asc"]),
  });
}

/** A parsed REST body as the typed input. */
export function queryFromWire(body: Record<string, unknown>): QueryInputShape {
  return strip({
    ...body,
    filters: (body.filters as unknown[][] | undefined)?.map(conditionFromWire),
    orderBy: (body.orderBy as [string, "asc" | "desc"][] | undefined)?.map(([by, direction]) => ({ by, direction })),
  }) as QueryInputShape;
}

const FunnelStepInput = builder.inputType("AnalyticsFunnelStepInput", {
  fields: (t) => ({ filters: t.field({ type: [ConditionRef], required: false, description: "Conditions on event: dimensions the step's event meets." }) }),
});

const FunnelInput = builder.inputType("AnalyticsFunnelInput", {
  description: "A funnel: how many end users reach each step, in order, within the conversion window (docs/explore.md).",
  fields: (t) => ({
    steps: t.field({ type: [FunnelStepInput], required: true, description: "2 to 10 steps." }),
    conversionWindowMs: t.float({
      required: false,
      description: "From entry (step 1) to the last step, at most; default 7 days (604800000), at most 366 days (31622400000).",
    }),
    filters: t.field({ type: [ConditionRef], required: false, description: "Conditions every step's events meet (e.g. user:plan, inSegment)." }),
    breakdown: t.string({ required: false, description: "One user:<field> or event:domain (the entry event's)." }),
    ...windowFields(t),
  }),
});

type FunnelInputShape = typeof FunnelInput.$inferInput;

export function funnelToWire(i: FunnelInputShape): Record<string, unknown> {
  return strip({
    ...i,
    steps: i.steps.map((s) => strip({ filters: s.filters?.map((x) => conditionToWire(x as ConditionInput)) })),
    filters: i.filters?.map((x) => conditionToWire(x as ConditionInput)),
  });
}

export function funnelFromWire(body: Record<string, unknown>): FunnelInputShape {
  return strip({
    ...body,
    steps: (body.steps as { filters?: unknown[][] }[]).map((s) => strip({ filters: s.filters?.map(conditionFromWire) })),
    filters: (body.filters as unknown[][] | undefined)?.map(conditionFromWire),
  }) as FunnelInputShape;
}

const EventInput = builder.inputType("AnalyticsEventInput", {
  fields: (t) => ({ filters: t.field({ type: [ConditionRef], required: false, description: "Conditions on event: dimensions." }) }),
});
const PeriodEnum = builder.enumType("AnalyticsPeriod", { values: PERIODS });

const RetentionInput = builder.inputType("AnalyticsRetentionInput", {
  description: "Retention: cohorts by the period of each end user's first start event, and who came back in the periods after (docs/explore.md).",
  fields: (t) => ({
    startEvent: t.field({ type: EventInput, required: true, description: "What puts a user in a cohort (their first such event in the window)." }),
    returnEvent: t.field({ type: EventInput, required: false, description: "What counts as coming back; default: any event." }),
    period: t.field({ type: PeriodEnum, required: false, description: "Default week (weeks start on Monday)." }),
    periods: t.int({ required: false, description: "Periods after the cohort's, 1 to 52; default 8." }),
    filters: t.field({ type: [ConditionRef], required: false, description: "Conditions on user: dimensions or inSegment." }),
    timeZone: t.string({ required: false, description: "IANA time zone of the periods; default UTC." }),
    ...windowFields(t),
  }),
});

type RetentionInputShape = typeof RetentionInput.$inferInput;
const eventToWire = (e: { filters?: readonly ConditionInput[] | null } | null | undefined) =>
  e ? strip({ filters: e.filters?.map((x) => conditionToWire(x)) }) : undefined;
const eventFromWire = (e: { filters?: unknown[][] } | undefined) => (e ? strip({ filters: e.filters?.map(conditionFromWire) }) : undefined);

export function retentionToWire(i: RetentionInputShape): Record<string, unknown> {
  return strip({
    ...i,
    startEvent: eventToWire(i.startEvent as { filters?: ConditionInput[] }),
    returnEvent: eventToWire(i.returnEvent as { filters?: ConditionInput[] } | null),
    filters: i.filters?.map((x) => conditionToWire(x as ConditionInput)),
  });
}

export function retentionFromWire(body: Record<string, unknown>): RetentionInputShape {
  return strip({
    ...body,
    startEvent: eventFromWire(body.startEvent as { filters?: unknown[][] }),
    returnEvent: eventFromWire(body.returnEvent as { filters?: unknown[][] } | undefined),
    filters: (body.filters as unknown[][] | undefined)?.map(conditionFromWire),
  }) as RetentionInputShape;
}

// ---- the account's side: user fields and segments -------------------------------------------------

async function userContextOf(accountId: string, dims: readonly Dimension[], conditions: readonly Condition[]): Promise<UserContext> {
  const needsFields = dims.some((d) => d.kind === "user") || conditionDimensions(conditions).some((d) => d.kind === "user");
  const segmentIds = [...new Set(conditionSegments(conditions).map((s) => s.segmentId))];
  const [schema, segments] = await Promise.all([
    needsFields || segmentIds.length ? endUserSchema(accountId) : [],
    segmentIds.length ? prisma.segment.findMany({ where: { accountId, id: { in: segmentIds } }, select: { id: true, rule: true } }) : [],
  ]);
  return {
    fields: new Map(schema.map((f) => [f.name, f])),
    segments: new Map(segments.map((s) => [s.id, JSON.parse(s.rule) as Rule])),
  };
}

// ---- the fields ------------------------------------------------------------------------------------

const TableRef = builder.objectRef<QueryAnswer>("AnalyticsTable").implement({
  description: "A query's answer: columns (time, the dimensions, the metrics), rows, totals over the whole window, and the next page's cursor.",
  fields: (t) => ({
    columns: t.exposeStringList("columns"),
    rows: t.field({ type: "JSON", description: "Rows: arrays of values in column order.", resolve: (a) => a.rows }),
    totals: t.field({ type: "JSON", description: "Each metric over every matching event of the window.", resolve: (a) => a.totals }),
    cursor: t.exposeString("cursor", { nullable: true, description: "The next page's cursor; null when `rows` holds the rest of the answer." }),
  }),
});

const FunnelStepRef = builder.objectRef<FunnelStep>("AnalyticsFunnelStep").implement({
  fields: (t) => ({
    step: t.exposeInt("step"),
    users: t.exposeInt("users", { description: "End users who reached the step." }),
    conversionFromFirst: t.exposeFloat("conversionFromFirst", { description: "users ÷ step 1's users (a fraction of 1)." }),
    conversionFromPrevious: t.exposeFloat("conversionFromPrevious", { description: "users ÷ the previous step's users." }),
    medianMsFromPrevious: t.exposeFloat("medianMsFromPrevious", {
      nullable: true,
      description: "The lower median time from the previous step, over the users who reached this one (ms); null on step 1 or with no user.",
    }),
  }),
});

const FunnelGroupRef = builder.objectRef<{ value: unknown; steps: FunnelStep[] }>("AnalyticsFunnelGroup").implement({
  fields: (t) => ({
    value: t.field({ type: "JSON", nullable: true, description: "The breakdown's value (null: none).", resolve: (g) => g.value as never }),
    steps: t.field({ type: [FunnelStepRef], resolve: (g) => g.steps }),
  }),
});

const FunnelRef = builder.objectRef<FunnelAnswer>("AnalyticsFunnel").implement({
  description: "A funnel's answer: `steps`, or with a breakdown `breakdown` and `groups` (by value, code point order, null first).",
  fields: (t) => ({
    breakdown: t.exposeString("breakdown", { nullable: true }),
    steps: t.field({ type: [FunnelStepRef], nullable: true, resolve: (a) => a.steps }),
    groups: t.field({ type: [FunnelGroupRef], nullable: true, resolve: (a) => a.groups }),
  }),
});

const CohortRef = builder.objectRef<RetentionAnswer["cohorts"][number]>("AnalyticsCohort").implement({
  fields: (t) => ({
    start: t.exposeString("start", { description: "The cohort's period start in the time zone, YYYY-MM-DD." }),
    users: t.exposeInt("users"),
    retained: t.exposeIntList("retained", {
      description: "retained[0]: the cohort's size; retained[k]: its users back in the k-th period after (periods not begun yet left out).",
    }),
  }),
});

const RetentionRef = builder.objectRef<RetentionAnswer>("AnalyticsRetention").implement({
  fields: (t) => ({
    period: t.field({ type: PeriodEnum, resolve: (a) => a.period }),
    cohorts: t.field({ type: [CohortRef], resolve: (a) => a.cohorts }),
  }),
});

interface Analytics {
  accountId: string;
}

/** Whether a question reads the end users' values (a user: dimension or condition, a segment). */
const readsUsers = (dims: readonly Dimension[], filters: readonly Condition[]) =>
  dims.some((d) => d.kind === "user") || conditionDimensions(filters).some((d) => d.kind === "user") || conditionSegments(filters).length > 0;

/**
 * A question field's cost before it runs (src/graphql/cost.ts reads `extensions.cost`): what it
 * scans, from its input parsed by the one parser. An input that does not parse costs 1 unit: it is
 * refused (400) before any scan.
 */
const questionCost =
  <A>(scan: (args: A) => Scan) =>
  (args: Record<string, unknown>): number => {
    try {
      return scanCost(scan(args as A));
    } catch {
      return 1;
    }
  };
type Args<I> = { input: I };
const checker = () => new Checker("input");

const AnalyticsRef = builder.objectRef<Analytics>("Analytics").implement({
  description: "Ad hoc questions over the account's engagement events (docs/explore.md).",
  fields: (t) => ({
    query: t.field({
      type: TableRef,
      description: "Metrics over the matching events of a window, by time bucket and up to three dimensions.",
      args: {
        input: t.arg({ type: QueryInput, required: true }),
        errorPaths: t.arg({ type: PathStyleEnum, required: false, defaultValue: "input" }),
        allRows: t.arg.boolean({ required: false, description: "Every row in one answer, ignoring limit and cursor (what CSV downloads use)." }),
      },
      extensions: {
        cost: questionCost(({ input }: Args<QueryInputShape>) => {
          const q = parseQuery(checker(), queryToWire(input));
          return { windowMs: q.to - q.from, dimensions: q.dimensions.length, userValues: readsUsers(q.dimensions, q.filters) };
        }),
      },
      resolve: async (a, args) => {
        const c = new Checker((args.errorPaths ?? "input") as PathStyle);
        const q = parseQuery(c, queryToWire(args.input));
        const users = await userContextOf(a.accountId, q.dimensions, q.filters);
        return runQuery(dialect(), c, a.accountId, q, users, { allRows: args.allRows ?? false });
      },
    }),
    funnel: t.field({
      type: FunnelRef,
      description: "How many end users reach each step, in order, within the conversion window; optionally by a breakdown.",
      args: {
        input: t.arg({ type: FunnelInput, required: true }),
        errorPaths: t.arg({ type: PathStyleEnum, required: false, defaultValue: "input" }),
      },
      extensions: {
        cost: questionCost(({ input }: Args<FunnelInputShape>) => {
          const q = parseFunnel(checker(), funnelToWire(input));
          const dims = [...(q.breakdown ? [q.breakdown] : []), ...q.steps.flatMap((s) => conditionDimensions(s))];
          return { windowMs: q.to - q.from, dimensions: q.breakdown ? 1 : 0, userValues: readsUsers(dims, q.filters) };
        }),
      },
      resolve: async (a, args) => {
        const c = new Checker((args.errorPaths ?? "input") as PathStyle);
        const q = parseFunnel(c, funnelToWire(args.input));
        const dims = [...(q.breakdown ? [q.breakdown] : []), ...q.steps.flatMap((s) => conditionDimensions(s))];
        const users = await userContextOf(a.accountId, dims, q.filters);
        return runFunnel(dialect(), c, a.accountId, q, users);
      },
    }),
    retention: t.field({
      type: RetentionRef,
      description: "Cohorts by the period of each end user's first start event, and how many came back in each period after.",
      args: {
        input: t.arg({ type: RetentionInput, required: true }),
        errorPaths: t.arg({ type: PathStyleEnum, required: false, defaultValue: "input" }),
      },
      extensions: {
        cost: questionCost(({ input }: Args<RetentionInputShape>) => {
          const q = parseRetention(checker(), retentionToWire(input));
          // Priced by what it reads: the return events from startDate up to now, not the window alone.
          return { windowMs: retentionReadMs(q, clock.now().getTime()), dimensions: 0, userValues: readsUsers([], q.filters) };
        }),
      },
      resolve: async (a, args) => {
        const c = new Checker((args.errorPaths ?? "input") as PathStyle);
        const q = parseRetention(c, retentionToWire(args.input));
        const users = await userContextOf(a.accountId, [], q.filters);
        return runRetention(dialect(), c, a.accountId, q, users);
      },
    }),
  }),
});

builder.prismaObjectField(Account, "analytics", (t) =>
  t.field({
    type: AnalyticsRef,
    description: "Explore: ad hoc questions (query, funnel, retention) over the account's events.",
    resolve: (account) => ({ accountId: account.id }),
  }),
);
