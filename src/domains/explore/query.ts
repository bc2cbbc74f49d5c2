// `query`: metrics over the matching events of a window, grouped by time buckets and dimensions.
// One statement for the page of rows and one for the totals, in one snapshot (./run.ts). Events
// and distinct end users per UTC day and event type come from the reports' rollups (./rollup.ts);
// every other question reads the events raw. Both are exact, whatever the rollups' lag.

import { createHash } from "node:crypto";
import { loadConfig } from "../../config.js";
import { prisma } from "../../db/index.js";
import { watermarkOf } from "../reports/rollups.js";
import { bucketsOf, labelOfKey, offsetsOf } from "./buckets.js";
import type { Checker, Metric, QueryQuestion, ValueKind } from "./input.js";
import { rollupAnswers, rollupBodies } from "./rollup.js";
import { budgetOf, runStatements } from "./run.js";
import { Builder, cell, compareCells, type Statement, type UserContext } from "./sql.js";

export interface QueryAnswer {
  columns: string[];
  rows: unknown[][];
  totals: unknown[];
  cursor: string | null;
}

const METRIC_SQL: Record<Metric, string> = {
  events: `COUNT(m."id")`,
  users: `COUNT(DISTINCT m."u")`,
  eventsPerUser: `CASE WHEN COUNT(DISTINCT m."u") = 0 THEN 0 ELSE CAST(COUNT(m."id") AS DOUBLE PRECISION) / COUNT(DISTINCT m."u") END`,
  "sum:step": `SUM(m."step")`,
  "sum:resultCount": `SUM(m."rc")`,
  "avg:step": `AVG(CAST(m."step" AS DOUBLE PRECISION))`,
  "avg:resultCount": `AVG(CAST(m."rc" AS DOUBLE PRECISION))`,
};

/**
 * The same metrics over groups of one end user each (`i`: the end user "u", their events "n", and
 * the sums and counts of step and resultCount; see statements()). Distinct users are then the
 * groups with an end user (COUNT skips the null one), events the sum of the counts; averages come
 * from the integer sums and counts, so they are the same quotients as AVG over the events.
 */
const TWO_LEVEL_SQL: Record<Metric, string> = {
  // (No group at all when no event matches: COUNT's 0, not SUM's null.)
  events: `COALESCE(SUM(i."n"), 0)`,
  users: `COUNT(i."u")`,
  eventsPerUser: `CASE WHEN COUNT(i."u") = 0 THEN 0 ELSE CAST(SUM(i."n") AS DOUBLE PRECISION) / COUNT(i."u") END`,
  "sum:step": `SUM(i."ss")`,
  "sum:resultCount": `SUM(i."rs")`,
  "avg:step": `CASE WHEN SUM(i."sn") = 0 THEN NULL ELSE CAST(SUM(i."ss") AS DOUBLE PRECISION) / CAST(SUM(i."sn") AS DOUBLE PRECISION) END`,
  "avg:resultCount": `CASE WHEN SUM(i."rn") = 0 THEN NULL ELSE CAST(SUM(i."rs") AS DOUBLE PRECISION) / CAST(SUM(i."rn") AS DOUBLE PRECISION) END`,
};
/**
 * Event columns with a few values per end user (the end user's own id: one): grouped by end user and
 * these, the groups are many fewer than the events.
 */
const COARSE = new Set(["type", "widget", "domain", "useful", "endUserId"]);
/** The per-user group's aggregates the metrics read (over the matching events `m`). */
/** The metrics' select list (m0, m1, …) in one of the two forms. */
const metricList = (q: QueryQuestion, form: Record<Metric, string>) => q.metrics.map((m, i) => `${form[m]} AS "m${i}"`).join(", ");
function perUser(metrics: readonly Metric[]): string {
  const out = [`COUNT(*) AS "n"`];
  if (metrics.some((m) => m === "sum:step" || m === "avg:step")) out.push(`SUM(m."step") AS "ss"`, `COUNT(m."step") AS "sn"`);
  if (metrics.some((m) => m === "sum:resultCount" || m === "avg:resultCount")) out.push(`SUM(m."rc") AS "rs"`, `COUNT(m."rc") AS "rn"`);
  return out.join(", ");
}

// ---- cursors: the offset of the next row, the window and a digest of the question ---------------

function digest(q: QueryQuestion): string {
  const { limit: _l, cursor: _c, from: _f, to: _t, ...rest } = q;
  return createHash("sha256").update(JSON.stringify(rest)).digest("base64url").slice(0, 16);
}

