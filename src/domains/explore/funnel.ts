// `funnel`: how many end users reach each step, in one statement whose shape is fixed by the
// question (at most 10 steps), never by the data: step 1 is each user's earliest matching event in
// the window; step k each user's earliest event matching it at or after the time step k−1 was
// reached (another event than that one) and no later than entry + conversionWindowMs. Ties at one
// instant go by event id, the order the events were stored in. When no event can match two
// consecutive steps (each names its event types, none in both) ties change nothing, and each step
// is a MIN(time) per user (byTimeAlone): on PostgreSQL a chain of subqueries reading each step's
// events from the index (chained), on SQLite a CTE per step over the events of all steps read once.
// Otherwise a CTE per step takes each user's earliest event by ROW_NUMBER. Counts and lower medians
// per step and breakdown value come last.
import type { Checker, Condition, FunnelQuestion, ValueKind } from "./input.js";
import { budgetOf, runStatements } from "./run.js";
import { Builder, cell, compareCells, MATERIALIZED, type Statement, type UserContext, userOnly } from "./sql.js";

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

/**
 * Whether each step's event can be found by its time alone: every step names its event types, no
 * event type is in two consecutive steps (so no event matches both, and "another event than the
 * previous step's" holds of every candidate), and no event breakdown reads the entry event itself.
 * Then ties at one instant do not matter (any of them gives the same times), and each step is each
 * user's MIN(time) over a hash of one entry per user instead of a sort of their events.
 */
function byTimeAlone(q: FunnelQuestion): boolean {
  if (q.breakdown?.kind === "event") return false;
  const types = q.steps.map((s) => Builder.typesOf(s));
  return types.every((t, i) => t !== null && (i === 0 || !t.some((x) => types[i - 1]!.includes(x))));
}

