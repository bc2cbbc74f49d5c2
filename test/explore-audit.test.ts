// Explore against the contract's "Explore" section, rule by rule, where the other Explore tests left
// a gap: what GET /openapi.json says the three routes answer (test/explore-cost.test.ts gets a real
// 422 of a question past EXPLORE_TIMEOUT_MS on each database), CSV cell by cell against JSON, and
// time buckets whose local start is before 1970 or in the years 0 to 99.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectProblem, requester, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
const req = requester(() => server);
const T = Date.UTC(2026, 4, 4, 10);
const EARLY = [Date.UTC(1970, 0, 1, 1, 30), Date.UTC(1970, 0, 1, 4, 59, 59, 500)];

beforeAll(async () => {
  // Questions over 1969 are priced by what they read, up to now (retention: ~2,000 points), more
  // than the default budget of a minute: the budget is not what these tests are about.
  server = await startServer({ RATE_LIMIT_PER_MINUTE: "1000000" });
  t = await tenant("explore-audit");
  const schema = await req(`/api/v1/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] });
  expect(schema.status, schema.text).toBeLessThan(300);
  const users = await req(`/api/v1/${t.accountId}/endUsers`, {
    method: "PUT",
    headers: t.headers,
    body: [
      { id: "a", custom: { plan: '=HYPERLINK("x"),\n"gold"' } },
      { id: "b", custom: { plan: "-5" } },
    ],
  });
  expect(users.status, users.text).toBeLessThan(300);
  const ev = (endUserId: string, dt: number, useful: boolean, flowId: string) => ({ type: "flow_feedback", time: T + dt, endUserId, flowId, useful });
  const events = [
    ev("a", 0, true, "f,1"),
    ev("a", 1, false, 'f"2'),
    ev("b", 2, true, "f,1"),
    ev("c", 3, false, "@f3"),
    // The first hours of 1970 in UTC: still 1969-12-31 in New York (20:30, and half a second before midnight).
    { type: "user_action", time: EARLY[0], endUserId: "early", actionId: "open" },
    { type: "user_action", time: EARLY[1], endUserId: "early", actionId: "open" },
  ];
  const posted = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events });
  expect(posted.status, posted.text).toBe(202);
});

afterAll(async () => {
  await server?.close();
});

describe("Explore in GET /openapi.json", () => {
  it("documents the 422 problem each question answers past EXPLORE_TIMEOUT_MS", async () => {
    const doc = (await req("/openapi.json")).body;
    for (const name of ["query", "funnel", "retention"]) {
      const response = doc.paths[`/v1/accounts/{accountId}/analytics/${name}`].post.responses[422];
      expect(response, `${name}: 422 documented`).toBeDefined();
      expect(response.description).toMatch(/EXPLORE_TIMEOUT_MS.*narrow it/);
      expect(response.content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem" });
      expect(response.content["application/problem+json"].example).toMatchObject({ type: "about:blank", title: "Unprocessable Entity", status: 422 });
    }
  });
});

/** RFC 4180 records (quoted fields with doubled quotes, CRLF between records). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (ch === '"') {
      quoted = !quoted;
    } else if (!quoted && ch === ",") {
      record.push(field);
      field = "";
    } else if (!quoted && ch === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i++;
    } else {
      field += ch;
    }
  }
  return records;
}

describe("format=csv", () => {
  it("holds the JSON's columns and rows, every cell as JSON has it: nulls empty, booleans as words, formula-leading text neutralised", async () => {
    const body = {
      metrics: ["events", "users", "avg:step"],
      dimensions: ["user:plan", "event:flowId", "event:useful"],
      startDate: "2026-05-04",
      endDate: "2026-05-04",
    };
    const url = `/v1/accounts/${t.accountId}/analytics/query`;
    const json = await req(url, { method: "POST", headers: t.headers, body });
    expect(json.status, json.text).toBe(200);
    expect(json.body.rows.length).toBe(4);
    const csv = await req(`${url}?format=csv`, { method: "POST", headers: t.headers, body: { ...body, limit: 1 } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toBe('attachment; filename="explore_query.csv"');
    expect(csv.text.endsWith("\r\n")).toBe(true);
    const [header, ...rows] = parseCsv(csv.text);
    expect(header).toEqual(json.body.columns);
    // Every row (limit does not apply), in the same order; each cell as the JSON's.
    const asCell = (v: unknown) => (v === null ? "" : typeof v === "string" && /^[=+\-@\t\r]/.test(v) ? `'${v}` : String(v));
    expect(rows).toEqual(json.body.rows.map((r: unknown[]) => r.map(asCell)));
    expect(rows.flat()).toContain(`'=HYPERLINK("x"),\n"gold"`);
    expect(rows.flat()).toContain("'-5");
    expect(rows.flat()).toContain("'@f3");
  });

  it("holds at most EXPLORE_MAX_ROWS rows: past it a 400 saying to narrow or page (CSV and GraphQL allRows); JSON pages are not bound by it", async () => {
    const body = { metrics: ["events"], dimensions: ["user:plan", "event:flowId", "event:useful"], startDate: "2026-05-04", endDate: "2026-05-04" };
    const url = `/v1/accounts/${t.accountId}/analytics/query`;
    const before = process.env.EXPLORE_MAX_ROWS;
    try {
      process.env.EXPLORE_MAX_ROWS = "4";
      expect((await req(`${url}?format=csv`, { method: "POST", headers: t.headers, body })).status).toBe(200);
      process.env.EXPLORE_MAX_ROWS = "3";
      const csv = await req(`${url}?format=csv`, { method: "POST", headers: t.headers, body });
      expectProblem(csv, 400, /^body: has more than 3 rows, the most one answer with every row holds \(EXPLORE_MAX_ROWS\): narrow it/);
      expect(csv.body.errors).toEqual([{ path: "body", message: expect.stringMatching(/^has more than 3 rows/) }]);
      const json = await req(url, { method: "POST", headers: t.headers, body });
      expect([json.status, json.body.rows?.length]).toEqual([200, 4]);
      const gql = await req("/graphql", {
        method: "POST",
        headers: t.headers,
        body: {
          query: "query($a: String!, $in: AnalyticsQueryInput!) { account(id: $a) { analytics { query(input: $in, allRows: true) { rows } } } }",
          variables: { a: t.accountId, in: body },
        },
      });
      expect(gql.body.errors?.[0]?.message).toMatch(/^input: has more than 3 rows/);
    } finally {
      if (before === undefined) delete process.env.EXPLORE_MAX_ROWS;
      else process.env.EXPLORE_MAX_ROWS = before;
    }
  });
});

