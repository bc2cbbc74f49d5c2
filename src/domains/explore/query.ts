// `query`: metrics over the matching events of a window, grouped by time buckets and dimensions.
// One statement for the page of rows and one for the totals, in one snapshot (./run.ts). Events
// and distinct end users per UTC day and event type come from the reports' rollups (./rollup.ts);
// every other question reads the events raw. Both are exact, whatever the rollups' lag.
import { createHash } from "node:crypto";
import { prisma } from "../../db/index.js";
import { watermarkOf } from "../reports/rollups.js";
import { bucketsOf, labelOfKey, offsetsOf } from "./buckets.js";
import type { Checker, Metric, QueryQuestion, ValueKind } from "./input.js";
import { rollupAnswers, rollupBodies } from "./rollup.js";
import { budgetOf, runStatements } from "./run.js";
import { Builder, cell, type Statement, type UserContext } from "./sql.js";

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

// ---- cursors: the offset of the next row, the window and a digest of the question ---------------

function digest(q: QueryQuestion): string {
  const { limit: _l, cursor: _c, from: _f, to: _t, ...rest } = q;
  return createHash("sha256").update(JSON.stringify(rest)).digest("base64url").slice(0, 16);
}

function decodeCursor(c: Checker, q: QueryQuestion): { offset: number; from: number; to: number } {
  const bad = (message: string): never => c.fail(["cursor"], message);
  let v: { o?: unknown; f?: unknown; t?: unknown; h?: unknown };
  try {
    v = JSON.parse(Buffer.from(q.cursor!, "base64url").toString("utf8"));
  } catch {
    return bad("malformed cursor: pass the cursor of the previous answer unchanged");
  }
  if (!v || !Number.isSafeInteger(v.o) || !Number.isSafeInteger(v.f) || !Number.isSafeInteger(v.t) || (v.o as number) < 0)
    bad("malformed cursor: pass the cursor of the previous answer unchanged");
  if (v.h !== digest(q)) bad("the cursor belongs to another question: ask the same question (only limit may change) with it");
  return { offset: v.o as number, from: v.f as number, to: v.t as number };
}

const encodeCursor = (offset: number, q: QueryQuestion, from: number, to: number) =>
  Buffer.from(JSON.stringify({ o: offset, f: from, t: to, h: digest(q) })).toString("base64url");

// ---- the statements -------------------------------------------------------------------------------

/**
 * The statements: the page (all rows with `allRows`) and the totals. `from`/`to` are the window
 * (a cursor's, so that every page answers the same window). With an interval, the first column is
 * the bucket key (./buckets.ts); the caller turns it into its label. `watermark`: the account's
 * rollup watermark when the rollups answer (./rollup.ts), null for the raw events.
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
  // The totals group nothing: they join only the user values the filters read (a user dimension's
  // join per event would double the cost of a question grouped by one).
  const totalsWhere = b.where(q.filters, c);
  const totalsJoins = b.joinsOn('e."accountId"', 'e."endUserId"');
  const totalsMatching = `SELECT e."id" AS "id", e."endUserId" AS "u", e."step" AS "step", e."resultCount" AS "rc"
    FROM "Event" e${totalsJoins} WHERE ${window} AND ${totalsWhere}`;
  const dims = q.dimensions.map((d) => b.dim(d, c));
  const where = b.where(q.filters, c);
  const joins = b.joins();
  const key = q.interval ? `, ${b.bucketKey(b.local('e."time"', offsetsOf(from, to, q.timeZone)), q.interval)} AS "k"` : "";
  const dimCols = dims.map((d, i) => `, ${d.expr} AS "d${i}"`).join("");
  const matching = `SELECT e."id" AS "id", e."endUserId" AS "u", e."step" AS "step", e."resultCount" AS "rc"${key}${dimCols}
    FROM "Event" e${joins} WHERE ${window} AND ${where}`;
  const metrics = q.metrics.map((m, i) => `${METRIC_SQL[m]} AS "m${i}"`).join(", ");
  const groups = [...(q.interval ? [`m."k"`] : []), ...dims.map((_, i) => `m."d${i}"`)];
  const named = groups.map((g, i) => `${g} AS "c${i}"`);
  const body = groups.length
    ? `WITH "m" AS (${matching}) SELECT ${named.join(", ")}, ${metrics} FROM "m" m GROUP BY ${groups.join(", ")}`
    : // No dimension, no interval: one row over every matching event (as the totals).
      `WITH "m" AS (${matching}) SELECT ${metrics} FROM "m" m`;
  // Column kinds, in answer order: time (its key), dimensions, metrics.
  const kinds: ValueKind[] = [...(q.interval ? ["number" as const] : []), ...dims.map((d) => d.kind), ...q.metrics.map(() => "number" as const)];
  const rows = ordered(b, q, body, kinds, page);
  const totals = b.finish(`WITH "m" AS (${totalsMatching}) SELECT ${metrics} FROM "m" m`);
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

/** Cells in code point order, nulls first (what the SQL ORDER BY does). */
function compareCells(x: unknown, y: unknown): number {
  if (x === y) return 0;
  if (x === null) return -1;
  if (y === null) return 1;
  if (typeof x === "number" && typeof y === "number") return x - y;
  return String(x) < String(y) ? -1 : 1;
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
  const at = q.cursor && !opts.allRows ? decodeCursor(c, q) : { offset: 0, from: q.from, to: q.to };
  const b = new Builder(dialect, users);
  const page = opts.allRows ? null : { offset: at.offset, limit: q.limit };
  // An interval and no other dimension: every bucket (at most 1,000) is listed, zeros included, so
  // the rows are completed, ordered and paged here; otherwise the database orders and pages.
  const zeroFilled = q.interval !== null && q.dimensions.length === 0;
  // The watermark read first: the planner then sees how few events lie above it (SourceParams).
  const watermark = !opts.raw && rollupAnswers(q, at.from, at.to) ? await watermarkOf(prisma, accountId) : null;
  const { rows: rowsSql, totals: totalsSql, kinds } = statements(b, c, accountId, q, at.from, at.to, zeroFilled ? null : page, watermark);
  const budget = budgetOf({ windowMs: at.to - at.from, dimensions: q.dimensions.length, userValues: rowsSql.sql.includes('"EndUser"') });
  const [rawRows, rawTotals] = await runStatements([rowsSql, totalsSql], budget, { noJit: watermark !== null });
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
    if (page) rows = rows.slice(page.offset, page.offset + page.limit + 1);
  }
  if (q.interval) for (const r of rows) r[0] = labelOfKey(r[0] as number, q.interval);
  let cursor: string | null = null;
  if (page && rows.length > page.limit) {
    rows = rows.slice(0, page.limit);
    cursor = encodeCursor(page.offset + page.limit, q, at.from, at.to);
  }
  const t = Object.values(rawTotals![0] ?? {});
  return { columns: q.columns, rows, totals: q.metrics.map((_, i) => cell(t[i], "number")), cursor };
}