function decodeCursor(c: Checker, accountId: string, q: QueryQuestion): { offset: number; from: number; to: number } {
  const bad = (message: string): never => c.fail(["cursor"], message);
  let v: { o?: unknown; f?: unknown; t?: unknown; h?: unknown; a?: unknown };
  try {
    v = JSON.parse(Buffer.from(q.cursor!, "base64url").toString("utf8"));
  } catch {
    return bad("malformed cursor: pass the cursor of the previous answer unchanged");
  }
  if (
    !v ||
    !Number.isSafeInteger(v.o) ||
    !Number.isSafeInteger(v.f) ||
    !Number.isSafeInteger(v.t) ||
    (v.o as number) < 0 ||
    (v.a !== undefined && typeof v.a !== "string")
  )
    bad("malformed cursor: pass the cursor of the previous answer unchanged");
  if (v.h !== digest(q)) bad("the cursor belongs to another question: ask the same question (only limit may change) with it");
  // The same question asked of another account has the same digest: its cursor, an offset into that
  // account's rows, skipped this one's. (Cursors issued before they named their account have none.)
  if (v.a !== undefined && v.a !== accountId) bad("the cursor belongs to another account: pass a cursor of this account's answer");
  const from = v.f as number;
  const to = v.t as number;
  // The cursor's window is the question's as it was on its first page (every page answers that
  // one). It is checked against the question: only an end that is "now" may have moved since, and
  // the window may never be wider than the one the question asks and is priced for (digest() leaves
  // the window out, and anyone can compute it: an edited window was read, at the question's price).
  const same =
    q.window === "fixed"
      ? from === q.from && to === q.to
      : q.window === "sinceStart"
        ? from === q.from && to >= from && to <= q.to
        : to - from === q.to - q.from && to <= q.to;
  if (!same) bad("the cursor pages another window than this question's (startDate, endDate): pass the cursor of the previous answer unchanged");
  return { offset: v.o as number, from, to };
}

const encodeCursor = (offset: number, q: QueryQuestion, from: number, to: number, accountId: string) =>
  Buffer.from(JSON.stringify({ o: offset, f: from, t: to, h: digest(q), a: accountId })).toString("base64url");

// ---- the statements -------------------------------------------------------------------------------

/**
 * The statements: the page (all rows with `allRows`) and the totals. `from`/`to` are the window
 * (a cursor's, so that every page answers the same window). With an interval, the first column is
 * the bucket key (./buckets.ts); the caller turns it into its label.
 */
