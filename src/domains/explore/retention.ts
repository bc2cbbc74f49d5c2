// `retention`: cohorts by the period (in the time zone) of each end user's first start event in the
// window, and per later period whether they came back, in one statement: the cohorts (MIN per user),
// the periods of their return events (any time after, up to now: past endDate too), counted per
// cohort and period. Periods are the buckets of ./buckets.ts: the SQL shifts times to the zone's
// wall clock by the offsets worked out here and takes day numbers, Monday-weeks or calendar months.
import { clock } from "../../clock.js";
import { instantOf, labelOfKey, monthStart, nextLocal, offsetsOf } from "./buckets.js";
import type { Checker, Period, RetentionQuestion } from "./input.js";
import { budgetOf, runStatements } from "./run.js";
import { Builder, MATERIALIZED, type Statement, type UserContext } from "./sql.js";

export interface RetentionAnswer {
  period: Period;
  cohorts: { start: string; users: number; retained: number[] }[];
}

const DAY = 86_400_000;

/** The highest bit of a period mask (the sign bit stays clear). */
const MAX_BIT = 61;

/**
 * Whether PostgreSQL can keep each user's return periods as bits of one BIGINT: the periods a
 * cohort's retention reads (its own, at most the window's periods from the first, plus `periods`)
 * are bits 1 to MAX_BIT. The window's periods are bounded generously (a day may be 23 or 25 hours,
 * or skipped in a zone's change of side of the date line).
 */
function masks(q: RetentionQuestion): boolean {
  const days = Math.ceil((q.to - q.from) / DAY) + 2;
  const spanned = q.period === "day" ? days : q.period === "week" ? Math.ceil(days / 7) + 1 : Math.ceil(days / 28) + 2;
  return spanned + q.periods <= MAX_BIT;
}

function statement(b: Builder, c: Checker, accountId: string, q: RetentionQuestion, now: number): Statement {
  // Return events count up to now (and the few seconds of clock skew ingestion allows past it).
  const offsets = offsetsOf(q.from, Math.max(q.to, now) + DAY, q.timeZone);
  const key = (time: string) => b.bucketKey(b.local(time, offsets), q.period);
  const acct = b.p(accountId);
  // The cohorts: each end user's first start event in the window (the start types' stretch of the
  // (accountId, type, time) index when the start event names its types), then the user filters,
  // decided once per user (they read only the user: user fields and segments).
  const start = b.where(q.startEvent, c);
  const startTypes = b.typeFilter([q.startEvent]);
  const userFilters = b.where(q.filters, c);
  const joins = b.joinsOn(acct, 'x."u"');
  const back = b.where(q.returnEvent, c);
  // Keys are day numbers for days and weeks (a week's is its Monday's), months for months.
  const per = q.period === "week" ? 7 : 1;
  const cohorts = `WITH "c" ${MATERIALIZED} (SELECT x."u" AS "u", ${key('x."first"')} AS "ck" FROM (
        SELECT ${b.userKey('e."endUserId"')} AS "u", MIN(e."time") AS "first" FROM "Event" e
        WHERE e."accountId" = ${acct} AND e."time" >= ${b.p(q.from)} AND e."time" < ${b.p(q.to)} AND e."endUserId" IS NOT NULL${startTypes} AND ${start}
        GROUP BY e."endUserId") x${joins} WHERE ${userFilters})
    SELECT c."ck" AS "ck", 0 AS "k", COUNT(*) AS "n" FROM "c" c GROUP BY c."ck"
    UNION ALL`;
  const returns = `FROM "Event" e
          WHERE e."accountId" = ${acct} AND e."time" >= ${b.p(q.from)} AND e."endUserId" IS NOT NULL${b.typeFilter([q.returnEvent])} AND ${back}`;
  if (b.dialect === "postgres" && masks(q)) {
    // (PostgreSQL) The return events as one bit mask per end user: bit i set when they have one in
    // the i-th period from the window's first (`base`), a hash of one entry per end user (50,000
    // entries for 3M events, where (user, period) was 250,000: a hash that size missed the CPU's
    // caches on every event, 4.5 s of the 5.7 under load; per user, and in parallel workers, 1.6 s).
    // Cohort users are retained in period k when the bit of their cohort's period + k is set.
    const base = key(`CAST(${b.p(q.from)} AS BIGINT)`);
    const sql = `${cohorts}
    SELECT c."ck", g."k", COUNT(*) FROM "c" c JOIN (
      SELECT x."u" AS "u", bit_or(CASE WHEN x."i" BETWEEN 1 AND ${MAX_BIT} THEN CAST(1 AS BIGINT) << CAST(x."i" AS INTEGER) ELSE 0 END) AS "mask" FROM (
        SELECT ${b.userKey('e."endUserId"')} AS "u", (${key('e."time"')} - ${base}) / ${per} AS "i" ${returns}) x
      GROUP BY x."u") y ON y."u" = c."u"
      CROSS JOIN generate_series(1, ${b.int(q.periods)}) g("k")
    WHERE (y."mask" >> CAST((c."ck" - ${base}) / ${per} + g."k" AS INTEGER)) & 1 = 1
    GROUP BY c."ck", g."k"`;
    return b.finish(sql);
  }
  // The returns: the return events from the window's start on (the return types' stretch of the
  // index when named), first made distinct per end user and period (a GROUP BY in a subquery: a hash
  // of about one entry per user and period instead of one per event), then joined to the cohorts by
  // end user: a hash join on PostgreSQL, an automatic index on the materialized cohorts on SQLite.
  // Each (user, period) is then one row, so the counts need no DISTINCT. (The same grouping in a CTE
  // of its own left SQLite without that index: it then compared every cohort user with every return
  // period, past the timeout at 400,000 events: test/explore-cost.test.ts.) Joining every event to
  // the cohorts first hashed all of them (the planner estimates a materialized CTE at a few rows)
  // and made (user, cohort, period) distinct after the join: 3 s of 3.7 over 3M events.
  const sql = `${cohorts}
    SELECT r."ck", r."k", COUNT(*) FROM (
      SELECT c."ck" AS "ck", (y."rk" - c."ck") / ${per} AS "k" FROM (
        SELECT x."u" AS "u", x."rk" AS "rk" FROM (
          SELECT ${b.userKey('e."endUserId"')} AS "u", ${key('e."time"')} AS "rk" ${returns}) x
        GROUP BY x."u", x."rk") y
      JOIN "c" c ON c."u" = y."u") r
    WHERE r."k" >= 1 AND r."k" <= ${b.int(q.periods)} GROUP BY r."ck", r."k"`;
  return b.finish(sql);
}

