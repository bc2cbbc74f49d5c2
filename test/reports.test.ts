// The B24 reports over REST and GraphQL: every report's rows on a small hand-built event set (the
// expected rows are worked out by hand below, event by event), window edges at UTC midnight,
// domain filters, CSV quoting and neutralisation, bad parameters, tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPORTS } from "../src/domains/reports/registry.js";
import { expectProblem, gql, prisma, requester, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let a: Tenant; // the hand-built event set
let b: Tenant; // another tenant with look-alike events (isolation)
let c1: string; // a real content of `a` (selfHelpContent joins its title and type)
const req = requester(() => server);

const H = 3_600_000;
const S = 1_000;
const D1 = Date.UTC(2024, 5, 1); // 2024-06-01 00:00 UTC
const D2 = D1 + 24 * H;
const D3 = D2 + 24 * H;
const A_DOM = "app.x.com";
const B_DOM = "admin.x.com";

const ev = (n: number, type: string, time: number, fields: Record<string, unknown> = {}) => ({ n, type, time, ...fields });

/** The events, numbered as the expectations refer to them. */
function events(c1: string) {
  const u1 = { endUserId: "u1", domain: A_DOM };
  const u2 = { endUserId: "u2", domain: B_DOM };
  const u3 = { endUserId: "u3" };
  return [
    // flow f1
    ev(1, "flow_started", D1 + 10 * H, { ...u1, flowId: "f1", widget: "self_help", userName: "Ann" }),
    ev(2, "flow_step", D1 + 10 * H + S, { ...u1, flowId: "f1", step: 1 }),
    ev(3, "flow_step", D1 + 10 * H + 2 * S, { ...u1, flowId: "f1", step: 2 }),
    ev(4, "flow_completed", D1 + 10 * H + 3 * S, { ...u1, flowId: "f1", widget: "self_help" }),
    ev(5, "flow_feedback", D1 + 10 * H + 4 * S, { ...u1, flowId: "f1", useful: true, comment: 'Great, "clear"\nthanks' }),
    ev(6, "flow_started", D2 + 9 * H, { ...u2, flowId: "f1", widget: "guided_popup", contentId: "p1", userName: "Bob" }),
    ev(7, "flow_step", D2 + 9 * H + S, { ...u2, flowId: "f1", step: 1 }),
    ev(8, "flow_exited", D2 + 9 * H + 2 * S, { ...u2, flowId: "f1", widget: "guided_popup" }),
    ev(9, "flow_feedback", D2 + 9 * H + 3 * S, { ...u2, flowId: "f1", useful: false, comment: "=HYPERLINK(1)" }),
    ev(10, "flow_started", D2 + 12 * H, { ...u3, flowId: "f1", widget: "task_list" }),
    ev(11, "flow_step", D2 + 12 * H + S, { ...u3, flowId: "f1", step: 1 }),
    ev(12, "flow_step", D2 + 12 * H + 2 * S, { ...u3, flowId: "f1", step: 2 }),
    ev(13, "flow_failed", D2 + 12 * H + 3 * S, { ...u3, flowId: "f1", widget: "task_list" }),
    ev(14, "flow_feedback", D2 + 12 * H + 4 * S, { ...u3, flowId: "f1", useful: false }),
    ev(15, "flow_started", D1, { flowId: "f1", widget: "self_help", domain: A_DOM }), // anonymous, at the window's first instant
    ev(16, "flow_started", D3, { ...u1, flowId: "f1", widget: "self_help" }), // at the window's end: out
    ev(17, "flow_started", D1 - 1, { ...u1, flowId: "f1", widget: "self_help" }), // 1 ms before: out
    // flow f2
    ev(18, "flow_started", D2 + H, { ...u1, flowId: "f2", widget: "beacon", userName: "Anna" }),
    ev(19, "flow_completed", D2 + H + S, { ...u1, flowId: "f2", widget: "beacon" }),
    ev(20, "flow_failed", D2 + H + 2 * S, { ...u1, flowId: "f2", widget: "beacon" }),
    // Task List
    ev(21, "task_started", D1 + 8 * H, { ...u1, flowId: "f1" }),
    ev(22, "task_completed", D1 + 9 * H, { ...u1, flowId: "f1" }),
    ev(23, "task_started", D2 + 8 * H, { ...u2, flowId: "f2" }),
    // Self Help
    ev(24, "selfhelp_search", D1 + 11 * H, { ...u1, searchTerm: " Invoice ", resultCount: 3, contentId: c1 }),
    ev(25, "selfhelp_search", D2 + 11 * H, { ...u2, searchTerm: "invoice", resultCount: 2 }),
    ev(26, "selfhelp_search", D2 + 11 * H + S, { ...u2, searchTerm: "Refund", resultCount: 0 }),
    ev(27, "selfhelp_search", D2 + 11 * H + 2 * S, { searchTerm: "refund", resultCount: 0 }),
    ev(28, "selfhelp_content_viewed", D1 + 11 * H + S, { ...u1, contentId: c1 }),
    ev(29, "selfhelp_content_viewed", D2 + 11 * H + 3 * S, { ...u2, contentId: c1 }),
    ev(30, "selfhelp_content_viewed", D2 + 11 * H + 4 * S, { ...u2, contentId: "cX" }),
    // popups
    ev(31, "popup_shown", D1 + 12 * H, { ...u1, contentId: "pp1" }),
    ev(32, "popup_clicked", D1 + 12 * H + S, { ...u1, contentId: "pp1" }),
    ev(33, "popup_shown", D2 + 12 * H, { ...u2, contentId: "pp1" }),
    ev(34, "guided_popup_shown", D2 + 8 * H + 59 * 60 * S, { ...u2, contentId: "p1" }),
    ev(35, "guided_popup_shown", D2 + 13 * H, { ...u3, contentId: "p1" }),
    ev(36, "smart_popup_shown", D2 + 13 * H + S, { ...u3, contentId: "sp1" }),
    // Smart Tips
    ev(37, "smarttip_shown", D1 + 13 * H, { ...u1, contentId: "st1" }),
    ev(38, "smarttip_played", D1 + 13 * H + S, { ...u1, contentId: "st1" }),
    ev(39, "smarttip_played", D2 + 13 * H, { ...u2, contentId: "st1" }),
    // beacons
    ev(40, "beacon_shown", D1 + 14 * H, { ...u1, contentId: "b1" }),
    ev(41, "beacon_shown", D1 + 14 * H + S, { ...u1, contentId: "b1" }),
    ev(42, "beacon_clicked", D1 + 14 * H + 2 * S, { ...u1, contentId: "b1" }),
    ev(43, "beacon_shown", D2 + 14 * H, { ...u2, contentId: "b1" }),
    // user actions
    ev(44, "user_action", D1 + 15 * H, { ...u1, actionId: "export" }),
    ev(45, "user_action", D2 + 15 * H, { ...u1, actionId: "export" }),
    ev(46, "user_action", D2 + 15 * H, { ...u2, actionId: "export" }),
    ev(47, "user_action", D2 + 16 * H, { actionId: "login" }),
  ];
}
const strip = (list: ReturnType<typeof events>) => list.map(({ n: _n, ...e }) => e);
const post = (t: Tenant, body: unknown) => req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body });
const report = (t: Tenant, name: string, query = "") => req(`/v1/accounts/${t.accountId}/reports/${name}?${query}`, { headers: t.headers });
/** The window of the hand-checked expectations: 2024-06-01 00:00 up to 2024-06-03 00:00 (a date-only endDate includes its day). */
const WINDOW = "startDate=2024-06-01&endDate=2024-06-02";
const rows = async (name: string, query = "", t: Tenant = a) => {
  const r = await report(t, name, `${WINDOW}&${query}`);
  expect(r.status, r.text).toBe(200);
  return r.body.rows;
};

