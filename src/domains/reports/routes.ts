// REST row of the reports (B24): GET /v1/accounts/{accountId}/reports/{reportName}, JSON or CSV.
import { stringify } from "csv-stringify";
import type { RestReply } from "../../rest/contract.js";
import { B, type RestInput, type RestRoute, route } from "../../rest/contract.js";
import { graphql } from "../../rest/operation.js";
import { cursorParam, intParam, pathParam, stringParam } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { type Column, DEFAULT_REPORT_LIMIT, MAX_REPORT_LIMIT, REPORTS, REPORTS_BY_NAME } from "./registry.js";
import type { ReportTable } from "./schema.js";
import { domainList } from "./window.js";

/**
 * 10000 as "10,000" without Intl: this text is built at start-up, and a first use of ICU's number
 * formatting maps about 5 MB of its data (idle RSS; docs/performance.md, "Idle").
 */
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ",");

const REPORT =
  graphql(`query Report($accountId: String!, $name: String!, $flowId: String, $startDate: String, $endDate: String, $includeDomains: [String!], $excludeDomains: [String!], $limit: Int, $cursor: String, $allRows: Boolean) {
  report(accountId: $accountId, name: $name, flowId: $flowId, startDate: $startDate, endDate: $endDate, includeDomains: $includeDomains, excludeDomains: $excludeDomains, limit: $limit, cursor: $cursor, allRows: $allRows) {
    report startDate endDate columns rows cursor } }`);

const FORMATS = ["json", "csv"] as const;
const DATE = { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}( \\d{2}:\\d{2})?$" };
const LIST = { type: "string", description: "Comma-separated; the parameter may also be repeated." };

/** A CSV cell: times as ISO 8601 UTC, booleans true/false, null empty, formula-leading text neutralised. */
export function csvCell(c: Column, v: unknown): string {
  if (v === null || v === undefined) return "";
  if (c.kind === "time") return new Date(v as number).toISOString();
  const s = String(v);
  // A spreadsheet would run a cell starting with these as a formula (CSV injection): a leading
  // apostrophe makes it text. Counts and dates never start with them; caller-given text may.
  return c.kind === "string" && /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
}

