// The reports in GraphQL: `report(name: ...)` answers any report as a table (the REST route runs
// it), and `reports { <name> }` has one typed field per report for the dashboard, its row type
// generated from the registry's columns. Both run the same definitions (registry.ts).
import { badRequest, notFound } from "../../errors.js";
import { builder } from "../../schema/builder.js";
import { pageSize } from "../../schema/pagination.js";
import { requireAccount } from "../accounts/schema.js";
import {
  type Column,
  type ColumnKind,
  DEFAULT_REPORT_LIMIT,
  type Keyset,
  MAX_REPORT_LIMIT,
  REPORTS,
  REPORTS_BY_NAME,
  type ReportDefinition,
  type ReportParams,
  runReport,
} from "./registry.js";
import { domainList, reportWindow, reportWindowCost } from "./window.js";

type Filters = { startDate?: string | null; endDate?: string | null; includeDomains?: readonly string[] | null; excludeDomains?: readonly string[] | null };

async function paramsOf(ctx: Parameters<typeof requireAccount>[0], accountId: string, f: Filters): Promise<Omit<ReportParams, "flowId">> {
  await requireAccount(ctx, accountId);
  const { from, to } = reportWindow(f.startDate, f.endDate);
  return {
    accountId,
    from,
    to,
    includeDomains: domainList(f.includeDomains ?? [], "includeDomains"),
    excludeDomains: domainList(f.excludeDomains ?? [], "excludeDomains"),
  };
}

function flowIdOf(def: ReportDefinition, flowId: string | null | undefined): string | null {
  if (!def.flow) return null;
  if (!flowId) throw badRequest(`flowId is required for the ${def.name} report`, [{ path: "flowId", message: "is required" }]);
  return flowId;
}

const filterArgs = (t: any) => ({
  startDate: t.arg.string({ required: false, description: "UTC, YYYY-MM-DD HH:MM or YYYY-MM-DD (from 00:00); default: 30 days before endDate (or now)." }),
  endDate: t.arg.string({ required: false, description: "UTC, YYYY-MM-DD HH:MM or YYYY-MM-DD (a date alone includes that day); exclusive; default: now." }),
  includeDomains: t.arg.stringList({ required: false, description: "Only events on these domains (events without a domain are left out)." }),
  excludeDomains: t.arg.stringList({ required: false, description: "Leave out events on these domains." }),
});

export interface ReportTable {
  report: string;
  startDate: string;
  endDate: string;
  columns: string[];
  rows: unknown[][];
  /** The next page's cursor; null when `rows` holds the rest (and on answers of every row). */
  cursor: string | null;
}

// ---- paging: keyset cursors over a report's sort order ---------------------------------------------

/**
 * A cursor: the report's name, the keyset (the last row's sort values) and the account, base64url
 * JSON. Without the account another account's cursor was a valid keyset here: read as one, it
 * skipped this account's rows before it without a word.
 */
export function encodeReportCursor(report: string, accountId: string, k: Keyset): string {
  return Buffer.from(JSON.stringify({ r: report, v: k.values, s: k.same, a: accountId })).toString("base64url");
}

/** A timestamp as a cursor holds it: ISO 8601 in UTC, as the database gives it (PostgreSQL: Z; SQLite: +00:00). */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|\+00:00)$/;

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

const malformed = () =>
  badRequest("cursor is malformed: pass the cursor value of a previous page of this report unchanged", [{ path: "cursor", message: "malformed cursor" }]);