beforeAll(async () => {
  server = await startServer();
  a = await tenant("rep");
  b = await tenant("repb");
  const created = await req(`/api/v1/${a.accountId}/content`, {
    method: "POST",
    headers: a.headers,
    body: [{ title: "Invoices", type: "link", url: "https://x.com/i" }],
  });
  expect(created.status, created.text).toBe(201);
  c1 = created.body.data[0].id;
  expect(c1 < "cX" === false && "cX" < c1).toBe(true); // code-point order puts "cX" first ("X" < "_")
  const list = events(c1);
  // Two requests, the later one carrying u1's older name: the latest name by event time wins.
  const later = list.filter((e) => e.n !== 1);
  const first = await post(a, strip(later));
  expect(first.status, first.text).toBe(202);
  expect(first.body).toEqual({ accepted: later.length, duplicates: 0 });
  const second = await post(a, strip(list.filter((e) => e.n === 1)));
  expect(second.status, second.text).toBe(202);
  // The other tenant: the same ids and flows, a different name; none of it may show in a's reports.
  const other = await post(b, [
    { type: "flow_started", time: D1 + H, endUserId: "u1", flowId: "f1", widget: "self_help", userName: "Mallory", domain: A_DOM },
    { type: "selfhelp_search", time: D1 + H, endUserId: "u1", searchTerm: "invoice", resultCount: 0 },
    { type: "user_action", time: D1 + H, endUserId: "u9", actionId: "export" },
  ]);
  expect(other.status, other.text).toBe(202);
});
afterAll(() => server.close());

