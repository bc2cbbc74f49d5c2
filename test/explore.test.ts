// Explore's `query` over REST and GraphQL: a hand-checked answer (zero-filled buckets, totals,
// default order, paging, CSV), every bad input a 400 naming the body path, tenant isolation, and
// randomized questions compared with an in-memory oracle written from the contract's words (time
// buckets in DST zones, odd window edges, users without the field, erased users, segments).
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dbKind, withTransaction } from "../src/db/index.js";
import { foldDomain } from "../src/domains/events/validate.js";
import { zoneFormatters } from "../src/domains/explore/buckets.js";
import { Checker, parseQuery } from "../src/domains/explore/input.js";
import { runQuery } from "../src/domains/explore/query.js";
import { rollupAnswers } from "../src/domains/explore/rollup.js";
import { TOTALS } from "../src/domains/reports/rollups.js";
import { catchUpRollups, rebuildRollups, rollUpAccount } from "../src/domains/reports/rollupWorker.js";
import { evaluate, type Rule } from "../src/domains/segments/rules.js";
import { seeded } from "../src/seed/random.js";
import { compareCells, expectProblem, gql, prisma, requester, type Server, startServer, type Tenant, tenant, testSeed } from "./helpers.js";

let server: Server;
let a: Tenant;
let other: Tenant;
const req = requester(() => server);
const H = 3_600_000;
const DAY = 24 * H;

const ask = (t: Tenant, body: unknown, query = "", as: Tenant = t) =>
  req(`/v1/accounts/${t.accountId}/analytics/query${query}`, { method: "POST", headers: as.headers, body });

// ---- the data ----------------------------------------------------------------------------------------

const USERS = Array.from({ length: 12 }, (_, i) => `u${i}`);
/** u9..u11 get no values; u3 is erased after its events arrive. */
const VALUES: Record<string, Record<string, unknown>> = {
  u0: { plan: "gold", seats: 10, beta: true, signupTime: Date.UTC(2025, 0, 1, 12, 30, 0, 123) },
  u1: { plan: "silver", seats: 3, signupTime: Date.UTC(2026, 1, 2) },
  u2: { plan: "Gold", beta: false },
  u3: { plan: "gold", seats: 50, beta: true },
  u4: { seats: 7 },
  u5: { plan: "bronze", seats: 5, beta: false },
  u6: {},
  u7: { plan: "silver", seats: 12, beta: true },
  u8: { plan: "gold" },
};
const RULES: Record<string, Rule> = {
  big: {
    and: [
      { field: "custom.plan", op: "in", value: ["gold", "silver"] },
      { field: "custom.seats", op: "gte", value: 5 },
    ],
  },
  notGold: { or: [{ field: "custom.plan", op: "ne", value: "gold" }, { not: { field: "custom.beta", op: "exists" } }] },
  // Long `in` lists, 32,040 values in all (more than a statement may bind one by one: Builder.inList).
  wide: {
    or: [
      ...Array.from({ length: 32 }, (_, k) => ({
        field: "custom.plan",
        op: "in",
        value: Array.from({ length: 1_000 }, (_, i) => (k === 7 && i === 500 ? "Gold" : `p${k}-${i}`)),
      })),
      { field: "custom.seats", op: "in", value: Array.from({ length: 40 }, (_, i) => (i === 20 ? 7 : 100.5 + i)) },
    ],
  } as Rule,
};
const segmentIds: Record<string, string> = {};

const W0 = Date.UTC(2026, 2, 4); // the events span 2026-03-04 .. 2026-03-14 (DST starts in New York on 2026-03-08)
const SPAN = 10 * DAY;
const W1 = Date.UTC(2026, 9, 28); // and 2026-10-28 .. 2026-11-04 (DST ends on 2026-11-01)
const SPAN1 = 7 * DAY;

function makeEvents(seed: number) {
  const r = seeded(seed);
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < 500; i++) {
    const time = i % 2 ? W0 + r.int(SPAN) : W1 + r.int(SPAN1);
    const user = r.chance(0.1) ? {} : { endUserId: r.pick(USERS) };
    const domain = r.chance(0.3) ? {} : { domain: r.pick(["app.x.com", "admin.x.com", "Docs.x.com", "bücher.x.com", "XN--BCHER-KVA.x.com"]) };
    const kind = r.int(5);
    const base = { time, ...user, ...domain };
    if (kind === 0) out.push({ ...base, type: "flow_started", flowId: r.pick(["f1", "f2", "f3"]), widget: r.pick(["self_help", "beacon"]) });
    else if (kind === 1) out.push({ ...base, type: "flow_step", flowId: r.pick(["f1", "f2"]), step: 1 + r.int(5) });
    else if (kind === 2)
      out.push({ ...base, type: "selfhelp_search", searchTerm: r.pick([" Invoice ", "refund", "REFUNDS", "tax form"]), resultCount: r.int(4) });
    else if (kind === 3) out.push({ ...base, type: "flow_feedback", flowId: "f1", useful: r.chance(0.5) });
    else out.push({ ...base, type: "user_action", actionId: r.pick(["export", "import"]) });
  }
  return out;
}

interface Ev {
  type: string;
  time: number;
  endUserId: string | null;
  flowId: string | null;
  contentId: string | null;
  widget: string | null;
  domain: string | null;
  step: number | null;
  searchTerm: string | null;
  actionId: string | null;
  useful: boolean | null;
  resultCount: number | null;
}
let stored: Ev[] = [];

beforeAll(async () => {
  // The randomized comparisons ask one account hundreds of questions a minute (each page of a walk
  // too); the per-account budget is tested in test/cost-budget.test.ts, not here.
  server = await startServer({ RATE_LIMIT_PER_MINUTE: "1000000" });
  a = await tenant("explore");
  other = await tenant("explore-other");
  for (const t of [a, other]) {
    const f = await req(`/api/v1/${t.accountId}/endUserSchema`, {
      method: "PUT",
      headers: t.headers,
      body: [
        { name: "plan", type: "string" },
        { name: "seats", type: "double" },
        { name: "beta", type: "boolean" },
        { name: "secret", type: "encrypted_string" },
      ],
    });
    expect(f.status, f.text).toBeLessThan(300);
  }
  const users = await req(`/api/v1/${a.accountId}/endUsers`, {
    method: "PUT",
    headers: a.headers,
    body: Object.entries(VALUES).map(([id, custom]) => ({ id, custom: { ...custom, secret: "s" } })),
  });
  expect(users.status, users.text).toBeLessThan(300);
  for (const [name, rule] of Object.entries(RULES)) {
    const s = await gql(server, a, `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }`, {
      a: a.accountId,
      input: { name, rule, contentIds: [] },
    });
    expect(s.errors).toBeUndefined();
    segmentIds[name] = s.data.createSegment.id;
  }
  const events = makeEvents(testSeed(7));
  const posted = await req(`/v1/accounts/${a.accountId}/events`, { method: "POST", headers: a.headers, body: events });
  expect(posted.status, posted.text).toBe(202);
  // The other tenant: look-alike events that must never show.
  const theirs = await req(`/v1/accounts/${other.accountId}/events`, { method: "POST", headers: other.headers, body: makeEvents(testSeed(8)) });
  expect(theirs.status).toBe(202);
  expect((await req(`/api/v1/${a.accountId}/endUsers/u3`, { method: "DELETE", headers: a.headers })).status).toBe(204);
  const rows = await prisma.event.findMany({ where: { accountId: a.accountId } });
  stored = rows.map((e) => ({ ...e, time: Number(e.time) }));
  expect(stored.some((e) => e.endUserId?.startsWith("erased_"))).toBe(true);
});

afterAll(async () => {
  await server?.close();
});

// ---- the oracle: the contract's words over the events in memory --------------------------------------

type Cond = unknown[];
/** An end user's values: u9..u11 have a record without values (ingesting their events made it); erased u3 has none. */
const valuesOf = (id: string | null): Record<string, unknown> | undefined => (id && id !== "u3" && USERS.includes(id) ? (VALUES[id] ?? {}) : undefined);

function dimValue(e: Ev, d: string): unknown {
  if (d.startsWith("user:")) {
    const v = valuesOf(e.endUserId)?.[d.slice(5)];
    return v === undefined ? null : v;
  }
  const v = (e as unknown as Record<string, unknown>)[d.slice(6)];
  return v === undefined ? null : v;
}

// Search terms and domains are stored trimmed and lower-cased (domains in Unicode: foldDomain); `is` values are compared as stored.
const norm = (d: string, values: unknown[]) =>
  d === "event:searchTerm" || d === "event:domain"
    ? values.map((v) => (typeof v !== "string" ? v : d === "event:domain" ? foldDomain(v) : v.trim().toLowerCase()))
    : values;

function holds(e: Ev, c: Cond): boolean {
  const [op, x, y] = c as [string, any, any];
  switch (op) {
    // Search terms are compared as reports group them: trimmed and lower-cased.
    case "is":
      return norm(x, y).includes(dimValue(e, x));
    case "isNot":
      return !norm(x, y).includes(dimValue(e, x));
    case "contains": {
      const v = dimValue(e, x);
      return typeof v === "string" && (y as string[]).some((s) => v.toLowerCase().includes(s.toLowerCase()));
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const v = dimValue(e, x);
      if (typeof v !== "number") return false;
      return op === "gt" ? v > y : op === "gte" ? v >= y : op === "lt" ? v < y : v <= y;
    }
    case "inSegment": {
      const values = valuesOf(e.endUserId);
      if (!values) return false;
      const rule = RULES[Object.entries(segmentIds).find(([, id]) => id === x)![0]]!;
      return evaluate(rule, (p) => values[p.slice("custom.".length)]);
    }
    case "or":
      return (x as Cond[]).some((k) => holds(e, k));
    case "not":
      return !holds(e, x as Cond);
  }
  throw new Error(op);
}

