// The 37 analytics reports (B24) as data: each a name, its columns (name, kind, description),
// whether it needs a flowId, and one SQL aggregation over the account's events in the window. One
// runner executes them all (runReport): the database groups and counts (GROUP BY, COUNT(DISTINCT),
// window functions); JavaScript only converts the aggregated rows to wire values. Every statement
// binds the account id, the window and the filters as parameters.

import { empty, join, raw, sqltag as sql } from "@prisma/client/runtime/client";
import { dbKind, prisma, type Tx, withTransaction } from "../../db/index.js";
import { setLocalSql } from "../../db/localSettings.js";
import type { Prisma } from "../../generated/sqlite/client.js";
import { type DistinctKey, watermarkOf } from "./rollups.js";
import { countSource, dailyUserSource, distinctUserSource, userSource } from "./sources.js";

/** string/int/bool as they are; `time` epoch ms (ISO 8601 in CSV); `date` a UTC YYYY-MM-DD. */
export type ColumnKind = "string" | "int" | "bool" | "time" | "date";
export interface Column {
  name: string;
  kind: ColumnKind;
  nullable?: boolean;
  /**
   * Never NULL in SQL (a NOT NULL column of the table, not only of the answer): sorted without
   * NULLS FIRST, which the same order means then, and which lets PostgreSQL take the order from an
   * ascending index (NULLS LAST) and stop at the page instead of sorting every row (reportSql).
   */
  notNullInSql?: boolean;
  /**
   * A `time` column computed from a timestamp column (an audit entry's time) rather than from an
   * event's epoch milliseconds: its keyset value in a cursor is the timestamp's ISO 8601 text.
   */
  fromTimestamp?: boolean;
  /**
   * An `int` column holding a 32-bit column of the table (Event.step, int4 on PostgreSQL): a cursor
   * value past that range is refused as malformed, since PostgreSQL refuses to compare the column
   * with it (an error, not an empty page). Counts are bigint there and take any safe integer.
   */
  int32?: boolean;
  description: string;
}

export interface ReportParams {
  accountId: string;
  from: Date;
  to: Date;
  includeDomains: string[];
  excludeDomains: string[];
  flowId: string | null;
  /** Compute from the raw events only, ignoring the rollups (the reference in tests and benches). */
  raw?: boolean;
  /** The rollup watermark read before the statement (runReport sets it; see SourceParams). */
  watermark?: number;
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
  /** Its rows are per end user (endUserId is the first column): pages read a range of end users. */
  perUser: boolean;
}

/** What a definition builds its SQL from: the bound parameters, the sources and the dialect. */
interface Q {
  p: ReportParams;
  dialect: "sqlite" | "postgres";
  /**
   * Event counts of these types in the window (`FROM ${q.counts([...])} e`), filtered: rollups for
   * the whole days and hours, raw events for the partial hours at the edges (sources.ts). Sum `n`.
   * `keys`: the only keys the report reads (then narrow day rows may answer; others are NULL);
   * `outcomes`: searches of these outcomes only.
   */
  counts(types: readonly string[], opts?: { totals?: boolean; keys?: readonly string[]; outcomes?: readonly string[] }): Prisma.Sql;
  /** The same per end user (events that name one), per-day rollups plus the partial days' events; `lastTime` is the latest. */
  users(types: readonly string[]): Prisma.Sql;
  /** Distinct end users per type and `key` in the window, filtered (columns type, <key>, users). */
  distinctUsers(types: readonly string[], key: DistinctKey): Prisma.Sql;
  /** Distinct end users of `type` per UTC day in the window, filtered (columns day, users). */
  usersPerDay(type: string): Prisma.Sql;
  /** Raw events: `e."accountId" = ? AND e."time" >= ? AND e."time" < ?`, the domain filters and, on flow reports, the flow. */
  where(types: readonly string[], opts?: { user?: boolean }): Prisma.Sql;
}

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
  // The event's own time ("Event"."time" is NOT NULL): the comments reports read events in the
  // (accountId, type, time) index's order and stop at the page.
  time: { ...col("time", "time", "When it happened (epoch ms; ISO 8601 in CSV)."), notNullInSql: true },
  comment: col("comment", "string", "The verbatim comment."),
  useful: col("useful", "int", "Feedback: useful."),
  notUseful: col("notUseful", "int", "Feedback: not useful."),
  appearances: col("appearances", "int", "Times it was shown."),
  clicks: col("clicks", "int", "Times it was clicked."),
  widget: col("widget", "string", "Where the flow was played from."),
};