// Times of the events the comment and failure reports list.
const T5 = D1 + 10 * H + 4 * S;
const T9 = D2 + 9 * H + 3 * S;

/** Every report's rows over WINDOW, worked out by hand from the numbered events above. */
const EXPECTED: Record<string, { query?: string; rows: () => unknown[][] }> = {
  // u1: plays #1 #18 (#16, #17 are outside), completions #4 #19, search #24, Smart Tip #38, beacon click #42, last event #45.
  // u2: play #6, searches #25 #26, Smart Tip #39, last #46. u3: play #10, last #36. Anonymous events have no row.
  endUserEngagement: {
    rows: () => [
      ["u1", "Anna", 2, 2, 1, 1, 1, D2 + 15 * H],
      ["u2", "Bob", 1, 0, 2, 1, 0, D2 + 15 * H],
      ["u3", null, 1, 0, 0, 0, 0, D2 + 13 * H + S],
    ],
  },
  // f1 plays #1 #6 #10 #15 (anonymous: a play, not a user); f2 #18.
  flowViews: {
    rows: () => [
      ["f1", 4, 3],
      ["f2", 1, 1],
    ],
  },
  // searches #24-#27; popups #31 #33 + guided #34 #35 + smart #36; tasks #21 #23; plays #1 #6 #10 #15 #18; tip shown #37; beacons shown #40 #41 #43.
  summary: { rows: () => [[4, 5, 2, 5, 1, 3]] },
  // c1 viewed #28 #29; "cX" (#30) is no content of the account.
  selfHelpContent: {
    rows: () => [
      ["cX", null, null, 1],
      [c1, "Invoices", "link", 2],
    ],
  },
  // 06-01: #24 (u1); 06-02: #25 #26 (u2) and #27 (anonymous).
  selfHelpSearchTrend: {
    rows: () => [
      ["2024-06-01", 1, 1],
      ["2024-06-02", 3, 1],
    ],
  },
  unsuccessfulSearchTerms: { rows: () => [["invoice", 1]] }, // #25
  searchTermsWithResults: { rows: () => [["invoice", 2]] }, // #24 " Invoice " and #25
  successfulSearchTerms: { rows: () => [["invoice", 1]] }, // #24
  searchSuccessVsFailure: {
    rows: () => [
      ["no_results", 2],
      ["successful", 1],
      ["unsuccessful", 1],
    ],
  },
  searchTermsWithNoResults: { rows: () => [["refund", 2]] }, // #26 "Refund" and #27
  taskListCompletion: {
    rows: () => [
      ["u1", "Anna", "f1", "completed"],
      ["u2", "Bob", "f2", "started"],
    ],
  },
  guidedPopups: { rows: () => [["p1", 2, 1]] }, // shown #34 #35; play #6 from it
  popups: { rows: () => [["pp1", 2, 1]] },
  popupsByUser: {
    rows: () => [
      ["u1", "Anna", "pp1", 1, 1],
      ["u2", "Bob", "pp1", 1, 0],
    ],
  },
  smartPopups: { rows: () => [["sp1", 1]] },
  flowCompletion: { query: "flowId=f1", rows: () => [["f1", 4, 1, 3]] },
  flowFeedback: { query: "flowId=f1", rows: () => [["f1", 1, 2]] }, // #5 yes; #9 #14 no
  flowFeedbackComments: {
    query: "flowId=f1",
    rows: () => [
      [T5, "u1", "Anna", true, 'Great, "clear"\nthanks'],
      [T9, "u2", "Bob", false, "=HYPERLINK(1)"],
    ],
  },
  flowEditors: { query: "flowId=f1", rows: () => [] }, // f1 is no content: no change history (see the test of its own)
  // step 1: u1 u2 u3, u2 stopped there (exited); step 2: u1 u3, u3 failed there, u1 completed.
  flowDropOff: {
    query: "flowId=f1",
    rows: () => [
      [1, 3, 1],
      [2, 2, 1],
    ],
  },
  flowPlaysByWidget: {
    query: "flowId=f1",
    rows: () => [
      ["guided_popup", 1],
      ["self_help", 2],
      ["task_list", 1],
    ],
  },
  flowPlaysByDay: {
    query: "flowId=f1",
    rows: () => [
      ["2024-06-01", 2],
      ["2024-06-02", 2],
    ],
  },
  negativeFeedbackComments: { rows: () => [[T9, "f1", "u2", "Bob", "=HYPERLINK(1)"]] },
  flowCompletionByUser: {
    rows: () => [
      ["u1", "Anna", "f1", 1, 1],
      ["u1", "Anna", "f2", 1, 1],
      ["u2", "Bob", "f1", 1, 0],
      ["u3", null, "f1", 1, 0],
    ],
  },
  allFlowsCompletion: {
    rows: () => [
      ["f1", 4, 1, 3],
      ["f2", 1, 1, 0],
    ],
  },
  flowFailuresByUser: {
    rows: () => [
      ["u1", "Anna", "f2", 1, D2 + H + 2 * S],
      ["u3", null, "f1", 1, D2 + 12 * H + 3 * S],
    ],
  },
  allFlowsFeedback: { rows: () => [["f1", 1, 2]] },
  positiveFeedbackComments: { rows: () => [[T5, "f1", "u1", "Anna", 'Great, "clear"\nthanks']] },
  flowExits: { rows: () => [["f1", 1]] },
  allFlowsPlaysByWidget: {
    rows: () => [
      ["f1", "guided_popup", 1],
      ["f1", "self_help", 2],
      ["f1", "task_list", 1],
      ["f2", "beacon", 1],
    ],
  },
  allFlowsPlaysByDay: {
    rows: () => [
      ["2024-06-01", "f1", 2],
      ["2024-06-02", "f1", 2],
      ["2024-06-02", "f2", 1],
    ],
  },
  smartTipPlays: { rows: () => [["st1", 2]] },
  smartTipPlaysByDay: {
    rows: () => [
      ["2024-06-01", 1],
      ["2024-06-02", 1],
    ],
  },
  smartTipPlaysByUser: {
    rows: () => [
      ["u1", "Anna", "st1", 1],
      ["u2", "Bob", "st1", 1],
    ],
  },
  beacons: { rows: () => [["b1", 2, 1]] },
  beaconEngagementByUser: {
    rows: () => [
      ["u1", "Anna", "b1", 2, 1],
      ["u2", "Bob", "b1", 1, 0],
    ],
  },
  userActions: {
    rows: () => [
      ["export", 3, 2],
      ["login", 1, 0],
    ],
  },
};

