// What the reports aggregate: event-shaped rows with a weight `n`, assembled from the rollups for
// the whole days and hours of the window, from the raw events above the rollups' watermark for the
// same days and hours (those the rollup worker has not counted yet), and from the raw events for
// the window's partial edges, so that summing `n` (and counting distinct end users) gives exactly
// what counting the window's raw events gives. `raw` mode reads only raw events
// (test/report-rollups.test.ts compares the two).
import { Prisma } from "../../generated/sqlite/client.js";
import { KEYS, ROLLUP_KEYS, type RollupKey, rollupExpr, TOTALS, USER_KEYS, type UserKey, userExpr } from "./rollups.js";

const { sql, raw, join, empty } = Prisma;
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
   * that few ids are concerned and walk the (accountId, type, id) index from it.
   */
  watermark?: number;
}

/** Events the rollups do not count yet: above the watermark the statement sees. */
const aboveWatermark = (alias: string, p: SourceParams) =>
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

/** Every event type: "all types" is spelt out, so raw reads use the (accountId, type, time) index, never a scan of the account's events. */
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
export function countSource(p: SourceParams, types: readonly string[], opts: { totals?: boolean } = {}): Prisma.Sql {
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
      FROM "Event" e WHERE e."accountId" = ${p.accountId}${typeCondition("e", types)} AND (${time})${filters("e", p, false)}${tail}`;
  };
  if (p.raw) return sql`(${rawBranch([[from, to]], false)})`;
  const seg = hourSegments(from, to);
  const cols = raw(
    ROLLUP_KEYS.map((k) => (k === "useful" ? `r."useful" AS "useful"` : `NULLIF(r."${k}", '') AS "${k}"`)).join(", ") +
      `, r."n" AS "n", r."bucket" / 24 AS "day"`,
  );
  const rollupBranch = (grain: number, r: Range) =>
    sql`SELECT r."type" AS "type", NULLIF(r."domain", '') AS "domain", ${cols} FROM "EventRollup" r
      WHERE r."accountId" = ${p.accountId}${typeCondition("r", types)} AND r."grain" = ${grain} AND r."bucket" >= ${r[0]} AND r."bucket" < ${r[1]}${filters("r", p, true)}`;
  const branches: Prisma.Sql[] = [];
  // Reports that group by type alone (or searches by outcome) read the day totals (no other key:
  // those columns are NULL there). (Not with a flow filter: the totals have no flow.)
  if (seg.days) branches.push(rollupBranch(opts.totals && p.flowId === null ? TOTALS : 24, [seg.days[0] * 24, seg.days[1] * 24]));
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
