// `funnel`: how many end users reach each step, in one statement. A CTE per step (at most 10, so
// the statement's shape is fixed by the question, never by the data): step 1 is each user's
// earliest matching event in the window (ROW_NUMBER over the user's events); step k each user's
// earliest event matching it at or after the time step k−1 was reached (another event than that
// one) and no later than entry + conversionWindowMs. Ties at one instant go by event id, the
// order the events were stored in. Counts and lower medians come from window functions over all
// the steps' rows at once.
import type { Checker, FunnelQuestion, ValueKind } from "./input.js";
import { budgetOf, runStatements } from "./run.js";
import { Builder, cell, MATERIALIZED, type Statement, type UserContext, userOnly } from "./sql.js";

export interface FunnelStep {
  step: number;
  users: number;
  conversionFromFirst: number;
  conversionFromPrevious: number;
  medianMsFromPrevious: number | null;
}
export interface FunnelAnswer {
  breakdown: string | null;
  steps: FunnelStep[] | null;
  groups: { value: unknown; steps: FunnelStep[] }[] | null;
}

function statement(b: Builder, c: Checker, accountId: string, q: FunnelQuestion): { sql: Statement; kind: ValueKind } {
  const acct = b.p(accountId);
  // Conditions on the end user alone (user fields, segments) hold for all of a user's events or
  // none: they are decided once per user who entered, not per event.
  const perUser = userOnly(q.filters);
  const eventBd = q.breakdown?.kind === "event" ? b.dim(q.breakdown, c) : null;
  const flags = q.steps.map((s, i) => `CASE WHEN ${b.where(s, c)} THEN 1 ELSE 0 END AS "s${i + 1}"`);
  const filters = perUser ? "1 = 1" : b.where(q.filters, c);
  const evJoins = b.joins();
  // Only the events that match some step matter; with a type in each step's conditions the
  // database reads just those types' stretch of the (accountId, type, time) index.
  const any = q.steps.map((s) => `(${b.where(s, c)})`).join(" OR ");
  const ev = `SELECT e."id" AS "id", e."time" AS "t", e."endUserId" AS "u", ${eventBd ? eventBd.expr : "NULL"} AS "bd", ${flags.join(", ")}
    FROM "Event" e${evJoins} WHERE e."accountId" = ${acct} AND e."time" >= ${b.p(q.from)} AND e."time" < ${b.p(q.to)}
      AND e."endUserId" IS NOT NULL${b.typeFilter(q.steps)} AND (${any}) AND ${filters}`;
  // The entrants: each user's earliest step-1 event, then the user parts (their breakdown value,
  // the per-user filters) joined once per entrant.
  const userBd = q.breakdown?.kind === "user" ? b.dim(q.breakdown, c) : null;
  const userFilters = perUser ? b.where(q.filters, c) : "1 = 1";
  const userJoins = b.joinsOn(acct, 'x."u"');
  const bd = eventBd ?? userBd ?? { expr: "NULL", kind: "text" as ValueKind };
  const ctes = [`"ev" ${MATERIALIZED} (${ev})`];
  ctes.push(`"r1" ${MATERIALIZED} (SELECT x."u" AS "u", ${userBd ? userBd.expr : 'x."bd"'} AS "bd", x."t" AS "t0", x."t" AS "t", x."id" AS "id", CAST(NULL AS BIGINT) AS "diff" FROM (
      SELECT ev.*, ROW_NUMBER() OVER (PARTITION BY ev."u" ORDER BY ev."t", ev."id") AS "rn" FROM "ev" ev WHERE ev."s1" = 1) x${userJoins}
      WHERE x."rn" = 1 AND ${userFilters})`);
  for (let k = 2; k <= q.steps.length; k++) {
    ctes.push(`"r${k}" ${MATERIALIZED} (SELECT x."u", x."bd", x."t0", x."t", x."id", x."diff" FROM (
      SELECT p."u", p."bd", p."t0", ev."t", ev."id", ev."t" - p."t" AS "diff", ROW_NUMBER() OVER (PARTITION BY p."u" ORDER BY ev."t", ev."id") AS "rn"
      FROM "r${k - 1}" p JOIN "ev" ev ON ev."u" = p."u" AND ev."s${k}" = 1 AND (ev."t" > p."t" OR (ev."t" = p."t" AND ev."id" <> p."id"))
        AND ev."t" <= p."t0" + ${b.int(q.conversionWindowMs)}) x WHERE x."rn" = 1)`);
  }
  const reached = q.steps.map((_, i) => `SELECT ${i + 1} AS "k", r."bd", r."diff" FROM "r${i + 1}" r`).join(" UNION ALL ");
  const sql = `WITH ${ctes.join(", ")}, "reached" AS (${reached}),
    "ranked" AS (SELECT z."k", z."bd", z."diff", ROW_NUMBER() OVER (PARTITION BY z."k", z."bd" ORDER BY z."diff") AS "rn", COUNT(*) OVER (PARTITION BY z."k", z."bd") AS "n" FROM "reached" z)
    SELECT y."k" AS "k", y."bd" AS "bd", MAX(y."n") AS "users", MAX(CASE WHEN y."rn" = (y."n" + 1) / 2 THEN y."diff" END) AS "median"
    FROM "ranked" y GROUP BY y."k", y."bd"`;
  return { sql: b.finish(sql), kind: bd.kind };
}