describe("every report on the hand-built event set", () => {
  it("covers all 37 reports of the registry", () => {
    expect(REPORTS).toHaveLength(37);
    expect(Object.keys(EXPECTED).sort()).toEqual(REPORTS.map((r) => r.name).sort());
  });

  it.each(REPORTS.map((r) => [r.name] as const))("%s: JSON rows as worked out by hand", async (name) => {
    const def = REPORTS.find((r) => r.name === name)!;
    const r = await report(a, name, `${WINDOW}&${EXPECTED[name]!.query ?? ""}`);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    expect(r.body).toEqual({
      report: name,
      startDate: "2024-06-01T00:00:00.000Z",
      endDate: "2024-06-03T00:00:00.000Z",
      columns: def.columns.map((c) => c.name),
      rows: EXPECTED[name]!.rows(),
      cursor: null, // every row fits the first page
    });
  });

  it.each(REPORTS.map((r) => [r.name] as const))("%s: CSV has the same rows", async (name) => {
    const def = REPORTS.find((r) => r.name === name)!;
    const r = await req(`/v1/accounts/${a.accountId}/reports/${name}?${WINDOW}&format=csv&${EXPECTED[name]!.query ?? ""}`, { headers: a.headers });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(r.headers.get("content-disposition")).toBe(`attachment; filename="${name}_2024-06-01_2024-06-03.csv"`);
    const lines = r.text.split("\r\n");
    expect(lines[0]).toBe(def.columns.map((c) => c.name).join(","));
    expect(lines.at(-1)).toBe(""); // every record ends with CRLF
    // Records that hold no quoted line break are one line each.
    expect(r.text.split("\r\n").length - 2).toBe(EXPECTED[name]!.rows().length);
  });
});

