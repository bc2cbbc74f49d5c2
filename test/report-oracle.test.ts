// The 37 B24 reports against an oracle written from the contract's words alone (its sections
// "Engagement events" and "Reports (B24)", summarised in docs/reports.md), never from the service's SQL: a seeded random event set
// (end users whose ids and names sort differently by code point than by UTF-16, anonymous events,
// names changing over time and posted out of time order, every event type, several domains and none,
// events on window edges) in one tenant, look-alike events in another, and seeded windows in both
// date forms with domain filters and flows. Every report's JSON rows and columns, its pages walked with
// a small limit, and its CSV must equal the oracle's, with the rollup worker not run, part way and
// caught up, then with late events (times all over the counted days, renaming end users) above the
// caught-up watermark and counted in. flowEditors is checked on a content record edited at the start.
// TEST_SEED draws other cases (see testSeed in ./helpers.ts).
//
// Where the contract leaves a reading open, the oracle follows the service's (checked to be a fair
// reading of the words) and says so in a comment marked "Ambiguity:".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catchUpRollups, rollUpAccount } from "../src/domains/reports/rollupWorker.js";
import { rng } from "../src/seed/random.js";
import { compareCells, prisma, requester, type Server, startServer, type Tenant, tenant, testSeed } from "./helpers.js";

let server: Server;
let a: Tenant; // the random event set
let b: Tenant; // look-alike events that must never show in a's reports
const req = requester(() => server);

const M = 60_000;
const H = 60 * M;
const DAY = 24 * H;
const D0 = Date.UTC(2024, 3, 7); // 2024-04-07 00:00 UTC
const DAYS = 4; // events from D0 - 2 h to D0 + 4 days
// and a twentieth in the 3 days before now (at least 10 minutes before: the windows that end now take
// them in, rollups of today's partial day included)
const NOW = Date.now() - 10 * M;

// ---- the contract's tables ---------------------------------------------------------------------

/** The 37 reports: name, columns, and whether it is a flow report (F), as the contract's table lists them. */
const CONTRACT: [string, string[], boolean][] = [
  ["endUserEngagement", ["endUserId", "userName", "flowsPlayed", "flowsCompleted", "searches", "smartTipsPlayed", "beaconsClicked", "lastSeen"], false],
  ["flowViews", ["flowId", "plays", "uniqueUsers"], false],
  ["summary", ["selfHelpQueriesServed", "popupsShown", "tasksStarted", "flowsPlayed", "smartTipsShown", "beaconsShown"], false],
  ["selfHelpContent", ["contentId", "title", "type", "views"], false],
  ["selfHelpSearchTrend", ["date", "searches", "uniqueSearchers"], false],
  ["unsuccessfulSearchTerms", ["searchTerm", "searches"], false],
  ["searchTermsWithResults", ["searchTerm", "searches"], false],
  ["successfulSearchTerms", ["searchTerm", "searches"], false],
  ["searchSuccessVsFailure", ["outcome", "searches"], false],
  ["searchTermsWithNoResults", ["searchTerm", "searches"], false],
  ["taskListCompletion", ["endUserId", "userName", "flowId", "status"], false],
  ["guidedPopups", ["contentId", "appearances", "flowPlays"], false],
  ["popups", ["contentId", "appearances", "clicks"], false],
  ["popupsByUser", ["endUserId", "userName", "contentId", "appearances", "clicks"], false],
  ["smartPopups", ["contentId", "appearances"], false],
  ["flowCompletion", ["flowId", "plays", "completed", "notCompleted"], true],
  ["flowFeedback", ["flowId", "useful", "notUseful"], true],
  ["flowFeedbackComments", ["time", "endUserId", "userName", "useful", "comment"], true],
  ["flowEditors", ["userId", "edits", "lastEditTime"], true],
  ["flowDropOff", ["step", "reached", "droppedAfter"], true],
  ["flowPlaysByWidget", ["widget", "plays"], true],
  ["flowPlaysByDay", ["date", "plays"], true],
  ["negativeFeedbackComments", ["time", "flowId", "endUserId", "userName", "comment"], false],
  ["flowCompletionByUser", ["endUserId", "userName", "flowId", "plays", "completed"], false],
  ["allFlowsCompletion", ["flowId", "plays", "completed", "notCompleted"], false],
  ["flowFailuresByUser", ["endUserId", "userName", "flowId", "failures", "lastFailure"], false],
  ["allFlowsFeedback", ["flowId", "useful", "notUseful"], false],
  ["positiveFeedbackComments", ["time", "flowId", "endUserId", "userName", "comment"], false],
  ["flowExits", ["flowId", "exits"], false],
  ["allFlowsPlaysByWidget", ["flowId", "widget", "plays"], false],
  ["allFlowsPlaysByDay", ["date", "flowId", "plays"], false],
  ["smartTipPlays", ["contentId", "plays"], false],
  ["smartTipPlaysByDay", ["date", "plays"], false],
  ["smartTipPlaysByUser", ["endUserId", "userName", "contentId", "plays"], false],
  ["beacons", ["contentId", "usersShown", "usersClicked"], false],
  ["beaconEngagementByUser", ["endUserId", "userName", "contentId", "shown", "clicked"], false],
  ["userActions", ["actionId", "occurrences", "uniqueUsers"], false],
];
/** "`time`, `lastSeen`, `lastEditTime`, `lastFailure` are epoch ms in JSON and ISO 8601 UTC in CSV." */
const TIME_COLUMNS = new Set(["time", "lastSeen", "lastEditTime", "lastFailure"]);
const WIDGETS = ["self_help", "task_list", "beacon", "guided_popup", "smart_tip", "popup", "direct"];