/** Decodes and checks a cursor against the report's columns (a value of the wrong kind would reach SQL). */
export function decodeReportCursor(def: ReportDefinition, accountId: string, cursor: string): Keyset {
  let v: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,100000}$/.test(cursor)) throw malformed();
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw malformed();
  }
  const c = v as { r?: unknown; v?: unknown; s?: unknown; a?: unknown };
  if (
    !c ||
    typeof c !== "object" ||
    !Array.isArray(c.v) ||
    c.v.length !== def.columns.length ||
    !Number.isSafeInteger(c.s) ||
    (c.s as number) < 1 ||
    (c.a !== undefined && typeof c.a !== "string")
  )
    throw malformed();
  if (c.r !== def.name) throw badRequest(`cursor belongs to another report than ${def.name}`, [{ path: "cursor", message: "cursor from another report" }]);
  // (Cursors issued before they named their account have none: read as before.)
  if (c.a !== undefined && c.a !== accountId)
    throw badRequest("cursor belongs to another account: pass a cursor of this account's report", [{ path: "cursor", message: "cursor of another account" }]);
  // Each value must be of the kind its column's SQL compares it with: one of another kind (a date
  // string against epoch milliseconds, text holding NUL) would be refused by the database, a 500.
  const ok = (col: Column, x: unknown) =>
    x === null ||
    (col.kind === "string" && typeof x === "string" && !x.includes("\u0000")) ||
    ((col.kind === "int" || col.kind === "date") && Number.isSafeInteger(x) && (!col.int32 || ((x as number) >= INT32_MIN && (x as number) <= INT32_MAX))) ||
    (col.kind === "time" && (col.fromTimestamp ? typeof x === "string" && ISO_TIMESTAMP.test(x) && !Number.isNaN(Date.parse(x)) : Number.isSafeInteger(x))) ||
    (col.kind === "bool" && (typeof x === "boolean" || x === 0 || x === 1));
  if (!def.columns.every((col, i) => ok(col, (c.v as unknown[])[i]))) throw malformed();
  return { values: c.v, same: c.s as number };
}

/** `limit` within 1..MAX_REPORT_LIMIT (a 400 otherwise), defaulted. */
function limitOf(limit: number | null | undefined, name = "limit"): number {
  return limit === null || limit === undefined ? DEFAULT_REPORT_LIMIT : pageSize(limit, { max: MAX_REPORT_LIMIT }, name);
}

/** One page of a report: its rows and the next page's cursor. */
async function reportPage(def: ReportDefinition, p: ReportParams, limit: number | null | undefined, cursor: string | null | undefined, limitName?: string) {
  const page = { limit: limitOf(limit, limitName), after: cursor ? decodeReportCursor(def, p.accountId, cursor) : null };
  const { rows, next } = await runReport(def, p, page);
  return { rows, cursor: next ? encodeReportCursor(def.name, p.accountId, next) : null };
}

const ReportTableRef = builder.objectRef<ReportTable>("ReportTable").implement({
  description: "A report as a table: its columns and rows (values in column order; times in epoch ms, dates YYYY-MM-DD).",
  fields: (t) => ({
    report: t.exposeString("report"),
    startDate: t.exposeString("startDate", { description: "Start of the window (inclusive), ISO 8601 UTC." }),
    endDate: t.exposeString("endDate", { description: "End of the window (exclusive), ISO 8601 UTC." }),
    columns: t.exposeStringList("columns"),
    rows: t.field({ type: "JSON", description: "Rows: arrays of values in column order.", resolve: (r) => r.rows }),
    cursor: t.exposeString("cursor", {
      nullable: true,
      description: "The next page's cursor (pass it as `cursor`); null when `rows` holds the rest of the answer.",
    }),
  }),
});

builder.queryField("report", (t) =>
  t.field({
    type: ReportTableRef,
    description: `One analytics report by name (B24): ${REPORTS.map((r) => r.name).join(", ")}. Flow reports need flowId.`,
    args: {
      accountId: t.arg.string({ required: true }),
      name: t.arg.string({ required: true }),
      flowId: t.arg.string({ required: false }),
      ...filterArgs(t),
      limit: t.arg.int({ required: false, description: `Rows per page, 1 to ${MAX_REPORT_LIMIT}; default ${DEFAULT_REPORT_LIMIT}.` }),
      cursor: t.arg.string({ required: false, description: "The `cursor` of the previous page: the rows after it, in the report's sort order (keyset)." }),
      allRows: t.arg.boolean({ required: false, description: "Every row in one answer, ignoring limit and cursor (what CSV downloads use)." }),
    },
    // What it scans: the window's days of rollups (src/graphql/cost.ts reads it before execution).
    extensions: { cost: reportWindowCost },
    resolve: async (_root, args, ctx) => {
      await requireAccount(ctx, args.accountId);
      const def = REPORTS_BY_NAME.get(args.name);
      if (!def) throw notFound(`no report named '${args.name.slice(0, 80)}'; reports: ${REPORTS.map((r) => r.name).join(", ")}`);
      const flowId = flowIdOf(def, args.flowId);
      const p = { ...(await paramsOf(ctx, args.accountId, args as Filters)), flowId };
      const page = args.allRows ? { rows: await runReport(def, p), cursor: null } : await reportPage(def, p, args.limit, args.cursor);
      return {
        report: def.name,
        startDate: p.from.toISOString(),
        endDate: p.to.toISOString(),
        columns: def.columns.map((c) => c.name),
        ...page,
      };
    },
  }),
);