const wallParts = (t: number, timeZone: string) => {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit" })
      .formatToParts(new Date(t))
      .map((x) => [x.type, x.value]),
  );
  return { y: Number(p.year), m: Number(p.month), d: Number(p.day), h: Number(p.hour) };
};
function label(t: number, interval: string, tz: string): string {
  const { y, m, d, h } = wallParts(t, tz);
  const pad = (n: number) => String(n).padStart(2, "0");
  if (interval === "hour") return `${y}-${pad(m)}-${pad(d)}T${pad(h)}:00`;
  if (interval === "day") return `${y}-${pad(m)}-${pad(d)}`;
  if (interval === "month") return `${y}-${pad(m)}-01`;
  const date = new Date(Date.UTC(y, m - 1, d));
  date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7));
  return date.toISOString().slice(0, 10);
}

interface Question {
  metrics: string[];
  dimensions?: string[];
  filters?: Cond[];
  interval?: string;
  timeZone?: string;
  orderBy?: [string, "asc" | "desc"][];
  startDate: string;
  endDate: string;
}
const parseDate = (s: string) => Date.parse(`${s.replace(" ", "T")}${s.length === 10 ? "T00:00" : ""}Z`);

function oracle(q: Question, events: Ev[] = stored): { columns: string[]; rows: unknown[][]; totals: unknown[] } {
  const from = parseDate(q.startDate);
  const to = parseDate(q.endDate) + (q.endDate.length === 10 ? DAY : 0);
  const tz = q.timeZone ?? "UTC";
  const dims = q.dimensions ?? [];
  const matching = events.filter((e) => e.time >= from && e.time < to && (q.filters ?? []).every((c) => holds(e, c)));
  const metric = (list: Ev[], m: string): unknown => {
    const users = new Set(list.map((e) => e.endUserId).filter((u) => u !== null)).size;
    const field = m.split(":")[1] as "step" | "resultCount";
    const vals = field ? list.map((e) => e[field]).filter((v): v is number => v !== null) : [];
    if (m === "events") return list.length;
    if (m === "users") return users;
    if (m === "eventsPerUser") return users ? list.length / users : 0;
    if (m.startsWith("sum:")) return vals.length ? vals.reduce((s, v) => s + v, 0) : null;
    return vals.length ? vals.reduce((s, v) => s + v, 0) / vals.length : null;
  };
  const groups = new Map<string, { key: unknown[]; events: Ev[] }>();
  if (q.interval && !dims.length) {
    // Every bucket that meets the window, zeros included.
    for (let t = from; t < to; t += 15 * 60_000) {
      const k = [label(t, q.interval, tz)];
      groups.set(JSON.stringify(k), { key: k, events: [] });
    }
    const k = [label(to - 1, q.interval, tz)];
    if (!groups.has(JSON.stringify(k))) groups.set(JSON.stringify(k), { key: k, events: [] });
  }
  for (const e of matching) {
    const key = [...(q.interval ? [label(e.time, q.interval, tz)] : []), ...dims.map((d) => dimValue(e, d))];
    const g = groups.get(JSON.stringify(key)) ?? groups.set(JSON.stringify(key), { key, events: [] }).get(JSON.stringify(key))!;
    g.events.push(e);
  }
  if (!q.interval && !dims.length && !groups.size) groups.set("[]", { key: [], events: [] });
  const rows = [...groups.values()].map((g) => [...g.key, ...q.metrics.map((m) => metric(g.events, m))]);
  const t0 = q.interval ? 1 : 0;
  const cmp = compareCells;
  const columns = [...(q.interval ? ["time"] : []), ...dims, ...q.metrics];
  rows.sort((x, y) => {
    // An orderBy first (descending: the reverse, so nulls last), then the default order.
    for (const [column, dir] of q.orderBy ?? []) {
      const i = columns.indexOf(column);
      const c = dir === "asc" ? cmp(x[i], y[i]) : cmp(y[i], x[i]);
      if (c) return c;
    }
    if (q.interval) {
      const c = cmp(x[0], y[0]);
      if (c) return c;
    }
    const m = cmp(y[t0 + dims.length], x[t0 + dims.length]);
    if (m) return m;
    for (let i = 0; i < dims.length; i++) {
      const c = cmp(x[t0 + i], y[t0 + i]);
      if (c) return c;
    }
    return 0;
  });
  return {
    columns,
    rows,
    totals: q.metrics.map((m) => metric(matching, m)),
  };
}

/** An answer object without its null fields (GraphQL answers every field it is asked for). */
const withoutNulls = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));

/** A condition of the REST form (`["is", dim, [values]]`, …) as GraphQL's typed input. */
function typedCondition(c: Cond): Record<string, unknown> {
  const [op, x, y] = c as [string, unknown, unknown];
  switch (op) {
    case "or":
      return { op, conditions: (x as Cond[]).map(typedCondition) };
    case "not":
      return { op, condition: typedCondition(x as Cond) };
    case "inSegment":
      return { op, segmentId: x };
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return { op, dimension: x, value: y };
    default:
      return { op, dimension: x, values: y };
  }
}

const round = (v: unknown) => (typeof v === "number" ? Math.round(v * 1e9) / 1e9 : v);
const rounded = (x: unknown[][]) => x.map((r) => r.map(round));

// ---- tests ---------------------------------------------------------------------------------------------