function statement(b: Builder, c: Checker, accountId: string, q: FunnelQuestion): { sql: Statement; kind: ValueKind } {
  const acct = b.p(accountId);
  // Conditions on the end user alone (user fields, segments) hold for all of a user's events or
  // none: they are decided once per user who entered, not per event.
  const perUser = userOnly(q.filters);
  if (byTimeAlone(q) && b.dialect === "postgres") return chained(b, c, acct, q, perUser);
  const eventBd = q.breakdown?.kind === "event" ? b.dim(q.breakdown, c) : null;
  const flags = q.steps.map((s, i) => `CASE WHEN ${b.where(s, c)} THEN 1 ELSE 0 END AS "s${i + 1}"`);
  const filters = perUser ? "1 = 1" : b.where(q.filters, c);
  const evJoins = b.joins();
  // Only the events that match some step matter; with a type in each step's conditions the
  // database reads just those types' stretch of the (accountId, type, time) index.
  const any = q.steps.map((s) => `(${b.where(s, c)})`).join(" OR ");
  const ev = `SELECT e."id" AS "id", e."time" AS "t", ${b.userKey('e."endUserId"')} AS "u", ${eventBd ? eventBd.expr : "NULL"} AS "bd", ${flags.join(", ")}
    FROM "Event" e${evJoins} WHERE e."accountId" = ${acct} AND e."time" >= ${b.p(q.from)} AND e."time" < ${b.p(q.to)}
      AND e."endUserId" IS NOT NULL${b.typeFilter(q.steps)} AND (${any}) AND ${filters}`;
  // The entrants: each user's earliest step-1 event, then the user parts (their breakdown value,
  // the per-user filters) joined once per entrant.
  const userBd = q.breakdown?.kind === "user" ? b.dim(q.breakdown, c) : null;
  const userFilters = perUser ? b.where(q.filters, c) : "1 = 1";
  const userJoins = b.joinsOn(acct, 'x."u"');
  const bd = eventBd ?? userBd ?? { expr: "NULL", kind: "text" as ValueKind };
  const ctes = [`"ev" ${MATERIALIZED} (${ev})`];
  const window = b.int(q.conversionWindowMs);
  if (byTimeAlone(q)) {
    // (SQLite) Each step by its time alone: the earliest step-1 time per user, then for each next
    // step the earliest matching time at or after the previous step's, within the window.
    ctes.push(`"r1" ${MATERIALIZED} (SELECT x."u" AS "u", ${userBd ? userBd.expr : "NULL"} AS "bd", x."t" AS "t0", x."t" AS "t", CAST(NULL AS BIGINT) AS "diff" FROM (
        SELECT ev."u" AS "u", MIN(ev."t") AS "t" FROM "ev" ev WHERE ev."s1" = 1 GROUP BY ev."u") x${userJoins}
        WHERE ${userFilters})`);
    for (let k = 2; k <= q.steps.length; k++)
      ctes.push(`"r${k}" ${MATERIALIZED} (SELECT p."u" AS "u", p."bd" AS "bd", p."t0" AS "t0", MIN(ev."t") AS "t", MIN(ev."t") - p."t" AS "diff"
        FROM "r${k - 1}" p JOIN "ev" ev ON ev."u" = p."u" AND ev."s${k}" = 1 AND ev."t" >= p."t" AND ev."t" <= p."t0" + ${window}
        GROUP BY p."u", p."bd", p."t0", p."t")`);
  } else {
    ctes.push(`"r1" ${MATERIALIZED} (SELECT x."u" AS "u", ${userBd ? userBd.expr : 'x."bd"'} AS "bd", x."t" AS "t0", x."t" AS "t", x."id" AS "id", CAST(NULL AS BIGINT) AS "diff" FROM (
      SELECT ev.*, ROW_NUMBER() OVER (PARTITION BY ev."u" ORDER BY ev."t", ev."id") AS "rn" FROM "ev" ev WHERE ev."s1" = 1) x${userJoins}
      WHERE x."rn" = 1 AND ${userFilters})`);
    for (let k = 2; k <= q.steps.length; k++) {
      ctes.push(`"r${k}" ${MATERIALIZED} (SELECT x."u", x."bd", x."t0", x."t", x."id", x."diff" FROM (
      SELECT p."u", p."bd", p."t0", ev."t", ev."id", ev."t" - p."t" AS "diff", ROW_NUMBER() OVER (PARTITION BY p."u" ORDER BY ev."t", ev."id") AS "rn"
      FROM "r${k - 1}" p JOIN "ev" ev ON ev."u" = p."u" AND ev."s${k}" = 1 AND (ev."t" > p."t" OR (ev."t" = p."t" AND ev."id" <> p."id"))
        AND ev."t" <= p."t0" + ${window}) x WHERE x."rn" = 1)`);
    }
  }
  const reached = q.steps.map((_, i) => `SELECT ${i + 1} AS "k", r."bd", r."diff" FROM "r${i + 1}" r`).join(" UNION ALL ");
  const bdKey = bd.kind === "text" ? b.userKey('z."bd"') : 'z."bd"';
  const sql = `WITH ${ctes.join(", ")}, "reached" AS (${reached}),
    "ranked" AS (SELECT z."k", z."bd", z."diff", ROW_NUMBER() OVER (PARTITION BY z."k", ${bdKey} ORDER BY z."diff") AS "rn", COUNT(*) OVER (PARTITION BY z."k", ${bdKey}) AS "n" FROM "reached" z)
    SELECT y."k" AS "k", y."bd" AS "bd", MAX(y."n") AS "users", MAX(CASE WHEN y."rn" = (y."n" + 1) / 2 THEN y."diff" END) AS "median"
    FROM "ranked" y GROUP BY y."k", y."bd"`;
  return { sql: b.finish(sql), kind: bd.kind };
}

