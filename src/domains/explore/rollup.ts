// `query` from the reports' rollups (src/domains/reports/rollups.ts) where a question allows it:
// events and distinct end users per UTC day and event type. Such a question reads a few rows per
// day and type instead of every event of its window; the answer is the raw path's (./query.ts),
// exactly and whatever the rollup worker's lag:
//
// - events per day and type: "EventRollup"'s day totals (grain TOTALS; summed over domains and
//   search outcomes), plus the events above the account's watermark (not counted yet), read raw;
// - distinct end users per day and type: "EventActiveUserCount", plus the end users of the events
//   above the watermark that have no per-user row ("EventUserRollup") of that day and type yet (a
//   primary-key probe each); per day over every type, its rows of type ANY_TYPE and the same probe
//   without the type;
// - the window's distinct end users (totals): for a window that reaches past the latest counted
//   event (the usual one), the end users whose latest counted event of any type is on one of its
//   whole days ("EventLastSeenCount" of ANY_TYPE, a row per day) plus the end users of the start
//   day's partial events and of the events not counted yet whose latest counted event is earlier
//   ("EventUserLastSeen", a primary-key probe each), as the reports' distinctUserSource counts per
//   key; otherwise, and with a type filter, COUNT(DISTINCT) over the per-user rows of its whole days
//   ("EventUserRollup"), the events above the watermark and the partial days' events;
// - a partial day at the start of the window is read raw; a partial day at its end (today, for a
//   window up to now) from its rollup rows when no counted event lies at or after the window's end
//   (they then hold exactly the day's events before it), else raw. Decided in the statement.
//
// Rollups, watermark and events are read in one statement (and the two statements of a question in
// one snapshot: ./run.ts), so an event is counted exactly once, by the rollups or raw.
import type { Prisma } from "../../generated/sqlite/client.js";
import { ANY_TYPE, KEYS, TOTALS } from "../reports/rollups.js";
import { aboveWatermark, countedAfterEnd, type SourceParams } from "../reports/sources.js";
import { offsetsOf } from "./buckets.js";
import type { Checker, Metric, QueryQuestion } from "./input.js";
import { Builder } from "./sql.js";

const DAY = 86_400_000;
const ALL_TYPES = Object.keys(KEYS);
const ROLLUP_METRICS: readonly Metric[] = ["events", "users", "eventsPerUser"];

/** A fragment built with the reports' sql tag, as text of this builder (its values bound in order). */
function inline(b: Builder, s: Prisma.Sql): string {
  return s.strings.reduce((out, text, i) => out + text + (i < s.values.length ? b.p(s.values[i]) : ""), "");
}

/** The question's grouping by event type, and whether it counts end users. */
const shape = (q: QueryQuestion) => ({ byType: q.dimensions.length === 1, users: q.metrics.some((m) => m !== "events") });

/**
 * Whether the rollups answer the question over [from, to): metrics events, users, eventsPerUser;
 * no dimension or event:type; `is` / `isNot` conditions on event:type only; by UTC day or no
 * interval, in a zone whose offset is 0 over the window (UTC and its aliases); a window that holds
 * a UTC midnight. Distinct end users need more: per day and type or per day over every type (with
 * a type filter, per day only by type: the rollups do not count end users over a set of types), or
 * over the whole window without a type dimension (the totals).
 */
export function rollupAnswers(q: QueryQuestion, from: number, to: number): boolean {
  if (!q.metrics.every((m) => ROLLUP_METRICS.includes(m))) return false;
  if (q.interval !== null && q.interval !== "day") return false;
  if (q.dimensions.length > 1 || (q.dimensions.length === 1 && q.dimensions[0]!.name !== "event:type")) return false;
  if (!q.filters.every((c) => (c.op === "is" || c.op === "isNot") && c.dim.name === "event:type")) return false;
  if (from >= to || Math.ceil(from / DAY) > Math.floor(to / DAY)) return false;
  const offsets = offsetsOf(from, to, q.timeZone);
  if (offsets.length !== 1 || offsets[0]!.offset !== 0) return false;
  const { byType, users } = shape(q);
  if (users && (byType ? q.interval === null : q.filters.length > 0)) return false;
  return true;
}