describe("POST /v1/accounts/{accountId}/analytics/query", () => {
  it("answers a hand-checked question: zero-filled day buckets in a DST zone, totals, default order, JSON and CSV", async () => {
    const t = await tenant("explore-hand");
    const at = (iso: string) => Date.parse(iso);
    const events = [
      { type: "flow_started", time: at("2026-03-07T04:59:59.999Z"), endUserId: "x", flowId: "f1", widget: "beacon" }, // 03-06 23:59 in New York
      { type: "flow_started", time: at("2026-03-07T05:00:00.000Z"), endUserId: "x", flowId: "f1", widget: "beacon" }, // 03-07 00:00
      { type: "flow_started", time: at("2026-03-08T04:30:00.000Z"), endUserId: "y", flowId: "f1", widget: "beacon" }, // 03-07 23:30 EST
      { type: "flow_step", time: at("2026-03-08T05:00:00.000Z"), endUserId: "y", flowId: "f1", step: 2 }, // 03-08 00:00 EST
      { type: "flow_step", time: at("2026-03-09T03:59:59.999Z"), flowId: "f1", step: 3 }, // 03-08 23:59 EDT (a 23-hour day)
      { type: "flow_step", time: at("2026-03-09T04:00:00.000Z"), endUserId: "x", flowId: "f1", step: 4 }, // 03-09 00:00 EDT
    ];
    expect((await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events })).status).toBe(202);
    const body = {
      metrics: ["events", "users", "sum:step"],
      interval: "day",
      timeZone: "America/New_York",
      startDate: "2026-03-06 12:00",
      endDate: "2026-03-10",
    };
    const r = await ask(t, body);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.body).toEqual({
      columns: ["time", "events", "users", "sum:step"],
      rows: [
        ["2026-03-06", 1, 1, null],
        ["2026-03-07", 2, 2, null],
        ["2026-03-08", 2, 1, 5],
        ["2026-03-09", 1, 1, 4],
        ["2026-03-10", 0, 0, null],
      ],
      totals: [6, 2, 9],
      cursor: null,
    });
    // A zone name in any letter case is that zone, and a question's cursor names it once: the
    // spellings keep no state of their own (each kept a time-zone formatter for good).
    const before = zoneFormatters();
    for (const spelling of ["america/new_york", "AMERICA/NEW_YORK", "America/New_york"]) {
      const again = await ask(t, { ...body, timeZone: spelling });
      expect(again.body, spelling).toEqual(r.body);
    }
    expect(zoneFormatters()).toBe(before);
    // By a dimension: only combinations with events; the first metric descending, then the dimension.
    const byType = await ask(t, { metrics: ["events"], dimensions: ["event:type"], startDate: "2026-03-06", endDate: "2026-03-10" });
    expect(byType.body.rows).toEqual([
      ["flow_started", 3],
      ["flow_step", 3],
    ]);
    // Paging: a cursor per page, the same window on every page.
    const p1 = await ask(t, { ...body, limit: 2 });
    expect(p1.body.rows).toEqual(r.body.rows.slice(0, 2));
    const p2 = await ask(t, { ...body, limit: 2, cursor: p1.body.cursor });
    expect(p2.body.rows).toEqual(r.body.rows.slice(2, 4));
    const p3 = await ask(t, { ...body, limit: 2, cursor: p2.body.cursor });
    expect(p3.body).toMatchObject({ rows: r.body.rows.slice(4), cursor: null });
    expectProblem(await ask(t, { ...body, interval: "week", cursor: p1.body.cursor }), 400, /^body\.cursor: the cursor belongs to another question/);
    // A cursor of another account (the same question asked of `other`): refused, not read as an
    // offset into that account's rows, which skipped them. One issued before cursors named their
    // account (no `a`) resumes as before.
    expectProblem(await ask(other, { ...body, limit: 2, cursor: p1.body.cursor }), 400, /^body\.cursor: the cursor belongs to another account/);
    const { a: _account, ...unnamed } = JSON.parse(Buffer.from(p1.body.cursor, "base64url").toString("utf8"));
    expect(_account).toBe(t.accountId);
    expect((await ask(t, { ...body, limit: 2, cursor: Buffer.from(JSON.stringify(unnamed)).toString("base64url") })).body).toEqual(p2.body);
    // A cursor carries the window it pages: edited to a wider or another window than the question
    // asks (and is priced for), it is refused before anything is read; it was read (f = 0: every
    // event since 1970 for the price of four days, and a bucket per day of them).
    const edited = (cursor: string, change: (v: { f: number; t: number }) => void) => {
      const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
      change(v);
      return Buffer.from(JSON.stringify(v)).toString("base64url");
    };
    const DAY = 86_400_000;
    const windowRefused = /^body\.cursor: the cursor pages another window than this question's/;
    for (const change of [(v: { f: number }) => void (v.f = 0), (v: { f: number }) => void (v.f -= DAY), (v: { t: number }) => void (v.t += DAY)])
      expectProblem(await ask(t, { ...body, limit: 2, cursor: edited(p1.body.cursor, change) }), 400, windowRefused);
    expectProblem(
      await ask(t, {
        ...body,
        limit: 2,
        cursor: edited(p1.body.cursor, (v) => {
          v.f -= DAY;
          v.t -= DAY;
        }),
      }),
      400,
      windowRefused,
    );
    // A window whose end is "now" (no endDate) pages on: its cursor keeps the window of its first page.
    for (const open of [
      { metrics: ["events"], interval: "day", limit: 2 },
      { metrics: ["events"], interval: "day", startDate: "2026-03-06", limit: 2 },
    ]) {
      const first = await ask(t, open);
      const next = await ask(t, { ...open, cursor: first.body.cursor });
      expect([first.status, next.status, next.body.rows.length], next.text).toEqual([200, 200, 2]);
      expectProblem(await ask(t, { ...open, cursor: edited(first.body.cursor, (v) => void (v.f -= DAY)) }), 400, windowRefused);
      expectProblem(await ask(t, { ...open, cursor: edited(first.body.cursor, (v) => void (v.t = Date.now() + DAY)) }), 400, windowRefused);
    }
    // CSV: the same columns, every row.
    const csv = await ask(t, { ...body, limit: 1 }, "?format=csv");
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename="explore_query\.csv"$/);
    expect(csv.text).toBe("time,events,users,sum:step\r\n2026-03-06,1,1,\r\n2026-03-07,2,2,\r\n2026-03-08,2,1,5\r\n2026-03-09,1,1,4\r\n2026-03-10,0,0,\r\n");
    // GraphQL: the same answer.
    const g = await gql(
      server,
      t,
      `query($a: String!, $i: AnalyticsQueryInput!) { account(id: $a) { analytics { query(input: $i) { columns rows totals cursor } } } }`,
      { a: t.accountId, i: body },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.account.analytics.query).toEqual(r.body);
  });

  it("long value lists agree with the oracle: a segment whose rules bind 32,040 values, `is` and `isNot` lists past INLINE_LIST", async () => {
    const fmt = (t: number) => new Date(t).toISOString().slice(0, 16).replace("T", " ");
    const long = Array.from({ length: 40 }, (_, i) => `nf-${i}`);
    for (const filters of [
      [["inSegment", segmentIds.wide]],
      [["not", ["inSegment", segmentIds.wide]]],
      [["is", "event:flowId", [...long, "f2"]]],
      [["isNot", "event:flowId", [...long, "f1"]]],
      [["is", "user:seats", [...Array.from({ length: 40 }, (_, i) => 1_000 + i), 7, 10]]],
    ] as Cond[][]) {
      const q: Question = {
        metrics: ["events", "users"],
        dimensions: ["user:plan", "event:flowId"],
        filters,
        timeZone: "UTC",
        startDate: fmt(W0),
        endDate: fmt(W0 + SPAN),
      };
      const want = oracle(q);
      expect(want.rows.length, JSON.stringify(filters)).toBeGreaterThan(0);
      const got = await ask(a, { ...q, limit: 10_000 });
      expect(got.status, `${JSON.stringify(filters).slice(0, 200)} → ${got.text}`).toBe(200);
      expect(got.body.rows).toEqual(want.rows);
      expect(got.body.totals).toEqual(want.totals);
    }
  });

  it("agrees with the oracle on randomized questions (DST zones, odd edges, user fields, erased users, segments)", async () => {
    const r = seeded(testSeed(42));
    const dims = [
      "event:type",
      "event:domain",
      "event:useful",
      "event:step",
      "event:flowId",
      "user:plan",
      "user:beta",
      "user:seats",
      "user:signupTime",
      "event:endUserId",
    ];
    const conds = (): Cond => {
      switch (r.int(10)) {
        case 0:
          return ["is", "event:type", r.sample(["flow_started", "flow_step", "selfhelp_search", "user_action"], 1 + r.int(2))];
        case 1:
          return ["isNot", "user:plan", r.sample(["gold", "silver", null], 1 + r.int(2))];
        case 2:
          return ["contains", r.pick(["event:searchTerm", "event:domain"]), r.sample(["REF", "x.com", "doc", "inv"], 1 + r.int(2))];
        case 3:
          return r.chance(0.3)
            ? [r.pick(["gt", "lte"]), "user:signupTime", Date.UTC(2025, 0, 1, 12, 30, 0, 123)]
            : [r.pick(["gt", "gte", "lt", "lte"]), r.pick(["event:step", "event:resultCount", "user:seats"]), r.int(8)];
        case 4:
          return ["inSegment", segmentIds[r.pick(["big", "notGold", "wide"])]];
        case 5:
          return [
            "or",
            [
              ["is", "event:domain", [null, " DOCS.x.com", r.pick(["xn--bcher-kva.x.com", "Bücher.x.com"])]],
              ["is", "user:beta", [true]],
            ],
          ];
        case 6:
          return ["not", ["is", "event:useful", [true, null]]];
        case 7:
          return ["is", "event:searchTerm", [" REFUND", "tax form"]];
        case 8:
          // A list past INLINE_LIST, bound as one value.
          return [r.pick(["is", "isNot"]), "event:flowId", [...Array.from({ length: 40 }, (_, i) => `nf-${i}`), ...r.sample(["f1", "f2", "f3"], 1 + r.int(2))]];
        default:
          return ["is", "event:endUserId", [null, "u1", "u3"]];
      }
    };
    for (let i = 0; i < 24; i++) {
      const second = r.chance(0.4);
      const base = second ? W1 : W0;
      const span = second ? SPAN1 : SPAN;
      const fmt = (t: number) => new Date(t).toISOString().slice(0, 16).replace("T", " ");
      const s = base + r.int(span / 2 / 60_000) * 60_000;
      const e = s + (1 + r.int(span / 2 / 60_000)) * 60_000;
      const interval = r.pick([undefined, "day", "week", "hour", "month"]);
      const q: Question = {
        metrics: r.sample(["events", "users", "eventsPerUser", "sum:step", "sum:resultCount", "avg:step", "avg:resultCount"], 1 + r.int(3)),
        dimensions: r.sample(dims, r.int(3)),
        filters: Array.from({ length: r.int(3) }, conds),
        ...(interval ? { interval } : {}),
        timeZone: r.pick(["UTC", "America/New_York", "Asia/Kolkata"]),
        startDate: r.chance(0.2) ? fmt(s).slice(0, 10) : fmt(s),
        endDate: fmt(e),
      };
      // Half of them ordered by one or two of their columns (ties broken by the default order).
      const columns = [...(interval ? ["time"] : []), ...(q.dimensions ?? []), ...q.metrics];
      if (r.chance(0.5)) q.orderBy = r.sample(columns, 1 + r.int(2)).map((c) => [c, r.pick(["asc", "desc"] as const)]);
      const want = oracle(q);
      const got = await ask(a, { ...q, limit: 10_000 });
      expect(got.status, `${JSON.stringify(q)} → ${got.text}`).toBe(200);
      expect(got.body.columns).toEqual(want.columns);
      expect(rounded(got.body.rows), JSON.stringify(q)).toEqual(rounded(want.rows));
      expect(got.body.totals.map(round), JSON.stringify(q)).toEqual(want.totals.map(round));
      // The same rows page by page: a small limit, the cursor of each page to the next, no row twice or missed.
      const limit = Math.max(1, Math.ceil(want.rows.length / (2 + r.int(7))));
      const paged: unknown[][] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages === 0 || cursor; pages++) {
        expect(pages, JSON.stringify(q)).toBeLessThan(12);
        const page: { status: number; text: string; body: { rows: unknown[][]; cursor: string | null; totals: unknown[] } } = await ask(a, {
          ...q,
          limit,
          ...(cursor ? { cursor } : {}),
        });
        expect(page.status, `${JSON.stringify(q)} → ${page.text}`).toBe(200);
        expect(page.body.rows.length, JSON.stringify(q)).toBeLessThanOrEqual(limit);
        expect(page.body.totals).toEqual(got.body.totals);
        paged.push(...page.body.rows);
        cursor = page.body.cursor;
      }
      expect(rounded(paged), `paged by ${limit}: ${JSON.stringify(q)}`).toEqual(rounded(want.rows));
      // GraphQL, the conditions as typed inputs: the same answer.
      const g = await gql(
        server,
        a,
        `query($a: String!, $i: AnalyticsQueryInput!) { account(id: $a) { analytics { query(input: $i) { columns rows totals cursor } } } }`,
        {
          a: a.accountId,
          i: { ...q, filters: q.filters?.map(typedCondition), orderBy: q.orderBy?.map(([by, direction]) => ({ by, direction })), limit: 10_000 },
        },
      );
      expect(g.errors, JSON.stringify(q)).toBeUndefined();
      expect(g.data.account.analytics.query, `GraphQL: ${JSON.stringify(q)}`).toEqual(got.body);
    }
  });

  it("contains folds case beyond ASCII as JavaScript does, whatever the database's locale", async () => {
    const t = await tenant("explore-fold");
    const T = Date.UTC(2026, 2, 5, 12);
    const flows = ["Ärzte-Tour", "ÉTÉ-2026", "İstanbul", "plain"];
    const posted = await req(`/v1/accounts/${t.accountId}/events`, {
      method: "POST",
      headers: t.headers,
      body: flows.map((flowId, i) => ({ type: "flow_started", flowId, widget: "self_help", endUserId: `f${i}`, time: T + i })),
    });
    expect(posted.status, posted.text).toBe(202);
    const flowsFound = async (needles: string[]) => {
      const q = {
        metrics: ["events"],
        dimensions: ["event:flowId"],
        filters: [["contains", "event:flowId", needles]],
        startDate: "2026-03-05",
        endDate: "2026-03-06",
      };
      const got = await ask(t, q);
      expect(got.status, got.text).toBe(200);
      // The oracle's words: any needle in the value, both lower-cased as toLowerCase does.
      expect(got.body.rows.map((r: unknown[]) => r[0]).sort()).toEqual(
        flows.filter((f) => needles.some((n) => f.toLowerCase().includes(n.toLowerCase()))).sort(),
      );
      return got.body.rows.length;
    };
    expect(await flowsFound(["ärzte"])).toBe(1); // SQLite's lower() left 'Ä'
    expect(await flowsFound(["ÉTÉ", "ÄRZTE"])).toBe(2);
    expect(await flowsFound(["İSTANBUL"])).toBe(1); // 'i̇stanbul' (i and a combining dot), as ICU and JavaScript fold it
    expect(await flowsFound(["istanbul"])).toBe(0); // a libc UTF-8 locale folds 'İ' to a plain 'i'
  });

  it("never shows an erased user's values, and erased users stay pseudonyms", async () => {
    const got = await ask(a, { metrics: ["events"], dimensions: ["event:endUserId", "user:plan"], startDate: "2026-03-01", endDate: "2026-11-30" });
    expect(got.status).toBe(200);
    expect(got.body.rows.some((row: unknown[]) => row[0] === "u3")).toBe(false);
    const erased = got.body.rows.filter((row: unknown[]) => String(row[0]).startsWith("erased_"));
    expect(erased.length).toBe(1);
    expect(erased[0][1]).toBeNull();
    // A timestamp field groups as epoch ms.
    const signup = await ask(a, {
      metrics: ["users"],
      dimensions: ["user:signupTime"],
      filters: [["is", "event:endUserId", ["u0", "u1"]]],
      startDate: "2026-03-01",
      endDate: "2026-11-30",
    });
    expect(signup.body.rows).toEqual([
      [Date.UTC(2025, 0, 1, 12, 30, 0, 123), 1],
      [Date.UTC(2026, 1, 2), 1],
    ]);
  });

  it("answers 400 naming the body path for every bad input", async () => {
    const ok = { metrics: ["events"], startDate: "2026-03-01", endDate: "2026-03-02" };
    const cases: [unknown, RegExp][] = [
      [{}, /^body\.metrics: must list 1 to 6 metrics$/],
      [{ ...ok, metrics: [] }, /^body\.metrics: must list 1 to 6/],
      [
        { ...ok, metrics: ["events", "users", "avg:step", "sum:step", "avg:resultCount", "sum:resultCount", "eventsPerUser"] },
        /^body\.metrics: must list 1 to 6/,
      ],
      [{ ...ok, metrics: ["events", "events"] }, /^body\.metrics\[1\]: repeats events$/],
      [{ ...ok, metrics: ["clicks"] }, /^body\.metrics\[0\]: must be one of/],
      [{ ...ok, dimensions: ["event:type", "event:domain", "event:step", "event:widget"] }, /^body\.dimensions: must list 0 to 3/],
      [{ ...ok, dimensions: ["event:colour"] }, /^body\.dimensions\[0\]: unknown dimension 'event:colour'/],
      [{ ...ok, dimensions: ["event:resultCount"] }, /^body\.dimensions\[0\]: event:resultCount can be filtered on but not grouped by$/],
      [{ ...ok, dimensions: ["user:nope"] }, /^body\.dimensions\[0\]: the end-user schema has no field 'nope'$/],
      [{ ...ok, dimensions: ["user:secret"] }, /^body\.dimensions\[0\]: 'secret' is an encrypted_string field/],
      [
        {
          ...ok,
          filters: [
            ["is", "event:type", ["a"]],
            ["is", "event:typo", ["a"]],
          ],
        },
        /^body\.filters\[1\]\[1\]: unknown dimension/,
      ],
      [{ ...ok, filters: [["like", "event:type", ["a"]]] }, /^body\.filters\[0\]\[0\]: unknown operator 'like'/],
      [{ ...ok, filters: [["is", "event:type"]] }, /^body\.filters\[0\]: is takes 2 arguments$/],
      [{ ...ok, filters: [["is", "event:type", []]] }, /^body\.filters\[0\]\[2\]: must be a list of 1 to 1000 values$/],
      [{ ...ok, filters: [["is", "event:step", ["two"]]] }, /^body\.filters\[0\]\[2\]\[0\]: must be a number or null$/],
      [{ ...ok, filters: [["is", "user:seats", ["two"]]] }, /^body\.filters\[0\]\[2\]\[0\]: must be a number or null \(user:seats is number\)$/],
      [{ ...ok, filters: [["gt", "event:type", 1]] }, /^body\.filters\[0\]\[1\]: gt compares numbers/],
      [{ ...ok, filters: [["gt", "user:plan", 1]] }, /^body\.filters\[0\]\[1\]: gt compares numbers; user:plan is text$/],
      [{ ...ok, filters: [["contains", "user:secret", ["a"]]] }, /^body\.filters\[0\]\[1\]: 'secret' is an encrypted_string field/],
      [{ ...ok, filters: [["or", [["not", ["inSegment", "seg_nope"]]]]] }, /^body\.filters\[0\]\[1\]\[0\]\[1\]\[1\]: no segment with id 'seg_nope'$/],
      [{ ...ok, filters: [["or", []]] }, /^body\.filters\[0\]\[1\]: must be a non-empty list of conditions$/],
      [{ ...ok, interval: "minute" }, /^body\.interval: must be one of hour, day, week, month$/],
      [{ ...ok, interval: "hour", startDate: "2026-01-01", endDate: "2026-03-01" }, /^body\.interval: the window holds more than 1000 hour buckets/],
      [{ ...ok, timeZone: "Mars/Olympus" }, /^body\.timeZone: must be an IANA time zone name/],
      [{ ...ok, limit: 10_001 }, /^body\.limit: must be an integer from 1 to 10000$/],
      [{ ...ok, orderBy: [["users", "desc"]] }, /^body\.orderBy\[0\]\[0\]: must be one of the answer's columns: events$/],
      [{ ...ok, orderBy: [["events", "up"]] }, /^body\.orderBy\[0\]\[1\]: must be "asc" or "desc"$/],
      [{ ...ok, startDate: "2026-13-01" }, /^body\.startDate: must be a UTC date/],
      [{ ...ok, startDate: "2026-03-05", endDate: "2026-03-01" }, /^body\.endDate: must not be before startDate$/],
      [{ ...ok, colour: "red" }, /^body\.colour: unknown field/],
      [{ ...ok, cursor: "!!" }, /^body\.cursor: malformed cursor/],
    ];
    for (const [body, detail] of cases) {
      const r = await ask(a, body);
      expectProblem(r, 400, detail);
      expect(r.body.errors?.[0]?.path, JSON.stringify(body)).toBe(r.body.detail.split(":")[0]);
    }
    // A segment whose rule reads an encrypted field cannot be decided in SQL: a 400 that says so.
    const s = await gql(server, a, `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }`, {
      a: a.accountId,
      input: { name: "secretive", rule: { field: "custom.secret", op: "eq", value: "s" }, contentIds: [] },
    });
    expectProblem(
      await ask(a, { ...ok, filters: [["inSegment", s.data.createSegment.id]] }),
      400,
      /^body\.filters\[0\]\[1\]: segment .* encrypted_string field 'secret'/,
    );
    // GraphQL names the same places by the input's fields.
    const g = await gql(server, a, `query($a: String!, $i: AnalyticsQueryInput!) { account(id: $a) { analytics { query(input: $i) { columns } } } }`, {
      a: a.accountId,
      i: {
        ...ok,
        filters: [
          { op: "is", dimension: "event:type", values: ["x"] },
          { op: "gt", dimension: "event:step" },
        ],
      },
    });
    expect(g.errors?.[0]?.message).toBe("input.filters[1].value: must be a number");
    expect(g.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
  });

  it("conditions nested past 4 levels of or / not: GraphQL names the input path as REST names the body path", async () => {
    const leaf = { op: "is", dimension: "event:type", values: ["x"] };
    const nots = (n: number, inner: unknown): unknown => (n ? { op: "not", condition: nots(n - 1, inner) } : inner);
    const ors = (n: number, inner: unknown): unknown => (n ? { op: "or", conditions: [ors(n - 1, inner)] } : inner);
    const wire = (c: any): unknown =>
      c?.op === "not" ? ["not", wire(c.condition)] : c?.op === "or" ? ["or", c.conditions.map(wire)] : c?.op ? [c.op, c.dimension, c.values] : c;
    const QUERY = `query($a: String!, $i: AnalyticsQueryInput!, $p: AnalyticsErrorPaths) { account(id: $a) { analytics { query(input: $i, errorPaths: $p) { columns } } } }`;
    const deep = "conditions nest at most 4 levels deep";
    const cases: [unknown, string, string][] = [
      [nots(5, leaf), "filters[0][1][1][1][1][1]", "filters[0].condition.condition.condition.condition.condition"],
      [ors(5, leaf), "filters[0][1][0][1][0][1][0][1][0][1][0]", "filters[0].conditions[0].conditions[0].conditions[0].conditions[0].conditions[0]"],
      [nots(7, leaf), "filters[0][1][1][1][1][1]", "filters[0].condition.condition.condition.condition.condition"],
      // Whatever is nested there, even what is no condition, is refused for its depth: never a 5xx.
      [nots(4, { op: "or", conditions: [null, 5] }), "filters[0][1][1][1][1][1][0]", "filters[0].condition.condition.condition.condition.conditions[0]"],
      [nots(4, { op: "not", condition: "x" }), "filters[0][1][1][1][1][1]", "filters[0].condition.condition.condition.condition.condition"],
    ];
    for (const [filter, bodyPath, inputPath] of cases) {
      const body = { metrics: ["events"], filters: [wire(filter)] };
      expectProblem(await ask(a, body), 400, `body.${bodyPath}: ${deep}`);
      const g = await gql(server, a, QUERY, { a: a.accountId, i: { metrics: ["events"], filters: [filter] } });
      expect([g.status, g.errors?.[0]?.message, g.errors?.[0]?.extensions?.code]).toEqual([400, `input.${inputPath}: ${deep}`, "BAD_REQUEST"]);
      // Asked for body paths, GraphQL names REST's.
      const asBody = await gql(server, a, QUERY, { a: a.accountId, i: { metrics: ["events"], filters: [filter] }, p: "body" });
      expect(asBody.errors?.[0]?.message).toBe(`body.${bodyPath}: ${deep}`);
    }
    // Past the deepest level a condition is any JSON: an `or` whose conditions are no list there
    // (GraphQL coerces a lone value to a list only at the typed levels) is refused too, not a 500.
    for (const odd of ["x", 5, { a: 1 }, true]) {
      const g = await gql(server, a, QUERY, { a: a.accountId, i: { metrics: ["events"], filters: [nots(5, { op: "or", conditions: odd })] } });
      expect([g.status, g.errors?.[0]?.message], JSON.stringify(odd)).toEqual([
        400,
        `input.filters[0].condition.condition.condition.condition.condition: ${deep}`,
      ]);
      const rest = await ask(a, { metrics: ["events"], filters: [wire(nots(5, { op: "not", condition: ["or", odd] }))] });
      expectProblem(rest, 400, `body.filters[0][1][1][1][1][1]: ${deep}`);
    }
    // Four levels are answered.
    const four = await gql(server, a, QUERY, { a: a.accountId, i: { metrics: ["events"], filters: [nots(4, leaf)] } });
    expect([four.status, four.errors]).toEqual([200, undefined]);
  });

  it("GraphQL refuses a condition's field its operator does not take, as REST refuses an extra array item (never ignored)", async () => {
    const leaf = { op: "is", dimension: "event:type", values: ["flow_started"] };
    const QUERY = `query($a: String!, $i: AnalyticsQueryInput!) { account(id: $a) { analytics { query(input: $i) { rows } } } }`;
    const cases: [unknown, string, string][] = [
      // (Ignored, these answered another question than the one asked: the events of every type, or not only flow_started.)
      [{ ...leaf, value: 3 }, "filters[0].value", "is takes dimension and values, not value"],
      [{ op: "not", condition: leaf, conditions: [leaf] }, "filters[0].conditions", "not takes condition, not conditions"],
      [
        { op: "or", conditions: [{ op: "gt", dimension: "event:step", value: 1, values: [2] }] },
        "filters[0].conditions[0].values",
        "gt takes dimension and value, not values",
      ],
      [{ op: "inSegment", segmentId: "s", dimension: "event:type" }, "filters[0].dimension", "inSegment takes segmentId, not dimension"],
    ];
    for (const [filter, path, message] of cases) {
      const g = await gql(server, a, QUERY, { a: a.accountId, i: { metrics: ["events"], filters: [filter] } });
      expect([g.status, g.errors?.[0]?.message, g.errors?.[0]?.extensions?.code], JSON.stringify(filter)).toEqual([
        400,
        `input.${path}: ${message}`,
        "BAD_REQUEST",
      ]);
    }
    // REST: the same condition with an extra item.
    expectProblem(await ask(a, { metrics: ["events"], filters: [["is", "event:type", ["flow_started"], 3]] }), 400, "body.filters[0]: is takes 2 arguments");
    // Fields left null are absent.
    const ok = await gql(server, a, QUERY, { a: a.accountId, i: { metrics: ["events"], filters: [{ ...leaf, value: null, conditions: null }] } });
    expect([ok.status, ok.errors]).toEqual([200, undefined]);
  });

  it("keeps tenants apart: another account's key is a 403 and reads nothing", async () => {
    const r = await ask(a, { metrics: ["events"] }, "", other);
    expectProblem(r, 403);
    // Their own question sees only their events.
    const mine = await ask(other, { metrics: ["events"], startDate: "2026-03-01", endDate: "2026-11-30" });
    expect(mine.body.totals).toEqual([500]);
    const g = await gql(server, other, `query($a: String!) { account(id: $a) { analytics { query(input: {metrics: ["events"]}) { totals } } } }`, {
      a: a.accountId,
    });
    expect(g.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });
});

// ---- query from the rollups ----------------------------------------------------------------------------

describe("query from the rollups (events and users per UTC day and type)", () => {
  // January: Europe/London is at offset 0 too, so its questions take the rollups as well.
  const D0 = Date.UTC(2026, 0, 5);
  const TEMPLATES: Record<string, unknown>[] = [
    { type: "flow_started", flowId: "f1", widget: "beacon" },
    { type: "flow_completed", flowId: "f1", widget: "beacon" },
    { type: "flow_step", flowId: "f2", step: 2 },
    { type: "selfhelp_search", searchTerm: "tax", resultCount: 1 },
    { type: "popup_shown", contentId: "c1" },
    { type: "beacon_clicked", contentId: "c2" },
    { type: "user_action", actionId: "export" },
    { type: "task_completed", flowId: "f2" },
  ];
  /** Events over the 8 days from D0 (some on the millisecond before or at a midnight), 25 end users, a tenth anonymous. */
  const events = (n: number, seed: number) => {
    const r = seeded(testSeed(seed));
    return Array.from({ length: n }, () => {
      const time = r.chance(0.1) ? D0 + (1 + r.int(7)) * DAY - r.int(2) : D0 + r.int(8 * DAY);
      return { ...r.pick(TEMPLATES), time, ...(r.chance(0.1) ? {} : { endUserId: `r${r.int(25)}` }) };
    });
  };
  const WINDOWS: [string, string][] = [
    ["2026-01-06", "2026-01-09"], // whole days
    ["2026-01-05 13:30", "2026-01-13 06:00"], // partial edges; the end day's rollup rows (nothing counted later)
    ["2026-01-05 13:30", "2026-01-10 12:00"], // the end day raw (counted events later)
    ["2026-01-07 20:00", "2026-01-08 04:00"], // across one midnight, no whole day
    ["2026-01-01", "2026-01-20"], // past every event
    ["2026-01-08 10:00", "2026-01-08 11:00"], // inside a day: the raw path
  ];
  const QUESTIONS: Omit<Question, "startDate" | "endDate">[] = [
    { metrics: ["events", "users"], interval: "day", dimensions: ["event:type"] },
    { metrics: ["users", "eventsPerUser", "events"], interval: "day" },
    { metrics: ["events"], dimensions: ["event:type"], filters: [["isNot", "event:type", ["flow_step", null]]] },
    {
      metrics: ["events", "users"],
      interval: "day",
      dimensions: ["event:type"],
      filters: [["is", "event:type", ["flow_started", "user_action", "popup_shown"]]],
    },
    { metrics: ["users", "events"] },
    { metrics: ["eventsPerUser", "users"], interval: "day", dimensions: ["event:type"], timeZone: "Europe/London" },
    { metrics: ["events"], interval: "day", filters: [["is", "event:type", ["selfhelp_search"]]], timeZone: "Etc/UTC" },
    {
      metrics: ["events"],
      filters: [
        ["is", "event:type", ["flow_step"]],
        ["isNot", "event:type", ["flow_step"]],
      ],
    },
  ];
  let t: Tenant;
  const none = { fields: new Map(), segments: new Map() };

  /** Every question over every window: the answer (from the rollups) equals the raw path's exactly, and the oracle's. */
  async function expectExact(label: string) {
    const evs = (await prisma.event.findMany({ where: { accountId: t.accountId } })).map((e) => ({ ...e, time: Number(e.time) }));
    let fast = 0;
    for (const [startDate, endDate] of WINDOWS)
      for (const base of QUESTIONS) {
        const q: Question = { ...base, startDate, endDate };
        const what = `${label}: ${JSON.stringify(q)}`;
        const parsed = parseQuery(new Checker("body"), q);
        if (rollupAnswers(parsed, parsed.from, parsed.to)) fast++;
        const got = await ask(t, q);
        expect(got.status, `${what} → ${got.text}`).toBe(200);
        const reference = await runQuery(dbKind(), new Checker("body"), t.accountId, parsed, none, { raw: true });
        expect(got.body, what).toEqual(JSON.parse(JSON.stringify(reference)));
        const want = oracle(q, evs);
        expect(rounded(got.body.rows), what).toEqual(rounded(want.rows));
        expect(got.body.totals.map(round), what).toEqual(want.totals.map(round));
      }
    // All but the window inside a day take the rollups.
    expect(fast).toBe((WINDOWS.length - 1) * QUESTIONS.length);
  }
  const post = async (body: unknown[]) => {
    const r = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body });
    expect(r.status, r.text).toBe(202);
  };
  const erase = async (id: string) => expect((await req(`/api/v1/${t.accountId}/endUsers/${id}`, { method: "DELETE", headers: t.headers })).status).toBe(204);

  beforeAll(async () => {
    t = await tenant("explore-rollups");
    await post(events(700, 1));
  });

  it("is exact with the rollups part way, late events and erased end users; then caught up; paging and CSV as the raw path's", async () => {
    // The worker part way; then more events, many with times long past (late arrivals), and an
    // end user erased (their rollup rows move to the pseudonym; their events not counted yet too).
    expect(await rollUpAccount(t.accountId, 300)).toBe(300);
    await post(events(250, 2));
    await erase("r3");
    await expectExact("part way");
    expect(await catchUpRollups(t.accountId)).toBe(650);
    await expectExact("caught up");
    // Among them an end user new to the rollups with several uncounted events: counted once.
    await post([...events(60, 3), ...[1, 2, 3].map((h) => ({ type: "user_action", actionId: "export", time: D0 + 2 * DAY + h * 3_600_000, endUserId: "n1" }))]);
    await erase("r4");
    await expectExact("caught up, then late events");
    // Pages walked with a cursor and the CSV give the rows of the one answer.
    const q = { metrics: ["events", "users"], interval: "day", dimensions: ["event:type"], startDate: "2026-01-05 13:30", endDate: "2026-01-13 06:00" };
    const all = (await ask(t, q)).body;
    const walked: unknown[][] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { rows: unknown[][]; cursor: string | null } } = await ask(t, { ...q, limit: 7, ...(cursor ? { cursor } : {}) });
      walked.push(...page.body.rows);
      cursor = page.body.cursor;
    } while (cursor);
    expect(walked).toEqual(all.rows);
    const csv = await ask(t, q, "?format=csv");
    expect(csv.text).toBe(`${[all.columns, ...all.rows].map((r: unknown[]) => r.join(",")).join("\r\n")}\r\n`);
  }, 120_000);

  it("reads the rollups (a changed count shows), and a rebuild puts them right", async () => {
    await catchUpRollups(t.accountId);
    const q = { metrics: ["events", "users"], interval: "day", dimensions: ["event:type"], startDate: "2026-01-06", endDate: "2026-01-06" };
    const before = (await ask(t, q)).body;
    const row = before.rows.find((r: unknown[]) => r[1] === "popup_shown");
    await withTransaction(async (tx) => {
      const bucket = (D0 + DAY) / 3_600_000;
      await tx.eventRollup.updateMany({ where: { accountId: t.accountId, type: "popup_shown", grain: TOTALS, bucket }, data: { n: { increment: 1_000 } } });
      await tx.eventActiveUserCount.updateMany({
        where: { accountId: t.accountId, type: "popup_shown", day: (D0 + DAY) / DAY },
        data: { users: { increment: 100 } },
      });
    });
    const changed = (await ask(t, q)).body;
    const domains = await prisma.eventRollup.count({ where: { accountId: t.accountId, type: "popup_shown", grain: TOTALS, bucket: (D0 + DAY) / 3_600_000 } });
    expect(changed.rows.find((r: unknown[]) => r[1] === "popup_shown")).toEqual([row[0], "popup_shown", row[2] + 1_000 * domains, row[3] + 100]);
    expect(changed.totals).toEqual([before.totals[0] + 1_000 * domains, before.totals[1]]);
    await rebuildRollups(t.accountId);
    expect((await ask(t, q)).body).toEqual(before);
  }, 60_000);

  it("the migration that added the rows over every type computes them from the per-user rows as the worker does", async () => {
    await rebuildRollups(t.accountId);
    const rows = async () => {
      const where = { accountId: t.accountId };
      const key = (r: object) => JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? Number(v) : v));
      return (
        await Promise.all([
          prisma.eventActiveUserCount.findMany({ where }),
          prisma.eventUserLastSeen.findMany({ where }),
          prisma.eventLastSeenCount.findMany({ where: { ...where, users: { not: 0 } } }),
        ])
      ).map((list) => list.map(key).sort());
    };
    const built = await rows();
    expect(built[0]!.some((r) => r.includes('"type":""'))).toBe(true);
    expect(built[1]!.some((r) => r.includes('"type":""'))).toBe(true);
    const sql = readFileSync(`prisma/migrations/${dbKind()}/20261126010000_any_type_user_counts/migration.sql`, "utf8");
    await withTransaction(async (tx) => {
      // What the rows were before it: searches' day counts only, no rows over every type.
      await tx.eventActiveUserCount.deleteMany({ where: { accountId: t.accountId, type: { not: "selfhelp_search" } } });
      await tx.eventUserLastSeen.deleteMany({ where: { accountId: t.accountId, type: "" } });
      await tx.eventLastSeenCount.deleteMany({ where: { accountId: t.accountId, type: "" } });
      const only = (s: string) =>
        s.replace(
          / FROM "(EventUserRollup|EventUserLastSeen)"( WHERE)?/,
          (_m, table, w) => ` FROM "${table}" WHERE "accountId" = '${t.accountId}'${w ? " AND" : ""}`,
        );
      for (const statement of sql
        .split(";")
        .map((x) => x.replace(/^\s*--.*$/gm, "").trim())
        .filter(Boolean))
        await tx.$executeRawUnsafe(only(statement));
    });
    expect(await rows()).toEqual(built);
  }, 60_000);
});