function stepsOf(count: number, byStep: Map<number, { users: number; median: number | null }>): FunnelStep[] {
  const first = byStep.get(1)?.users ?? 0;
  return Array.from({ length: count }, (_, i) => {
    const users = byStep.get(i + 1)?.users ?? 0;
    const previous = i === 0 ? users : (byStep.get(i)?.users ?? 0);
    return {
      step: i + 1,
      users,
      conversionFromFirst: first ? users / first : 0,
      conversionFromPrevious: previous ? users / previous : 0,
      medianMsFromPrevious: i === 0 ? null : (byStep.get(i + 1)?.median ?? null),
    };
  });
}

/** Values in code point order, nulls first (false before true). */
function compareValues(x: unknown, y: unknown): number {
  if (x === y) return 0;
  if (x === null) return -1;
  if (y === null) return 1;
  if (typeof x === "number" && typeof y === "number") return x - y;
  if (typeof x === "boolean") return Number(x) - Number(y);
  const [a, b] = [String(x), String(y)];
  // Code points, not UTF-16 units (they differ past U+FFFF).
  const ca = [...a].map((ch) => ch.codePointAt(0)!);
  const cb = [...b].map((ch) => ch.codePointAt(0)!);
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) if (ca[i] !== cb[i]) return ca[i]! - cb[i]!;
  return ca.length - cb.length;
}

export async function runFunnel(dialect: "sqlite" | "postgres", c: Checker, accountId: string, q: FunnelQuestion, users: UserContext): Promise<FunnelAnswer> {
  const b = new Builder(dialect, users);
  const { sql, kind } = statement(b, c, accountId, q);
  const budget = budgetOf({ windowMs: q.to - q.from, dimensions: q.breakdown ? 1 : 0, userValues: sql.sql.includes('"EndUser"') });
  const [rows] = await runStatements([sql], budget, { hashJoins: true });
  const groups = new Map<string, { value: unknown; byStep: Map<number, { users: number; median: number | null }> }>();
  for (const r of rows!) {
    const value = cell(r.bd, kind);
    const key = JSON.stringify(value);
    const g = groups.get(key) ?? groups.set(key, { value, byStep: new Map() }).get(key)!;
    g.byStep.set(Number(r.k), { users: Number(r.users), median: r.median === null ? null : Number(r.median) });
  }
  if (!q.breakdown) return { breakdown: null, steps: stepsOf(q.steps.length, groups.get("null")?.byStep ?? new Map()), groups: null };
  const sorted = [...groups.values()].sort((x, y) => compareValues(x.value, y.value));
  return { breakdown: q.breakdown.name, steps: null, groups: sorted.map((g) => ({ value: g.value, steps: stepsOf(q.steps.length, g.byStep) })) };
}
