// What the reports aggregate: event-shaped rows with a weight `n`, assembled from the rollups for
// the whole days and hours of the window, from the raw events above the rollups' watermark for the
// same days and hours (those the rollup worker has not counted yet), and from the raw events for
// the window's partial edges, so that summing `n` (and counting distinct end users) gives exactly
// what counting the window's raw events gives. `raw` mode reads only raw events
// (test/report-rollups.test.ts compares the two).
import { empty, join, raw, sqltag as sql } from "@prisma/client/runtime/client";
import type { Prisma } from "../../generated/sqlite/client.js";
import {
  ALL_DOMAINS,
  type DistinctKey,
  distinctKeyExpr,
  KEYS,
  NARROW,
  ROLLUP_KEYS,
  type RollupKey,
  rollupExpr,
  TOTALS,
  USER_KEYS,
  type UserKey,
  userExpr,
} from "./rollups.js";

const HOUR = 3_600_000;
const DAY = 86_400_000;

export interface SourceParams {
  accountId: string;
  from: Date;
  to: Date;
  includeDomains: string[];
  excludeDomains: string[];
  /** Set on the flow reports: only this flow's events. */
  flowId: string | null;
  /** Read raw events only (the reference computation). */
  raw?: boolean;
  /**
   * The account's rollup watermark as read just before the statement (0 if unknown). The statement
   * reads the watermark again itself, in the snapshot it reads the rollups in, and counts raw the
   * events above it; this earlier value (never above that one: it only grows) lets the planner see
   * that few ids are concerned and walk the (accountId, id, type) index from it (the type read from the index).
   */
  watermark?: number;
}

/** Events the rollups do not count yet: above the watermark the statement sees. */
export const aboveWatermark = (alias: string, p: SourceParams) =>
  sql` AND ${raw(alias)}."id" > ${p.watermark ?? 0} AND ${raw(alias)}."id" > (SELECT COALESCE(MAX(w."eventId"), 0) FROM "RollupWatermark" w WHERE w."accountId" = ${p.accountId})`;

type Range = [number, number];

/** A window [from, to) (ms) as whole UTC days, whole hours outside those days, and partial hours at the edges. */
export function hourSegments(from: number, to: number): { days: Range | null; hours: Range[]; raw: Range[] } {
  const h0 = Math.ceil(from / HOUR);
  const h1 = Math.floor(to / HOUR);
  if (h0 >= h1) return { days: null, hours: [], raw: from < to ? [[from, to]] : [] };
  const rawEdges = (
    [
      [from, h0 * HOUR],
      [h1 * HOUR, to],
    ] as Range[]
  ).filter(([a, b]) => a < b);
  const d0 = Math.ceil(from / DAY);
  const d1 = Math.floor(to / DAY);
  if (d0 >= d1) return { days: null, hours: [[h0, h1]], raw: rawEdges };
  const hours = (
    [
      [h0, d0 * 24],
      [d1 * 24, h1],
    ] as Range[]
  ).filter(([a, b]) => a < b);
  return { days: [d0, d1], hours, raw: rawEdges };
}

/** A window [from, to) (ms) as whole UTC days and the partial days at its edges. */
export function daySegments(from: number, to: number): { days: Range | null; raw: Range[] } {
  const d0 = Math.ceil(from / DAY);
  const d1 = Math.floor(to / DAY);
  if (d0 >= d1) return { days: null, raw: from < to ? [[from, to]] : [] };
  return {
    days: [d0, d1],
    raw: (
      [
        [from, d0 * DAY],
        [d1 * DAY, to],
      ] as Range[]
    ).filter(([a, b]) => a < b),
  };
}

/**
 * Every event type: "all types" is spelt out, so raw reads use the (accountId, type, time) index,
 * never a scan of the account's events. (And the rollups' rows over every type, ANY_TYPE, are
 * never read as a type of their own.)
 */
const ALL_TYPES = Object.keys(KEYS);

const typeCondition = (alias: string, list: readonly string[]) => {
  const types = list.length ? list : ALL_TYPES;
  return types.length === 1 ? sql` AND ${raw(alias)}."type" = ${types[0]}` : sql` AND ${raw(alias)}."type" IN (${join(types.map((t) => sql`${t}`))})`;
};