// ---- funnel ------------------------------------------------------------------------------------------

const funnel = (t: Tenant, body: unknown, query = "", as: Tenant = t) =>
  req(`/v1/accounts/${t.accountId}/analytics/funnel${query}`, { method: "POST", headers: as.headers, body });

interface FunnelQ {
  steps: { filters: Cond[] }[];
  conversionWindowMs?: number;
  filters?: Cond[];
  breakdown?: string;
  startDate: string;
  endDate: string;
}

/** The contract's words: each user's events in time order, walked step by step. */
function funnelOracle(q: FunnelQ) {
  const from = parseDate(q.startDate);
  const to = parseDate(q.endDate) + (q.endDate.length === 10 ? DAY : 0);
  const w = q.conversionWindowMs ?? 7 * DAY;
  const byUser = new Map<string, Ev[]>();
  for (const e of stored)
    if (e.endUserId !== null && e.time >= from && e.time < to && (q.filters ?? []).every((c) => holds(e, c)))
      (byUser.get(e.endUserId) ?? byUser.set(e.endUserId, []).get(e.endUserId)!).push(e);
  const groups = new Map<string, { value: unknown; reached: number[][] }>();
  for (const events of byUser.values()) {
    events.sort((x, y) => x.time - y.time || (x as unknown as { id: number }).id - (y as unknown as { id: number }).id);
    const matches = (e: Ev, k: number) => q.steps[k]!.filters.every((c) => holds(e, c));
    const entry = events.find((e) => matches(e, 0));
    if (!entry) continue;
    const value = q.breakdown === "event:domain" ? entry.domain : q.breakdown ? dimValue(entry, q.breakdown) : null;
    const g = groups.get(JSON.stringify(value)) ?? groups.set(JSON.stringify(value), { value, reached: q.steps.map(() => []) }).get(JSON.stringify(value))!;
    g.reached[0]!.push(0);
    let prev = entry;
    for (let k = 1; k < q.steps.length; k++) {
      const next = events.find(
        // Another event than the previous step's, at or after it; ties at one instant in id order (all of them qualify).
        (e) => matches(e, k) && e !== prev && e.time >= prev.time && e.time <= entry.time + w,
      );
      if (!next) break;
      g.reached[k]!.push(next.time - prev.time);
      prev = next;
    }
  }
  const steps = (reached: number[][]) =>
    reached.map((list, k) => {
      const sorted = [...list].sort((x, y) => x - y);
      return {
        step: k + 1,
        users: list.length,
        conversionFromFirst: reached[0]!.length ? list.length / reached[0]!.length : 0,
        conversionFromPrevious: k === 0 ? (list.length ? 1 : 0) : reached[k - 1]!.length ? list.length / reached[k - 1]!.length : 0,
        medianMsFromPrevious: k === 0 || !sorted.length ? null : sorted[Math.floor((sorted.length + 1) / 2) - 1]!,
      };
    });
  if (!q.breakdown) return { steps: steps(groups.get("null")?.reached ?? q.steps.map(() => [])) };
  const sorted = [...groups.values()].sort((x, y) => compareCells(x.value, y.value));
  return { breakdown: q.breakdown, groups: sorted.map((g) => ({ value: g.value, steps: steps(g.reached) })) };
}