function statements(
  b: Builder,
  c: Checker,
  accountId: string,
  q: QueryQuestion,
  from: number,
  to: number,
  page: { offset: number; limit: number } | null,
  watermark: number | null,
): { rows: Statement; totals: Statement; kinds: ValueKind[] } {
  if (watermark !== null) {
    const { rows, totals } = rollupBodies(b, c, accountId, q, from, to, watermark);
    // Time (its key), event:type, then the metrics.
    const kinds: ValueKind[] = [
      ...(q.interval ? ["number" as const] : []),
      ...q.dimensions.map(() => "text" as const),
      ...q.metrics.map(() => "number" as const),
    ];
    return { rows: ordered(b, q, rows, kinds, page), totals: b.finish(totals), kinds };
  }
  const acct = b.p(accountId);
  const window = `e."accountId" = ${acct} AND e."time" >= ${b.p(from)} AND e."time" < ${b.p(to)}`;
  const u = b.userKey('e."endUserId"');
  // The totals group nothing: they join only the user values the filters read (a user dimension's
  // join per event would double the cost of a question grouped by one). With distinct users, on
  // PostgreSQL in two levels: the matching events grouped by end user first (a hash of one entry
  // per user), then summed; distinct users over every event in one level sorted all of them (4.6 s
  // over 3M events, 0.8 s so). SQLite's COUNT(DISTINCT) needs no sort (one level: 0.6 s over 1M).
  const totalsWhere = b.where(q.filters, c);
  const totalsJoins = b.joinsOn('e."accountId"', 'e."endUserId"');
  const totalsMatching = `SELECT e."id" AS "id", ${u} AS "u", e."step" AS "step", e."resultCount" AS "rc"
    FROM ${b.eventsOf(q.filters)}${totalsJoins} WHERE ${window} AND ${totalsWhere}`;
  const where = b.where(q.filters, c);
  const key = q.interval ? `${b.bucketKey(b.local('e."time"', offsetsOf(from, to, q.timeZone)), q.interval)}` : null;
  // Two levels for the rows too when a metric counts distinct users or a dimension reads the end
  // user, and the groups per end user are few: no hour or day interval and only event dimensions
  // with a handful of values each (COARSE). The inner level groups by end user, the time bucket and
  // the event dimensions; user dimensions are functions of the end user, so they are joined once
  // per inner group, not once per event. Over 3M events on PostgreSQL: users by type 5.5 → 3.5 s; but user:plan ×
  // flowId (about one event per user and flow) 2.1 → 2.8 s, and day × type × user (2.7M groups)
  // spilled: with about as many groups as events, one level's sort is cheaper than the hash.
  const distinct = q.metrics.some((m) => m === "users" || m === "eventsPerUser");
  const userDim = q.dimensions.some((d) => d.kind === "user");
  const coarse = q.dimensions.every((d) => d.kind === "user" || COARSE.has(d.column));
  // On SQLite only for a user dimension: its COUNT(DISTINCT) fills a b-tree per group as it goes,
  // no sort, and grouping first by end user cost more than it saved (users by type over 1M events
  // 0.6 → 1.6 s; type × user:plan 4.1 → 2.5 s, the joins per group instead of per event).
  const twoLevel = (userDim || (distinct && b.dialect === "postgres")) && coarse && q.interval !== "hour" && q.interval !== "day";
  let body: string;
  let dimKinds: ValueKind[];
  if (twoLevel) {
    const eventDims = q.dimensions.map((d) => (d.kind === "event" ? b.dim(d, c) : null));
    // The filters' user values, per event (the event dimensions need none).
    const joins = b.joins();
    const innerCols = [...(key ? [`${key} AS "k"`] : []), ...eventDims.flatMap((d, i) => (d ? [`${d.expr} AS "d${i}"`] : []))];
    const innerKeys = [`m."u"`, ...(key ? [`m."k"`] : []), ...eventDims.flatMap((d, i) => (d ? [`m."d${i}"`] : []))];
    const matching = `SELECT ${u} AS "u", e."step" AS "step", e."resultCount" AS "rc"${innerCols.map((x) => `, ${x}`).join("")}
      FROM ${b.eventsOf(q.filters)}${joins} WHERE ${window} AND ${where}`;
    const inner = `SELECT ${innerKeys.join(", ")}, ${perUser(q.metrics)} FROM (${matching}) m GROUP BY ${innerKeys.join(", ")}`;
    // The user dimensions, on the inner groups' end users.
    const dims = q.dimensions.map((d, i) => {
      const ev = eventDims[i];
      return ev ? { expr: `i."d${i}"`, kind: ev.kind } : b.dim(d, c);
    });
    const userJoins = b.joinsOn(acct, 'i."u"');
    const groups = [...(key ? [`i."k"`] : []), ...dims.map((d) => d.expr)];
    const metrics = metricList(q, TWO_LEVEL_SQL);
    const named = groups.map((g, i) => `${g} AS "c${i}"`);
    body = groups.length
      ? `SELECT ${named.join(", ")}, ${metrics} FROM (${inner}) i${userJoins} GROUP BY ${groups.join(", ")}`
      : `SELECT ${metrics} FROM (${inner}) i`;
    dimKinds = dims.map((d) => d.kind);
  } else {
    const dims = q.dimensions.map((d) => b.dim(d, c));
    const joins = b.joins();
    const dimCols = dims.map((d, i) => `, ${d.expr} AS "d${i}"`).join("");
    const matching = `SELECT e."id" AS "id", ${u} AS "u", e."step" AS "step", e."resultCount" AS "rc"${key ? `, ${key} AS "k"` : ""}${dimCols}
      FROM ${b.eventsOf(q.filters)}${joins} WHERE ${window} AND ${where}`;
    const metrics = metricList(q, METRIC_SQL);
    const groups = [...(q.interval ? [`m."k"`] : []), ...dims.map((_, i) => `m."d${i}"`)];
    const named = groups.map((g, i) => `${g} AS "c${i}"`);
    body = groups.length
      ? `WITH "m" AS (${matching}) SELECT ${named.join(", ")}, ${metrics} FROM "m" m GROUP BY ${groups.join(", ")}`
      : // No dimension, no interval: one row over every matching event (as the totals).
        `WITH "m" AS (${matching}) SELECT ${metrics} FROM "m" m`;
    dimKinds = dims.map((d) => d.kind);
  }
  // Column kinds, in answer order: time (its key), dimensions, metrics.
  const kinds: ValueKind[] = [...(q.interval ? ["number" as const] : []), ...dimKinds, ...q.metrics.map(() => "number" as const)];
  const rows = ordered(b, q, body, kinds, page);
  const totals = b.finish(
    distinct && b.dialect === "postgres"
      ? `SELECT ${metricList(q, TWO_LEVEL_SQL)} FROM (SELECT m."u", ${perUser(q.metrics)} FROM (${totalsMatching}) m GROUP BY m."u") i`
      : `SELECT ${metricList(q, METRIC_SQL)} FROM (${totalsMatching}) m`,
  );
  return { rows, totals, kinds };
}