describe("CSV", () => {
  it("quotes commas, quotes and line breaks (RFC 4180), writes times as ISO 8601 and booleans as true/false, and neutralises formulas", async () => {
    const r = await req(`/v1/accounts/${a.accountId}/reports/flowFeedbackComments?${WINDOW}&flowId=f1&format=csv`, { headers: a.headers });
    expect(r.text).toBe(
      "time,endUserId,userName,useful,comment\r\n" +
        '2024-06-01T10:00:04.000Z,u1,Anna,true,"Great, ""clear""\nthanks"\r\n' +
        "2024-06-02T09:00:03.000Z,u2,Bob,false,'=HYPERLINK(1)\r\n",
    );
  });

  it("neutralises cells that start with =, +, - or @ and leaves null cells empty", async () => {
    const t = await tenant("csv");
    const base = { type: "flow_feedback", flowId: "f", useful: true };
    const comments = ["+SUM(A1)", "-2+3", "@cmd", "=1+1", "plain, text", "a=b"];
    const stored = await post(
      t,
      comments.map((comment, i) => ({ ...base, time: D1 + i, comment, endUserId: `v${i}`, ...(i === 0 ? { userName: "@admin" } : {}) })),
    );
    expect(stored.status, stored.text).toBe(202);
    const r = await req(`/v1/accounts/${t.accountId}/reports/positiveFeedbackComments?${WINDOW}&format=csv`, { headers: t.headers });
    expect(r.text).toBe(
      "time,flowId,endUserId,userName,comment\r\n" +
        "2024-06-01T00:00:00.000Z,f,v0,'@admin,'+SUM(A1)\r\n" +
        "2024-06-01T00:00:00.001Z,f,v1,,'-2+3\r\n" +
        "2024-06-01T00:00:00.002Z,f,v2,,'@cmd\r\n" +
        "2024-06-01T00:00:00.003Z,f,v3,,'=1+1\r\n" +
        '2024-06-01T00:00:00.004Z,f,v4,,"plain, text"\r\n' +
        "2024-06-01T00:00:00.005Z,f,v5,,a=b\r\n",
    );
    // JSON keeps the values as they were sent.
    const json = await report(t, "positiveFeedbackComments", WINDOW);
    expect(json.body.rows.map((row: unknown[]) => row[4])).toEqual(comments);
  });
});

describe("window", () => {
  const plays = async (query: string) => (await report(a, "flowViews", query)).body;

  it("starts at UTC midnight of a date-only startDate and ends after the whole day of a date-only endDate", async () => {
    // [06-01 00:00, 06-02 00:00): #1 and #15 (exactly 00:00); #17 (1 ms earlier) is out.
    const day = await plays("startDate=2024-06-01&endDate=2024-06-01");
    expect(day.rows).toEqual([["f1", 2, 1]]);
    expect([day.startDate, day.endDate]).toEqual(["2024-06-01T00:00:00.000Z", "2024-06-02T00:00:00.000Z"]);
    // An endDate with a time is exclusive: 06-03 00:00 leaves #16 (exactly then) out; the date 06-03 takes it in.
    expect((await plays("startDate=2024-06-01&endDate=2024-06-03%2000:00")).rows).toEqual([
      ["f1", 4, 3],
      ["f2", 1, 1],
    ]);
    expect((await plays("startDate=2024-06-01&endDate=2024-06-03")).rows).toEqual([
      ["f1", 5, 3],
      ["f2", 1, 1],
    ]);
    // A startDate with a time: #15 (00:00) is out.
    expect((await plays("startDate=2024-06-01%2010:00&endDate=2024-06-02")).rows).toEqual([
      ["f1", 3, 3],
      ["f2", 1, 1],
    ]);
    // 1 ms before 06-01 (#17) only with a window starting the day before.
    expect((await plays("startDate=2024-05-31&endDate=2024-05-31")).rows).toEqual([["f1", 1, 1]]);
  });

  it("defaults: the last 30 days up to now; only endDate: the 30 days ending then; only startDate: up to now", async () => {
    const none = await plays("");
    expect(none.rows).toEqual([]);
    expect(Date.parse(none.endDate) - Date.parse(none.startDate)).toBe(30 * 24 * H);
    expect(Math.abs(Date.parse(none.endDate) - Date.now())).toBeLessThan(60_000);
    const onlyEnd = await plays("endDate=2024-06-02");
    expect([onlyEnd.startDate, onlyEnd.endDate]).toEqual(["2024-05-04T00:00:00.000Z", "2024-06-03T00:00:00.000Z"]);
    expect(onlyEnd.rows).toEqual([
      ["f1", 5, 3],
      ["f2", 1, 1],
    ]);
    const onlyStart = await plays("startDate=2024-06-01");
    expect(onlyStart.startDate).toBe("2024-06-01T00:00:00.000Z");
    expect(onlyStart.rows).toEqual([
      ["f1", 5, 3],
      ["f2", 1, 1],
    ]);
  });
});