describe("POST /v1/accounts/{accountId}/analytics/funnel", () => {
  it("answers a hand-checked funnel: another event than the previous step's, the conversion window, lower medians, CSV and GraphQL", async () => {
    const t = await tenant("explore-funnel");
    const T = Date.UTC(2026, 4, 4, 10);
    const ev = (type: string, dt: number, endUserId: string, extra: Record<string, unknown> = {}) => ({
      type,
      time: T + dt,
      endUserId,
      flowId: "f1",
      widget: "beacon",
      ...extra,
    });
    const events = [
      // p: start, start again 1 s later (step 2 = "flow_started" again must be another event), complete at 10 s.
      ev("flow_started", 0, "p"),
      ev("flow_started", 1_000, "p"),
      ev("flow_completed", 10_000, "p"),
      // q: start, complete after the 1-hour window: reaches step 2 only.
      ev("flow_started", 0, "q"),
      ev("flow_started", 4_000, "q"),
      ev("flow_completed", 2 * H, "q"),
      // r: one start only.
      ev("flow_started", 5_000, "r"),
      // s: complete before starting: the completion does not count.
      ev("flow_completed", 0, "s"),
      ev("flow_started", 1_000, "s"),
      ev("flow_started", 3_000, "s"),
      // an anonymous start: not a user.
      { type: "flow_started", time: T, flowId: "f1", widget: "beacon" },
    ];
    expect((await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events })).status).toBe(202);
    const body = {
      steps: [
        { filters: [["is", "event:type", ["flow_started"]]] },
        { filters: [["is", "event:type", ["flow_started"]]] },
        { filters: [["is", "event:type", ["flow_completed"]]] },
      ],
      conversionWindowMs: H,
      startDate: "2026-05-04",
      endDate: "2026-05-04",
    };
    const r = await funnel(t, body);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      steps: [
        { step: 1, users: 4, conversionFromFirst: 1, conversionFromPrevious: 1, medianMsFromPrevious: null },
        // p +1000, q +4000, s +2000: lower median of [1000, 2000, 4000] is 2000.
        { step: 2, users: 3, conversionFromFirst: 0.75, conversionFromPrevious: 0.75, medianMsFromPrevious: 2_000 },
        { step: 3, users: 1, conversionFromFirst: 0.25, conversionFromPrevious: 1 / 3, medianMsFromPrevious: 9_000 },
      ],
    });
    // Events after endDate do not count: a window ending before the completion.
    const cut = await funnel(t, { ...body, endDate: "2026-05-04 10:00" });
    expect(cut.body.steps.map((s: { users: number }) => s.users)).toEqual([0, 0, 0]);
    const csv = await funnel(t, body, "?format=csv");
    expect(csv.text).toBe(
      "step,users,conversionFromFirst,conversionFromPrevious,medianMsFromPrevious\r\n1,4,1,1,\r\n2,3,0.75,0.75,2000\r\n3,1,0.25,0.3333333333333333,9000\r\n",
    );
    const g = await gql(
      server,
      t,
      `query($a: String!, $i: AnalyticsFunnelInput!) { account(id: $a) { analytics { funnel(input: $i) { steps { step users conversionFromFirst conversionFromPrevious medianMsFromPrevious } } } } }`,
      {
        a: t.accountId,
        i: { ...body, steps: body.steps.map((s) => ({ filters: s.filters.map(([op, dimension, values]) => ({ op, dimension, values })) })) },
      },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.account.analytics.funnel.steps).toEqual(r.body.steps);
  });

  it("agrees with the oracle on randomized funnels (windows, breakdowns, user filters, segments, erased users)", async () => {
    const r = seeded(testSeed(77));
    const stepConds = (): Cond[] =>
      r.pick([
        [["is", "event:type", ["flow_started"]]],
        [
          ["is", "event:type", ["flow_step"]],
          ["gte", "event:step", 2],
        ],
        [["is", "event:type", ["selfhelp_search", "user_action"]]],
        [["contains", "event:domain", ["app"]]],
        [["not", ["is", "event:type", ["flow_feedback"]]]],
        // Two type lists in one step (the SQL reads the types both admit), and two that admit none.
        [
          ["is", "event:type", ["flow_started", "flow_step"]],
          ["is", "event:type", ["flow_step", "flow_completed"]],
        ],
        [
          ["is", "event:type", ["flow_started"]],
          ["is", "event:type", ["flow_completed"]],
        ],
        [],
      ]);
    for (let i = 0; i < 16; i++) {
      const s = W0 + r.int(SPAN / 2 / 60_000) * 60_000;
      const e = s + (1 + r.int(SPAN / 2 / 60_000)) * 60_000;
      const fmt = (x: number) => new Date(x).toISOString().slice(0, 16).replace("T", " ");
      const q: FunnelQ = {
        steps: Array.from({ length: 2 + r.int(3) }, () => ({ filters: stepConds() })),
        ...(r.chance(0.7) ? { conversionWindowMs: (1 + r.int(72)) * H } : {}),
        filters: r.pick([
          [],
          [["isNot", "user:plan", [null]]],
          [["inSegment", segmentIds.notGold]],
          [["is", "event:endUserId", ["u1", "u2", "u4"]]],
        ] as Cond[][]),
        ...(r.chance(0.5) ? { breakdown: r.pick(["user:plan", "event:domain", "user:beta"]) } : {}),
        startDate: fmt(s),
        endDate: fmt(e),
      };
      const got = await funnel(a, q);
      expect(got.status, got.text).toBe(200);
      const want = funnelOracle(q);
      const round9 = (x: unknown) => JSON.parse(JSON.stringify(x), (_k, v) => (typeof v === "number" ? Math.round(v * 1e9) / 1e9 : v));
      expect(round9(got.body), JSON.stringify(q)).toEqual(round9(want));
      // GraphQL, the conditions as typed inputs: the same answer (its absent parts null).
      const steps = "step users conversionFromFirst conversionFromPrevious medianMsFromPrevious";
      const g = await gql(
        server,
        a,
        `query($a: String!, $i: AnalyticsFunnelInput!) { account(id: $a) { analytics { funnel(input: $i) { breakdown steps { ${steps} } groups { value steps { ${steps} } } } } } }`,
        { a: a.accountId, i: { ...q, steps: q.steps.map((x) => ({ filters: x.filters.map(typedCondition) })), filters: q.filters?.map(typedCondition) } },
      );
      expect(g.errors, JSON.stringify(q)).toBeUndefined();
      expect(withoutNulls(g.data.account.analytics.funnel), `GraphQL: ${JSON.stringify(q)}`).toEqual(got.body);
    }
  });

  it("agrees with the oracle on funnels whose steps name their types, none in two consecutive steps (each step by its earliest time)", async () => {
    const r = seeded(testSeed(78));
    const options: Cond[][] = [
      [["is", "event:type", ["flow_started"]]],
      [
        ["is", "event:type", ["flow_step"]],
        ["gte", "event:step", 2],
      ],
      [["is", "event:type", ["selfhelp_search", "user_action"]]],
      [["is", "event:type", ["flow_feedback"]]],
      [
        ["is", "event:type", ["flow_started", "flow_feedback"]],
        ["contains", "event:domain", ["x.com"]],
      ],
    ];
    for (let i = 0; i < 16; i++) {
      const s = W0 + r.int(SPAN / 2 / 60_000) * 60_000;
      const e = s + (1 + r.int(SPAN / 2 / 60_000)) * 60_000;
      const fmt = (x: number) => new Date(x).toISOString().slice(0, 16).replace("T", " ");
      // Each step another option than the step before; options 0, 3 and 4 share types, so they may
      // not follow each other.
      const shares = (x: number, y: number) => x === y || (x === 4 && (y === 0 || y === 3)) || (y === 4 && (x === 0 || x === 3));
      const picks: number[] = [];
      for (let k = 0, n = 2 + r.int(3); k < n; k++) {
        let o = r.int(options.length);
        while (k > 0 && shares(o, picks[k - 1]!)) o = r.int(options.length);
        picks.push(o);
      }
      const q: FunnelQ = {
        steps: picks.map((o) => ({ filters: options[o]! })),
        ...(r.chance(0.7) ? { conversionWindowMs: (1 + r.int(72)) * H } : {}),
        filters: r.pick([
          [],
          [["isNot", "user:plan", [null]]],
          [["inSegment", segmentIds.notGold]],
          [["is", "event:endUserId", ["u1", "u2", "u4"]]],
          [
            [
              "or",
              [
                ["is", "event:domain", [null]],
                ["is", "user:beta", [true]],
              ],
            ],
          ],
        ] as Cond[][]),
        ...(r.chance(0.6) ? { breakdown: r.pick(["user:plan", "user:beta", "user:seats"]) } : {}),
        startDate: fmt(s),
        endDate: fmt(e),
      };
      const got = await funnel(a, q);
      expect(got.status, got.text).toBe(200);
      const round9 = (x: unknown) => JSON.parse(JSON.stringify(x), (_k, v) => (typeof v === "number" ? Math.round(v * 1e9) / 1e9 : v));
      expect(round9(got.body), JSON.stringify(q)).toEqual(round9(funnelOracle(q)));
    }
  });

  it("answers 400 naming the body path for bad funnels", async () => {
    const ok = { steps: [{ filters: [] }, { filters: [] }] };
    const cases: [unknown, RegExp][] = [
      [{ steps: [{ filters: [] }] }, /^body\.steps: must list 2 to 10 steps$/],
      [{ steps: Array.from({ length: 11 }, () => ({})) }, /^body\.steps: must list 2 to 10 steps$/],
      [{ steps: [{}, { filters: [["is", "user:plan", ["gold"]]] }] }, /^body\.steps\[1\]\.filters\[0\]\[1\]: must be an event: dimension here/],
      [{ steps: [{}, { filters: [["inSegment", "x"]] }] }, /^body\.steps\[1\]\.filters\[0\]\[0\]: inSegment is a user condition/],
      [{ steps: [{}, { when: 1 }] }, /^body\.steps\[1\]\.when: unknown field/],
      [{ ...ok, conversionWindowMs: 0 }, /^body\.conversionWindowMs: must be an integer of milliseconds/],
      [{ ...ok, breakdown: "event:type" }, /^body\.breakdown: must be a user:<field> dimension or event:domain$/],
      [{ ...ok, breakdown: "user:secret" }, /^body\.breakdown: 'secret' is an encrypted_string field/],
      [{ ...ok, filters: [["inSegment", "nope"]] }, /^body\.filters\[0\]\[1\]: no segment with id 'nope'$/],
    ];
    for (const [body, detail] of cases) expectProblem(await funnel(a, body), 400, detail);
    expectProblem(await funnel(a, ok, "", other), 403);
  });
});