/** Domain and flow filters. Rollup tables store '' for "no domain", events NULL. */
function filters(alias: string, p: SourceParams, rollup: boolean): Prisma.Sql {
  const a = raw(alias);
  const parts: Prisma.Sql[] = [];
  if (p.flowId !== null) parts.push(sql` AND ${a}."flowId" = ${p.flowId}`);
  if (p.includeDomains.length) parts.push(sql` AND ${a}."domain" IN (${join(p.includeDomains)})`);
  if (p.excludeDomains.length)
    parts.push(
      rollup
        ? sql` AND ${a}."domain" NOT IN (${join(p.excludeDomains)})`
        : sql` AND (${a}."domain" IS NULL OR ${a}."domain" NOT IN (${join(p.excludeDomains)}))`,
    );
  return parts.length ? join(parts, "") : empty;
}

const usefulOfEvent = `CASE WHEN e."useful" IS NULL THEN -1 WHEN e."useful" THEN 1 ELSE 0 END`;
const outcomeOfEvent = `CASE WHEN e."type" = 'selfhelp_search' THEN CASE WHEN e."contentId" IS NOT NULL THEN 'successful' WHEN e."resultCount" = 0 THEN 'no_results' ELSE 'unsuccessful' END END`;

/**
 * Counting source: columns type, domain, flowId, contentId, widget, searchTerm, outcome, actionId,
 * useful (1, 0, -1 for none), n, day (UTC days since the epoch). Keys a type does not keep are NULL.
 */
export function countSource(
  p: SourceParams,
  types: readonly string[],
  opts: { totals?: boolean; keys?: readonly string[]; outcomes?: readonly string[] } = {},
): Prisma.Sql {
  // Searches of these outcomes only: on the rollups' own column, which the planner has statistics of.
  const outcomeIn = (expr: string) => (opts.outcomes ? sql` AND ${raw(expr)} IN (${join(opts.outcomes.map((o) => sql`${o}`))})` : empty);
  const from = p.from.getTime();
  const to = p.to.getTime();
  const rawBranch = (ranges: Range[], projected: boolean, tail: Prisma.Sql = empty) => {
    const col = (k: RollupKey) =>
      k === "useful"
        ? `${projected ? rollupExpr(k) : usefulOfEvent} AS "useful"`
        : k === "outcome"
          ? `${projected ? `NULLIF(${rollupExpr(k)}, '')` : outcomeOfEvent} AS "outcome"`
          : `${projected ? `NULLIF(${rollupExpr(k)}, '')` : `e."${k}"`} AS "${k}"`;
    const time = join(
      ranges.map((r) => sql`(e."time" >= ${r[0]} AND e."time" < ${r[1]})`),
      " OR ",
    );
    return sql`SELECT e."type" AS "type", e."domain" AS "domain", ${raw(ROLLUP_KEYS.map(col).join(", "))}, 1 AS "n", e."time" / ${raw(String(DAY))} AS "day"
      FROM "Event" e WHERE e."accountId" = ${p.accountId}${typeCondition("e", types)} AND (${time})${filters("e", p, false)}${outcomeIn(projected ? rollupExpr("outcome") : outcomeOfEvent)}${tail}`;
  };
  if (p.raw) return sql`(${rawBranch([[from, to]], false)})`;
  const seg = hourSegments(from, to);
  const cols = raw(
    ROLLUP_KEYS.map((k) => (k === "useful" ? `r."useful" AS "useful"` : `NULLIF(r."${k}", '') AS "${k}"`)).join(", ") +
      `, r."n" AS "n", r."bucket" / 24 AS "day"`,
  );
  const rollupBranch = (grain: number, r: Range, of = types) =>
    sql`SELECT r."type" AS "type", NULLIF(r."domain", '') AS "domain", ${cols} FROM "EventRollup" r
      WHERE r."accountId" = ${p.accountId}${typeCondition("r", of)} AND r."grain" = ${grain} AND r."bucket" >= ${r[0]} AND r."bucket" < ${r[1]}${filters("r", p, true)}${outcomeIn('r."outcome"')}`;
  const branches: Prisma.Sql[] = [];
  // Reports that group by type alone (or searches by outcome) read the day totals (no other key:
  // those columns are NULL there). (Not with a flow filter: the totals have no flow.)
  if (seg.days) {
    const days: Range = [seg.days[0] * 24, seg.days[1] * 24];
    // The types whose narrow day rows hold every key the report reads (and the flow it filters by).
    const read = opts.keys && [...opts.keys, ...(p.flowId === null ? [] : ["flowId"])];
    const narrow = read && !opts.totals ? types.filter((t) => read.every((k) => KEYS[t]?.narrow?.some((n) => n === k))) : [];
    const rest = types.filter((t) => !narrow.includes(t));
    if (narrow.length) branches.push(rollupBranch(NARROW, days, narrow));
    const unfiltered = !p.includeDomains.length && !p.excludeDomains.length;
    if (rest.length || !narrow.length) branches.push(rollupBranch(opts.totals && p.flowId === null ? TOTALS : unfiltered ? ALL_DOMAINS : 24, days, rest));
  }
  for (const h of seg.hours) branches.push(rollupBranch(1, h));
  // The same hours' events the worker has not counted yet.
  const counted: Range[] = [...(seg.days ? [[seg.days[0] * 24, seg.days[1] * 24] as Range] : []), ...seg.hours];
  if (counted.length)
    branches.push(
      rawBranch(
        counted.map(([a, b]) => [a * HOUR, b * HOUR] as Range),
        true,
        aboveWatermark("e", p),
      ),
    );
  if (seg.raw.length || !branches.length) branches.push(rawBranch(seg.raw.length ? seg.raw : [[from, from]], true));
  return sql`(${join(branches, " UNION ALL ")})`;
}