// ---- typed fields, generated from the registry ----------------------------------------------------

const GQL_TYPE: Record<ColumnKind, "String" | "Int" | "Boolean" | "Timestamp"> = {
  string: "String",
  int: "Int",
  bool: "Boolean",
  time: "Timestamp",
  date: "String",
};
const typeName = (name: string) => `${name[0]!.toUpperCase()}${name.slice(1)}ReportRow`;

type Row = unknown[];
const rowTypes = new Map(
  REPORTS.map((def) => [
    def.name,
    builder.objectRef<Row>(typeName(def.name)).implement({
      description: `A row of the ${def.name} report.`,
      fields: (t) =>
        Object.fromEntries(
          def.columns.map((c, i) => [
            c.name,
            t.field({ type: GQL_TYPE[c.kind] as "String", nullable: c.nullable ?? false, description: c.description, resolve: (row) => row[i] as never }),
          ]),
        ),
    }),
  ]),
);

const ReportPageInfo = builder.objectRef<{ cursor: string | null }>("ReportPageInfo").implement({
  description: "Where a page of a per-user report ends.",
  fields: (t) => ({
    hasNextPage: t.boolean({ resolve: (p) => p.cursor !== null }),
    endCursor: t.string({ nullable: true, description: "Pass as `after` for the next page; null on the last page.", resolve: (p) => p.cursor }),
  }),
});

/** Per-user reports answer one row per end user (and flow or content): pages, as connections. */
const connectionTypes = new Map(
  REPORTS.filter((def) => def.perUser).map((def) => [
    def.name,
    builder.objectRef<{ rows: unknown[][]; cursor: string | null }>(`${def.name[0]!.toUpperCase()}${def.name.slice(1)}ReportConnection`).implement({
      description: `A page of the ${def.name} report, in its sort order.`,
      fields: (t) => ({
        nodes: t.field({ type: [rowTypes.get(def.name)!], resolve: (c) => c.rows }),
        pageInfo: t.field({ type: ReportPageInfo, resolve: (c) => c }),
      }),
    }),
  ]),
);

const ReportsRef = builder.objectRef<Omit<ReportParams, "flowId">>("Reports").implement({
  description:
    "The analytics reports (B24) of one account and window, one typed field per report. Per-user reports are connections " +
    `(first: default ${DEFAULT_REPORT_LIMIT}, max ${MAX_REPORT_LIMIT}; after: the previous page's endCursor); the others are lists of every row.`,
  fields: (t) =>
    Object.fromEntries(
      REPORTS.map((def) => {
        const flowArg: Record<string, any> = def.flow ? { flowId: t.arg.string({ required: true }) } : {};
        if (def.perUser)
          return [
            def.name,
            t.field({
              type: connectionTypes.get(def.name)!,
              description: `${def.description} Paged: first/after, keyset on the report's sort order.`,
              args: {
                ...flowArg,
                first: t.arg.int({ required: false, description: `Rows, 1 to ${MAX_REPORT_LIMIT}; default ${DEFAULT_REPORT_LIMIT}.` }),
                after: t.arg.string({ required: false, description: "The previous page's pageInfo.endCursor." }),
              },
              resolve: (p, args: { flowId?: string; first?: number | null; after?: string | null }) =>
                reportPage(def, { ...p, flowId: flowIdOf(def, args.flowId) }, args.first, args.after, "first"),
            }),
          ];
        return [
          def.name,
          t.field({
            type: [rowTypes.get(def.name)!],
            description: def.description + (def.flow ? " Needs flowId." : ""),
            args: flowArg,
            resolve: (p, args: { flowId?: string }) => runReport(def, { ...p, flowId: flowIdOf(def, args.flowId) }),
          }),
        ];
      }),
    ),
});

builder.queryField("reports", (t) =>
  t.field({
    type: ReportsRef,
    description: "The account's analytics reports for a window and domain filters; select the reports you need.",
    args: { accountId: t.arg.string({ required: true }), ...filterArgs(t) },
    // The window's days of rollups for each report selected under it (src/graphql/cost.ts): each runs
    // its own query, priced as its REST route (report) prices one report of that window.
    extensions: { costPerField: reportWindowCost },
    resolve: (_root, args, ctx) => paramsOf(ctx, args.accountId, args as Filters),
  }),
);