/** The rows' statement: `body` (columns c0… for time and dimensions, then m0… for the metrics) in the question's order, and the page. */
function ordered(b: Builder, q: QueryQuestion, body: string, kinds: readonly ValueKind[], page: { offset: number; limit: number } | null): Statement {
  const groups = kinds.length - q.metrics.length;
  const outName = (i: number) => (i < groups ? `"c${i}"` : `"m${i - groups}"`);
  const order = q.orderBy
    .map(({ column, desc }) => {
      // Code point order: PostgreSQL's "C" collation (SQLite's default BINARY is that already); nulls sort first.
      const collate = b.dialect === "postgres" && kinds[column] === "text" ? ` COLLATE "C"` : "";
      return `q.${outName(column)}${collate} ${desc ? "DESC NULLS LAST" : "ASC NULLS FIRST"}`;
    })
    .join(", ");
  const paging = page ? ` LIMIT ${b.p(page.limit + 1)} OFFSET ${b.p(page.offset)}` : "";
  return b.finish(`SELECT * FROM (${body}) q ORDER BY ${order}${paging}`);
}

const ZERO: Record<Metric, number | null> = {
  events: 0,
  users: 0,
  eventsPerUser: 0,
  "sum:step": null,
  "sum:resultCount": null,
  "avg:step": null,
  "avg:resultCount": null,
};

/** Answers a question (`raw`: from the raw events only, the reference the rollups' answers are tested against). */
export async function runQuery(
  dialect: "sqlite" | "postgres",
  c: Checker,
  accountId: string,
  q: QueryQuestion,
  users: UserContext,
  opts: { allRows?: boolean; raw?: boolean } = {},
): Promise<QueryAnswer> {
  const at = q.cursor && !opts.allRows ? decodeCursor(c, accountId, q) : { offset: 0, from: q.from, to: q.to };
  const b = new Builder(dialect, users, c.style);
  // Every row (CSV, `allRows`) is one answer held in memory: at most EXPLORE_MAX_ROWS of them, read
  // as a page of that size, so a larger answer is refused without being read whole.
  const allRowsMax = loadConfig().EXPLORE_MAX_ROWS;
  const page = opts.allRows ? { offset: 0, limit: allRowsMax } : { offset: at.offset, limit: q.limit };
  // An interval and no other dimension: every bucket (at most 1,000) is listed, zeros included, so
  // the rows are completed, ordered and paged here; otherwise the database orders and pages.
  const zeroFilled = q.interval !== null && q.dimensions.length === 0;
  // The watermark read first: the planner then sees how few events lie above it (SourceParams).
  const watermark = !opts.raw && rollupAnswers(q, at.from, at.to) ? await watermarkOf(prisma, accountId) : null;
  const { rows: rowsSql, totals: totalsSql, kinds } = statements(b, c, accountId, q, at.from, at.to, zeroFilled ? null : page, watermark);
  const budget = budgetOf({ windowMs: at.to - at.from, dimensions: q.dimensions.length, userValues: rowsSql.sql.includes('"EndUser"') });
  const [rawRows, rawTotals] = await runStatements([rowsSql, totalsSql], budget);
  const width = q.columns.length;
  let rows = rawRows!.map((r) => {
    const values = Object.values(r);
    return Array.from({ length: width }, (_, i) => cell(values[i], kinds[i]!));
  });
  if (zeroFilled) {
    const byKey = new Map(rows.map((r) => [r[0] as number, r]));
    rows = bucketsOf(at.from, at.to, q.interval!, q.timeZone, "interval").map((bucket) => byKey.get(bucket.k) ?? [bucket.k, ...q.metrics.map((m) => ZERO[m])]);
    rows.sort((x, y) => {
      for (const { column, desc } of q.orderBy) {
        const d = compareCells(x[column], y[column]);
        if (d) return desc ? -d : d;
      }
      return 0;
    });
    rows = rows.slice(page.offset, page.offset + page.limit + 1);
  }
  if (q.interval) for (const r of rows) r[0] = labelOfKey(r[0] as number, q.interval);
  if (opts.allRows && rows.length > allRowsMax)
    c.fail(
      [],
      `has more than ${allRowsMax} rows, the most one answer with every row holds (EXPLORE_MAX_ROWS): narrow it (a shorter window, a coarser interval, fewer dimensions, filters) or page through it as JSON with limit and cursor`,
    );
  let cursor: string | null = null;
  if (!opts.allRows && rows.length > page.limit) {
    rows = rows.slice(0, page.limit);
    cursor = encodeCursor(page.offset + page.limit, q, at.from, at.to, accountId);
  }
  const t = Object.values(rawTotals![0] ?? {});
  return { columns: q.columns, rows, totals: q.metrics.map((_, i) => cell(t[i], "number")), cursor };
}