// ---- SQL helpers ---------------------------------------------------------------------------------

/** Events of `type` in a source (each source row stands for `n` events). */
const count = (type: string, extra?: Prisma.Sql) => sql`SUM(CASE WHEN e."type" = ${type}${extra ? sql` AND ${extra}` : empty} THEN e."n" ELSE 0 END)`;
const types = (list: readonly string[]) => join(list.map((t) => sql`${t}`));
const PLAYS = ["flow_started", "flow_completed"];

/** Plays and completions of flows, grouped by `by` (flowId from the counts, or endUserId and flowId per user). */
function playsAndCompletions(q: Q, by: string[], withNotCompleted: boolean): Prisma.Sql {
  const keys = raw(by.map((k) => `e."${k}"`).join(", "));
  const named = raw(by.map((k) => `e."${k}" AS "${k}"`).join(", "));
  const source = by.includes("endUserId") ? q.users(PLAYS) : q.counts(PLAYS, { keys: by });
  const inner = sql`SELECT ${named}, ${count("flow_started")} AS "plays", ${count("flow_completed")} AS "completed" FROM ${source} e GROUP BY ${keys}`;
  if (!withNotCompleted) return inner;
  return sql`SELECT x.*, CASE WHEN x."plays" > x."completed" THEN x."plays" - x."completed" ELSE 0 END AS "notCompleted" FROM (${inner}) x`;
}

const feedbackCounts = (q: Q) =>
  sql`SELECT e."flowId" AS "flowId", ${count("flow_feedback", sql`e."useful" = 1`)} AS "useful", ${count("flow_feedback", sql`e."useful" = 0`)} AS "notUseful"
    FROM ${q.counts(["flow_feedback"])} e GROUP BY e."flowId"`;

/** Comments are single events: read from the events themselves (the type-and-time index). */
const comments = (q: Q, useful: boolean | null) =>
  sql`SELECT e."time" AS "time", e."flowId" AS "flowId", e."endUserId" AS "endUserId", e."useful" AS "useful", e."comment" AS "comment"
    FROM "Event" e WHERE ${q.where(["flow_feedback"])} AND e."comment" IS NOT NULL${useful === null ? empty : sql` AND e."useful" = ${useful}`}`;

const searchTerms = (q: Q, outcomes: string[]) =>
  sql`SELECT e."searchTerm" AS "searchTerm", SUM(e."n") AS "searches" FROM ${q.counts(["selfhelp_search"], { outcomes })} e GROUP BY e."searchTerm"`;

const countBy = (q: Q, type: string, by: string[], as: string, opts: { user?: boolean } = {}) => {
  const keys = raw(by.map((k) => `e."${k}"`).join(", "));
  const named = raw(by.map((k) => `e."${k}" AS "${k}"`).join(", "));
  return sql`SELECT ${named}, SUM(e."n") AS ${raw(`"${as}"`)} FROM ${opts.user ? q.users([type]) : q.counts([type], { keys: by })} e GROUP BY ${keys}`;
};
const countByDay = (q: Q, type: string, extra: string[] = []) => {
  const named = raw(extra.map((k) => `, e."${k}" AS "${k}"`).join(""));
  const keys = raw(extra.map((k) => `, e."${k}"`).join(""));
  // Per day alone (no key, no flow filter): the day totals per type and domain answer it.
  const totals = !extra.length && q.p.flowId === null;
  return sql`SELECT e."day" AS "date"${named}, SUM(e."n") AS "plays" FROM ${q.counts([type], { totals, keys: extra })} e GROUP BY e."day"${keys}`;
};

/** Event counts per `key` joined with the distinct end users per `key` (exact: sources.ts, distinctUserSource). */
const countsWithUsers = (q: Q, type: string, key: DistinctKey, countAs: string, usersAs: string) =>
  sql`SELECT c."${raw(key)}" AS "${raw(key)}", c."${raw(countAs)}" AS "${raw(countAs)}", COALESCE(u."users", 0) AS "${raw(usersAs)}"
    FROM (SELECT e."${raw(key)}" AS "${raw(key)}", SUM(e."n") AS "${raw(countAs)}" FROM ${q.counts([type], { keys: [key] })} e GROUP BY e."${raw(key)}") c
    LEFT JOIN (${q.distinctUsers([type], key)}) u
      ON u."${raw(key)}" = c."${raw(key)}"`;