/**
 * The two statements' bodies, as ./query.ts's raw ones: the rows (columns c0 = the day when by
 * day, then c1 / c0 = the type when by type, then m0… the metrics), and the totals (m0…).
 * `watermark`: the account's watermark read before (a hint for the planner: see SourceParams).
 */
export function rollupBodies(
  b: Builder,
  c: Checker,
  accountId: string,
  q: QueryQuestion,
  from: number,
  to: number,
  watermark: number,
): { rows: string; totals: string } {
  const { byType, users } = shape(q);
  const acct = b.p(accountId);
  const p: SourceParams = { accountId, from: new Date(from), to: new Date(to), includeDomains: [], excludeDomains: [], flowId: null, watermark };
  // The types the conditions admit, spelt out: every read walks the (accountId, type, …) keys.
  const admitted = Builder.typesOf(q.filters);
  const types = admitted ? ALL_TYPES.filter((t) => admitted.includes(t)) : ALL_TYPES;
  const typeIn = types.length ? ` AND e."type" IN (${types.map((t) => b.p(t)).join(", ")})` : " AND 1 = 0";
  const where = `${typeIn} AND ${b.where(q.filters, c)}`;
  const d0 = Math.ceil(from / DAY);
  const d1 = Math.floor(to / DAY);
  // Whether a counted event lies at or after the window's end (any type): then the end day's rollup
  // rows may hold events past the window, and the window's end users are not a sum of day counts.
  const later = inline(b, countedAfterEnd(p, []));
  const tail = inline(b, aboveWatermark("e", p));
  const user = b.userKey('e."endUserId"');
  // The events above the watermark by the (accountId, id, type) index, from the watermark on. SQLite
  // chose the (accountId, type, time, endUserId) index instead, covering and so "cheaper": every
  // event of the window's index range, 1M at the bench's size (~250 ms for no row). PostgreSQL sees
  // the watermark (SourceParams) and walks the id index.
  const above = b.eventsInIdOrder();
  const day = `e."time" / ${DAY}`;
  const t = (expr: string) => (byType ? `, ${expr} AS "t"` : "");
  const tg = (expr: string) => (byType ? `, ${expr}` : "");

  /**
   * The matching events per day (and type) as rows of "k" (UTC day), "t" (type, by type), "n"
   * (events) and with `withUsers` "u" (distinct end users: the branches' sum per day and type is
   * the day's and type's count).
   */
  const sourceOf = (withUsers: boolean) => {
    const u = (expr: string) => (withUsers ? `, ${expr} AS "u"` : "");
    /** Counted events and end users of whole days [a, b1), from the rollups. */
    const counted = (a: number, b1: number, only = "") => [
      `SELECT e."bucket" / 24 AS "k"${t(`e."type"`)}, SUM(e."n") AS "n"${u("0")} FROM "EventRollup" e
        WHERE e."accountId" = ${acct}${where} AND e."grain" = ${TOTALS} AND e."bucket" >= ${b.p(a * 24)} AND e."bucket" < ${b.p(b1 * 24)}${only}
        GROUP BY e."bucket"${tg(`e."type"`)}`,
      ...(!withUsers
        ? []
        : byType
          ? [
              `SELECT e."day" AS "k", e."type" AS "t", 0 AS "n", e."users" AS "u" FROM "EventActiveUserCount" e
        WHERE e."accountId" = ${acct}${where} AND e."day" >= ${b.p(a)} AND e."day" < ${b.p(b1)}${only}`,
            ]
          : [
              `SELECT e."day" AS "k", 0 AS "n", e."users" AS "u" FROM "EventActiveUserCount" e
        WHERE e."accountId" = ${acct} AND e."type" = ${b.p(ANY_TYPE)} AND e."day" >= ${b.p(a)} AND e."day" < ${b.p(b1)}${only}`,
            ]),
    ];
    /**
     * Events of [a, b1) above the watermark: counted per day (and type), and their end users with
     * no per-user row of that day (and type) yet: new to the rollups' count. One pass over them.
     */
    const uncounted = (a: number, b1: number, only = "") => {
      const range = `e."accountId" = ${acct}${where} AND e."time" >= ${b.p(a)} AND e."time" < ${b.p(b1)}${tail}${only}`;
      if (!withUsers) return `SELECT ${day} AS "k"${t(`e."type"`)}, COUNT(*) AS "n" FROM ${above} WHERE ${range} GROUP BY ${day}${tg(`e."type"`)}`;
      const probe = `SELECT 1 FROM "EventUserRollup" r WHERE r."accountId" = ${acct} AND r."endUserId" = x."v" AND r."day" = x."k"${byType ? ` AND r."type" = x."t"` : ""}`;
      return `SELECT x."k" AS "k"${t(`x."t"`)}, SUM(x."n") AS "n", SUM(CASE WHEN x."v" IS NOT NULL AND NOT EXISTS (${probe}) THEN 1 ELSE 0 END) AS "u"
        FROM (SELECT ${day} AS "k"${t(`e."type"`)}, ${user} AS "v", COUNT(*) AS "n" FROM ${above} WHERE ${range} GROUP BY ${day}${tg(`e."type"`)}, e."endUserId") x
        GROUP BY x."k"${tg(`x."t"`)}`;
    };
    /** Every event of [a, b1) (a partial day), read raw. */
    const rawPart = (a: number, b1: number, only = "") =>
      `SELECT ${day} AS "k"${t(`e."type"`)}, COUNT(*) AS "n"${u(`COUNT(DISTINCT e."endUserId")`)} FROM "Event" e
        WHERE e."accountId" = ${acct}${where} AND e."time" >= ${b.p(a)} AND e."time" < ${b.p(b1)}${only} GROUP BY ${day}${tg(`e."type"`)}`;
    const branches: string[] = [];
    if (from < d0 * DAY) branches.push(rawPart(from, d0 * DAY));
    if (d0 < d1) branches.push(...counted(d0, d1), uncounted(d0 * DAY, d1 * DAY));
    // The end day from its rollup rows when they hold no event past the window's end, else raw.
    // Each branch carries that as a one-time condition: the other branches are not read.
    if (to > d1 * DAY)
      branches.push(...counted(d1, d1 + 1, ` AND NOT ${later}`), uncounted(d1 * DAY, to, ` AND NOT ${later}`), rawPart(d1 * DAY, to, ` AND ${later}`));
    return `(${branches.join("\n      UNION ALL\n      ")}) s`;
  };

  const metric = (m: Metric, n: string, us: string) =>
    m === "events" ? n : m === "users" ? us : `CASE WHEN ${us} = 0 THEN 0 ELSE CAST(${n} AS DOUBLE PRECISION) / CAST(${us} AS DOUBLE PRECISION) END`;
  const metrics = (n: string, us: string) => q.metrics.map((m, i) => `${metric(m, n, us)} AS "m${i}"`).join(", ");
  const events = `(SELECT COALESCE(SUM(s."n"), 0) AS "n" FROM ${sourceOf(false)}) tn`;
  let totals: string;
  if (!users) totals = `SELECT ${metrics(`tn."n"`, "0")} FROM ${events}`;
  else {
    /**
     * The window's distinct end users from the per-user rows of its whole days ("EventUserRollup",
     * every type), the events above the watermark in those days, and the partial days at its edges
     * read raw: where EVENTS_RETENTION_DAYS removed the whole days' events, the totals still count
     * the end users the rows count (the rows come from the rollups too), and only the partial edge
     * days need raw events, as in the rows and the reports.
     */
    const countedUsers = (only = "") => {
      const start = d0 * DAY;
      const end = d1 * DAY;
      const parts = [
        ...(from < start
          ? [`SELECT ${user} AS "v" FROM "Event" e WHERE e."accountId" = ${acct}${where} AND e."time" >= ${b.p(from)} AND e."time" < ${b.p(start)}`]
          : []),
        ...(d0 < d1
          ? [
              `SELECT ${user} AS "v" FROM "EventUserRollup" e WHERE e."accountId" = ${acct}${where} AND e."day" >= ${b.p(d0)} AND e."day" < ${b.p(d1)}`,
              `SELECT ${user} AS "v" FROM ${above} WHERE e."accountId" = ${acct}${where} AND e."time" >= ${b.p(start)} AND e."time" < ${b.p(end)}${tail}`,
            ]
          : []),
        ...(to > end
          ? [`SELECT ${user} AS "v" FROM "Event" e WHERE e."accountId" = ${acct}${where} AND e."time" >= ${b.p(end)} AND e."time" < ${b.p(to)}`]
          : []),
      ];
      return `SELECT COUNT(DISTINCT x."v") AS "u" FROM (${parts.join(" UNION ALL ")}) x WHERE true${only}`;
    };
    let windowUsers: string;
    if (q.filters.length) windowUsers = countedUsers();
    else {
      // End users whose latest counted event is on a whole day of the window (none is later: see
      // `later`), and the others of the start day's partial events and of the events not counted yet,
      // each once (DISTINCT in each part: without a partial start day the UNION below has one part,
      // and an end user new to the rollups with several uncounted events was counted once per event).
      const start = d0 * DAY;
      const edge = [
        ...(from < start
          ? [
              `SELECT DISTINCT e."endUserId" AS "v" FROM "Event" e WHERE e."accountId" = ${acct}${typeIn} AND e."time" >= ${b.p(from)} AND e."time" < ${b.p(start)}`,
            ]
          : []),
        `SELECT DISTINCT e."endUserId" AS "v" FROM ${above} WHERE e."accountId" = ${acct}${typeIn} AND e."time" >= ${b.p(start)} AND e."time" < ${b.p(to)}${tail}`,
      ];
      const fast = `SELECT c."users" AS "u" FROM "EventLastSeenCount" c
          WHERE c."accountId" = ${acct} AND c."type" = ${b.p(ANY_TYPE)} AND c."key" = ${b.p(ANY_TYPE)} AND c."day" >= ${b.p(d0)}
        UNION ALL
        SELECT 1 FROM (${edge.join(" UNION ")}) v
          WHERE v."v" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "EventUserLastSeen" ls WHERE ls."accountId" = ${acct} AND ls."type" = ${b.p(ANY_TYPE)}
            AND ls."key" = ${b.p(ANY_TYPE)} AND ls."endUserId" = v."v" AND ls."lastTime" >= ${b.p(start)})`;
      windowUsers = `SELECT COALESCE(SUM(f."u"), 0) AS "u" FROM (${fast}) f WHERE NOT ${later}
        UNION ALL
        ${countedUsers(` AND ${later}`)}`;
    }
    totals = `SELECT ${metrics(`tn."n"`, `tu."u"`)} FROM ${events} CROSS JOIN (SELECT SUM(w."u") AS "u" FROM (${windowUsers}) w) tu`;
  }
  // No interval and no type: one row over every matching event, the totals (as the raw path).
  const groups = [...(q.interval ? [`s."k"`] : []), ...(byType ? [`s."t"`] : [])];
  const rows = groups.length
    ? `SELECT ${groups.map((g, i) => `${g} AS "c${i}"`).join(", ")}, ${metrics(`SUM(s."n")`, `SUM(s."u")`)} FROM ${sourceOf(users)} GROUP BY ${groups.join(", ")}`
    : totals;
  return { rows, totals };
}
