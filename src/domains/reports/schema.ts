// The reports in GraphQL: `report(name: ...)` answers any report as a table (the REST route runs
// it), and `reports { <name> }` has one typed field per report for the dashboard, its row type
// generated from the registry's columns. Both run the same definitions (registry.ts).
import { notFound, badRequest } from "../../errors.js";
import { builder } from "../../schema/builder.js";
import { requireAccount } from "../accounts/schema.js";
import { REPORTS, REPORTS_BY_NAME, runReport, type ColumnKind, type ReportDefinition, type ReportParams } from "./registry.js";
import { domainList, reportWindow } from "./window.js";

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
}

const ReportTableRef = builder.objectRef<ReportTable>("ReportTable").implement({
  description: "A report as a table: its columns and rows (values in column order; times in epoch ms, dates YYYY-MM-DD).",
  fields: (t) => ({
    report: t.exposeString("report"),
    startDate: t.exposeString("startDate", { description: "Start of the window (inclusive), ISO 8601 UTC." }),
    endDate: t.exposeString("endDate", { description: "End of the window (exclusive), ISO 8601 UTC." }),
    columns: t.exposeStringList("columns"),
    rows: t.field({ type: "JSON", description: "Rows: arrays of values in column order.", resolve: (r) => r.rows }),
  }),
});

builder.queryField("report", (t) =>
  t.field({
    type: ReportTableRef,
    description: `One analytics report by name (B24): ${REPORTS.map((r) => r.name).join(", ")}. Flow reports need flowId.`,
    args: { accountId: t.arg.string({ required: true }), name: t.arg.string({ required: true }), flowId: t.arg.string({ required: false }), ...filterArgs(t) },
    resolve: async (_root, args, ctx) => {
      await requireAccount(ctx, args.accountId);
      const def = REPORTS_BY_NAME.get(args.name);
      if (!def) throw notFound(`no report named '${args.name.slice(0, 80)}'; reports: ${REPORTS.map((r) => r.name).join(", ")}`);
      const flowId = flowIdOf(def, args.flowId);
      const p = { ...(await paramsOf(ctx, args.accountId, args as Filters)), flowId };
      return {
        report: def.name,
        startDate: p.from.toISOString(),
        endDate: p.to.toISOString(),
        columns: def.columns.map((c) => c.name),
        rows: await runReport(def, p),
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

const ReportsRef = builder.objectRef<Omit<ReportParams, "flowId">>("Reports").implement({
  description: "The analytics reports (B24) of one account and window, one typed field per report.",
  fields: (t) =>
    Object.fromEntries(
      REPORTS.map((def) => [
        def.name,
        t.field({
          type: [rowTypes.get(def.name)!],
          description: def.description + (def.flow ? " Needs flowId." : ""),
          args: def.flow ? { flowId: t.arg.string({ required: true }) } : {},
          resolve: (p, args: { flowId?: string }) => runReport(def, { ...p, flowId: flowIdOf(def, args.flowId) }),
        }),
      ]),
    ),
});

builder.queryField("reports", (t) =>
  t.field({
    type: ReportsRef,
    description: "The account's analytics reports for a window and domain filters; select the reports you need.",
    args: { accountId: t.arg.string({ required: true }), ...filterArgs(t) },
    resolve: (_root, args, ctx) => paramsOf(ctx, args.accountId, args as Filters),
  }),
);