// ---- the random event set ----------------------------------------------------------------------

interface Ev {
  type: string;
  time: number;
  endUserId?: string;
  flowId?: string;
  contentId?: string;
  widget?: string;
  step?: number;
  searchTerm?: string;
  resultCount?: number;
  useful?: boolean;
  comment?: string;
  actionId?: string;
  domain?: string;
  userName?: string;
}

// Ids whose code-point order differs from UTF-16's: "\uFFFD" and "\uE000" sort before "𝒳" (U+1D4B3)
// by code point, after it by UTF-16 unit (0xD835); "é" after every ASCII letter.
const USERS = ["u1", "U1", "u2", "U3", "_u", "é", "eé", "𝒳", "\uFFFD", "\uE000x", "a𝒳", "a\uFFFD"];
const NAMES = ["Ann", "ann", "Åsa", "𝒳ander", "\uFFFDname", "=Boss", "Zoë, Jr.", 'Bob "B"'];
const FLOWS = ["f1", "f2", "F3", "fé", "f𝒳", "f\uFFFD"];
/** FLOWS and a content record of `a` edited at the start (flowEditors reads its change history). */
let flows: string[] = FLOWS;
const DOMAINS = ["a.x.com", "b.x.com", "c.x.com"];
const TERMS = [
  " Invoice ",
  "invoice",
  "INVOICE",
  "Refund",
  "refund  ",
  "\tRefund",
  "Invoice\u00a0",
  "two  words",
  "Two  Words",
  "Été",
  "été",
  "ΟΔΟΣ",
  "ẞig",
  "𝒳 search",
  "\uFFFD",
  "=cmd",
  "a, b",
];
// (An empty or blank comment is refused at ingestion: "comment must be a non-empty string", a per-item 400.)
const COMMENTS = [" padded ", "ok", "Bad", "=HYPERLINK(1)", "+1", "-", "@me", 'said "no"', "a, b", "line\nbreak", "é𝒳", "plain"];
const ACTIONS = ["export", "Export", "login", "é", "𝒳", "\uFFFD"];

/** Window edges the events cluster on (set before the events are drawn). */
let edges: number[] = [];

/** `n` events; `namedTimes` holds the instants that carry a name already (across draws). */
function randomEvents(n: number, seed: number, contents: string[], namedTimes = new Set<number>()): Ev[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const int = (k: number) => Math.floor(r() * k);
  const out: Ev[] = [];
  for (let i = 0; i < n; i++) {
    // A tenth exactly on a window edge or a midnight, or 1 ms either side of one.
    const onEdge = r() < 0.1;
    let time =
      r() < 0.05
        ? NOW - int(3 * DAY)
        : onEdge
          ? pick([...edges, ...Array.from({ length: DAYS + 1 }, (_, d) => D0 + d * DAY)]) + pick([-1, 0, 0, 1])
          : D0 - 2 * H + int(DAYS * DAY + 2 * H);
    const user = r() < 0.12 ? undefined : pick(USERS);
    const ev: Ev = { type: "", time };
    if (user !== undefined) ev.endUserId = user;
    if (r() < 0.75) ev.domain = pick(DOMAINS);
    // Names only where no other name of the user shares the instant: the contract does not say which
    // of two names given at one time is the latest.
    if (user !== undefined && r() < 0.15) {
      while (namedTimes.has(time)) time += 1;
      namedTimes.add(time);
      ev.time = time;
      ev.userName = pick(NAMES);
    }
    // (No anonymous event carries a name: POST /events refuses a userName without an endUserId.)
    const k = r();
    const flowId = pick(flows);
    if (k < 0.12) {
      ev.type = "flow_started";
      ev.flowId = flowId;
      ev.widget = pick(WIDGETS);
      // guided popup plays name their popup (sometimes not); other widgets now and then carry one too
      if (r() < (ev.widget === "guided_popup" ? 0.7 : 0.2)) ev.contentId = pick(contents);
    } else if (k < 0.25) {
      ev.type = "flow_step";
      ev.flowId = flowId;
      // past 9: a step sorted as text would put 10 before 2
      ev.step = 1 + (r() < 0.8 ? int(4) : int(12));
    } else if (k < 0.33) {
      ev.type = pick(["flow_completed", "flow_exited", "flow_failed"]);
      ev.flowId = flowId;
      ev.widget = pick(WIDGETS);
      // a popup named on an end of a flow: no play of it (guidedPopups.flowPlays counts plays)
      if (r() < 0.2) ev.contentId = pick(contents);
    } else if (k < 0.41) {
      ev.type = "flow_feedback";
      ev.flowId = flowId;
      ev.useful = r() < 0.5;
      if (r() < 0.6) ev.comment = pick(COMMENTS);
    } else if (k < 0.55) {
      ev.type = "selfhelp_search";
      ev.searchTerm = pick(TERMS);
      ev.resultCount = r() < 0.3 ? 0 : 1 + int(12);
      // a clicked result only where there were results
      if (ev.resultCount > 0 && r() < 0.45) ev.contentId = pick(contents);
    } else if (k < 0.62) {
      ev.type = pick(["task_started", "task_started", "task_completed"]);
      ev.flowId = flowId;
    } else if (k < 0.93) {
      ev.type = pick([
        "selfhelp_content_viewed",
        "guided_popup_shown",
        "popup_shown",
        "popup_clicked",
        "smart_popup_shown",
        "smarttip_shown",
        "smarttip_played",
        "beacon_shown",
        "beacon_clicked",
      ]);
      ev.contentId = pick(contents);
    } else {
      ev.type = "user_action";
      ev.actionId = pick(ACTIONS);
    }
    out.push(ev);
    // Twin comments: two feedback events alike in every cell are two rows of the comment reports,
    // which a page boundary between them must not merge or lose.
    if (ev.comment !== undefined && r() < 0.2) out.push({ ...ev });
  }
  return out;
}