// ---- the reports ---------------------------------------------------------------------------------

const report = (name: string, description: string, columns: Column[], sqlOf: (q: Q) => Prisma.Sql, flow = false): ReportDefinition => ({
  name,
  description,
  flow,
  columns,
  sql: sqlOf,
  perUser: columns[0]?.name === "endUserId",
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
      MAX(e."lastTime") AS "lastSeen" FROM ${q.users([])} e GROUP BY e."endUserId"`,
  ),
  report("flowViews", "Number of views (plays) of each flow, with distinct end users.", [C.flowId, C.plays, C.uniqueUsers], (q) =>
    countsWithUsers(q, "flow_started", "flowId", "plays", "uniqueUsers"),
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
      const popups = sql`SUM(CASE WHEN e."type" IN (${types(["popup_shown", "guided_popup_shown", "smart_popup_shown"])}) THEN e."n" ELSE 0 END)`;
      return sql`SELECT COALESCE(${count("selfhelp_search")}, 0) AS "selfHelpQueriesServed", COALESCE(${popups}, 0) AS "popupsShown",
        COALESCE(${count("task_started")}, 0) AS "tasksStarted", COALESCE(${count("flow_started")}, 0) AS "flowsPlayed",
        COALESCE(${count("smarttip_shown")}, 0) AS "smartTipsShown", COALESCE(${count("beacon_shown")}, 0) AS "beaconsShown"
        FROM ${q.counts(kinds, { totals: true })} e`;
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
      FROM (SELECT e."contentId" AS "contentId", SUM(e."n") AS "views" FROM ${q.counts(["selfhelp_content_viewed"])} e GROUP BY e."contentId") v
      LEFT JOIN "Content" c ON c."accountId" = ${q.p.accountId} AND c."id" = v."contentId"`,
  ),
  report(
    "selfHelpSearchTrend",
    "Self Help searches per UTC day, with distinct searchers.",
    [C.date, C.searches, col("uniqueSearchers", "int", "Distinct end users who searched.")],
    (q) => sql`SELECT c."date" AS "date", c."searches" AS "searches", COALESCE(u."uniqueSearchers", 0) AS "uniqueSearchers"
      FROM (SELECT e."day" AS "date", SUM(e."n") AS "searches" FROM ${q.counts(["selfhelp_search"], { totals: true })} e GROUP BY e."day") c
      LEFT JOIN (SELECT d."day" AS "day", d."users" AS "uniqueSearchers" FROM (${q.usersPerDay("selfhelp_search")}) d) u
        ON u."day" = c."date"`,
  ),
  // Outcomes partition the searches: a clicked result implies resultCount ≥ 1 (validate.ts), so
  // "resultCount > 0" is successful or unsuccessful and "resultCount = 0" is no_results.
  report("unsuccessfulSearchTerms", "Search terms of searches that showed results but got no click.", [C.searchTerm, C.searches], (q) =>
    searchTerms(q, ["unsuccessful"]),
  ),
  report("searchTermsWithResults", "Search terms of searches that showed results (clicked or not).", [C.searchTerm, C.searches], (q) =>
    searchTerms(q, ["successful", "unsuccessful"]),
  ),
  report("successfulSearchTerms", "Search terms of searches whose result was clicked.", [C.searchTerm, C.searches], (q) => searchTerms(q, ["successful"])),
  report(
    "searchSuccessVsFailure",
    "Searches by outcome: successful (a result clicked), unsuccessful (results, no click), no_results (always three rows).",
    [col("outcome", "string", "successful, unsuccessful or no_results."), C.searches],
    (q) => sql`SELECT o."outcome" AS "outcome", COALESCE(s."searches", 0) AS "searches"
      FROM (SELECT 'successful' AS "outcome" UNION ALL SELECT 'unsuccessful' UNION ALL SELECT 'no_results') o
      LEFT JOIN (SELECT e."outcome" AS "outcome", SUM(e."n") AS "searches" FROM ${q.counts(["selfhelp_search"], { totals: true })} e GROUP BY e."outcome") s ON s."outcome" = o."outcome"`,
  ),
  report("searchTermsWithNoResults", "Search terms of searches that showed no results.", [C.searchTerm, C.searches], (q) => searchTerms(q, ["no_results"])),
  report(
    "taskListCompletion",
    "Users and their Task List status per flow: completed when a task_completed was seen, else started.",
    [C.endUserId, C.userName, C.flowId, col("status", "string", "started or completed (the furthest seen).")],
    (
      q,
    ) => sql`SELECT e."endUserId" AS "endUserId", e."flowId" AS "flowId", CASE WHEN ${count("task_completed")} > 0 THEN 'completed' ELSE 'started' END AS "status"
      FROM ${q.users(["task_started", "task_completed"])} e GROUP BY e."endUserId", e."flowId"`,
  ),
  report(
    "guidedPopups",
    "Guided popups: appearances, and flow plays from that popup (flow_started with widget guided_popup and its contentId).",
    [C.contentId, C.appearances, col("flowPlays", "int", "flow_started events with widget guided_popup and this contentId, any flow.")],
    (q) => sql`SELECT e."contentId" AS "contentId", ${count("guided_popup_shown")} AS "appearances", ${count("flow_started")} AS "flowPlays"
      FROM ${q.counts(["guided_popup_shown", "flow_started"])} e WHERE e."contentId" IS NOT NULL
        AND (e."type" = ${"guided_popup_shown"} OR (e."type" = ${"flow_started"} AND e."widget" = ${"guided_popup"}))
      GROUP BY e."contentId"`,
  ),
  report(
    "popups",
    "Popups: appearances (popup_shown) and clicks (popup_clicked).",
    [C.contentId, C.appearances, C.clicks],
    (q) =>
      sql`SELECT e."contentId" AS "contentId", ${count("popup_shown")} AS "appearances", ${count("popup_clicked")} AS "clicks"
      FROM ${q.counts(["popup_shown", "popup_clicked"])} e GROUP BY e."contentId"`,
  ),
  report(
    "popupsByUser",
    "Popups: appearances and clicks per end user.",
    [C.endUserId, C.userName, C.contentId, C.appearances, C.clicks],
    (q) =>
      sql`SELECT e."endUserId" AS "endUserId", e."contentId" AS "contentId", ${count("popup_shown")} AS "appearances", ${count("popup_clicked")} AS "clicks"
      FROM ${q.users(["popup_shown", "popup_clicked"])} e GROUP BY e."endUserId", e."contentId"`,
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
      { ...col("lastEditTime", "time", "The latest change (epoch ms; ISO 8601 in CSV)."), fromTimestamp: true },
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
      { ...col("step", "int", "The step."), int32: true },
      col("reached", "int", "Distinct end users who reached the step."),
      col("droppedAfter", "int", "Of those, users whose furthest step it was and who did not complete the flow."),
    ],
    (
      q,
    ) => sql`SELECT s."step" AS "step", COUNT(*) AS "reached", SUM(CASE WHEN s."step" = s."furthest" AND c."endUserId" IS NULL THEN 1 ELSE 0 END) AS "droppedAfter"
      FROM (SELECT r."endUserId", r."step", MAX(r."step") OVER (PARTITION BY r."endUserId") AS "furthest"
            FROM (SELECT DISTINCT e."endUserId" AS "endUserId", e."step" AS "step" FROM ${q.users(["flow_step"])} e) r) s
      LEFT JOIN (SELECT DISTINCT e."endUserId" AS "endUserId" FROM ${q.users(["flow_completed"])} e) c ON c."endUserId" = s."endUserId"
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
    (q) => sql`SELECT e."endUserId" AS "endUserId", e."flowId" AS "flowId", SUM(e."n") AS "failures", MAX(e."lastTime") AS "lastFailure"
      FROM ${q.users(["flow_failed"])} e GROUP BY e."endUserId", e."flowId"`,
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
    (q) => sql`SELECT d."contentId" AS "contentId", SUM(CASE WHEN d."type" = ${"beacon_shown"} THEN d."users" ELSE 0 END) AS "usersShown",
      SUM(CASE WHEN d."type" = ${"beacon_clicked"} THEN d."users" ELSE 0 END) AS "usersClicked"
      FROM (${q.distinctUsers(["beacon_shown", "beacon_clicked"], "contentId")}) d GROUP BY d."contentId"`,
  ),
  report(
    "beaconEngagementByUser",
    "Beacon engagement per end user: times shown and clicked.",
    [C.endUserId, C.userName, C.contentId, col("shown", "int", "beacon_shown events."), col("clicked", "int", "beacon_clicked events.")],
    (q) => sql`SELECT e."endUserId" AS "endUserId", e."contentId" AS "contentId", ${count("beacon_shown")} AS "shown", ${count("beacon_clicked")} AS "clicked"
      FROM ${q.users(["beacon_shown", "beacon_clicked"])} e GROUP BY e."endUserId", e."contentId"`,
  ),
  report(
    "userActions",
    "User actions and how often they occurred, with distinct end users.",
    [col("actionId", "string", "The user action."), col("occurrences", "int", "user_action events."), C.uniqueUsers],
    (q) => countsWithUsers(q, "user_action", "actionId", "occurrences", "uniqueUsers"),
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

/** Where a page starts: the sort values of the last row returned, and how many rows equal to it were returned. */
export interface Keyset {
  values: unknown[];
  same: number;
}

/** The page a caller asks for (JSON); without one a report answers every row (CSV, GraphQL lists). */
export interface PageRequest {
  limit: number;
  after: Keyset | null;
}

export const DEFAULT_REPORT_LIMIT = 1_000;
export const MAX_REPORT_LIMIT = 10_000;

/**
 * "Row ≥ the keyset row" in the report's sort order (columns left to right, nulls first): a
 * lexicographic comparison spelt out column by column, so it means the same on both databases.
 * Equal rows are included and the runner drops the ones already returned (rows may repeat).
 */
function keysetCondition(refs: string[], values: unknown[]): Prisma.Sql {
  const gt = (ref: string, v: unknown) => (v === null ? sql`${raw(ref)} IS NOT NULL` : sql`${raw(ref)} > ${v}`);
  const eq = (ref: string, v: unknown) => (v === null ? sql`${raw(ref)} IS NULL` : sql`${raw(ref)} = ${v}`);
  const alternatives: Prisma.Sql[] = [];
  for (let i = 0; i <= refs.length; i++) {
    const prefix = refs.slice(0, i).map((r, j) => eq(r, values[j]));
    const last = i < refs.length ? [gt(refs[i]!, values[i])] : [];
    alternatives.push(sql`(${join([...prefix, ...last], " AND ")})`);
  }
  // The first column's bound alone as well: a plain range condition the database can push into
  // the aggregation (and, on the per-user reports, into the end-user-ordered rollup scan).
  const first = values[0] === null ? empty : sql`${raw(refs[0]!)} >= ${values[0]} AND `;
  return sql`${first}(${join(alternatives, " OR ")})`;
}

/** The whole statement: the report's aggregation, its userName joined, sorted by its columns (and one page of it). */
export function reportSql(def: ReportDefinition, p: ReportParams, dialect: "sqlite" | "postgres" = dbKind(), page?: PageRequest): Prisma.Sql {
  const sp = { ...p, flowId: def.flow ? p.flowId : null };
  // A page of a per-user report reads only the end users it can hold (sources.ts, userBound).
  const range =
    def.perUser && page ? { after: (page.after?.values[0] as string | null | undefined) ?? null, users: page.limit + (page.after?.same ?? 0) + 1 } : undefined;
  const q: Q = {
    p,
    dialect,
    where: whereOf(p, def.flow),
    counts: (t, o) => countSource(sp, t, o),
    users: (t) => userSource(sp, t, dialect, range),
    distinctUsers: (t, key) => distinctUserSource(sp, t, key, dialect),
    usersPerDay: (t) => dailyUserSource(sp, t, dialect),
  };
  const hasName = def.columns.some((c) => c.name === "userName");
  const select = def.columns.map((c) => (c.name === "userName" ? `n."userName" AS "userName"` : `g."${c.name}" AS "${c.name}"`)).join(", ");
  // Code-point order, nulls first, false before true, on both databases ("C" collation on PostgreSQL).
  const refs = def.columns.map((c) => {
    const ref = c.name === "userName" ? `n."userName"` : `g."${c.name}"`;
    return `${ref}${c.kind === "string" && dialect === "postgres" ? ` COLLATE "C"` : ""}`;
  });
  const order = refs.map((r, i) => `${r} ASC${def.columns[i]!.notNullInSql ? "" : " NULLS FIRST"}`).join(", ");
  const names = hasName ? sql` LEFT JOIN "EventUserName" n ON n."accountId" = ${p.accountId} AND n."endUserId" = g."endUserId"` : empty;
  const where = page?.after ? sql` WHERE ${keysetCondition(refs, page.after.values)}` : empty;
  const limit = page ? sql` LIMIT ${page.limit + (page.after?.same ?? 0) + 1}` : empty;
  return sql`SELECT ${raw(select)} FROM (${def.sql(q)}) g${names}${where} ORDER BY ${raw(order)}${limit}`;
}

/**
 * A database value as it goes into a cursor (JSON) and comes back as a bound parameter, compared
 * with `===` to the next page's rows. Counts come as numbers whatever the driver made of them:
 * PostgreSQL's SUM of a bigint is a numeric, which arrives as a Decimal object (JSON: a string, which
 * the cursor check refused as malformed, and never `===` to the next page's Decimal).
 */
function cursorValue(kind: ColumnKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  // A date column's value is its day number (the wire's YYYY-MM-DD is made from it): an int too.
  if (kind === "int" || kind === "date") return wireValue("int", v);
  if (typeof v === "bigint") return Number(v);
  return v;
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

/** PostgreSQL memory per sort or hash of a report statement (the server's default is 4 MB). */
const REPORT_WORK_MEM = "64MB";

/**
 * The report statement's settings, for its transaction only (set_config's `true`), in one round
 * trip. work_mem: the report's hash aggregates (distinct end users, keys per day) hold up to a few
 * hundred thousand groups at a few million events; at the default 4 MB they spilled to disk, which
 * doubled their time. jit off: a report reading a burst the rollup worker has not counted yet is
 * costed past jit_above_cost, and compiling its expressions cost more than it saved (2M events
 * pending at 3M: flowCompletionByUser 572 ms with JIT against 440–462 without once the backend had
 * loaded LLVM, 1,183 ms the first time it did), as for
 * Explore's questions (src/domains/explore/run.ts). A report on counted rollups is costed below it.
 */
export async function useReportSettings(tx: Pick<Tx, "$queryRawUnsafe">): Promise<void> {
  await tx.$queryRawUnsafe(setLocalSql({ work_mem: REPORT_WORK_MEM, jit: "off" }));
}

/** Runs a report: its rows, each an array of wire values in column order (all of them, or one page and the keyset of the next). */
export async function runReport(def: ReportDefinition, p: ReportParams): Promise<unknown[][]>;
export async function runReport(def: ReportDefinition, p: ReportParams, page: PageRequest): Promise<{ rows: unknown[][]; next: Keyset | null }>;
export async function runReport(def: ReportDefinition, p: ReportParams, page?: PageRequest): Promise<unknown[][] | { rows: unknown[][]; next: Keyset | null }> {
  // The rollup watermark, as a hint for the planner (the statement reads it again: sources.ts).
  const statement = (watermark: number) => reportSql(def, { ...p, watermark }, dbKind(), page);
  const found =
    dbKind() === "postgres"
      ? // Transaction-local settings (useReportSettings) need a transaction; it changes nothing.
        await withTransaction(
          async (tx) => {
            await useReportSettings(tx);
            return tx.$queryRaw<Record<string, unknown>[]>(statement(p.raw ? 0 : await watermarkOf(tx, p.accountId)));
          },
          { timeout: 600_000, maxWait: 10_000 },
        )
      : await prisma.$queryRaw<Record<string, unknown>[]>(statement(p.raw ? 0 : await watermarkOf(prisma, p.accountId)));
  const wire = (r: Record<string, unknown>) => def.columns.map((c) => wireValue(c.kind, r[c.name]));
  if (!page) return found.map(wire);
  const sortValues = (r: Record<string, unknown>) => def.columns.map((c) => cursorValue(c.kind, r[c.name]));
  const same = (a: unknown[], b: unknown[]) => a.every((v, i) => v === b[i]);
  // Rows equal to the keyset row come first; as many as were returned already are dropped.
  const after = page.after;
  const rows = after ? found.slice(Math.min(after.same, found.filter((r) => same(sortValues(r), after.values)).length)) : found;
  const taken = rows.slice(0, page.limit);
  if (rows.length <= page.limit || !taken.length) return { rows: taken.map(wire), next: null };
  const last = sortValues(taken.at(-1)!);
  let equal = 0;
  for (let i = taken.length - 1; i >= 0 && same(sortValues(taken[i]!), last); i--) equal++;
  // A page of nothing but rows equal to the previous keyset row continues its count.
  if (after && equal === taken.length && same(last, after.values)) equal += after.same;
  return { rows: taken.map(wire), next: { values: last, same: equal } };
}