/**
 * (PostgreSQL) A funnel whose steps go by time alone (byTimeAlone), in one pass per step with no
 * materialized events: each step's events are read straight from the (accountId, type, time) index
 * (which carries the end user: an index-only scan), step 1 as each user's earliest time (a hash
 * aggregate), and each next step joined to the users of the step before with a LEFT JOIN, so the
 * last level holds one row per entrant with the time of every step reached (null from the first
 * step missed on). Every level is a subquery the planner sees the size of (a materialized CTE is
 * estimated at a row or two, and its join would hash the events instead of the users). The user
 * parts are joined once per entrant at the end; counts and lower medians (percentile_disc(0.5): the
 * first value at or past half of them) per breakdown value, then one row per step.
 */
function chained(b: Builder, c: Checker, acct: string, q: FunnelQuestion, perUser: boolean): { sql: Statement; kind: ValueKind } {
  const base = `e."accountId" = ${acct} AND e."time" >= ${b.p(q.from)} AND e."time" < ${b.p(q.to)} AND e."endUserId" IS NOT NULL`;
  const stepEvents = (step: Condition[]) => {
    const cond = b.where(step, c);
    const filters = perUser ? "1 = 1" : b.where(q.filters, c);
    const joins = b.joins();
    return `SELECT ${b.userKey('e."endUserId"')} AS "u", e."time" AS "t" FROM "Event" e${joins} WHERE ${base}${b.typeFilter([step])} AND ${cond} AND ${filters}`;
  };
  const window = b.int(q.conversionWindowMs);
  let chain = `SELECT x."u" AS "u", MIN(x."t") AS "t1" FROM (${stepEvents(q.steps[0]!)}) x GROUP BY x."u"`;
  for (let k = 2; k <= q.steps.length; k++) {
    const before = Array.from({ length: k - 1 }, (_, i) => `s."t${i + 1}"`).join(", ");
    chain = `SELECT s."u" AS "u", ${before}, MIN(x."t") AS "t${k}" FROM (${chain}) s
      LEFT JOIN (${stepEvents(q.steps[k - 1]!)}) x ON x."u" = s."u" AND x."t" >= s."t${k - 1}" AND x."t" <= s."t1" + ${window}
      GROUP BY s."u", ${before}`;
  }
  const bd = q.breakdown ? b.dim(q.breakdown, c) : null;
  const userFilters = perUser ? b.where(q.filters, c) : "1 = 1";
  const userJoins = b.joinsOn(acct, 'f."u"');
  const counts = [`COUNT(*) AS "n1"`];
  for (let k = 2; k <= q.steps.length; k++)
    counts.push(`COUNT(f."t${k}") AS "n${k}"`, `percentile_disc(0.5) WITHIN GROUP (ORDER BY f."t${k}" - f."t${k - 1}") AS "m${k}"`);
  const grouped = `SELECT ${bd ? bd.expr : "NULL"} AS "bd", ${counts.join(", ")} FROM (${chain}) f${userJoins} WHERE ${userFilters}${bd ? ` GROUP BY ${bd.expr}` : ""}`;
  const perStep = q.steps.map((_, i) => (i === 0 ? `(1, a."n1", CAST(NULL AS BIGINT))` : `(${i + 1}, a."n${i + 1}", a."m${i + 1}")`));
  const sql = `SELECT v."k" AS "k", a."bd" AS "bd", v."users" AS "users", v."median" AS "median"
    FROM (${grouped}) a CROSS JOIN LATERAL (VALUES ${perStep.join(", ")}) v("k", "users", "median")`;
  return { sql: b.finish(sql), kind: bd?.kind ?? "text" };
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

export async function runFunnel(dialect: "sqlite" | "postgres", c: Checker, accountId: string, q: FunnelQuestion, users: UserContext): Promise<FunnelAnswer> {
  const b = new Builder(dialect, users, c.style);
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
  const sorted = [...groups.values()].sort((x, y) => compareCells(x.value, y.value));
  return { breakdown: q.breakdown.name, steps: null, groups: sorted.map((g) => ({ value: g.value, steps: stepsOf(q.steps.length, g.byStep) })) };
}
