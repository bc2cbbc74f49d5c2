// REST rows of Explore: POST /v1/accounts/{accountId}/analytics/query (…/funnel, …/retention), a
// JSON body in the contract's form. The body is checked here first by the one parser
// (./input.ts, errors naming `body.filters[1][1]`), then mapped to the typed GraphQL input the
// row's document runs with; `format=csv` answers the same columns as CSV, as reports do.
import { stringify } from "csv-stringify";
import { B, type RestInput, type RestReply, type RestRoute, route, unchecked } from "../../rest/contract.js";
import type { JsonSchema } from "../../rest/docs.js";
import { graphql } from "../../rest/operation.js";
import { pathParam, stringParam } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { csvCell } from "../reports/routes.js";
import {
  Checker,
  DEFAULT_CONVERSION_WINDOW_MS,
  DEFAULT_LIMIT,
  MAX_CONVERSION_WINDOW_MS,
  MAX_LIMIT,
  METRICS,
  OPERATORS,
  PERIODS,
  parseFunnel,
  parseQuery,
  parseRetention,
} from "./input.js";
import { funnelFromWire, queryFromWire, retentionFromWire } from "./schema.js";

const FORMATS = ["json", "csv"] as const;
const FORMAT = {
  format: {
    description:
      "`json` (default) or `csv` (an attachment: the same columns as a header row, then every row; `limit` and `cursor` do not apply; at most EXPLORE_MAX_ROWS rows, 100,000 by default, past which it is a 400).",
    schema: { type: "string", enum: [...FORMATS], default: "json" },
    example: "json",
  },
};

const csv = (i: RestInput) => stringParam(i.query, "format", { oneOf: FORMATS }) === "csv";