/**
 * What a retention question reads: its start events in the window and its return events from
 * startDate up to now (past endDate too), so a window far in the past reads every event since: the
 * span priced before it runs (schema.ts, the budget's cost) and given the time to run here.
 */
export const retentionReadMs = (q: Pick<RetentionQuestion, "from" | "to">, now: number): number => Math.max(q.to, now) - q.from;

/** A cohort key's local start (as UTC ms), the inverse of keyOf on period starts. */
const localOfKey = (key: number, period: Period) => (period === "month" ? monthStart(key) : key * DAY);

export async function runRetention(
  dialect: "sqlite" | "postgres",
  c: Checker,
  accountId: string,
  q: RetentionQuestion,
  users: UserContext,
): Promise<RetentionAnswer> {
  const now = clock.now().getTime();
  const b = new Builder(dialect, users, c.style);
  const sql = statement(b, c, accountId, q, now);
  const budget = budgetOf({ windowMs: retentionReadMs(q, now), dimensions: 0, userValues: sql.sql.includes('"EndUser"') });
  const [rows] = await runStatements([sql], budget, { hashJoins: true, hashAggregates: true });
  const cohorts = new Map<number, number[]>();
  for (const r of rows!) {
    const ck = Number(r.ck);
    const list = cohorts.get(ck) ?? cohorts.set(ck, []).get(ck)!;
    list[Number(r.k)] = Number(r.n);
  }
  return {
    period: q.period,
    cohorts: [...cohorts.entries()]
      .sort(([x], [y]) => x - y)
      .map(([ck, counts]) => {
        const local = localOfKey(ck, q.period);
        // Periods that have not begun yet are left out.
        let begun = 0;
        while (begun < q.periods && instantOf(nextLocal(local, q.period, begun + 1), q.timeZone) <= now) begun++;
        return {
          start: labelOfKey(ck, q.period),
          users: counts[0] ?? 0,
          retained: Array.from({ length: begun + 1 }, (_, k) => counts[k] ?? 0),
        };
      }),
  };
}