describe("domain filters", () => {
  it("includeDomains keeps only those domains (events without one are left out)", async () => {
    // app.x.com: #1 (u1) and #15 (anonymous) on f1, #18 on f2.
    expect(await rows("flowViews", `includeDomains=${A_DOM}`)).toEqual([
      ["f1", 2, 1],
      ["f2", 1, 1],
    ]);
    expect(await rows("flowViews", `includeDomains=${B_DOM}`)).toEqual([["f1", 1, 1]]); // #6
  });

  it("excludeDomains alone keeps events without a domain", async () => {
    expect(await rows("flowViews", `excludeDomains=${A_DOM}`)).toEqual([["f1", 2, 2]]); // #6 (admin), #10 (none)
  });

  it("both together: included minus excluded, as a comma list or repeated", async () => {
    const expected = [
      ["f1", 2, 1],
      ["f2", 1, 1],
    ];
    expect(await rows("flowViews", `includeDomains=${A_DOM},${B_DOM}&excludeDomains=${B_DOM}`)).toEqual(expected);
    expect(await rows("flowViews", `includeDomains=${A_DOM}&includeDomains=${B_DOM}&excludeDomains=${B_DOM}`)).toEqual(expected);
    expect(await rows("summary", `includeDomains=${B_DOM}&excludeDomains=${B_DOM}`)).toEqual([[0, 0, 0, 0, 0, 0]]);
  });

  it("a domain is a host name: stored trimmed and lower-cased, and the filters fold alike", async () => {
    const t = await tenant("dom");
    const r = await post(t, [{ type: "flow_started", time: D1 + H, endUserId: "u1", flowId: "f1", widget: "self_help", domain: " App.X.com " }]);
    expect(r.status, r.text).toBe(202);
    expect((await prisma.event.findMany({ where: { accountId: t.accountId }, select: { domain: true } })).map((e) => e.domain)).toEqual(["app.x.com"]);
    for (const filter of ["includeDomains=app.x.com", "includeDomains=%20APP.X.COM", "includeDomains=App.X.com,other"])
      expect(await rows("flowViews", filter, t), filter).toEqual([["f1", 1, 1]]);
    expect(await rows("flowViews", "excludeDomains=APP.x.com", t)).toEqual([]);
    // A final dot names the same host; a list given but naming none is a 400, not "no filter".
    const dotted = await post(t, [{ type: "flow_started", time: D1 + H, endUserId: "u2", flowId: "f1", widget: "self_help", domain: "App.X.com." }]);
    expect(dotted.status, dotted.text).toBe(202);
    expect(await rows("flowViews", "includeDomains=app.x.com", t)).toEqual([["f1", 2, 2]]);
    expect(await rows("flowViews", "excludeDomains=app.x.com.", t)).toEqual([]);
    for (const q of ["includeDomains=%20,,", "excludeDomains=,"])
      expectProblem(await report(t, "flowViews", q), 400, /^(include|exclude)Domains must list at least one domain/);
    // Sent without a value at all: refused as every parameter is (docs/rest.md).
    expectProblem(await report(t, "flowViews", "includeDomains="), 400, "includeDomains must not be empty (leave the parameter out instead)");
  });

  it("format=csv ignores limit and cursor, even ones JSON would refuse", async () => {
    const json = await report(a, "flowViews", `${WINDOW}&limit=1`);
    expect(json.status).toBe(200);
    for (const q of ["limit=0", "limit=20000", "limit=abc", "cursor=zzz"]) {
      const csv = await report(a, "flowViews", `${WINDOW}&format=csv&${q}`);
      expect([q, csv.status], csv.text).toEqual([q, 200]);
    }
    expectProblem(await report(a, "flowViews", `${WINDOW}&limit=0`), 400, /limit must be between 1 and/);
  });

  it("a cursor of another account is a 400, not a keyset that skips this account's rows; cursors without an account still resume", async () => {
    const first = await report(a, "endUserEngagement", `${WINDOW}&limit=1`);
    expect(first.status, first.text).toBe(200);
    expect(typeof first.body.cursor).toBe("string");
    // a's cursor holds a's last row (its end user, their name): on b it positioned b's walk, skipping b's rows before it.
    const foreign = await report(b, "endUserEngagement", `${WINDOW}&limit=1&cursor=${first.body.cursor}`);
    expectProblem(foreign, 400, /^cursor belongs to another account/);
    expect(foreign.body.errors).toEqual([{ path: "cursor", message: "cursor of another account" }]);
    const q = `query($id: String!, $c: String) { report(accountId: $id, name: "endUserEngagement", startDate: "2024-06-01", endDate: "2024-06-03", limit: 1, cursor: $c) { cursor } }`;
    const viaGraphql = await gql(server, b, q, { id: b.accountId, c: first.body.cursor });
    expect(viaGraphql.errors?.[0]?.message).toMatch(/^cursor belongs to another account/);
    // b's own cursors walk b; one issued before cursors named their account ({r, v, s}) is read as before.
    const own = await report(b, "endUserEngagement", `${WINDOW}&limit=1`);
    const next = await report(b, "endUserEngagement", `${WINDOW}&limit=1&cursor=${own.body.cursor}`);
    expect(next.status, next.text).toBe(200);
    const { r, v, s } = JSON.parse(Buffer.from(own.body.cursor, "base64url").toString());
    const legacy = Buffer.from(JSON.stringify({ r, v, s })).toString("base64url");
    expect((await report(b, "endUserEngagement", `${WINDOW}&limit=1&cursor=${legacy}`)).body).toEqual(next.body);
    const odd = Buffer.from(JSON.stringify({ r, v, s, a: 5 })).toString("base64url");
    expectProblem(await report(b, "endUserEngagement", `${WINDOW}&limit=1&cursor=${odd}`), 400, /^cursor is malformed/);
  });

  it("dates of the years 1 to 99 are dates (Date.UTC read them as 1901 to 1999)", async () => {
    const r = await report(a, "summary", "startDate=0050-03-01&endDate=0050-03-02");
    expect(r.status, r.text).toBe(200);
    expect(r.body.rows).toEqual([[0, 0, 0, 0, 0, 0]]);
    expect([r.body.startDate, r.body.endDate]).toEqual(["0050-03-01T00:00:00.000Z", "0050-03-03T00:00:00.000Z"]);
    expectProblem(await report(a, "summary", "startDate=0099-02-29"), 400, /must be a UTC date/);
  });
});

