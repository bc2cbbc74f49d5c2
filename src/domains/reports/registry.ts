// The 37 analytics reports (B24) as data: each a name, its columns (name, kind, description),
// whether it needs a flowId, and one SQL aggregation over the account's events in the window. One
// runner executes them all (runReport): the database groups and counts (GROUP BY, COUNT(DISTINCT),
// window functions); JavaScript only converts the aggregated rows to wire values. Every statement
// binds the account id, the window and the filters as parameters.
import { prisma, dbKind } from "../../db/index.js";
import { Prisma } from "../../generated/sqlite/client.js";

/** string/int/bool as they are; `time` epoch ms (ISO 8601 in CSV); `date` a UTC YYYY-MM-DD. */
export type ColumnKind = "string" | "int" | "bool" | "time" | "date";
export interface Column {
  name: string;
  kind: ColumnKind;
  nullable?: boolean;
  description: string;
}

export interface ReportParams {
  accountId: string;
  from: Date;
  to: Date;
  includeDomains: string[];
  excludeDomains: string[];
  flowId: string | null;
}

export interface ReportDefinition {
  name: string;
  description: string;
  /** Needs `flowId` (the spec's "Flow" reports). */
  flow: boolean;
  columns: Column[];
  /**
   * The aggregation: a SELECT whose columns carry the report's column names (all but `userName`,
   * which the runner joins from the latest names when the report has that column).
   */
  sql(q: Q): Prisma.Sql;
}

/** What a definition builds its SQL from: the bound parameters, fragments and the dialect. */
interface Q {
  p: ReportParams;
  dialect: "sqlite" | "postgres";
  /** `e."accountId" = ? AND e."time" >= ? AND e."time" < ?`, the domain filters and, on flow reports, the flow. */
  where(types: readonly string[], opts?: { user?: boolean }): Prisma.Sql;
  /** The event's UTC day (days since the epoch; the runner formats it as YYYY-MM-DD). A literal, not a
   * parameter: PostgreSQL matches GROUP BY expressions by their text, and two parameters differ. */
  day: Prisma.Sql;
}

const { sql, raw, join, empty } = Prisma;

// ---- columns ------------------------------------------------------------------------------------

const col = (name: string, kind: ColumnKind, description: string, nullable = false): Column => ({ name, kind, description, nullable });
const C = {
  endUserId: col("endUserId", "string", "The end user's id."),
  userName: col("userName", "string", "The latest userName events reported for the end user (by event time), or null.", true),
  flowId: col("flowId", "string", "The flow."),
  contentId: col("contentId", "string", "The content."),
  date: col("date", "date", "UTC day, YYYY-MM-DD."),
  plays: col("plays", "int", "Flow plays (flow_started events)."),
  completed: col("completed", "int", "flow_completed events."),
  notCompleted: col("notCompleted", "int", "plays − completed, never below 0."),
  searches: col("searches", "int", "Self Help searches."),
  searchTerm: col("searchTerm", "string", "The search term, trimmed and lower-cased."),
  uniqueUsers: col("uniqueUsers", "int", "Distinct end users."),
  time: col("time", "time", "When it happened (epoch ms; ISO 8601 in CSV)."),
  comment: col("comment", "string", "The verbatim comment."),
  useful: col("useful", "int", "Feedback: useful."),
  notUseful: col("notUseful", "int", "Feedback: not useful."),
  appearances: col("appearances", "int", "Times it was shown."),
  clicks: col("clicks", "int", "Times it was clicked."),
  widget: col("widget", "string", "Where the flow was played from."),
};

// ---- SQL helpers ---------------------------------------------------------------------------------

const count = (type: string, extra?: Prisma.Sql) => sql`SUM(CASE WHEN e."type" = ${type}${extra ? sql` AND ${extra}` : empty} THEN 1 ELSE 0 END)`;
const types = (list: readonly string[]) => join(list.map((t) => sql`${t}`));
const FLOW_PLAY = ["flow_started"];