/**
 * Per-user source (events that name an end user): columns endUserId, type, domain, flowId,
 * contentId, actionId, step, n, lastTime (latest event, epoch ms), day. With a `range` (a page of
 * a per-user report), only the end users that page can hold (pageUsers).
 */
export function userSource(p: SourceParams, types: readonly string[], dialect: "sqlite" | "postgres", range?: UserRange): Prisma.Sql {
  const from = p.from.getTime();
  const to = p.to.getTime();
  // PostgreSQL: the rollup's endUserId is in "C" order; the events' column gets the same collation
  // so the union has one (and sorts and groups as the reports order).
  const user = dialect === "postgres" ? `e."endUserId" COLLATE "C"` : `e."endUserId"`;
  // `tail`: the events above the watermark in the ranges the rollups answer.
  const rawWhere = (ranges: Range[], tail = false) => {
    const time = join(
      ranges.map((r) =>
        // The end day's edge: read raw when that day's rollup rows cannot answer it (see endDay
        // below), its tail when they can.
        beyond && r[0] === endDay! * DAY && r[1] === to
          ? sql`(e."time" >= ${r[0]} AND e."time" < (SELECT CASE WHEN ${beyond} THEN ${raw(String(tail ? r[0] : to))} ELSE ${raw(String(tail ? to : r[0]))} END))`
          : sql`(e."time" >= ${r[0]} AND e."time" < ${r[1]})`,
      ),
      " OR ",
    );
    return sql`e."accountId" = ${p.accountId}${typeCondition("e", types)} AND (${time}) AND e."endUserId" IS NOT NULL${filters("e", p, false)}${tail ? aboveWatermark("e", p) : empty}`;
  };
  const inPage = (ref: string) => (range ? sql` AND ${raw(ref)} IN (SELECT pu."endUserId" FROM "pageUsers" pu)` : empty);
  const rawBranch = (ranges: Range[], projected: boolean, tail = false) => {
    const col = (k: UserKey) =>
      k === "step" ? `${projected ? `NULLIF(${userExpr(k)}, 0)` : `e."step"`} AS "step"` : `${projected ? `NULLIF(${userExpr(k)}, '')` : `e."${k}"`} AS "${k}"`;
    return sql`SELECT ${raw(user)} AS "endUserId", e."type" AS "type", e."domain" AS "domain", ${raw(USER_KEYS.map(col).join(", "))}, 1 AS "n", e."time" AS "lastTime", e."time" / ${raw(String(DAY))} AS "day"
      FROM "Event" e WHERE ${rawWhere(ranges, tail)}${inPage(user)}`;
  };
  const seg = p.raw ? { days: null, raw: [[from, to]] as Range[] } : daySegments(from, to);
  // The partial day at the end of the window (today, for the default window) is the costly edge: up
  // to a day of raw events. When no event of these types lies after the window's end in that day
  // (the usual case: the window ends now), that day's rollup rows hold exactly the events of the
  // edge, so they are read instead; otherwise the raw events are. Decided inside the statement (one
  // snapshot), by one probe of the (accountId, type, time) index.
  const endDay = seg.days && seg.raw.length && seg.raw.at(-1)![1] === to && to % DAY !== 0 ? Math.floor(to / DAY) : null;
  const beyond =
    endDay === null
      ? null
      : sql`EXISTS (SELECT 1 FROM "Event" x WHERE x."accountId" = ${p.accountId}${typeCondition("x", types)} AND x."time" >= ${to} AND x."time" < ${(endDay + 1) * DAY})`;
  const rollupWhere = seg.days
    ? sql`u."accountId" = ${p.accountId}${typeCondition("u", types)} AND u."day" >= ${seg.days[0]} AND u."day" < ${seg.days[1]}${filters("u", p, true)}`
    : null;
  // A branch of its own (NOT EXISTS is a one-time filter): the whole days' plan stays as it is.
  const endDayWhere =
    beyond && endDay !== null
      ? sql`u."accountId" = ${p.accountId}${typeCondition("u", types)} AND u."day" = ${endDay}${filters("u", p, true)} AND NOT ${beyond}`
      : null;
  const rawRanges = seg.raw.length ? seg.raw : ([[from, from]] as Range[]);
  // The days the rollups answer (the whole days, and the end day when its rollup rows do), for their tail.
  const tailRanges: Range[] = [...(seg.days ? [[seg.days[0] * DAY, seg.days[1] * DAY] as Range] : []), ...(endDayWhere ? [[endDay! * DAY, to] as Range] : [])];
  const branches: Prisma.Sql[] = [];
  if (p.raw) branches.push(rawBranch(rawRanges, false));
  else {
    const cols = raw(USER_KEYS.map((k) => (k === "step" ? `NULLIF(u."step", 0) AS "step"` : `NULLIF(u."${k}", '')  AS "${k}"`)).join(", "));
    for (const where of [rollupWhere, endDayWhere]) {
      if (!where) continue;
      branches.push(sql`SELECT u."endUserId" AS "endUserId", u."type" AS "type", NULLIF(u."domain", '') AS "domain", ${cols}, u."n" AS "n", u."lastTime" AS "lastTime", u."day" AS "day"
      FROM "EventUserRollup" u WHERE ${where}${inPage('u."endUserId"')}`);
    }
    if (tailRanges.length) branches.push(rawBranch(tailRanges, true, true));
    if (seg.raw.length || !branches.length) branches.push(rawBranch(rawRanges, true));
  }
  if (!range) return sql`(${join(branches, " UNION ALL ")})`;
  // The page's end users: the first `users` after `range.after` (and it), found per source in end-user
  // order (the rollup walks its primary key, end user first, and stops there), then merged.
  const firstUsers = (ref: string, from: string, where: Prisma.Sql) =>
    sql`SELECT * FROM (SELECT DISTINCT ${raw(ref)} AS "endUserId" FROM ${raw(from)} WHERE ${where}${range.after === null ? empty : sql` AND ${raw(ref)} > ${range.after}`}
      ORDER BY 1 LIMIT ${range.users}) ${raw(from.endsWith(" u") ? "fu" : "fe")}`;
  const candidates: Prisma.Sql[] = [];
  if (p.raw) candidates.push(firstUsers(user, `"Event" e`, rawWhere(rawRanges)));
  else {
    if (rollupWhere) candidates.push(firstUsers('u."endUserId"', `"EventUserRollup" u`, rollupWhere));
    if (endDayWhere) candidates.push(firstUsers('u."endUserId"', `"EventUserRollup" u`, endDayWhere));
    if (tailRanges.length) candidates.push(firstUsers(user, `"Event" e`, rawWhere(tailRanges, true)));
    if (seg.raw.length || !rollupWhere) candidates.push(firstUsers(user, `"Event" e`, rawWhere(rawRanges)));
  }
  if (range.after !== null) candidates.push(sql`SELECT ${range.after} AS "endUserId"`);
  const pageUsers = sql`SELECT x."endUserId" AS "endUserId" FROM (${join(candidates, " UNION ")}) x ORDER BY 1 LIMIT ${range.users + 1}`;
  return sql`(WITH "pageUsers" AS MATERIALIZED (${pageUsers}) ${join(branches, " UNION ALL ")})`;
}