describe("flowEditors", () => {
  it("lists who changed the flow's content record, from its change history", async () => {
    const t = await tenant("edit");
    const made = await req(`/api/v1/${t.accountId}/content`, { method: "POST", headers: t.headers, body: [{ title: "Onboarding", type: "text" }] });
    const id = made.body.data[0].id;
    const put = await req(`/api/v1/${t.accountId}/content`, { method: "PUT", headers: t.headers, body: [{ id, title: "Onboarding v2" }] });
    expect(put.status, put.text).toBe(200);
    const r = await report(t, "flowEditors", `flowId=${id}`);
    const log = await prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType: "content", resourceId: id } });
    expect(log).toHaveLength(2);
    expect(r.body.rows).toEqual([[t.email, 2, Math.max(...log.map((l) => l.timestamp.getTime()))]]);
    // Another account's flow of that id is not this account's history.
    expect((await report(a, "flowEditors", `flowId=${id}`)).body.rows).toEqual([]);
  });
});

describe("bad parameters", () => {
  it("an unknown report is a 404", async () => {
    expectProblem(await report(a, "nope"), 404, /no report named 'nope'/);
  });
  it("a flow report without flowId is a 400", async () => {
    for (const name of REPORTS.filter((r) => r.flow).map((r) => r.name)) expectProblem(await report(a, name), 400, /flowId is required/);
  });
  it("dates that are no UTC date, and an endDate before the startDate, are 400s", async () => {
    for (const q of ["startDate=2024-13-01", "endDate=yesterday", "startDate=2024-02-30", "startDate=2024-06-01T00:00", "endDate=2024-06-01%2024:00"])
      expectProblem(await report(a, "summary", q), 400, /must be a UTC date/);
    expectProblem(await report(a, "summary", "startDate=2024-06-02&endDate=2024-06-01"), 400, /endDate must not be before startDate/);
    expectProblem(await report(a, "summary", "startDate=2024-06-01%2010:00&endDate=2024-06-01%2009:00"), 400, /endDate must not be before startDate/);
  });
  it("an unknown format is a 400; a parameter given twice where one is expected is a 400", async () => {
    expectProblem(await report(a, "summary", "format=xml"), 400, /format must be one of json, csv/);
    expectProblem(await report(a, "flowCompletion", "flowId=f1&flowId=f2"), 400, /flowId must be given once/);
  });
  it("no key is a 401, another tenant's account a 403, before the parameters are looked at", async () => {
    expect((await req(`/v1/accounts/${a.accountId}/reports/nope?format=xml`)).status).toBe(401);
    expect((await report(b, "summary").then(() => req(`/v1/accounts/${a.accountId}/reports/summary`, { headers: b.headers }))).status).toBe(403);
  });
});