/** Plays and completions of flows, grouped by `by` (e.g. flowId, or endUserId and flowId). */
function playsAndCompletions(q: Q, by: string[], withNotCompleted: boolean): Prisma.Sql {
  const keys = raw(by.map((k) => `e."${k}"`).join(", "));
  const named = raw(by.map((k) => `e."${k}" AS "${k}"`).join(", "));
  const inner = sql`SELECT ${named}, ${count("flow_started")} AS "plays", ${count("flow_completed")} AS "completed"
    FROM "Event" e WHERE ${q.where(["flow_started", "flow_completed"], { user: by.includes("endUserId") })} GROUP BY ${keys}`;
  if (!withNotCompleted) return inner;
  return sql`SELECT x.*, CASE WHEN x."plays" > x."completed" THEN x."plays" - x."completed" ELSE 0 END AS "notCompleted" FROM (${inner}) x`;
}

const feedbackCounts = (q: Q) =>
  sql`SELECT e."flowId" AS "flowId", ${count("flow_feedback", sql`e."useful" = ${true}`)} AS "useful", ${count("flow_feedback", sql`e."useful" = ${false}`)} AS "notUseful"
    FROM "Event" e WHERE ${q.where(["flow_feedback"])} GROUP BY e."flowId"`;

const comments = (q: Q, useful: boolean | null) =>
  sql`SELECT e."time" AS "time", e."flowId" AS "flowId", e."endUserId" AS "endUserId", e."useful" AS "useful", e."comment" AS "comment"
    FROM "Event" e WHERE ${q.where(["flow_feedback"])} AND e."comment" IS NOT NULL${useful === null ? empty : sql` AND e."useful" = ${useful}`}`;

const searchTerms = (q: Q, condition: Prisma.Sql) =>
  sql`SELECT e."searchTerm" AS "searchTerm", COUNT(*) AS "searches" FROM "Event" e WHERE ${q.where(["selfhelp_search"])} AND ${condition} GROUP BY e."searchTerm"`;

const countBy = (q: Q, type: string, by: string[], as: string, opts: { user?: boolean } = {}) => {
  const keys = raw(by.map((k) => `e."${k}"`).join(", "));
  const named = raw(by.map((k) => `e."${k}" AS "${k}"`).join(", "));
  return sql`SELECT ${named}, COUNT(*) AS ${raw(`"${as}"`)} FROM "Event" e WHERE ${q.where([type], opts)} GROUP BY ${keys}`;
};
const countByDay = (q: Q, type: string, extra: string[] = []) => {
  const named = raw(extra.map((k) => `, e."${k}" AS "${k}"`).join(""));
  const keys = raw(extra.map((k) => `, e."${k}"`).join(""));
  return sql`SELECT ${q.day} AS "date"${named}, COUNT(*) AS "plays" FROM "Event" e WHERE ${q.where([type])} GROUP BY ${q.day}${keys}`;
};

// ---- the reports ---------------------------------------------------------------------------------

const report = (name: string, description: string, columns: Column[], sqlOf: (q: Q) => Prisma.Sql, flow = false): ReportDefinition => ({
  name,
  description,
  flow,
  columns,
  sql: sqlOf,
});