/** A page of a per-user report: the end users after `after` (and `after` itself), up to `users` of them. */
export interface UserRange {
  after: string | null;
  users: number;
}

// ---- distinct end users ----------------------------------------------------------------------------

/**
 * Whether the worker has counted an event of these types at or after the window's end. When it has
 * not (the usual window, "up to now", ends after every counted event), an end user's latest counted
 * event is in the window exactly when it is at or after the window's start; the day counts answer.
 * Read in the statement, in the snapshot of the rest (a one-time filter on each branch).
 */
export const countedAfterEnd = (p: SourceParams, types: readonly string[]) =>
  sql`EXISTS (SELECT 1 FROM "Event" x WHERE x."accountId" = ${p.accountId}${typeCondition("x", types)} AND x."time" >= ${p.to.getTime()}
    AND x."id" <= (SELECT COALESCE(MAX(w."eventId"), 0) FROM "RollupWatermark" w WHERE w."accountId" = ${p.accountId}))`;

/** The day counts keep every domain together and no flow: with a domain filter (or raw), the per-user rows answer. */
const allEvents = (p: SourceParams) => !p.raw && !p.includeDomains.length && !p.excludeDomains.length && p.flowId === null;

/** The day-count answer where it applies, else the per-user rows' answer; decided in the statement. */
const eitherOr = (fast: Prisma.Sql, slow: Prisma.Sql, p: SourceParams, types: readonly string[]) => {
  const later = countedAfterEnd(p, types);
  return sql`SELECT * FROM (${fast}) f0 WHERE NOT ${later} UNION ALL SELECT * FROM (${slow}) s0 WHERE ${later}`;
};