// ---- windows ------------------------------------------------------------------------------------

interface Window {
  query: string;
  from: number;
  to: number;
  include: string[];
  exclude: string[];
  flowId: string;
  /**
   * The windows the contract ties to now: none given ("the last 30 days up to now"), only startDate
   * ("runs to now"), only endDate ("the 30 days ending then"). Their edges are read from the answer
   * and checked against these words; the events near now (see randomEvents) fall in them.
   */
  relative?: "none" | "start" | "end";
}
const FILTERS: { include: string[]; exclude: string[] }[] = [
  { include: [], exclude: [] },
  { include: ["a.x.com"], exclude: [] },
  { include: [], exclude: ["a.x.com"] },
  { include: ["a.x.com", "b.x.com"], exclude: ["b.x.com"] },
  { include: ["b.x.com", "nowhere.com"], exclude: [] },
  { include: [], exclude: ["a.x.com", "c.x.com"] },
];
const filterQuery = (f: { include: string[]; exclude: string[] }) =>
  [...f.include.map((x) => `includeDomains=${x}`), ...f.exclude.map((x) => `excludeDomains=${x}`)].join("&");
const pad = (n: number) => String(n).padStart(2, "0");
const dateOf = (t: number) => new Date(t).toISOString().slice(0, 10);

/** Seeded windows: each edge a date (startDate: its 00:00; endDate: the whole day) or a `YYYY-MM-DD HH:MM`. */
function randomWindows(n: number, seed: number): Window[] {
  const r = rng(seed);
  const int = (k: number) => Math.floor(r() * k);
  const out: Window[] = [];
  for (let i = 0; i < n; i++) {
    const f = i < FILTERS.length ? FILTERS[i]! : FILTERS[int(FILTERS.length)]!;
    const startDay = D0 + (int(DAYS + 1) - 1) * DAY; // from the day before the events
    const startTimed = r() < 0.5;
    const from = startTimed ? startDay + int(24) * H + int(60) * M : startDay;
    const endTimed = r() < 0.5;
    let to: number;
    let endParam: string;
    if (endTimed) {
      to = from + int(3 * DAY) + (r() < 0.3 ? 0 : int(60) * M);
      to -= to % M;
      const d = new Date(to);
      endParam = `${dateOf(to)}%20${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
    } else {
      const endDay = from - (from % DAY) + int(3) * DAY;
      to = endDay + DAY; // a date-only endDate includes its whole day
      endParam = dateOf(endDay);
    }
    const d = new Date(from);
    const startParam = startTimed ? `${dateOf(from)}%20${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}` : dateOf(from);
    const flowId = i === 0 ? "no-such-flow" : flows[int(flows.length)]!;
    // Both spellings of a list: comma-separated and repeated.
    const list = (k: string, xs: string[]) => (xs.length === 0 ? [] : r() < 0.5 ? [`${k}=${xs.join(",")}`] : xs.map((x) => `${k}=${x}`));
    const query = [`startDate=${startParam}`, `endDate=${endParam}`, ...list("includeDomains", f.include), ...list("excludeDomains", f.exclude)].join("&");
    out.push({ query, from, to, include: f.include, exclude: f.exclude, flowId });
  }
  const flowId = () => flows[int(flows.length)]!;
  const filter = () => FILTERS[int(FILTERS.length)]!;
  const f1 = filter();
  // (the edited flow: its edits are now, in the windows that end now)
  out.push({ query: filterQuery(f1), from: 0, to: 0, ...f1, flowId: flows.at(-1)!, relative: "none" });
  // only startDate: 2 days before now, at a random minute; only endDate: a day of the 2024 events
  const start = NOW - (NOW % M) - 2 * DAY - int(DAY / M) * M;
  const d = new Date(start);
  const f2 = filter();
  out.push({
    query: [`startDate=${dateOf(start)}%20${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`, filterQuery(f2)].filter(Boolean).join("&"),
    from: start,
    to: 0,
    ...f2,
    flowId: flows.at(-1)!,
    relative: "start",
  });
  // only endDate, a date (its day included) or a time
  const endDay = D0 + int(DAYS) * DAY;
  const endAt = r() < 0.5 ? null : endDay + int(DAY / M) * M;
  const end = endAt ?? endDay + DAY;
  const e = new Date(end);
  const f3 = filter();
  out.push({
    query: [`endDate=${endAt === null ? dateOf(endDay) : `${dateOf(end)}%20${pad(e.getUTCHours())}:${pad(e.getUTCMinutes())}`}`, filterQuery(f3)]
      .filter(Boolean)
      .join("&"),
    from: end - 30 * DAY,
    to: end,
    ...f3,
    flowId: flowId(),
    relative: "end",
  });
  // An empty window: both edges at one minute (an endDate not before the startDate).
  const at = D0 + int(DAYS * 24) * H + int(60) * M;
  const t = `${dateOf(at)}%20${pad(new Date(at).getUTCHours())}:${pad(new Date(at).getUTCMinutes())}`;
  out.push({ query: `startDate=${t}&endDate=${t}`, from: at, to: at, include: [], exclude: [], flowId: flowId() });
  return out;
}

// ---- the oracle ----------------------------------------------------------------------------------

const sortRows = (rows: unknown[][]) =>
  rows.sort((x, y) => {
    for (let i = 0; i < x.length; i++) {
      const c = compareCells(x[i], y[i]);
      if (c) return c;
    }
    return 0;
  });

interface World {
  events: Ev[];
  content: Map<string, { title: string; type: string }>;
  /** The change history of `a`'s content: who changed which record when. */
  history: { id: string; userId: string; time: number }[];
}

/** Groups `events` by `key` (a JSON-able tuple), in a Map of the key's JSON to its events. */
function groupBy(events: Ev[], key: (e: Ev) => unknown[] | null): Map<string, { key: unknown[]; events: Ev[] }> {
  const out = new Map<string, { key: unknown[]; events: Ev[] }>();
  for (const e of events) {
    const k = key(e);
    if (!k) continue;
    const s = JSON.stringify(k);
    const g = out.get(s) ?? { key: k, events: [] };
    g.events.push(e);
    out.set(s, g);
  }
  return out;
}
const count = (events: Ev[], ...types: string[]) => events.filter((e) => types.includes(e.type)).length;
const users = (events: Ev[]) => new Set(events.filter((e) => e.endUserId !== undefined).map((e) => e.endUserId)).size;
/** "Search terms are grouped trimmed and lower-cased." */
const term = (e: Ev) => e.searchTerm!.trim().toLowerCase();

function oracle(world: World, name: string, w: Window): unknown[][] {
  // [startDate, endDate); "With includeDomains, events without a domain are left out; excludeDomains
  // alone keeps them. Both together: included minus excluded."
  const ev = world.events.filter(
    (e) =>
      e.time >= w.from &&
      e.time < w.to &&
      (w.include.length === 0 || (e.domain !== undefined && w.include.includes(e.domain))) &&
      !(e.domain !== undefined && w.exclude.includes(e.domain)),
  );
  // "userName is the latest name seen for that end user, or null"; "the latest userName is by event time".
  // Ambiguity: whether "seen" is limited to the window and domains asked. The oracle reads every
  // event of the account (the name is the end user's, kept from ingestion).
  const latest = new Map<string, { time: number; name: string }>();
  for (const e of world.events)
    if (e.endUserId !== undefined && e.userName !== undefined && (latest.get(e.endUserId)?.time ?? -Infinity) < e.time)
      latest.set(e.endUserId, { time: e.time, name: e.userName });
  const nameOf = (u: unknown) => latest.get(u as string)?.name ?? null;
  const of = (...types: string[]) => ev.filter((e) => types.includes(e.type));
  const flow = of("flow_started", "flow_completed", "flow_exited", "flow_failed", "flow_step", "flow_feedback").filter((e) => e.flowId === w.flowId);
  const withUser = (e: Ev) => e.endUserId !== undefined;
  const rows = (groups: Map<string, { key: unknown[]; events: Ev[] }>, cells: (g: Ev[], key: unknown[]) => unknown[] | null) =>
    [...groups.values()].flatMap((g) => {
      const row = cells(g.events, g.key);
      return row ? [[...g.key, ...row]] : [];
    });
  const searches = of("selfhelp_search");
  const comments = (useful: boolean | null, list: Ev[]) =>
    // "Comment reports (18, 23, 28) list only feedback events that carry a comment."
    list.filter((e) => e.type === "flow_feedback" && e.comment !== undefined && (useful === null || e.useful === useful));
  const feedback = (g: Ev[]) => {
    const fb = g.filter((e) => e.type === "flow_feedback");
    return fb.length ? [fb.filter((e) => e.useful).length, fb.filter((e) => !e.useful).length] : null;
  };
  const completion = (g: Ev[]) => {
    const plays = count(g, "flow_started");
    const completed = count(g, "flow_completed");
    return plays + completed ? [plays, completed, Math.max(0, plays - completed)] : null;
  };
  const searchTerms = (pred: (e: Ev) => boolean) =>
    rows(
      groupBy(searches.filter(pred), (e) => [term(e)]),
      (g) => [g.length],
    );
  const nonZero = (cells: number[]) => (cells.some((c) => c > 0) ? cells : null);

  switch (name) {
    case "endUserEngagement":
      // A row for every end user with an event in the window (lastSeen counts it), anonymous events none.
      return rows(
        groupBy(ev.filter(withUser), (e) => [e.endUserId]),
        (g, [u]) => [
          nameOf(u),
          count(g, "flow_started"),
          count(g, "flow_completed"),
          count(g, "selfhelp_search"),
          count(g, "smarttip_played"),
          count(g, "beacon_clicked"),
          Math.max(...g.map((e) => e.time)),
        ],
      );
    case "flowViews":
      return rows(
        groupBy(of("flow_started"), (e) => [e.flowId]),
        (g) => [g.length, users(g)],
      );
    case "summary":
      // Ambiguity: selfHelpQueriesServed counts every selfhelp_search (the contract defines the others).
      return [
        [
          searches.length,
          count(ev, "popup_shown", "guided_popup_shown", "smart_popup_shown"),
          count(ev, "task_started"),
          count(ev, "flow_started"),
          count(ev, "smarttip_shown"),
          count(ev, "beacon_shown"),
        ],
      ];
    case "selfHelpContent":
      return rows(
        groupBy(of("selfhelp_content_viewed"), (e) => [e.contentId]),
        (g, [c]) => [world.content.get(c as string)?.title ?? null, world.content.get(c as string)?.type ?? null, g.length],
      );
    case "selfHelpSearchTrend":
      return rows(
        groupBy(searches, (e) => [dateOf(e.time)]),
        (g) => [g.length, users(g)],
      );
    case "unsuccessfulSearchTerms":
      return searchTerms((e) => e.resultCount! > 0 && e.contentId === undefined);
    case "searchTermsWithResults":
      // Ambiguity: "with results" is resultCount ≥ 1 (successful and unsuccessful together).
      return searchTerms((e) => e.resultCount! > 0);
    case "successfulSearchTerms":
      return searchTerms((e) => e.contentId !== undefined);
    case "searchSuccessVsFailure":
      return [
        ["no_results", searches.filter((e) => e.resultCount === 0).length],
        ["successful", searches.filter((e) => e.contentId !== undefined).length],
        ["unsuccessful", searches.filter((e) => e.resultCount! > 0 && e.contentId === undefined).length],
      ];
    case "searchTermsWithNoResults":
      return searchTerms((e) => e.resultCount === 0);
    case "taskListCompletion":
      // "one row per user and flow with the furthest status". Ambiguity: anonymous task events are no
      // user's (no row with a null endUserId), as in every per-user report; a task_completed without
      // its task_started in the window is "completed".
      return rows(
        groupBy(of("task_started", "task_completed").filter(withUser), (e) => [e.endUserId, e.flowId]),
        (g, [u]) => [nameOf(u), g.some((e) => e.type === "task_completed") ? "completed" : "started"],
      ).map(([u, f, n, s]) => [u, n, f, s]);
    case "guidedPopups": {
      // appearances: guided_popup_shown; "guidedPopups.flowPlays counts plays with widget guided_popup
      // whose contentId is that popup". Ambiguity: a guided_popup play naming no popup is no popup's
      // (no row with a null contentId).
      const relevant = ev.filter(
        (e) => e.type === "guided_popup_shown" || (e.type === "flow_started" && e.widget === "guided_popup" && e.contentId !== undefined),
      );
      return rows(
        groupBy(relevant, (e) => [e.contentId]),
        (g) => nonZero([count(g, "guided_popup_shown"), count(g, "flow_started")]),
      );
    }
    case "popups":
      return rows(
        groupBy(of("popup_shown", "popup_clicked"), (e) => [e.contentId]),
        (g) => [count(g, "popup_shown"), count(g, "popup_clicked")],
      );
    case "popupsByUser":
      return rows(
        groupBy(of("popup_shown", "popup_clicked").filter(withUser), (e) => [e.endUserId, e.contentId]),
        (g, [u]) => [count(g, "popup_shown"), count(g, "popup_clicked"), nameOf(u)],
      ).map(([u, c, s, k, n]) => [u, n, c, s, k]);
    case "smartPopups":
      return rows(
        groupBy(of("smart_popup_shown"), (e) => [e.contentId]),
        (g) => [g.length],
      );
    case "flowCompletion":
      return rows(
        groupBy(flow, (e) => [e.flowId]),
        completion,
      );
    case "flowFeedback":
      return rows(
        groupBy(flow, (e) => [e.flowId]),
        feedback,
      );
    case "flowFeedbackComments":
      // Anonymous comments are listed too (endUserId and userName null): these reports list events.
      return comments(null, flow).map((e) => [e.time, e.endUserId ?? null, nameOf(e.endUserId), e.useful, e.comment]);
    case "flowEditors":
      // "from the flow's change history": the changes of the content record the flow is, by user.
      // Ambiguity: whether the window applies to a change history. The oracle takes the changes in
      // the window (the history is no events, so the domain filters do not apply to it).
      return rows(
        groupBy(
          world.history.filter((h) => h.id === w.flowId && h.time >= w.from && h.time < w.to).map((h) => ({ type: "", time: h.time, endUserId: h.userId })),
          (e) => [e.endUserId],
        ),
        (g) => [g.length, Math.max(...g.map((e) => e.time))],
      );
    case "flowDropOff": {
      // "per user across the window": a user reached a step with a flow_step of it; "droppedAfter
      // (reached it, reached no later step, did not complete)": no higher step and no flow_completed of
      // the flow in the window. Ambiguity: reaching step 3 does not count as reaching steps 1 and 2
      // unless their flow_steps came (a step is reached by its event); "later" is a higher step
      // number, and a completion anywhere in the window counts (before or after the steps in
      // time); anonymous events are no user.
      const byUser = groupBy(flow.filter(withUser), (e) => [e.endUserId]);
      const reached = new Map<number, { reached: number; dropped: number }>();
      for (const { events: g } of byUser.values()) {
        const steps = new Set(g.filter((e) => e.type === "flow_step").map((e) => e.step!));
        const completed = g.some((e) => e.type === "flow_completed");
        const furthest = Math.max(...steps);
        for (const s of steps) {
          const r = reached.get(s) ?? { reached: 0, dropped: 0 };
          r.reached++;
          if (s === furthest && !completed) r.dropped++;
          reached.set(s, r);
        }
      }
      return [...reached].map(([s, r]) => [s, r.reached, r.dropped]);
    }
    case "flowPlaysByWidget":
      return rows(
        groupBy(
          flow.filter((e) => e.type === "flow_started"),
          (e) => [e.widget],
        ),
        (g) => [g.length],
      );
    case "flowPlaysByDay":
      return rows(
        groupBy(
          flow.filter((e) => e.type === "flow_started"),
          (e) => [dateOf(e.time)],
        ),
        (g) => [g.length],
      );
    case "negativeFeedbackComments":
    case "positiveFeedbackComments":
      return comments(name.startsWith("positive"), ev).map((e) => [e.time, e.flowId, e.endUserId ?? null, nameOf(e.endUserId), e.comment]);
    case "flowCompletionByUser":
      return rows(
        groupBy(of("flow_started", "flow_completed").filter(withUser), (e) => [e.endUserId, e.flowId]),
        (g, [u]) => [nameOf(u), count(g, "flow_started"), count(g, "flow_completed")],
      ).map(([u, f, n, p, c]) => [u, n, f, p, c]);
    case "allFlowsCompletion":
      return rows(
        groupBy(of("flow_started", "flow_completed"), (e) => [e.flowId]),
        completion,
      );
    case "flowFailuresByUser":
      return rows(
        groupBy(of("flow_failed").filter(withUser), (e) => [e.endUserId, e.flowId]),
        (g, [u]) => [nameOf(u), g.length, Math.max(...g.map((e) => e.time))],
      ).map(([u, f, n, k, t]) => [u, n, f, k, t]);
    case "allFlowsFeedback":
      return rows(
        groupBy(of("flow_feedback"), (e) => [e.flowId]),
        feedback,
      );
    case "flowExits":
      return rows(
        groupBy(of("flow_exited"), (e) => [e.flowId]),
        (g) => [g.length],
      );
    case "allFlowsPlaysByWidget":
      return rows(
        groupBy(of("flow_started"), (e) => [e.flowId, e.widget]),
        (g) => [g.length],
      );
    case "allFlowsPlaysByDay":
      return rows(
        groupBy(of("flow_started"), (e) => [dateOf(e.time), e.flowId]),
        (g) => [g.length],
      );
    case "smartTipPlays":
      return rows(
        groupBy(of("smarttip_played"), (e) => [e.contentId]),
        (g) => [g.length],
      );
    case "smartTipPlaysByDay":
      return rows(
        groupBy(of("smarttip_played"), (e) => [dateOf(e.time)]),
        (g) => [g.length],
      );
    case "smartTipPlaysByUser":
      return rows(
        groupBy(of("smarttip_played").filter(withUser), (e) => [e.endUserId, e.contentId]),
        (g, [u]) => [nameOf(u), g.length],
      ).map(([u, c, n, k]) => [u, n, c, k]);
    case "beacons":
      // "usersShown / usersClicked count distinct endUserIds". Ambiguity: a beacon whose events are
      // all anonymous counts no user ("a group with nothing counted is not listed").
      return rows(
        groupBy(of("beacon_shown", "beacon_clicked"), (e) => [e.contentId]),
        (g) => nonZero([users(g.filter((e) => e.type === "beacon_shown")), users(g.filter((e) => e.type === "beacon_clicked"))]),
      );
    case "beaconEngagementByUser":
      return rows(
        groupBy(of("beacon_shown", "beacon_clicked").filter(withUser), (e) => [e.endUserId, e.contentId]),
        (g, [u]) => [nameOf(u), count(g, "beacon_shown"), count(g, "beacon_clicked")],
      ).map(([u, c, n, s, k]) => [u, n, c, s, k]);
    case "userActions":
      return rows(
        groupBy(of("user_action"), (e) => [e.actionId]),
        (g) => [g.length, users(g)],
      );
  }
  throw new Error(`no oracle for ${name}`);
}

/** The oracle's rows in the contract's order: "sorted by their columns from left to right, ascending". */
const expected = (world: World, name: string, w: Window) => sortRows(oracle(world, name, w));

/** The CSV the contract describes: a header row, RFC 4180 quoting, CRLF, formulas neutralised, null empty, times ISO 8601 UTC. */
function csvOf(columns: string[], rows: unknown[][]): string {
  const cell = (v: unknown, column: string) => {
    if (v === null) return "";
    let s = TIME_COLUMNS.has(column) ? new Date(v as number).toISOString() : String(v);
    // The neutralisation the service's CSV tests spell out: a leading apostrophe.
    if (/^[=+\-@]/.test(s)) s = `'${s}`;
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return [columns.join(","), ...rows.map((r) => r.map((v, i) => cell(v, columns[i]!)).join(","))].map((l) => `${l}\r\n`).join("");
}

// ---- the service ---------------------------------------------------------------------------------

const report = (name: string, query: string, t: Tenant = a) => req(`/v1/accounts/${t.accountId}/reports/${name}?${query}`, { headers: t.headers });

/** A short account of how two row lists differ: the first differing row and the counts. */
function differ(want: unknown[][], got: unknown[][]): string | null {
  const w = JSON.stringify(want);
  if (w === JSON.stringify(got)) return null;
  const i = want.findIndex((row, k) => JSON.stringify(row) !== JSON.stringify(got[k]));
  const at = i < 0 ? want.length : i;
  return `${got.length} rows for ${want.length}; first difference at row ${at}: want ${JSON.stringify(want[at])}, got ${JSON.stringify(got[at])}`;
}

let world: World;
let windows: Window[];
let contents: string[];
const namedTimes = new Set<number>();

/** Posts `events` to `a` shuffled, in several requests (names arrive out of time order and across requests), and adds them to the oracle's world. */
async function postShuffled(events: Ev[], seed: number) {
  const r = rng(seed);
  const shuffled = events
    .map((e) => ({ e, k: r() }))
    .sort((x, y) => x.k - y.k)
    .map(({ e }) => e);
  for (let i = 0; i < shuffled.length; i += 400) {
    const batch = shuffled.slice(i, i + 400);
    const posted = await req(`/v1/accounts/${a.accountId}/events`, { method: "POST", headers: a.headers, body: batch });
    expect(posted.status, JSON.stringify(posted.body?.failure ?? posted.body).slice(0, 500)).toBe(202);
    expect(posted.body).toEqual({ accepted: batch.length, duplicates: 0 });
  }
  world.events.push(...events);
}

beforeAll(async () => {
  // Thousands of report requests a minute from one account: past the default budget of 600 points.
  server = await startServer({ RATE_LIMIT_PER_MINUTE: "1000000" });
  a = await tenant("oracle");
  b = await tenant("oracleb");
  // Two real content records (selfHelpContent joins their title and type); the other ids are none.
  const made = await req(`/api/v1/${a.accountId}/content`, {
    method: "POST",
    headers: a.headers,
    body: [
      { title: "Invoices 𝒳", type: "link", url: "https://x.com/i" },
      { title: '=Refunds, "how"', type: "text" },
    ],
  });
  expect(made.status, made.text).toBe(201);
  const content = new Map<string, { title: string; type: string }>(
    made.body.data.map((c: { id: string; title: string; type: string }) => [c.id, { title: c.title, type: c.type }]),
  );
  expect([...content.values()].map((c) => c.type)).toEqual(["link", "text"]);
  // A content of the other tenant: viewed in a, it is no content of a's (no title, no type).
  const theirs = await req(`/api/v1/${b.accountId}/content`, { method: "POST", headers: b.headers, body: [{ title: "Not yours", type: "text" }] });
  expect(theirs.status, theirs.text).toBe(201);
  contents = [...content.keys(), theirs.body.data[0].id, "cX", "c_3", "p1", "𝒳c", "\uFFFDc", "é"];
  // A flow that is a content record, created and edited: its change history has two entries.
  const flow = await req(`/api/v1/${a.accountId}/content`, { method: "POST", headers: a.headers, body: [{ title: "Onboarding", type: "text" }] });
  expect(flow.status, flow.text).toBe(201);
  const flowId = flow.body.data[0].id;
  const edited = await req(`/api/v1/${a.accountId}/content`, { method: "PUT", headers: a.headers, body: [{ id: flowId, title: "Onboarding v2" }] });
  expect(edited.status, edited.text).toBe(200);
  flows = [...FLOWS, flowId];
  const log = await prisma.auditLog.findMany({ where: { accountId: a.accountId, resourceType: "content" } });
  expect(log.filter((l) => l.resourceId === flowId)).toHaveLength(2);
  // Every change by the tenant's one user (the report names users by email); the times as recorded.
  const history = log.map((l) => ({ id: l.resourceId, userId: a.email, time: l.timestamp.getTime() }));
  windows = randomWindows(5, testSeed(7));
  edges = windows.filter((w) => w.relative !== "none").flatMap((w) => [w.from, w.to].filter((t) => t > D0 - 2 * DAY && t < D0 + 10 * DAY));
  world = { events: [], content, history };
  await postShuffled(randomEvents(1_000, testSeed(11), contents, namedTimes), testSeed(13));
  // The other tenant: the same users, flows, contents, terms and domains, other names; rolled up.
  const lookAlike = randomEvents(400, testSeed(17), contents).map((e) => (e.userName ? { ...e, userName: "Mallory" } : e));
  const other = await req(`/v1/accounts/${b.accountId}/events`, { method: "POST", headers: b.headers, body: lookAlike });
  expect(other.status, other.text).toBe(202);
  await catchUpRollups(b.accountId);
}, 60_000);
afterAll(() => server.close());

/**
 * Every window's JSON answer (rows, columns, report, window) against the oracle; on one window (by
 * report and `turn`) the pages walked with a small limit and the CSV too. The disagreements are collected, one
 * line each, so a failure lists every window it shows in.
 */
async function check(name: string, columns: string[], flowReport: boolean, turn: number): Promise<string[]> {
  const problems: string[] = [];
  const index = CONTRACT.findIndex(([n]) => n === name);
  const r = rng(testSeed(100 + turn) * 64 + index);
  for (const [i, given] of windows.entries()) {
    const query = [given.query, flowReport ? `flowId=${encodeURIComponent(given.flowId)}` : ""].filter(Boolean).join("&");
    const label = `${name} ?${decodeURIComponent(query)}`;
    const res = await report(name, `${query}&limit=10000`);
    if (res.status !== 200) {
      problems.push(`${label}: ${res.status} ${res.text.slice(0, 200)}`);
      continue;
    }
    // A window tied to now: its edges as answered, when they are what the contract says.
    let w = given;
    if (given.relative) {
      const [from, to] = [Date.parse(res.body.startDate), Date.parse(res.body.endDate)];
      const nearNow = Math.abs(to - Date.now()) < 60_000;
      const ok =
        given.relative === "none"
          ? nearNow && to - from === 30 * DAY
          : given.relative === "start"
            ? nearNow && from === given.from
            : from === given.from && to === given.to;
      if (!ok) problems.push(`${label}: window ${res.body.startDate}..${res.body.endDate}`);
      w = { ...given, from, to };
    }
    const want = expected(world, name, w);
    const head = { report: res.body.report, startDate: res.body.startDate, endDate: res.body.endDate, columns: res.body.columns, cursor: res.body.cursor };
    const wantHead = { report: name, startDate: new Date(w.from).toISOString(), endDate: new Date(w.to).toISOString(), columns, cursor: null };
    if (JSON.stringify(head) !== JSON.stringify(wantHead)) problems.push(`${label}: head ${JSON.stringify(head)}, want ${JSON.stringify(wantHead)}`);
    const d = differ(want, res.body.rows);
    if (d) problems.push(`${label}: ${d}`);
    // One window a report and phase, a different one each time.
    if (i !== (index + 3 * turn) % windows.length) continue;
    // Pages with a small limit: their concatenation is the whole answer, each within the limit.
    const limit = Math.max(1 + Math.floor(r() * 4), Math.ceil(want.length / 10));
    const walked: unknown[][] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 100; n++) {
      const page: Awaited<ReturnType<typeof report>> = await report(name, `${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
      if (page.status !== 200) {
        problems.push(`${label} page ${n} by ${limit}: ${page.status} ${page.text.slice(0, 200)}`);
        break;
      }
      if (page.body.rows.length > limit) problems.push(`${label} page ${n}: ${page.body.rows.length} rows over the limit ${limit}`);
      walked.push(...page.body.rows);
      cursor = page.body.cursor;
      if (!cursor) break;
    }
    const p = differ(want, walked);
    if (p) problems.push(`${label} pages by ${limit}: ${p}`);
    // CSV: the oracle rendered as the contract says; limit ignored.
    const csv = await report(name, `${query}&format=csv&limit=1`);
    if (csv.status !== 200 || !csv.headers.get("content-type")?.startsWith("text/csv") || !/^attachment/.test(csv.headers.get("content-disposition") ?? ""))
      problems.push(`${label} csv: ${csv.status} ${csv.headers.get("content-type")} ${csv.headers.get("content-disposition")}`);
    const wantCsv = csvOf(columns, want);
    if (csv.text !== wantCsv) {
      const [x, y] = [wantCsv.split("\r\n"), csv.text.split("\r\n")];
      const k = x.findIndex((line, j) => line !== y[j]);
      problems.push(`${label} csv: line ${k}: want ${JSON.stringify(x[k])}, got ${JSON.stringify(y[k])}`);
    }
  }
  return problems;
}

/** Sanity of the draw: the comparisons are about real answers, not empty ones. */
function rowsAcrossWindows() {
  return CONTRACT.reduce((sum, [name]) => sum + windows.reduce((s, w) => s + expected(world, name, w).length, 0), 0);
}

describe("every report equals the contract's oracle", () => {
  it("the draw gives non-trivial answers: many rows; every report but the flow reports with rows in some window, most flow reports too", () => {
    expect(rowsAcrossWindows()).toBeGreaterThan(500);
    // (the windows that end now: as they will be answered)
    const now = Date.now();
    const edged = windows.map((w) => (w.relative === "none" ? { ...w, from: now - 30 * DAY, to: now } : w.relative === "start" ? { ...w, to: now } : w));
    const some = (name: string) => edged.some((w) => expected(world, name, w).length > 0);
    for (const [name] of CONTRACT.filter(([, , flow]) => !flow)) expect(some(name), name).toBe(true);
    expect(some("flowEditors")).toBe(true);
    expect(CONTRACT.filter(([name, , flow]) => flow && some(name)).length).toBeGreaterThanOrEqual(5);
  });

  const phases = [
    ["rollup worker not run (raw events)", async () => {}],
    // The worker part way, as report-rollups.test.ts runs it: 60 % of the events counted.
    ["rollup worker part way", async () => void (await rollUpAccount(a.accountId, Math.floor(world.events.length * 0.6)))],
    ["rollup worker caught up", async () => void (await catchUpRollups(a.accountId))],
    // Events arriving after the worker caught up, their times all over the days already counted
    // (names of end users among them, later and earlier than their counted ones): read above the
    // watermark beside the rollups, then counted in.
    ["late events above the caught-up watermark", () => postShuffled(randomEvents(250, testSeed(19), contents, namedTimes), testSeed(23))],
    ["rollup worker caught up with the late events", async () => void (await catchUpRollups(a.accountId))],
  ] as const;
  for (const [turn, [phase, prepare]] of phases.entries()) {
    describe(phase, () => {
      beforeAll(prepare, 60_000);
      it.each(CONTRACT.map(([name, columns, flow]) => [name, columns, flow] as const))("%s", async (name, columns, flow) => {
        expect(await check(name, [...columns], flow, turn)).toEqual([]);
      });
    });
  }
});