export const REPORTS: readonly ReportDefinition[] = [
  report(
    "endUserEngagement",
    "Engagement by end users: per end user with events in the window, flows played and completed, searches, Smart Tips played, beacons clicked and the latest event.",
    [
      C.endUserId,
      C.userName,
      col("flowsPlayed", "int", "flow_started events."),
      col("flowsCompleted", "int", "flow_completed events."),
      col("searches", "int", "selfhelp_search events."),
      col("smartTipsPlayed", "int", "smarttip_played events."),
      col("beaconsClicked", "int", "beacon_clicked events."),
      col("lastSeen", "time", "The user's latest event of any type in the window (epoch ms; ISO 8601 in CSV)."),
    ],
    (q) => sql`SELECT e."endUserId" AS "endUserId", ${count("flow_started")} AS "flowsPlayed", ${count("flow_completed")} AS "flowsCompleted",
      ${count("selfhelp_search")} AS "searches", ${count("smarttip_played")} AS "smartTipsPlayed", ${count("beacon_clicked")} AS "beaconsClicked",
      MAX(e."time") AS "lastSeen" FROM "Event" e WHERE ${q.where([], { user: true })} GROUP BY e."endUserId"`,
  ),
  report(
    "flowViews",
    "Number of views (plays) of each flow, with distinct end users.",
    [C.flowId, C.plays, C.uniqueUsers],
    (q) =>
      sql`SELECT e."flowId" AS "flowId", COUNT(*) AS "plays", COUNT(DISTINCT e."endUserId") AS "uniqueUsers" FROM "Event" e WHERE ${q.where(FLOW_PLAY)} GROUP BY e."flowId"`,
  ),
  report(
    "summary",
    "Summary counts (always one row).",
    [
      col("selfHelpQueriesServed", "int", "selfhelp_search events."),
      col("popupsShown", "int", "popup_shown, guided_popup_shown and smart_popup_shown events."),
      col("tasksStarted", "int", "task_started events."),
      col("flowsPlayed", "int", "flow_started events."),
      col("smartTipsShown", "int", "smarttip_shown events."),
      col("beaconsShown", "int", "beacon_shown events."),
    ],
    (q) => {
      const kinds = [
        "selfhelp_search",
        "popup_shown",
        "guided_popup_shown",
        "smart_popup_shown",
        "task_started",
        "flow_started",
        "smarttip_shown",
        "beacon_shown",
      ];
      const popups = sql`SUM(CASE WHEN e."type" IN (${types(["popup_shown", "guided_popup_shown", "smart_popup_shown"])}) THEN 1 ELSE 0 END)`;
      return sql`SELECT COALESCE(${count("selfhelp_search")}, 0) AS "selfHelpQueriesServed", COALESCE(${popups}, 0) AS "popupsShown",
        COALESCE(${count("task_started")}, 0) AS "tasksStarted", COALESCE(${count("flow_started")}, 0) AS "flowsPlayed",
        COALESCE(${count("smarttip_shown")}, 0) AS "smartTipsShown", COALESCE(${count("beacon_shown")}, 0) AS "beaconsShown"
        FROM "Event" e WHERE ${q.where(kinds)}`;
    },
  ),
  report(
    "selfHelpContent",
    "Self Help content viewed: the content, its title and type (null when it is not content of the account), views.",
    [
      C.contentId,
      col("title", "string", "The content's title.", true),
      col("type", "string", "The content's type.", true),
      col("views", "int", "selfhelp_content_viewed events."),
    ],
    (q) => sql`SELECT v."contentId" AS "contentId", c."title" AS "title", c."type" AS "type", v."views" AS "views"
      FROM (SELECT e."contentId" AS "contentId", COUNT(*) AS "views" FROM "Event" e WHERE ${q.where(["selfhelp_content_viewed"])} GROUP BY e."contentId") v
      LEFT JOIN "Content" c ON c."accountId" = ${q.p.accountId} AND c."id" = v."contentId"`,
  ),
  report(
    "selfHelpSearchTrend",
    "Self Help searches per UTC day, with distinct searchers.",
    [C.date, C.searches, col("uniqueSearchers", "int", "Distinct end users who searched.")],
    (q) =>
      sql`SELECT ${q.day} AS "date", COUNT(*) AS "searches", COUNT(DISTINCT e."endUserId") AS "uniqueSearchers" FROM "Event" e WHERE ${q.where(["selfhelp_search"])} GROUP BY ${q.day}`,
  ),
  report("unsuccessfulSearchTerms", "Search terms of searches that showed results but got no click.", [C.searchTerm, C.searches], (q) =>
    searchTerms(q, sql`e."resultCount" > 0 AND e."contentId" IS NULL`),
  ),
  report("searchTermsWithResults", "Search terms of searches that showed results (clicked or not).", [C.searchTerm, C.searches], (q) =>
    searchTerms(q, sql`e."resultCount" > 0`),
  ),
  report("successfulSearchTerms", "Search terms of searches whose result was clicked.", [C.searchTerm, C.searches], (q) =>
    searchTerms(q, sql`e."contentId" IS NOT NULL`),
  ),
  report(
    "searchSuccessVsFailure",
    "Searches by outcome: successful (a result clicked), unsuccessful (results, no click), no_results (always three rows).",
    [col("outcome", "string", "successful, unsuccessful or no_results."), C.searches],
    (q) => sql`SELECT o."outcome" AS "outcome", COALESCE(s."searches", 0) AS "searches"
      FROM (SELECT 'successful' AS "outcome" UNION ALL SELECT 'unsuccessful' UNION ALL SELECT 'no_results') o
      LEFT JOIN (SELECT CASE WHEN e."contentId" IS NOT NULL THEN 'successful' WHEN e."resultCount" = 0 THEN 'no_results' ELSE 'unsuccessful' END AS "outcome", COUNT(*) AS "searches"
        FROM "Event" e WHERE ${q.where(["selfhelp_search"])}
        GROUP BY CASE WHEN e."contentId" IS NOT NULL THEN 'successful' WHEN e."resultCount" = 0 THEN 'no_results' ELSE 'unsuccessful' END) s ON s."outcome" = o."outcome"`,
  ),
  report("searchTermsWithNoResults", "Search terms of searches that showed no results.", [C.searchTerm, C.searches], (q) =>
    searchTerms(q, sql`e."resultCount" = 0`),
  ),
  report(
    "taskListCompletion",
    "Users and their Task List status per flow: completed when a task_completed was seen, else started.",
    [C.endUserId, C.userName, C.flowId, col("status", "string", "started or completed (the furthest seen).")],
    (
      q,
    ) => sql`SELECT e."endUserId" AS "endUserId", e."flowId" AS "flowId", CASE WHEN ${count("task_completed")} > 0 THEN 'completed' ELSE 'started' END AS "status"
      FROM "Event" e WHERE ${q.where(["task_started", "task_completed"], { user: true })} GROUP BY e."endUserId", e."flowId"`,
  ),
  report(
    "guidedPopups",
    "Guided popups: appearances, and flow plays from that popup (flow_started with widget guided_popup and its contentId).",
    [C.contentId, C.appearances, col("flowPlays", "int", "flow_started events with widget guided_popup and this contentId, any flow.")],
    (q) => sql`SELECT e."contentId" AS "contentId", ${count("guided_popup_shown")} AS "appearances", ${count("flow_started")} AS "flowPlays"
      FROM "Event" e WHERE ${q.where([])} AND e."contentId" IS NOT NULL
        AND (e."type" = ${"guided_popup_shown"} OR (e."type" = ${"flow_started"} AND e."widget" = ${"guided_popup"}))
      GROUP BY e."contentId"`,
  ),
  report(
    "popups",
    "Popups: appearances (popup_shown) and clicks (popup_clicked).",
    [C.contentId, C.appearances, C.clicks],
    (q) =>
      sql`SELECT e."contentId" AS "contentId", ${count("popup_shown")} AS "appearances", ${count("popup_clicked")} AS "clicks"
      FROM "Event" e WHERE ${q.where(["popup_shown", "popup_clicked"])} GROUP BY e."contentId"`,
  ),
  report(
    "popupsByUser",
    "Popups: appearances and clicks per end user.",
    [C.endUserId, C.userName, C.contentId, C.appearances, C.clicks],
    (q) =>
      sql`SELECT e."endUserId" AS "endUserId", e."contentId" AS "contentId", ${count("popup_shown")} AS "appearances", ${count("popup_clicked")} AS "clicks"
      FROM "Event" e WHERE ${q.where(["popup_shown", "popup_clicked"], { user: true })} GROUP BY e."endUserId", e."contentId"`,
  ),
  report("smartPopups", "Smart popups: appearances.", [C.contentId, C.appearances], (q) => countBy(q, "smart_popup_shown", ["contentId"], "appearances")),
  report(
    "flowCompletion",
    "The flow's plays, completions and plays not completed.",
    [C.flowId, C.plays, C.completed, C.notCompleted],
    (q) => playsAndCompletions(q, ["flowId"], true),
    true,
  ),
  report("flowFeedback", "The flow's feedback: useful versus not useful.", [C.flowId, C.useful, C.notUseful], feedbackCounts, true),
  report(
    "flowFeedbackComments",
    "The flow's feedback comments, verbatim.",
    [C.time, C.endUserId, C.userName, col("useful", "bool", "The feedback's answer."), C.comment],
    (q) => comments(q, null),
    true,
  ),
  report(
    "flowEditors",
    "Who edited the flow (its content record) in the window, from its change history (the audit log); domain filters do not apply.",
    [
      col("userId", "string", "The editor (e-mail, cli:<user> or system)."),
      col("edits", "int", "Changes recorded."),
      col("lastEditTime", "time", "The latest change (epoch ms; ISO 8601 in CSV)."),
    ],
    (q) => {
      const at = (d: Date) => (q.dialect === "sqlite" ? d.toISOString().replace("Z", "+00:00") : d);
      return sql`SELECT a."userId" AS "userId", COUNT(*) AS "edits", MAX(a."timestamp") AS "lastEditTime" FROM "AuditLog" a
        WHERE a."accountId" = ${q.p.accountId} AND a."resourceType" = ${"content"} AND a."resourceId" = ${q.p.flowId}
          AND a."timestamp" >= ${at(q.p.from)} AND a."timestamp" < ${at(q.p.to)}
        GROUP BY a."userId"`;
    },
    true,
  ),
  report(
    "flowDropOff",
    "Per step of the flow: distinct end users who reached it, and those who reached no later step and did not complete the flow (per user across the window).",
    [
      col("step", "int", "The step."),
      col("reached", "int", "Distinct end users who reached the step."),
      col("droppedAfter", "int", "Of those, users whose furthest step it was and who did not complete the flow."),
    ],
    (
      q,
    ) => sql`SELECT s."step" AS "step", COUNT(*) AS "reached", SUM(CASE WHEN s."step" = s."furthest" AND c."endUserId" IS NULL THEN 1 ELSE 0 END) AS "droppedAfter"
      FROM (SELECT r."endUserId", r."step", MAX(r."step") OVER (PARTITION BY r."endUserId") AS "furthest"
            FROM (SELECT DISTINCT e."endUserId" AS "endUserId", e."step" AS "step" FROM "Event" e WHERE ${q.where(["flow_step"], { user: true })}) r) s
      LEFT JOIN (SELECT DISTINCT e."endUserId" AS "endUserId" FROM "Event" e WHERE ${q.where(["flow_completed"], { user: true })}) c ON c."endUserId" = s."endUserId"
      GROUP BY s."step"`,
    true,
  ),
  report("flowPlaysByWidget", "The flow's plays per widget.", [C.widget, C.plays], (q) => countBy(q, "flow_started", ["widget"], "plays"), true),
  report("flowPlaysByDay", "The flow's plays per UTC day, completed or not.", [C.date, C.plays], (q) => countByDay(q, "flow_started"), true),
  report(
    "negativeFeedbackComments",
    "Feedback comments with No (not useful), verbatim, all flows.",
    [C.time, C.flowId, C.endUserId, C.userName, C.comment],
    (q) => comments(q, false),
  ),
  report("flowCompletionByUser", "Plays and completions per end user and flow.", [C.endUserId, C.userName, C.flowId, C.plays, C.completed], (q) =>
    playsAndCompletions(q, ["endUserId", "flowId"], false),
  ),
  report("allFlowsCompletion", "Plays, completions and plays not completed of every flow.", [C.flowId, C.plays, C.completed, C.notCompleted], (q) =>
    playsAndCompletions(q, ["flowId"], true),
  ),
  report(
    "flowFailuresByUser",
    "Flow failures per end user and flow, with the latest.",
    [
      C.endUserId,
      C.userName,
      C.flowId,
      col("failures", "int", "flow_failed events."),
      col("lastFailure", "time", "The latest failure (epoch ms; ISO 8601 in CSV)."),
    ],
    (q) => sql`SELECT e."endUserId" AS "endUserId", e."flowId" AS "flowId", COUNT(*) AS "failures", MAX(e."time") AS "lastFailure"
      FROM "Event" e WHERE ${q.where(["flow_failed"], { user: true })} GROUP BY e."endUserId", e."flowId"`,
  ),
  report("allFlowsFeedback", "Useful versus not useful, every flow.", [C.flowId, C.useful, C.notUseful], feedbackCounts),
  report("positiveFeedbackComments", "Feedback comments with Yes (useful), verbatim, all flows.", [C.time, C.flowId, C.endUserId, C.userName, C.comment], (q) =>
    comments(q, true),
  ),
  report("flowExits", "Times each flow was exited.", [C.flowId, col("exits", "int", "flow_exited events.")], (q) =>
    countBy(q, "flow_exited", ["flowId"], "exits"),
  ),
  report("allFlowsPlaysByWidget", "Plays of every flow per widget.", [C.flowId, C.widget, C.plays], (q) =>
    countBy(q, "flow_started", ["flowId", "widget"], "plays"),
  ),
  report("allFlowsPlaysByDay", "Plays of every flow per UTC day.", [C.date, C.flowId, C.plays], (q) => countByDay(q, "flow_started", ["flowId"])),
  report("smartTipPlays", "Plays of each Smart Tip.", [C.contentId, col("plays", "int", "smarttip_played events.")], (q) =>
    countBy(q, "smarttip_played", ["contentId"], "plays"),
  ),
  report("smartTipPlaysByDay", "Smart Tip plays per UTC day.", [C.date, col("plays", "int", "smarttip_played events.")], (q) =>
    countByDay(q, "smarttip_played"),
  ),
  report("smartTipPlaysByUser", "Smart Tip plays per end user.", [C.endUserId, C.userName, C.contentId, col("plays", "int", "smarttip_played events.")], (q) =>
    countBy(q, "smarttip_played", ["endUserId", "contentId"], "plays", { user: true }),
  ),
  report(
    "beacons",
    "Beacons: distinct end users shown and who clicked.",
    [C.contentId, col("usersShown", "int", "Distinct end users with beacon_shown."), col("usersClicked", "int", "Distinct end users with beacon_clicked.")],
    (q) => sql`SELECT e."contentId" AS "contentId", COUNT(DISTINCT CASE WHEN e."type" = ${"beacon_shown"} THEN e."endUserId" END) AS "usersShown",
      COUNT(DISTINCT CASE WHEN e."type" = ${"beacon_clicked"} THEN e."endUserId" END) AS "usersClicked"
      FROM "Event" e WHERE ${q.where(["beacon_shown", "beacon_clicked"], { user: true })} GROUP BY e."contentId"`,
  ),
  report(
    "beaconEngagementByUser",
    "Beacon engagement per end user: times shown and clicked.",
    [C.endUserId, C.userName, C.contentId, col("shown", "int", "beacon_shown events."), col("clicked", "int", "beacon_clicked events.")],
    (q) => sql`SELECT e."endUserId" AS "endUserId", e."contentId" AS "contentId", ${count("beacon_shown")} AS "shown", ${count("beacon_clicked")} AS "clicked"
      FROM "Event" e WHERE ${q.where(["beacon_shown", "beacon_clicked"], { user: true })} GROUP BY e."endUserId", e."contentId"`,
  ),
  report(
    "userActions",
    "User actions and how often they occurred, with distinct end users.",
    [col("actionId", "string", "The user action."), col("occurrences", "int", "user_action events."), C.uniqueUsers],
    (q) => sql`SELECT e."actionId" AS "actionId", COUNT(*) AS "occurrences", COUNT(DISTINCT e."endUserId") AS "uniqueUsers"
      FROM "Event" e WHERE ${q.where(["user_action"])} GROUP BY e."actionId"`,
  ),
];