function csvReply(table: ReportTable): RestReply {
  const columns = REPORTS_BY_NAME.get(table.report)!.columns;
  const records = table.rows.map((row) => columns.map((c, i) => csvCell(c, row[i])));
  const day = (iso: string) => iso.slice(0, 10);
  return {
    status: 200,
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="${table.report}_${day(table.startDate)}_${day(table.endDate)}.csv"`,
      "Cache-Control": "no-store",
    },
    // RFC 4180: CRLF between records, fields with a comma, quote or line break quoted, quotes doubled.
    stream: async () => stringify(records, { header: true, columns: columns.map((c) => c.name), record_delimiter: "windows", quoted_match: /[\r\n]/ }),
  };
}

const EXAMPLE_CSV = 'flowId,plays,uniqueUsers\r\nc_flow1,12,9\r\n"c_flow,2",3,3\r\n';

export const reportRoutes: RestRoute[] = [
  route(REPORT, {
    name: "report",
    method: "get",
    path: `${B}/reports/:reportName`,
    summary: "B24: an analytics report, aggregated from the engagement events (JSON or CSV)",
    params: { reportName: { description: `The report: ${REPORTS.map((r) => r.name).join(", ")}.`, example: "flowViews" } },
    query: {
      startDate: {
        description: "Window start, UTC, `YYYY-MM-DD` (00:00) or `YYYY-MM-DD HH:MM`, inclusive. Default: 30 days before the end.",
        schema: DATE,
        example: "2024-06-01",
      },
      endDate: { description: "Window end, UTC, exclusive; a date alone includes that whole day. Default: now.", schema: DATE, example: "2024-06-30" },
      includeDomains: { description: "Only events on these domains (events without a domain are left out).", schema: LIST, example: "app.example.com" },
      excludeDomains: {
        description: "Leave out events on these domains (with includeDomains: included minus excluded).",
        schema: LIST,
        example: "test.example.com",
      },
      flowId: {
        description:
          "The flow; required by the flow reports (flowCompletion, flowFeedback, flowFeedbackComments, flowEditors, flowDropOff, flowPlaysByWidget, flowPlaysByDay).",
        schema: { type: "string" },
        example: "c_flow1",
      },
      format: {
        description: "`json` (default) or `csv` (an attachment, same columns as a header row, every row: `limit` and `cursor` do not apply).",
        schema: { type: "string", enum: [...FORMATS], default: "json" },
        example: "json",
      },
      limit: {
        description: `JSON: rows per page, 1 to ${grouped(MAX_REPORT_LIMIT)}; default ${grouped(DEFAULT_REPORT_LIMIT)}. Pages follow the report's sort order (keyset).`,
        schema: { type: "integer", minimum: 1, maximum: MAX_REPORT_LIMIT, default: DEFAULT_REPORT_LIMIT },
        example: 1000,
      },
      cursor: {
        description: "JSON: the `cursor` of the previous page (opaque); the rows after it. A malformed cursor, or one of another report, is a 400.",
        schema: { type: "string" },
        example: "eyJyIjoiZmxvd0NvbXBsZXRpb25CeVVzZXIiLCJ2IjpbInUxIiwiQW5uIiwiZjEiLDEsMV0sInMiOjF9",
      },
    },
    variables: (i: RestInput) => {
      const csv = stringParam(i.query, "format", { oneOf: FORMATS }) === "csv";
      return {
        // CSV is one download of every row, whatever `limit` and `cursor` say (not even read); JSON answers a page.
        ...(csv ? { allRows: true } : { limit: intParam(i.query, "limit", { min: 1, max: MAX_REPORT_LIMIT }) ?? null, cursor: cursorParam(i.query) ?? null }),
        accountId: pathParam(i, "accountId"),
        name: pathParam(i, "reportName"),
        flowId: stringParam(i.query, "flowId") ?? null,
        startDate: stringParam(i.query, "startDate") ?? null,
        endDate: stringParam(i.query, "endDate") ?? null,
        includeDomains: domainList(i.query.includeDomains, "includeDomains"),
        excludeDomains: domainList(i.query.excludeDomains, "excludeDomains"),
      };
    },
    reply: reply.custom(
      {
        200: {
          json: {
            type: "object",
            required: ["report", "startDate", "endDate", "columns", "rows", "cursor"],
            properties: {
              report: { type: "string", example: "flowViews" },
              startDate: { type: "string", description: "Window start (inclusive), ISO 8601 UTC.", example: "2024-06-01T00:00:00.000Z" },
              endDate: { type: "string", description: "Window end (exclusive), ISO 8601 UTC.", example: "2024-07-01T00:00:00.000Z" },
              columns: { type: "array", items: { type: "string" }, example: ["flowId", "plays", "uniqueUsers"] },
              rows: {
                type: "array",
                description: "Values in column order: counts as integers, times in epoch ms, dates YYYY-MM-DD, booleans, null.",
                items: { type: "array", items: { type: ["string", "integer", "boolean", "null"] } },
                example: [["c_flow1", 12, 9]],
              },
              cursor: {
                type: ["string", "null"],
                description: `The next page's cursor (pass it as \`cursor\`); null when \`rows\` holds the rest of the answer. Pages hold at most \`limit\` rows (default ${DEFAULT_REPORT_LIMIT}).`,
                example: null,
              },
            },
          },
          text: { "text/csv": { description: "With format=csv: RFC 4180, a header row, times ISO 8601 UTC; an attachment.", example: EXAMPLE_CSV } },
        },
        404: "problem",
      },
      (data, input) => {
        // `rows` is the JSON scalar, unknown to the document's types: the report resolver gives ReportTable's rows.
        const table: ReportTable = { ...data.report, rows: data.report.rows as ReportTable["rows"] };
        if (input.query.format === "csv") return csvReply(table);
        return { status: 200, body: table, headers: { "Cache-Control": "no-store" } };
      },
    ),
  }),
];