// ---- retention ---------------------------------------------------------------------------------------

const retention = (t: Tenant, body: unknown, query = "", as: Tenant = t) =>
  req(`/v1/accounts/${t.accountId}/analytics/retention${query}`, { method: "POST", headers: as.headers, body });

interface RetentionQ {
  startEvent: { filters: Cond[] };
  returnEvent?: { filters: Cond[] };
  period?: string;
  periods?: number;
  filters?: Cond[];
  timeZone?: string;
  startDate: string;
  endDate: string;
}

/** The contract's words: each user's first start event gives the cohort; return events bucketed by period after it. */
function retentionOracle(q: RetentionQ, now: number) {
  const from = parseDate(q.startDate);
  const to = parseDate(q.endDate) + (q.endDate.length === 10 ? DAY : 0);
  const period = q.period ?? "week";
  const periods = q.periods ?? 8;
  const tz = q.timeZone ?? "UTC";
  const index = (l: string) => {
    const [y, m, d] = l.split("-").map(Number) as [number, number, number];
    return period === "month" ? y * 12 + m - 1 : Date.UTC(y, m - 1, d) / DAY / (period === "week" ? 7 : 1);
  };
  const first = new Map<string, number>();
  for (const e of stored)
    if (e.endUserId && e.time >= from && e.time < to && [...q.startEvent.filters, ...(q.filters ?? [])].every((c) => holds(e, c)))
      first.set(e.endUserId, Math.min(first.get(e.endUserId) ?? Infinity, e.time));
  const cohorts = new Map<string, { users: Set<string>; back: Set<string>[] }>();
  for (const [u, t] of first) {
    const l = label(t, period, tz);
    const c = cohorts.get(l) ?? cohorts.set(l, { users: new Set(), back: Array.from({ length: periods + 1 }, () => new Set()) }).get(l)!;
    c.users.add(u);
    for (const e of stored) {
      if (e.endUserId !== u || e.time < from || !(q.returnEvent?.filters ?? []).every((x) => holds(e, x))) continue;
      const k = index(label(e.time, period, tz)) - index(l);
      if (k >= 1 && k <= periods) c.back[k]!.add(u);
    }
  }
  const nowIndex = index(label(now, period, tz));
  return {
    period,
    cohorts: [...cohorts.entries()]
      .sort(([x], [y]) => (x < y ? -1 : 1))
      .map(([start, c]) => {
        const begun = Math.min(periods, nowIndex - index(start));
        return { start, users: c.users.size, retained: [c.users.size, ...c.back.slice(1, begun + 1).map((s) => s.size)] };
      }),
  };
}