describe("tenant isolation", () => {
  it("each account sees its own events only", async () => {
    expect(await rows("flowViews", "", b)).toEqual([["f1", 1, 1]]);
    expect(await rows("endUserEngagement", "", b)).toEqual([
      ["u1", "Mallory", 1, 0, 1, 0, 0, D1 + H],
      ["u9", null, 0, 0, 0, 0, 0, D1 + H],
    ]);
    // a's u1 keeps a's name; the EXPECTED rows above hold with b's events in the database.
    expect((await rows("endUserEngagement"))[0][1]).toBe("Anna");
  });

  it("the comments reports sort the event time as its index does (no NULLS FIRST: the column is NOT NULL), every other column nulls first", async () => {
    // PostgreSQL then reads the page in the (accountId, type, time) index's order and stops at it
    // (positiveFeedbackComments at 1M events: 27 → 8 ms); "time ASC NULLS FIRST" forced a sort of the window's every comment.
    const { sql } = await sqlOf(() => report(a, "positiveFeedbackComments", WINDOW));
    const statement = sql.find((q) => /FROM "Event" e/.test(q))!;
    const order = /ORDER BY (.*) LIMIT/.exec(statement)![1]!;
    expect(order.split(", ").map((k) => k.replace(/ COLLATE "C"/, ""))).toEqual([
      'g."time" ASC',
      'g."flowId" ASC NULLS FIRST',
      'g."endUserId" ASC NULLS FIRST',
      'n."userName" ASC NULLS FIRST',
      'g."comment" ASC NULLS FIRST',
    ]);
  });

  it("every statement binds the account id", async () => {
    const { sql } = await sqlOf(() => report(a, "endUserEngagement", WINDOW));
    const reportSql = sql.filter((q) => /"Event(Rollup|UserRollup)?"/.test(q));
    expect(reportSql).toHaveLength(1); // one aggregation statement per report
    expect(reportSql[0]).toMatch(/[eru]\."accountId" = (\?|\$\d+)/); // events or their rollups
    expect(reportSql[0]).toMatch(/n\."accountId" = (\?|\$\d+)/);
  });
});

describe("GraphQL", () => {
  it("reports are typed fields, with the same rows", async () => {
    const r = await gql(
      server,
      a,
      `query($id: String!) { reports(accountId: $id, startDate: "2024-06-01", endDate: "2024-06-02", excludeDomains: ["${A_DOM}"]) {
        flowViews { flowId plays uniqueUsers }
        flowFeedbackComments(flowId: "f1") { time endUserId userName useful comment }
        summary { flowsPlayed popupsShown }
        selfHelpSearchTrend { date searches }
      } }`,
      { id: a.accountId },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.reports).toEqual({
      flowViews: [{ flowId: "f1", plays: 2, uniqueUsers: 2 }],
      flowFeedbackComments: [{ time: T9, endUserId: "u2", userName: "Bob", useful: false, comment: "=HYPERLINK(1)" }],
      // Without app.x.com: plays #6 #10; popups #33 #34 #35 #36; searches #25 #26 #27 (all on 06-02).
      summary: [{ flowsPlayed: 2, popupsShown: 4 }],
      selfHelpSearchTrend: [{ date: "2024-06-02", searches: 3 }],
    });
  });

  it("report(name:) answers 404/400 as REST does", async () => {
    const r = await gql(server, a, `{ report(accountId: "${a.accountId}", name: "flowDropOff") { rows } }`);
    expect(r.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
    const n = await gql(server, a, `{ report(accountId: "${a.accountId}", name: "x") { rows } }`);
    expect(n.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });
});