/**
 * Distinct end users per type and `key` in the window (columns type, <key>, users). Over the per-user
 * rows, a (key, end user, day) row each; for the usual window, from "EventLastSeenCount" (end users
 * per key by the day of their latest counted event: a row per key and day) for the whole days, and
 * the end users of the start day's partial events and of the events not counted yet whose latest
 * counted event is not on those days ("EventUserLastSeen", by primary key).
 */
export function distinctUserSource(p: SourceParams, types: readonly string[], key: DistinctKey, dialect: "sqlite" | "postgres"): Prisma.Sql {
  const k = raw(`"${key}"`);
  const slow = sql`SELECT d."type" AS "type", d.${k} AS ${k}, COUNT(*) AS "users"
    FROM (SELECT e."type" AS "type", e.${k} AS ${k}, e."endUserId" AS "endUserId" FROM ${userSource(p, types, dialect)} e GROUP BY e."type", e.${k}, e."endUserId") d
    GROUP BY d."type", d.${k}`;
  if (!allEvents(p) || !types.every((t) => KEYS[t]?.distinct === key)) return slow;
  const from = p.from.getTime();
  const startDayEnd = Math.ceil(from / DAY) * DAY;
  // Disjoint: end users whose latest counted event is on a whole day of the window (its later days
  // hold none: see countedAfterEnd), and the other end users of the start day's partial events and
  // of the events not counted yet.
  const fast = sql`SELECT f."type" AS "type", NULLIF(f."key", '') AS ${k}, SUM(f."users") AS "users" FROM (
      SELECT c."type" AS "type", c."key" AS "key", c."users" AS "users" FROM "EventLastSeenCount" c
        WHERE c."accountId" = ${p.accountId}${typeCondition("c", types)} AND c."day" >= ${startDayEnd / DAY}
      UNION ALL
      SELECT t."type", t."key", 1 FROM (SELECT DISTINCT e."type" AS "type", ${raw(distinctKeyExpr)} AS "key", e."endUserId" AS "endUserId" FROM "Event" e
          WHERE e."accountId" = ${p.accountId}${typeCondition("e", types)} AND e."endUserId" IS NOT NULL
            AND ((e."time" >= ${from} AND e."time" < ${Math.min(startDayEnd, p.to.getTime())}) OR (e."time" >= ${startDayEnd} AND e."time" < ${p.to.getTime()}${aboveWatermark("e", p)}))) t
        WHERE NOT EXISTS (SELECT 1 FROM "EventUserLastSeen" s WHERE s."accountId" = ${p.accountId} AND s."type" = t."type" AND s."key" = t."key"
          AND s."endUserId" = t."endUserId" AND s."lastTime" >= ${startDayEnd})
    ) f GROUP BY f."type", f."key"`;
  return eitherOr(fast, slow, p, types);
}