describe("POST /v1/accounts/{accountId}/analytics/retention", () => {
  it("answers hand-checked cohorts: Monday weeks in New York across DST, returns past endDate, periods not begun left out", async () => {
    const t = await tenant("explore-retention");
    const at = (iso: string) => Date.parse(iso);
    const start = (endUserId: string, iso: string) => ({ type: "flow_started", time: at(iso), endUserId, flowId: "f1", widget: "beacon" });
    const back = (endUserId: string, iso: string) => ({ type: "user_action", time: at(iso), endUserId, actionId: "open" });
    const events = [
      start("a", "2026-03-02T15:00:00Z"), // Monday 03-02 10:00 EST: cohort 2026-03-02
      back("a", "2026-03-10T15:00:00Z"), // week 1
      back("a", "2026-03-11T15:00:00Z"), // week 1 again
      back("a", "2026-03-16T15:00:00Z"), // week 2 (after endDate: counts)
      start("b", "2026-03-08T03:00:00Z"), // Saturday 03-07 22:00 EST: cohort 2026-03-02
      start("b", "2026-03-12T03:00:00Z"), // a later start: not a new cohort
      back("b", "2026-03-09T03:00:00Z"), // Sunday 03-08 23:00 EDT: still the cohort's week
      back("b", "2026-03-09T05:00:00Z"), // Monday 03-09 01:00 EDT: week 1
      start("c", "2026-03-10T15:00:00Z"), // cohort 2026-03-09
      back("c", "2026-03-18T15:00:00Z"), // week 1
      back("d", "2026-03-03T15:00:00Z"), // no start event: no cohort
    ];
    expect((await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events })).status).toBe(202);
    const { clock } = await import("../src/clock.js");
    const realNow = clock.now;
    clock.now = () => new Date("2026-03-20T12:00:00Z"); // week 3 of the first cohort (from 03-23) has not begun
    try {
      const body = {
        startEvent: { filters: [["is", "event:type", ["flow_started"]]] },
        periods: 3,
        timeZone: "America/New_York",
        startDate: "2026-03-01",
        endDate: "2026-03-15",
      };
      const r = await retention(t, body);
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({
        period: "week",
        cohorts: [
          { start: "2026-03-02", users: 2, retained: [2, 2, 1] },
          { start: "2026-03-09", users: 1, retained: [1, 1] },
        ],
      });
      const csv = await retention(t, body, "?format=csv");
      expect(csv.text).toBe("start,users,1,2\r\n2026-03-02,2,2,1\r\n2026-03-09,1,1,\r\n");
      const g = await gql(
        server,
        t,
        `query($a: String!, $i: AnalyticsRetentionInput!) { account(id: $a) { analytics { retention(input: $i) { period cohorts { start users retained } } } } }`,
        { a: t.accountId, i: { ...body, startEvent: { filters: [{ op: "is", dimension: "event:type", values: ["flow_started"] }] } } },
      );
      expect(g.errors).toBeUndefined();
      expect(g.data.account.analytics.retention).toEqual(r.body);
    } finally {
      clock.now = realNow;
    }
  });

  it("agrees with the oracle on randomized retention questions (periods, zones, user filters, segments, erased users)", async () => {
    const r = seeded(testSeed(99));
    for (let i = 0; i < 16; i++) {
      const second = r.chance(0.5);
      const base = second ? W1 : W0;
      const span = second ? SPAN1 : SPAN;
      const s = base + r.int(span / 2 / 60_000) * 60_000;
      const e = s + (1 + r.int(span / 2 / 60_000)) * 60_000;
      const fmt = (x: number) => new Date(x).toISOString().slice(0, 16).replace("T", " ");
      const q: RetentionQ = {
        startEvent: { filters: r.pick([[["is", "event:type", ["flow_started"]]], [["contains", "event:domain", ["x.com"]]], []] as Cond[][]) },
        ...(r.chance(0.6)
          ? { returnEvent: { filters: r.pick([[["is", "event:type", ["user_action", "flow_step"]]], [["not", ["is", "event:domain", [null]]]]] as Cond[][]) } }
          : {}),
        ...(r.chance(0.8) ? { period: r.pick(["day", "week", "month"]) } : {}),
        ...(r.chance(0.8) ? { periods: 1 + r.int(52) } : {}),
        filters: r.pick([[], [["is", "user:plan", ["gold", null]]], [["inSegment", segmentIds.big]], [["gt", "user:seats", 4]]] as Cond[][]),
        timeZone: r.pick(["UTC", "America/New_York", "Australia/Sydney"]),
        startDate: fmt(s),
        endDate: fmt(e),
      };
      const got = await retention(a, q);
      expect(got.status, got.text).toBe(200);
      expect(got.body, JSON.stringify(q)).toEqual(retentionOracle(q, Date.now()));
      // GraphQL, the conditions as typed inputs: the same answer.
      const event = (x: { filters: Cond[] } | undefined) => x && { filters: x.filters.map(typedCondition) };
      const g = await gql(
        server,
        a,
        `query($a: String!, $i: AnalyticsRetentionInput!) { account(id: $a) { analytics { retention(input: $i) { period cohorts { start users retained } } } } }`,
        { a: a.accountId, i: { ...q, startEvent: event(q.startEvent), returnEvent: event(q.returnEvent), filters: q.filters?.map(typedCondition) } },
      );
      expect(g.errors, JSON.stringify(q)).toBeUndefined();
      expect(g.data.account.analytics.retention, `GraphQL: ${JSON.stringify(q)}`).toEqual(got.body);
    }
    // A window over both stretches of events: by week or month each user's return periods fit one
    // BIGINT's bits on PostgreSQL; by day (250 periods) they do not, and the periods are grouped.
    for (const period of ["day", "week", "month"] as const) {
      const q: RetentionQ = {
        startEvent: { filters: [] },
        period,
        periods: 12,
        filters: [],
        timeZone: "America/New_York",
        startDate: "2026-03-04",
        endDate: "2026-11-04",
      };
      const got = await retention(a, q);
      expect(got.status, got.text).toBe(200);
      expect(got.body, JSON.stringify(q)).toEqual(retentionOracle(q, Date.now()));
    }
  });

  it("answers 400 naming the body path for bad retention questions", async () => {
    const ok = { startEvent: { filters: [] } };
    const cases: [unknown, RegExp][] = [
      [{}, /^body\.startEvent: is required/],
      [{ ...ok, period: "year" }, /^body\.period: must be one of day, week, month$/],
      [{ ...ok, periods: 0 }, /^body\.periods: must be an integer from 1 to 52$/],
      [{ ...ok, periods: 53 }, /^body\.periods: must be an integer from 1 to 52$/],
      [{ ...ok, filters: [["is", "event:type", ["x"]]] }, /^body\.filters\[0\]\[1\]: must be a user:<field> dimension here/],
      [{ startEvent: { filters: [["is", "user:plan", ["x"]]] } }, /^body\.startEvent\.filters\[0\]\[1\]: must be an event: dimension here/],
      [{ ...ok, returnEvent: { filters: [["gt", "event:type", 1]] } }, /^body\.returnEvent\.filters\[0\]\[1\]: gt compares numbers/],
      [{ ...ok, period: "day", startDate: "2020-01-01", endDate: "2026-01-01" }, /^body\.period: the window holds more than 1000 day buckets/],
      [{ ...ok, timeZone: "Nowhere/Town" }, /^body\.timeZone: must be an IANA time zone name/],
    ];
    for (const [body, detail] of cases) expectProblem(await retention(a, body), 400, detail);
    expectProblem(await retention(a, ok, "", other), 403);
  });
});