/** The answer as CSV: a header row, RFC 4180 quoting, formula-leading text neutralised (the reports' cells). */
function csvReply(name: string, columns: string[], rows: unknown[][]): RestReply {
  const records = rows.map((row) => row.map((v) => csvCell({ name: "", kind: typeof v === "string" ? "string" : "int", description: "" }, v)));
  return {
    status: 200,
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="explore_${name}.csv"`,
      "Cache-Control": "no-store",
    },
    stream: async () => stringify(records, { header: true, columns, record_delimiter: "windows", quoted_match: /[\r\n]/ }),
  };
}

// ---- the body's JSON Schema (OpenAPI) -------------------------------------------------------------

const DIMENSION: JsonSchema = { type: "string", description: "event:type, event:flowId, …, or user:<field>.", example: "event:type" };
const CONDITION: JsonSchema = {
  type: "array",
  minItems: 2,
  // The items' types depend on the operator (a dimension, a list of values, a number, conditions).
  items: {},
  description: `A condition: [operator, …] with operator one of ${OPERATORS.join(", ")} (docs/explore.md).`,
  example: ["is", "event:type", ["flow_started"]],
};
const DATES = {
  startDate: { type: "string", description: "UTC, YYYY-MM-DD or YYYY-MM-DD HH:MM, inclusive; default 30 days before endDate." },
  endDate: { type: "string", description: "UTC, exclusive (a date alone includes that day); default now." },
};

const QUERY_BODY: JsonSchema = {
  type: "object",
  required: ["metrics"],
  properties: {
    metrics: { type: "array", minItems: 1, maxItems: 6, uniqueItems: true, items: { type: "string", enum: [...METRICS] } },
    dimensions: { type: "array", maxItems: 3, uniqueItems: true, items: DIMENSION },
    filters: { type: "array", items: CONDITION },
    interval: { type: "string", enum: ["hour", "day", "week", "month"] },
    timeZone: { type: "string", description: "IANA time zone of the buckets; default UTC.", example: "Europe/Berlin" },
    orderBy: {
      type: "array",
      items: { type: "array", minItems: 2, maxItems: 2, items: { type: "string" }, description: '[metric, dimension or "time", "asc" or "desc"]' },
    },
    limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    cursor: { type: "string" },
    ...DATES,
  },
};

const TABLE: JsonSchema = {
  type: "object",
  required: ["columns", "rows", "totals", "cursor"],
  properties: {
    columns: { type: "array", items: { type: "string" }, example: ["time", "event:type", "events", "users"] },
    rows: {
      type: "array",
      items: { type: "array", items: { type: ["string", "number", "boolean", "null"] } },
      example: [["2026-10-05", "flow_started", 120, 80]],
    },
    totals: { type: "array", items: { type: ["number", "null"] }, example: [120, 80] },
    cursor: {
      type: ["string", "null"],
      description: "The next page's cursor (pass it as the body's `cursor`); null when `rows` holds the rest.",
      example: null,
    },
  },
};

const QUERY = graphql(`query AnalyticsQuery($accountId: String!, $input: AnalyticsQueryInput!, $allRows: Boolean) {
  account(id: $accountId) { analytics { query(input: $input, errorPaths: body, allRows: $allRows) { columns rows totals cursor } } } }`);

const FUNNEL_BODY: JsonSchema = {
  type: "object",
  required: ["steps"],
  properties: {
    steps: {
      type: "array",
      minItems: 2,
      maxItems: 10,
      items: { type: "object", properties: { filters: { type: "array", items: CONDITION, description: "Conditions on event: dimensions." } } },
    },
    conversionWindowMs: { type: "integer", minimum: 1, maximum: MAX_CONVERSION_WINDOW_MS, default: DEFAULT_CONVERSION_WINDOW_MS },
    filters: { type: "array", items: CONDITION, description: "Conditions every step's events meet (user: dimensions, inSegment, event: dimensions)." },
    breakdown: { type: "string", description: "One user:<field>, or event:domain (the entry event's).", example: "user:plan" },
    ...DATES,
  },
};

const STEP: JsonSchema = {
  type: "object",
  required: ["step", "users", "conversionFromFirst", "conversionFromPrevious", "medianMsFromPrevious"],
  properties: {
    step: { type: "integer" },
    users: { type: "integer" },
    conversionFromFirst: { type: "number" },
    conversionFromPrevious: { type: "number" },
    medianMsFromPrevious: { type: ["number", "null"] },
  },
};

const FUNNEL_ANSWER: JsonSchema = {
  type: "object",
  description: "`steps`, or with a breakdown `breakdown` and `groups`.",
  properties: {
    steps: { type: "array", items: STEP },
    breakdown: { type: "string" },
    groups: { type: "array", items: { type: "object", required: ["value", "steps"], properties: { value: {}, steps: { type: "array", items: STEP } } } },
  },
  // The two steps of the request's example: 84 of the 120 who started a flow completed one, a median 95 s later.
  example: {
    steps: [
      { step: 1, users: 120, conversionFromFirst: 1, conversionFromPrevious: 1, medianMsFromPrevious: null },
      { step: 2, users: 84, conversionFromFirst: 0.7, conversionFromPrevious: 0.7, medianMsFromPrevious: 95_000 },
    ],
  },
};

const FUNNEL = graphql(`query AnalyticsFunnel($accountId: String!, $input: AnalyticsFunnelInput!) {
  account(id: $accountId) { analytics { funnel(input: $input, errorPaths: body) { breakdown
    steps { step users conversionFromFirst conversionFromPrevious medianMsFromPrevious }
    groups { value steps { step users conversionFromFirst conversionFromPrevious medianMsFromPrevious } } } } } }`);

const STEP_COLUMNS = ["step", "users", "conversionFromFirst", "conversionFromPrevious", "medianMsFromPrevious"] as const;

const EVENT: JsonSchema = { type: "object", properties: { filters: { type: "array", items: CONDITION, description: "Conditions on event: dimensions." } } };
const RETENTION_BODY: JsonSchema = {
  type: "object",
  required: ["startEvent"],
  properties: {
    startEvent: { ...EVENT, description: "What puts a user in a cohort: their first such event in the window." },
    returnEvent: { ...EVENT, description: "What counts as coming back; default: any event." },
    period: { type: "string", enum: [...PERIODS], default: "week" },
    periods: { type: "integer", minimum: 1, maximum: 52, default: 8 },
    filters: { type: "array", items: CONDITION, description: "Conditions on user: dimensions or inSegment." },
    timeZone: { type: "string", description: "IANA time zone of the periods; default UTC.", example: "Europe/Berlin" },
    ...DATES,
  },
};
const RETENTION_ANSWER: JsonSchema = {
  type: "object",
  required: ["period", "cohorts"],
  properties: {
    period: { type: "string", enum: [...PERIODS] },
    cohorts: {
      type: "array",
      items: {
        type: "object",
        required: ["start", "users", "retained"],
        properties: { start: { type: "string" }, users: { type: "integer" }, retained: { type: "array", items: { type: "integer" } } },
      },
    },
  },
  // The request's example: September 2026 by week (weeks start on Monday: a first event on 1 September is in the week of 31 August), 4 periods.
  example: {
    period: "week",
    cohorts: [
      { start: "2026-08-31", users: 120, retained: [120, 61, 40, 33, 30] },
      { start: "2026-09-07", users: 95, retained: [95, 50, 38, 31, 27] },
    ],
  },
};

const RETENTION = graphql(`query AnalyticsRetention($accountId: String!, $input: AnalyticsRetentionInput!) {
  account(id: $accountId) { analytics { retention(input: $input, errorPaths: body) { period cohorts { start users retained } } } } }`);

export const exploreRoutes: RestRoute[] = [
  route(QUERY, {
    name: "analyticsQuery",
    method: "post",
    path: `${B}/analytics/query`,
    summary: "Explore: metrics over the account's events by time bucket and dimensions (JSON or CSV)",
    jsonBody: true,
    query: FORMAT,
    body: {
      schema: QUERY_BODY,
      example: { metrics: ["events", "users"], dimensions: ["event:type"], interval: "day", startDate: "2026-10-01", endDate: "2026-10-07" },
    },
    variables: (i) => {
      const all = csv(i);
      const c = new Checker("body");
      parseQuery(c, i.body);
      return { accountId: pathParam(i, "accountId"), input: unchecked(queryFromWire(i.body as Record<string, unknown>)), allRows: all };
    },
    reply: reply.custom(
      {
        200: {
          json: TABLE,
          text: {
            "text/csv": {
              description: "With format=csv: RFC 4180, a header row; an attachment.",
              example: "time,event:type,events,users\r\n2026-10-05,flow_started,120,80\r\n",
            },
          },
        },
        422: "problem", // a question past EXPLORE_TIMEOUT_MS (./run.ts)
      },
      (data, input) => {
        const a = data.account.analytics.query;
        if (csv(input)) return csvReply("query", a.columns, a.rows as unknown[][]);
        return { status: 200, body: a, headers: { "Cache-Control": "no-store" } };
      },
    ),
  }),
  route(FUNNEL, {
    name: "analyticsFunnel",
    method: "post",
    path: `${B}/analytics/funnel`,
    summary: "Explore: how many end users reach each step of a funnel within the conversion window (JSON or CSV)",
    jsonBody: true,
    query: FORMAT,
    body: {
      schema: FUNNEL_BODY,
      example: {
        steps: [{ filters: [["is", "event:type", ["flow_started"]]] }, { filters: [["is", "event:type", ["flow_completed"]]] }],
        startDate: "2026-10-01",
        endDate: "2026-10-07",
      },
    },
    variables: (i) => {
      csv(i);
      parseFunnel(new Checker("body"), i.body);
      return { accountId: pathParam(i, "accountId"), input: unchecked(funnelFromWire(i.body as Record<string, unknown>)) };
    },
    reply: reply.custom(
      {
        200: {
          json: FUNNEL_ANSWER,
          text: {
            "text/csv": {
              description: "With format=csv: a row per step (and breakdown value, first column `value`).",
              example: "step,users,conversionFromFirst,conversionFromPrevious,medianMsFromPrevious\r\n1,120,1,1,\r\n2,84,0.7,0.7,95000\r\n",
            },
          },
        },
        422: "problem", // a question past EXPLORE_TIMEOUT_MS (./run.ts)
      },
      (data, input) => {
        const a = data.account.analytics.funnel;
        if (csv(input)) {
          const row = (s: Record<string, unknown>) => STEP_COLUMNS.map((k) => s[k]);
          if (a.breakdown === null) return csvReply("funnel", [...STEP_COLUMNS], (a.steps ?? []).map(row));
          return csvReply(
            "funnel",
            ["value", ...STEP_COLUMNS],
            (a.groups ?? []).flatMap((g) => g.steps.map((s) => [g.value, ...row(s)])),
          );
        }
        const body = a.breakdown === null ? { steps: a.steps } : { breakdown: a.breakdown, groups: a.groups };
        return { status: 200, body, headers: { "Cache-Control": "no-store" } };
      },
    ),
  }),
  route(RETENTION, {
    name: "analyticsRetention",
    method: "post",
    path: `${B}/analytics/retention`,
    summary: "Explore: retention cohorts by the period of each end user's first start event (JSON or CSV)",
    jsonBody: true,
    query: FORMAT,
    body: {
      schema: RETENTION_BODY,
      example: {
        startEvent: { filters: [["is", "event:type", ["flow_completed"]]] },
        period: "week",
        periods: 4,
        startDate: "2026-09-01",
        endDate: "2026-09-30",
      },
    },
    variables: (i) => {
      csv(i);
      parseRetention(new Checker("body"), i.body);
      return { accountId: pathParam(i, "accountId"), input: unchecked(retentionFromWire(i.body as Record<string, unknown>)) };
    },
    reply: reply.custom(
      {
        200: {
          json: RETENTION_ANSWER,
          text: {
            "text/csv": {
              description: "With format=csv: a row per cohort: start, users, then retained[1…] (empty: not begun).",
              example: "start,users,1,2,3,4\r\n2026-08-31,120,61,40,33,30\r\n2026-09-07,95,50,38,31,27\r\n",
            },
          },
        },
        422: "problem", // a question past EXPLORE_TIMEOUT_MS (./run.ts)
      },
      (data, input) => {
        const a = data.account.analytics.retention;
        if (csv(input)) {
          const width = Math.max(0, ...a.cohorts.map((c) => c.retained.length - 1));
          const columns = ["start", "users", ...Array.from({ length: width }, (_, k) => String(k + 1))];
          return csvReply(
            "retention",
            columns,
            a.cohorts.map((c) => [c.start, c.users, ...Array.from({ length: width }, (_, k) => c.retained[k + 1] ?? null)]),
          );
        }
        return { status: 200, body: a, headers: { "Cache-Control": "no-store" } };
      },
    ),
  }),
];