export const REPORTS_BY_NAME: ReadonlyMap<string, ReportDefinition> = new Map(REPORTS.map((r) => [r.name, r]));

// ---- the runner ----------------------------------------------------------------------------------

const DAY_MS = 86_400_000;

function whereOf(p: ReportParams, flow: boolean) {
  return (list: readonly string[], opts: { user?: boolean } = {}) => {
    const parts: Prisma.Sql[] = [sql`e."accountId" = ${p.accountId}`, sql`e."time" >= ${p.from.getTime()}`, sql`e."time" < ${p.to.getTime()}`];
    if (list.length === 1) parts.push(sql`e."type" = ${list[0]}`);
    else if (list.length) parts.push(sql`e."type" IN (${types(list)})`);
    if (flow) parts.push(sql`e."flowId" = ${p.flowId}`);
    if (opts.user) parts.push(sql`e."endUserId" IS NOT NULL`);
    if (p.includeDomains.length) parts.push(sql`e."domain" IN (${join(p.includeDomains)})`);
    if (p.excludeDomains.length) parts.push(sql`(e."domain" IS NULL OR e."domain" NOT IN (${join(p.excludeDomains)}))`);
    return join(parts, " AND ");
  };
}

/** The whole statement: the report's aggregation, its userName joined, sorted by its columns. */
export function reportSql(def: ReportDefinition, p: ReportParams, dialect: "sqlite" | "postgres" = dbKind()): Prisma.Sql {
  const q: Q = { p, dialect, where: whereOf(p, def.flow), day: raw(`(e."time" / ${DAY_MS})`) };
  const hasName = def.columns.some((c) => c.name === "userName");
  const select = def.columns.map((c) => (c.name === "userName" ? `n."userName" AS "userName"` : `g."${c.name}" AS "${c.name}"`)).join(", ");
  // Code-point order, nulls first, false before true, on both databases ("C" collation on PostgreSQL).
  const order = def.columns
    .map((c) => {
      const ref = c.name === "userName" ? `n."userName"` : `g."${c.name}"`;
      return `${ref}${c.kind === "string" && dialect === "postgres" ? ` COLLATE "C"` : ""} ASC NULLS FIRST`;
    })
    .join(", ");
  const names = hasName ? sql` LEFT JOIN "EventUserName" n ON n."accountId" = ${p.accountId} AND n."endUserId" = g."endUserId"` : empty;
  return sql`SELECT ${raw(select)} FROM (${def.sql(q)}) g${names} ORDER BY ${raw(order)}`;
}

const pad = (n: number) => String(n).padStart(2, "0");
function toMs(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.getTime();
  if (typeof v === "string" && !/^-?\d+$/.test(v)) return Date.parse(v);
  return Number(v);
}

/** A database value as the wire value of its column kind. */
export function wireValue(kind: ColumnKind, v: unknown): string | number | boolean | null {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case "int":
      return Number(typeof v === "object" ? String(v) : v);
    case "bool":
      return v === true || v === 1 || v === 1n || v === "1" || v === "true";
    case "time":
      return toMs(v);
    case "date": {
      const d = new Date(Number(v) * DAY_MS);
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    }
    default:
      return String(v);
  }
}

/** Runs a report: its rows, each an array of wire values in column order. */
export async function runReport(def: ReportDefinition, p: ReportParams): Promise<unknown[][]> {
  const rows = await prisma.$queryRaw<Record<string, unknown>[]>(reportSql(def, p));
  return rows.map((r) => def.columns.map((c) => wireValue(c.kind, r[c.name])));
}
