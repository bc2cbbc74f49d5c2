// What the report viewer (GET /reports) needs to know about each of the 37 reports: its group in the
// page's list and the chart that fits its shape. Names, descriptions, columns and `flow` come from
// the registry, so the page cannot drift from what the API answers; test/reports-viewer.test.ts
// checks that every report has exactly one view here.
import { type ColumnKind, REPORTS } from "../domains/reports/registry.js";

/**
 * - `line`: per-day counts; x is the `date` column, one line per count column (or per value of
 *   `series`, e.g. one line per flow).
 * - `bars`: per-item counts; one bar per row labelled by `label`, one bar series per count column.
 * - `columns`: a single row whose count columns are the bars (`summary`).
 * - `stacked`: per-item parts of a whole (completed + not completed, useful + not useful).
 * - `stackedBy`: per-item counts split by another column's values (plays per flow, by widget).
 * - `funnel`: `flowDropOff`, users reaching each step.
 * - `table`: per-user and comment reports, a paged sortable table only.
 */
export type ChartShape =
  | { type: "line"; series?: string; values: string[] }
  | { type: "bars"; label: string; values: string[] }
  | { type: "columns"; values: string[] }
  | { type: "stacked"; label: string; values: string[] }
  | { type: "stackedBy"; label: string; by: string; value: string }
  | { type: "funnel"; label: string; value: string; dropped: string }
  | { type: "table" };

export interface ViewerGroup {
  id: string;
  title: string;
  reports: Record<string, ChartShape>;
}

const table = { type: "table" } as const;
const bars = (label: string, ...values: string[]): ChartShape => ({ type: "bars", label, values });
const line = (...values: string[]): ChartShape => ({ type: "line", values });
const stacked = (label: string, ...values: string[]): ChartShape => ({ type: "stacked", label, values });

export const VIEWER_GROUPS: readonly ViewerGroup[] = [
  {
    id: "engagement",
    title: "Engagement",
    reports: {
      summary: { type: "columns", values: ["selfHelpQueriesServed", "popupsShown", "tasksStarted", "flowsPlayed", "smartTipsShown", "beaconsShown"] },
      endUserEngagement: table,
    },
  },
  {
    id: "search",
    title: "Self Help search",
    reports: {
      selfHelpSearchTrend: line("searches", "uniqueSearchers"),
      searchSuccessVsFailure: bars("outcome", "searches"),
      searchTermsWithResults: bars("searchTerm", "searches"),
      successfulSearchTerms: bars("searchTerm", "searches"),
      unsuccessfulSearchTerms: bars("searchTerm", "searches"),
      searchTermsWithNoResults: bars("searchTerm", "searches"),
      selfHelpContent: bars("contentId", "views"),
    },
  },
  {
    id: "flows",
    title: "Flows",
    reports: {
      flowViews: bars("flowId", "plays", "uniqueUsers"),
      allFlowsCompletion: stacked("flowId", "completed", "notCompleted"),
      allFlowsFeedback: stacked("flowId", "useful", "notUseful"),
      allFlowsPlaysByDay: { type: "line", series: "flowId", values: ["plays"] },
      allFlowsPlaysByWidget: { type: "stackedBy", label: "flowId", by: "widget", value: "plays" },
      flowExits: bars("flowId", "exits"),
      flowCompletion: stacked("flowId", "completed", "notCompleted"),
      flowFeedback: stacked("flowId", "useful", "notUseful"),
      flowDropOff: { type: "funnel", label: "step", value: "reached", dropped: "droppedAfter" },
      flowPlaysByDay: line("plays"),
      flowPlaysByWidget: bars("widget", "plays"),
      flowEditors: bars("userId", "edits"),
      flowFeedbackComments: table,
      flowCompletionByUser: table,
      flowFailuresByUser: table,
      taskListCompletion: table,
      positiveFeedbackComments: table,
      negativeFeedbackComments: table,
    },
  },
  {
    id: "popups",
    title: "Popups",
    reports: {
      popups: bars("contentId", "appearances", "clicks"),
      guidedPopups: bars("contentId", "appearances", "flowPlays"),
      smartPopups: bars("contentId", "appearances"),
      popupsByUser: table,
    },
  },
  {
    id: "smartTips",
    title: "Smart Tips",
    reports: {
      smartTipPlays: bars("contentId", "plays"),
      smartTipPlaysByDay: line("plays"),
      smartTipPlaysByUser: table,
    },
  },
  {
    id: "beacons",
    title: "Beacons",
    reports: {
      beacons: bars("contentId", "usersShown", "usersClicked"),
      beaconEngagementByUser: table,
    },
  },
  {
    id: "userActions",
    title: "User actions",
    reports: {
      userActions: bars("actionId", "occurrences", "uniqueUsers"),
    },
  },
];

export interface ViewerReport {
  name: string;
  description: string;
  flow: boolean;
  columns: { name: string; kind: ColumnKind; description: string }[];
  chart: ChartShape;
}

/** The page's catalog (GET /reports/catalog.json): the groups in order, each report with its columns and chart. */
export function viewerCatalog(): { groups: { id: string; title: string; reports: ViewerReport[] }[] } {
  const byName = new Map(REPORTS.map((r) => [r.name, r]));
  return {
    groups: VIEWER_GROUPS.map((g) => ({
      id: g.id,
      title: g.title,
      reports: Object.entries(g.reports).map(([name, chart]) => {
        const def = byName.get(name);
        if (!def) throw new Error(`report viewer: no report named ${name}`);
        return {
          name,
          description: def.description,
          flow: def.flow,
          columns: def.columns.map((c) => ({ name: c.name, kind: c.kind, description: c.description })),
          chart,
        };
      }),
    })),
  };
}