describe("time buckets far back", () => {
  const ask = (path: string, body: unknown) => req(`/v1/accounts/${t.accountId}/analytics/${path}`, { method: "POST", headers: t.headers, body });

  it("puts an event whose local time is before 1970 in its local bucket (the SQL floors, as the bucket list does)", async () => {
    // New York is UTC-5: both events are on Wednesday 1969-12-31 there, at 20:30 and 23:59:59.5.
    const w = { timeZone: "America/New_York", startDate: "1969-12-31 12:00", endDate: "1970-01-01 12:00" };
    const byDay = await ask("query", { metrics: ["events"], interval: "day", ...w });
    expect(byDay.status, byDay.text).toBe(200);
    expect(byDay.body.rows).toEqual([
      ["1969-12-31", 2],
      ["1970-01-01", 0],
    ]);
    const cases: [string, unknown[][]][] = [
      [
        "hour",
        [
          ["1969-12-31T20:00", 1],
          ["1969-12-31T23:00", 1],
        ],
      ],
      ["day", [["1969-12-31", 2]]],
      ["week", [["1969-12-29", 2]]],
      ["month", [["1969-12-01", 2]]],
    ];
    for (const [interval, rows] of cases) {
      const r = await ask("query", { metrics: ["events"], dimensions: ["event:endUserId"], interval, orderBy: [["time", "asc"]], ...w });
      expect(r.status, r.text).toBe(200);
      expect(r.body.rows, interval).toEqual(rows.map(([time, n]) => [time, "early", n]));
    }
    const cohorts = await ask("retention", { startEvent: {}, period: "day", periods: 1, ...w });
    expect(cohorts.status, cohorts.text).toBe(200);
    expect(cohorts.body.cohorts).toEqual([{ start: "1969-12-31", users: 1, retained: [1, 0] }]);
  });

  it("lists every bucket of a window in the years 0 to 99 (wall clocks read with their full year)", async () => {
    const r = await ask("query", { metrics: ["events"], interval: "day", startDate: "0050-01-01", endDate: "0050-01-02" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.rows).toEqual([
      ["0050-01-01", 0],
      ["0050-01-02", 0],
    ]);
    const zero = await ask("query", { metrics: ["events"], interval: "month", timeZone: "Europe/Berlin", startDate: "0000-01-01", endDate: "0000-03-01" });
    expect(zero.status, zero.text).toBe(200);
    // (Berlin's local mean time then: 00:53:28 ahead of UTC.)
    expect(zero.body.rows).toEqual([
      ["0000-01-01", 0],
      ["0000-02-01", 0],
      ["0000-03-01", 0],
    ]);
  });

  it("labels buckets whose local start is before the year 0 or past 9999 in ISO 8601's expanded form, each its own", async () => {
    // A date-only endDate in the first days of the year 0: the default start, 30 days earlier, is in the year -1.
    const hours = await ask("query", { metrics: ["events"], interval: "hour", endDate: "0000-01-01" });
    expect(hours.status, hours.text).toBe(200);
    expect(hours.body.rows).toHaveLength(30 * 24);
    expect(hours.body.rows.slice(0, 2)).toEqual([
      ["-000001-12-03T00:00", 0],
      ["-000001-12-03T01:00", 0],
    ]);
    expect(hours.body.rows.at(-1)).toEqual(["0000-01-01T23:00", 0]);
    expect(new Set(hours.body.rows.map((r: unknown[]) => r[0])).size).toBe(30 * 24);
    const back = await ask("query", { metrics: ["events"], interval: "week", endDate: "0000-01-01" });
    expect(back.status, back.text).toBe(200);
    // 0000-01-01 was a Saturday (proleptic Gregorian): its week began on Monday -000001-12-27.
    expect(back.body.rows.at(-1)).toEqual(["-000001-12-27", 0]);
    expect(back.body.rows[0]).toEqual(["-000001-11-29", 0]);
    // The last day of 9999 in UTC is already the year 10000 in Kiritimati (UTC+14).
    const cases: [string, unknown[][]][] = [
      [
        "day",
        [
          ["9999-12-31", 0],
          ["+010000-01-01", 0],
        ],
      ],
      ["hour", [["9999-12-31T14:00", 0]]],
      [
        "month",
        [
          ["9999-12-01", 0],
          ["+010000-01-01", 0],
        ],
      ],
    ];
    for (const [interval, rows] of cases) {
      const r = await ask("query", { metrics: ["events"], interval, timeZone: "Pacific/Kiritimati", startDate: "9999-12-31", endDate: "9999-12-31" });
      expect(r.status, r.text).toBe(200);
      expect(r.body.rows.slice(0, rows.length), interval).toEqual(rows);
    }
    const kiri = await ask("query", {
      metrics: ["events"],
      interval: "hour",
      timeZone: "Pacific/Kiritimati",
      startDate: "9999-12-31 10:00",
      endDate: "9999-12-31",
    });
    expect(kiri.body.rows.at(-1)).toEqual(["+010000-01-01T13:00", 0]);
    const cohorts = await ask("retention", { startEvent: {}, period: "month", timeZone: "Pacific/Kiritimati", startDate: "9999-12-31", endDate: "9999-12-31" });
    expect([cohorts.status, cohorts.body.cohorts]).toEqual([200, []]);
  });
});