/**
 * Distinct end users of `type` per UTC day in the window (columns day, users). Over the per-user
 * rows; for the usual window, the whole days (and the end day) from "EventActiveUserCount", the
 * events not counted yet of end users with no per-user row of that day, and the start day's
 * partial events raw.
 */
export function dailyUserSource(p: SourceParams, type: string, dialect: "sqlite" | "postgres"): Prisma.Sql {
  const slow = sql`SELECT d."day" AS "day", COUNT(*) AS "users"
    FROM (SELECT e."day" AS "day", e."endUserId" AS "endUserId" FROM ${userSource(p, [type], dialect)} e GROUP BY e."day", e."endUserId") d GROUP BY d."day"`;
  if (!allEvents(p) || !KEYS[type]) return slow;
  const from = p.from.getTime();
  const to = p.to.getTime();
  const wholeFrom = Math.min(Math.ceil(from / DAY) * DAY, to);
  const user = dialect === "postgres" ? `e."endUserId" COLLATE "C"` : `e."endUserId"`;
  const branches: Prisma.Sql[] = [];
  if (wholeFrom < to) {
    branches.push(sql`SELECT a."day" AS "day", a."users" AS "users" FROM "EventActiveUserCount" a
      WHERE a."accountId" = ${p.accountId} AND a."type" = ${type} AND a."day" >= ${wholeFrom / DAY} AND a."day" < ${Math.ceil(to / DAY)}`);
    branches.push(sql`SELECT t."day" AS "day", 1 AS "users" FROM (SELECT DISTINCT e."time" / ${raw(String(DAY))} AS "day", ${raw(user)} AS "endUserId" FROM "Event" e
        WHERE e."accountId" = ${p.accountId} AND e."type" = ${type} AND e."time" >= ${wholeFrom} AND e."time" < ${to} AND e."endUserId" IS NOT NULL${aboveWatermark("e", p)}) t
      WHERE NOT EXISTS (SELECT 1 FROM "EventUserRollup" u WHERE u."accountId" = ${p.accountId} AND u."endUserId" = t."endUserId" AND u."day" = t."day" AND u."type" = ${type})`);
  }
  if (from < wholeFrom)
    branches.push(sql`SELECT r."day" AS "day", COUNT(*) AS "users" FROM (SELECT DISTINCT e."time" / ${raw(String(DAY))} AS "day", e."endUserId" AS "endUserId" FROM "Event" e
        WHERE e."accountId" = ${p.accountId} AND e."type" = ${type} AND e."time" >= ${from} AND e."time" < ${wholeFrom} AND e."endUserId" IS NOT NULL) r GROUP BY r."day"`);
  if (!branches.length) return slow;
  const fast = sql`SELECT f."day" AS "day", SUM(f."users") AS "users" FROM (${join(branches, " UNION ALL ")}) f GROUP BY f."day"`;
  return eitherOr(fast, slow, p, [type]);
}
