// Rollups of the engagement events, counted by the rollup worker (rollupWorker.ts) from the events
// above each account's watermark, a few seconds after ingest; reports read the events above the
// watermark raw, so an answer never depends on how far the worker got:
//
// - "EventRollup": events counted per account, hour and UTC day (two grains), type, domain and the
//   keys the counting reports group or filter by (flow, content, widget, search term, outcome,
//   action, useful), and per day, type and domain alone (TOTALS). No end user: many events fold
//   into one row.
// - "EventUserRollup": events counted per account, end user, UTC day, type, domain and the keys the
//   per-user and distinct-user reports need (flow, content, action, step), with the latest time.
//   Distinct-user counts stay exact: they count distinct end users over these rows.
// - Distinct users without a row per (key, end user, day), for the reports and Explore questions
//   that count them: "EventUserLastSeen" (per type and its distinct-user key, each end user's
//   latest counted event) with "EventLastSeenCount" (how many end users were last seen on each day:
//   the end users of a window that reaches the latest counted event are a sum over its days), and
//   "EventActiveUserCount" (distinct end users per type and day, all domains, every type). Each
//   also has rows of type ANY_TYPE ('', and key ''): the same over every type together, for
//   Explore's distinct users per day and per window (src/domains/explore/rollup.ts). Every reader
//   of these tables names the types it reads, so those rows reach no report.
//
// Each type keeps only the keys its reports read (a flow_completed's widget is read by none), which
// is what makes rows fold. '' stands for "none" in key columns (event strings are never empty), so
// the key can be a primary key and an upsert target on both databases; readers turn it back to NULL.
//
// The projection is SQL generated from the KEYS table below: the worker, the rebuild and the
// reports' raw branches (sources.ts) use the same expressions.
import { dbKind, type Tx } from "../../db/index.js";
import type { Dialect } from "../../db/insert.js";

const HOUR = 3_600_000;
const DAY = 86_400_000;

export type RollupKey = "flowId" | "contentId" | "widget" | "searchTerm" | "outcome" | "actionId" | "useful";
export type UserKey = "flowId" | "contentId" | "actionId" | "step";
export type DistinctKey = "flowId" | "contentId" | "actionId";

const FLOW = ["flowId"] as const;
const CONTENT = ["contentId"] as const;
/**
 * Per type: the keys of its "EventRollup" rows and of its "EventUserRollup" rows; `narrow`, fewer
 * keys its day rows are also kept by (grain NARROW) when its rollup keys make many rows per day
 * that most of its reports do not read; `distinct`, the
 * key its distinct-user report counts end users by ("EventUserLastSeen"). (Distinct end users per
 * day, "EventActiveUserCount", are counted for every type.)
 */
export const KEYS: Record<string, { rollup: readonly RollupKey[]; user: readonly UserKey[]; narrow?: readonly RollupKey[]; distinct?: DistinctKey }> = {
  // contentId of a play only when played from a guided popup (guidedPopups counts those per popup).
  // `narrow`: day rows by flow alone as well (NARROW), for the reports that count plays per flow.
  flow_started: { rollup: ["flowId", "widget", "contentId"], user: FLOW, narrow: FLOW, distinct: "flowId" },
  flow_completed: { rollup: FLOW, user: FLOW },
  flow_exited: { rollup: FLOW, user: [] },
  flow_failed: { rollup: FLOW, user: FLOW },
  flow_step: { rollup: FLOW, user: ["flowId", "step"] },
  flow_feedback: { rollup: ["flowId", "useful"], user: [] },
  selfhelp_search: { rollup: ["searchTerm", "outcome"], user: [] },
  selfhelp_content_viewed: { rollup: CONTENT, user: [] },
  task_started: { rollup: FLOW, user: FLOW },
  task_completed: { rollup: FLOW, user: FLOW },
  guided_popup_shown: { rollup: CONTENT, user: [] },
  popup_shown: { rollup: CONTENT, user: CONTENT },
  popup_clicked: { rollup: CONTENT, user: CONTENT },
  smart_popup_shown: { rollup: CONTENT, user: [] },
  smarttip_shown: { rollup: CONTENT, user: [] },
  smarttip_played: { rollup: CONTENT, user: CONTENT },
  beacon_shown: { rollup: CONTENT, user: CONTENT, distinct: "contentId" },
  beacon_clicked: { rollup: CONTENT, user: CONTENT, distinct: "contentId" },
  user_action: { rollup: ["actionId"], user: ["actionId"], distinct: "actionId" },
};

export const ROLLUP_KEYS: readonly RollupKey[] = ["flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful"];
export const USER_KEYS: readonly UserKey[] = ["flowId", "contentId", "actionId", "step"];
/**
 * Grain of the day totals: per UTC day, type and domain, and a search's outcome (three values),
 * no other key. Reports that only count types (summary) or searches by outcome read these: a month
 * of them is 30 × types × domains (× 3) rows, whatever the keys' variety.
 */
export const TOTALS = 0;
/**
 * Grain of the narrow day rows: per UTC day, type, domain and the type's `narrow` keys only (plays
 * per flow: a row per flow, day and domain instead of one per widget and guided popup as well).
 */
export const NARROW = 25;
/**
 * Grain of the day rows of every domain together (domain ''): per UTC day, type and keys. What a
 * report without a domain filter (the usual one) reads: up to one row per key and day instead of
 * one per key, day and domain.
 */
export const ALL_DOMAINS = 26;
/** The types with narrow day rows. */
export const NARROW_TYPES = Object.keys(KEYS).filter((t) => KEYS[t]!.narrow);

/** The primary keys, in the order the migrations declare them (upsert targets). */
const ROLLUP_PK = ["accountId", "type", "grain", "bucket", "domain", ...ROLLUP_KEYS];
const USER_PK = ["accountId", "endUserId", "day", "type", "domain", ...USER_KEYS];

const quoted = (cols: readonly string[]) => cols.map((c) => `"${c}"`).join(", ");

// ---- the rollup lock: one writer of an account's rollups at a time -------------------------------------

const lockKey = `hashtext('guidegate.rollups:' || $1)`;

/** Waits for the account's rollup lock (to commit). Erasure and rebuild: they must not interleave with the worker. */
export async function lockRollups(tx: Pick<Tx, "$queryRawUnsafe">, accountId: string): Promise<void> {
  if (dbKind() === "postgres") await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(${lockKey})::text`, accountId);
}

/** Takes the account's rollup lock if free (the worker: a held account is another instance's). */
export async function tryLockRollups(tx: Tx, accountId: string): Promise<boolean> {
  if (dbKind() !== "postgres") return true;
  const [row] = await tx.$queryRawUnsafe<{ ok: boolean }[]>(`SELECT pg_try_advisory_xact_lock(${lockKey}) AS "ok"`, accountId);
  return row!.ok;
}

/** The i-th bound parameter in the dialect's syntax. */
export const param = (i: number) => (dbKind() === "postgres" ? `$${i}` : "?");

/** The account's watermark (0: nothing rolled up yet), a primary-key read. */
export async function watermarkOf(db: Pick<Tx, "$queryRawUnsafe">, accountId: string): Promise<number> {
  const [row] = await db.$queryRawUnsafe<{ eventId: number | bigint }[]>(`SELECT "eventId" FROM "RollupWatermark" WHERE "accountId" = ${param(1)}`, accountId);
  return row ? Number(row.eventId) : 0;
}

// ---- the projection in SQL ------------------------------------------------------------------------

const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
const typesWith = (pick: (t: string) => boolean) => Object.keys(KEYS).filter(pick).map(lit).join(", ");
const keepIf = (pick: (t: string) => boolean, expr: string, none: string) => {
  const list = typesWith(pick);
  return list ? `CASE WHEN e."type" IN (${list}) THEN ${expr} ELSE ${none} END` : none;
};

export function rollupExpr(k: RollupKey): string {
  const has = (t: string) => KEYS[t]!.rollup.includes(k);
  switch (k) {
    case "useful":
      return keepIf(has, `CASE WHEN e."useful" IS NULL THEN -1 WHEN e."useful" THEN 1 ELSE 0 END`, "-1");
    case "outcome":
      return keepIf(has, `CASE WHEN e."contentId" IS NOT NULL THEN 'successful' WHEN e."resultCount" = 0 THEN 'no_results' ELSE 'unsuccessful' END`, "''");
    case "contentId":
      return `CASE WHEN e."type" = 'flow_started' AND COALESCE(e."widget", '') <> 'guided_popup' THEN '' ELSE ${keepIf(has, `COALESCE(e."contentId", '')`, "''")} END`;
    default:
      return keepIf(has, `COALESCE(e."${k}", '')`, "''");
  }
}
export function userExpr(k: UserKey): string {
  const has = (t: string) => KEYS[t]!.user.includes(k);
  return k === "step" ? keepIf(has, `COALESCE(e."step", 0)`, "0") : keepIf(has, `COALESCE(e."${k}", '')`, "''");
}

/** The types whose end users are counted distinct by a key (EventUserLastSeen). */
export const DISTINCT_TYPES = Object.keys(KEYS).filter((t) => KEYS[t]!.distinct);
/**
 * The type (and key) of the distinct-user rows over every type together: "EventActiveUserCount"
 * (distinct end users per day, whatever the type), "EventUserLastSeen" and "EventLastSeenCount"
 * (each end user's latest counted event of any type). Event types are never empty.
 */
export const ANY_TYPE = "";
/** An event's distinct-user key (EventUserLastSeen."key"): its flow, content or action by type, '' for none. */
export const distinctKeyExpr = `CASE ${DISTINCT_TYPES.map((t) => `WHEN e."type" = ${lit(t)} THEN COALESCE(e."${KEYS[t]!.distinct}", '')`).join(" ")} ELSE '' END`;

/**
 * The statements that add the events of one account (`$1`) with ids in (`$2`, `$3`] to the rollups:
 * INSERT ... SELECT ... GROUP BY, one for every grain of "EventRollup" (the events grouped per hour
 * once, the other grains summed from those groups) and one per end-user table, each an upsert that
 * adds its counts to the rows already there. Grouped by every primary-key column, so no statement
 * touches a row twice. The rollup worker runs them past the watermark; the rebuild runs
 * them over every event after deleting the account's rows.
 */
export function rollupStatements(dialect: Dialect): string[] {
  const where = `WHERE e."accountId" = $1 AND e."id" > $2 AND e."id" <= $3`;
  // Every grain of "EventRollup" in one statement that reads the batch's events once: "h" counts
  // them per hour, domain, type and keys (the finest grain), and the day, day-total, narrow and
  // all-domain rows are sums of its rows (an hour lies in one UTC day: hour / 24 = time / DAY).
  // Five statements that each read and grouped the events made most of a batch's time. The grain
  // is part of the primary key, so no row is touched twice. MATERIALIZED: "h" is computed once
  // (both databases would inline a CTE read once; this one is read five times).
  const cols = quoted(ROLLUP_KEYS);
  const hKeys = ROLLUP_KEYS.map((k) => `${rollupExpr(k)} AS "${k}"`).join(", ");
  const hGroup = ROLLUP_KEYS.map(rollupExpr).join(", ");
  const none = (k: RollupKey) => (k === "useful" ? "-1" : "''");
  const narrowed = ROLLUP_KEYS.filter((k) => NARROW_TYPES.some((t) => KEYS[t]!.narrow!.includes(k)));
  const keep = (pick: (k: RollupKey) => boolean) => ROLLUP_KEYS.map((k) => (pick(k) ? `h."${k}"` : none(k))).join(", ");
  const kept = (pick: (k: RollupKey) => boolean) =>
    ROLLUP_KEYS.filter(pick)
      .map((k) => `, h."${k}"`)
      .join("");
  const day = `(h."hour" / 24) * 24`;
  const rollupSql = `WITH h AS MATERIALIZED (
  SELECT e."accountId" AS "accountId", e."type" AS "type", e."time" / ${HOUR} AS "hour", COALESCE(e."domain", '') AS "domain", ${hKeys}, COUNT(*) AS "n"
  FROM "Event" e ${where}
  GROUP BY e."accountId", e."type", e."time" / ${HOUR}, COALESCE(e."domain", ''), ${hGroup})
INSERT INTO "EventRollup" ("accountId", "type", "grain", "bucket", "domain", ${cols}, "n")
SELECT * FROM (
  SELECT h."accountId", h."type", 1, h."hour", h."domain", ${keep(() => true)}, h."n" FROM h
  UNION ALL
  SELECT h."accountId", h."type", 24, ${day}, h."domain", ${keep(() => true)}, SUM(h."n") FROM h
  GROUP BY h."accountId", h."type", ${day}, h."domain"${kept(() => true)}
  UNION ALL
  SELECT h."accountId", h."type", ${TOTALS}, ${day}, h."domain", ${keep((k) => k === "outcome")}, SUM(h."n") FROM h
  GROUP BY h."accountId", h."type", ${day}, h."domain", h."outcome"
  UNION ALL
  SELECT h."accountId", h."type", ${NARROW}, ${day}, h."domain", ${keep((k) => narrowed.includes(k))}, SUM(h."n") FROM h
  WHERE h."type" IN (${NARROW_TYPES.map(lit).join(", ")})
  GROUP BY h."accountId", h."type", ${day}, h."domain"${kept((k) => narrowed.includes(k))}
  UNION ALL
  SELECT h."accountId", h."type", ${ALL_DOMAINS}, ${day}, '', ${keep(() => true)}, SUM(h."n") FROM h
  GROUP BY h."accountId", h."type", ${day}${kept(() => true)}) r WHERE true
ON CONFLICT (${quoted(ROLLUP_PK)}) DO UPDATE SET "n" = "EventRollup"."n" + excluded."n"`;
  const userKeys = USER_KEYS.map(userExpr).join(", ");
  const userSql = `INSERT INTO "EventUserRollup" ("accountId", "endUserId", "day", "type", "domain", ${quoted(USER_KEYS)}, "n", "lastTime")
SELECT e."accountId", e."endUserId", e."time" / ${DAY}, e."type", COALESCE(e."domain", ''), ${userKeys}, COUNT(*), MAX(e."time")
FROM "Event" e ${where} AND e."endUserId" IS NOT NULL
GROUP BY e."accountId", e."endUserId", e."time" / ${DAY}, e."type", COALESCE(e."domain", ''), ${userKeys}
ON CONFLICT (${quoted(USER_PK)}) DO UPDATE SET "n" = "EventUserRollup"."n" + excluded."n", "lastTime" = CASE WHEN excluded."lastTime" > "EventUserRollup"."lastTime" THEN excluded."lastTime" ELSE "EventUserRollup"."lastTime" END`;
  // Distinct users per type and day, and per day over every type (ANY_TYPE): the batch's (type,
  // day, end user) triples with no per-user row of that type and day yet are new ("fresh"). Before
  // userSql, which adds those rows.
  const userC = dialect === "postgres" ? ` COLLATE "C"` : "";
  const activeSql = `WITH fresh AS MATERIALIZED (${freshSql(`SELECT DISTINCT e."accountId" AS "accountId", e."type" AS "type", e."time" / ${DAY} AS "day", e."endUserId"${userC} AS "endUserId"
  FROM "Event" e ${where} AND e."endUserId" IS NOT NULL`)})
${activeInsert("fresh")}`;
  // Each end user's latest event per type and distinct key in the batch, and of any type ("b"), and
  // where it moves an end user's latest counted event later ("c": "was" is the one before, NULL for
  // a new pair). The batch's events are read once ("g": per type, key and end user).
  const latest = `WITH g AS MATERIALIZED (
  SELECT e."accountId" AS "accountId", e."type" AS "type", ${distinctKeyExpr} AS "key", e."endUserId" AS "endUserId", MAX(e."time") AS "lastTime"
  FROM "Event" e ${where} AND e."endUserId" IS NOT NULL
  GROUP BY e."accountId", e."type", ${distinctKeyExpr}, e."endUserId"),
b AS (${latestOf("g")})`;
  // The end users last seen per day: +1 on the new latest day, −1 on the one before. Before lastSeenSql.
  const lastSeenCountSql = `${latest},
w AS MATERIALIZED (SELECT b."accountId", b."type", b."key", b."lastTime",
  -- A primary-key probe per pair (a join could scan the whole table: its cost would follow history).
  -- MATERIALIZED: once per pair (inlined, PostgreSQL ran it once per use of "was", up to three times).
  (SELECT s."lastTime" FROM "EventUserLastSeen" s WHERE s."accountId" = b."accountId" AND s."type" = b."type" AND s."key" = b."key" AND s."endUserId" = b."endUserId") AS "was"
  FROM b),
c AS (SELECT * FROM w WHERE w."was" IS NULL OR w."lastTime" > w."was")
INSERT INTO "EventLastSeenCount" ("accountId", "type", "key", "day", "users")
SELECT d."accountId", d."type", d."key", d."day", SUM(d."delta") FROM (
  SELECT c."accountId" AS "accountId", c."type" AS "type", c."key" AS "key", c."lastTime" / ${DAY} AS "day", 1 AS "delta" FROM c
  UNION ALL
  SELECT c."accountId", c."type", c."key", c."was" / ${DAY}, -1 FROM c WHERE c."was" IS NOT NULL) d WHERE true
GROUP BY d."accountId", d."type", d."key", d."day" HAVING SUM(d."delta") <> 0
ON CONFLICT ("accountId", "type", "key", "day") DO UPDATE SET "users" = "EventLastSeenCount"."users" + excluded."users"`;
  const lastSeenSql = `${latest}
INSERT INTO "EventUserLastSeen" ("accountId", "type", "key", "endUserId", "lastTime")
SELECT b."accountId", b."type", b."key", b."endUserId", b."lastTime" FROM b WHERE true
ON CONFLICT ("accountId", "type", "key", "endUserId") DO UPDATE SET "lastTime" = excluded."lastTime" WHERE excluded."lastTime" > "EventUserLastSeen"."lastTime"`;
  if (dialect === "postgres") return [rollupSql, userStatementPg(where)];
  const statements = [rollupSql, activeSql, userSql, lastSeenCountSql, lastSeenSql];
  // SQLite binds `?` in order; each parameter appears once per statement, in order.
  return dialect === "sqlite" ? statements.map((s) => s.replace(/\$\d/g, "?")) : statements;
}

/**
 * The batch's distinct (accountId, type, day, endUserId) triples (`triples`, a SELECT) with "new": 1
 * when no per-user row of that end user, day and type is there yet (a primary-key prefix probe each).
 */
const freshSql = (triples: string) => `SELECT p."accountId", p."type", p."day", p."endUserId",
    CASE WHEN EXISTS (SELECT 1 FROM "EventUserRollup" x WHERE x."accountId" = p."accountId" AND x."endUserId" = p."endUserId" AND x."day" = p."day" AND x."type" = p."type") THEN 0 ELSE 1 END AS "new"
  FROM (${triples}) p`;

/**
 * Adds the new end users of the batch (`fresh`: freshSql) to "EventActiveUserCount": per type and
 * day, and per day over every type (ANY_TYPE). An end user and day is new over every type when it
 * is new for each of its types in the batch and has no per-user row of another type that day
 * either: only those are probed again (by the (accountId, endUserId, day) prefix). Counts of 0 are
 * not written (an update that adds nothing would still write the row).
 */
const activeInsert = (fresh: string) => `INSERT INTO "EventActiveUserCount" ("accountId", "type", "day", "users")
SELECT * FROM (
  SELECT f."accountId", f."type", f."day", SUM(f."new") FROM ${fresh} f GROUP BY f."accountId", f."type", f."day" HAVING SUM(f."new") > 0
  UNION ALL
  SELECT a."accountId", '${ANY_TYPE}', a."day", COUNT(*) FROM (
    SELECT f."accountId" AS "accountId", f."day" AS "day", f."endUserId" AS "endUserId" FROM ${fresh} f
    GROUP BY f."accountId", f."day", f."endUserId" HAVING MIN(f."new") = 1) a
  WHERE NOT EXISTS (SELECT 1 FROM "EventUserRollup" x WHERE x."accountId" = a."accountId" AND x."endUserId" = a."endUserId" AND x."day" = a."day")
  GROUP BY a."accountId", a."day") r WHERE true
ON CONFLICT ("accountId", "type", "day") DO UPDATE SET "users" = "EventActiveUserCount"."users" + excluded."users"`;

/**
 * Each end user's latest event in the batch per type and distinct key (the DISTINCT_TYPES), and of
 * any type (ANY_TYPE, key ''), from `g`: the batch's latest event per type, key and end user.
 */
const latestOf = (
  g: string,
) => `SELECT g."accountId" AS "accountId", g."type" AS "type", g."key" AS "key", g."endUserId" AS "endUserId", g."lastTime" AS "lastTime"
  FROM ${g} g WHERE g."type" IN (${DISTINCT_TYPES.map(lit).join(", ")})
  UNION ALL
  SELECT g."accountId", '${ANY_TYPE}', '${ANY_TYPE}', g."endUserId", MAX(g."lastTime") FROM ${g} g GROUP BY g."accountId", g."endUserId"`;

/**
 * PostgreSQL: the four per-user statements (active users per day, per-user rows, last-seen counts,
 * last seen) as one, which groups the batch's events per end user, day, type, domain and user keys
 * once ("u") and derives the rest from those groups; the sub-statements are data-modifying CTEs.
 * Every part reads the tables as they were before the statement, which is the order the separate
 * statements need (the active-user count probes "EventUserRollup" before this batch's rows, the
 * last-seen count probes "EventUserLastSeen" before its update). SQLite has no data-modifying CTEs:
 * it runs them one by one.
 */
function userStatementPg(where: string): string {
  const userKeys = USER_KEYS.map(userExpr).join(", ");
  // The distinct-user key of each such type is one of its user keys, so "u" carries it.
  for (const t of DISTINCT_TYPES) if (!KEYS[t]!.user.includes(KEYS[t]!.distinct!)) throw new Error(`${t}: its distinct key must be a user key`);
  const key = `CASE ${DISTINCT_TYPES.map((t) => `WHEN u."type" = ${lit(t)} THEN u."${KEYS[t]!.distinct}"`).join(" ")} ELSE '' END`;
  return `WITH u AS MATERIALIZED (
  SELECT e."accountId" AS "accountId", e."endUserId" AS "endUserId", e."time" / ${DAY} AS "day", e."type" AS "type", COALESCE(e."domain", '') AS "domain",
    ${USER_KEYS.map((k) => `${userExpr(k)} AS "${k}"`).join(", ")}, COUNT(*) AS "n", MAX(e."time") AS "lastTime"
  FROM "Event" e ${where} AND e."endUserId" IS NOT NULL
  GROUP BY e."accountId", e."endUserId", e."time" / ${DAY}, e."type", COALESCE(e."domain", ''), ${userKeys}),
fresh AS MATERIALIZED (${freshSql(`SELECT DISTINCT u."accountId", u."type", u."day", u."endUserId" COLLATE "C" AS "endUserId" FROM u`)}),
active AS (${activeInsert("fresh")}),
g AS MATERIALIZED (
  SELECT u."accountId", u."type", ${key} AS "key", u."endUserId", MAX(u."lastTime") AS "lastTime"
  FROM u GROUP BY u."accountId", u."type", ${key}, u."endUserId"),
b AS MATERIALIZED (${latestOf("g")}),
w AS MATERIALIZED (SELECT b."accountId", b."type", b."key", b."lastTime",
  -- A primary-key probe per pair (a join could scan the whole table: its cost would follow history).
  -- MATERIALIZED: once per pair (inlined, PostgreSQL ran it once per use of "was", up to three times).
  (SELECT s."lastTime" FROM "EventUserLastSeen" s WHERE s."accountId" = b."accountId" AND s."type" = b."type" AND s."key" = b."key" AND s."endUserId" = b."endUserId") AS "was"
  FROM b),
c AS (SELECT * FROM w WHERE w."was" IS NULL OR w."lastTime" > w."was"),
counts AS (
  INSERT INTO "EventLastSeenCount" ("accountId", "type", "key", "day", "users")
  SELECT d."accountId", d."type", d."key", d."day", SUM(d."delta") FROM (
    SELECT c."accountId" AS "accountId", c."type" AS "type", c."key" AS "key", c."lastTime" / ${DAY} AS "day", 1 AS "delta" FROM c
    UNION ALL
    SELECT c."accountId", c."type", c."key", c."was" / ${DAY}, -1 FROM c WHERE c."was" IS NOT NULL) d
  GROUP BY d."accountId", d."type", d."key", d."day" HAVING SUM(d."delta") <> 0
  ON CONFLICT ("accountId", "type", "key", "day") DO UPDATE SET "users" = "EventLastSeenCount"."users" + excluded."users"),
seen AS (
  INSERT INTO "EventUserLastSeen" ("accountId", "type", "key", "endUserId", "lastTime")
  SELECT b."accountId", b."type", b."key", b."endUserId", b."lastTime" FROM b
  ON CONFLICT ("accountId", "type", "key", "endUserId") DO UPDATE SET "lastTime" = excluded."lastTime" WHERE excluded."lastTime" > "EventUserLastSeen"."lastTime")
INSERT INTO "EventUserRollup" ("accountId", "endUserId", "day", "type", "domain", ${quoted(USER_KEYS)}, "n", "lastTime")
SELECT u."accountId", u."endUserId", u."day", u."type", u."domain", ${USER_KEYS.map((k) => `u."${k}"`).join(", ")}, u."n", u."lastTime" FROM u
ON CONFLICT (${quoted(USER_PK)}) DO UPDATE SET "n" = "EventUserRollup"."n" + excluded."n", "lastTime" = CASE WHEN excluded."lastTime" > "EventUserRollup"."lastTime" THEN excluded."lastTime" ELSE "EventUserRollup"."lastTime" END`;
}

// ---- erasure -----------------------------------------------------------------------------------------

/** The tables derived from events that name end users (erasure moves their rows to the pseudonym). */
const USER_TABLES = ["EventUserRollup", "EventUserLastSeen"] as const;
/** Every table the rollup worker writes (rebuild deletes them all). */
export const ROLLUP_TABLES = ["EventRollup", ...USER_TABLES, "EventLastSeenCount", "EventActiveUserCount"] as const;

/**
 * End-user erasure: the per-user rollups of the erased end users move to their pseudonyms, as
 * their events do (endUserId replaced by an opaque pseudonym per erased user), so totals and
 * distinct counts stay right and a rebuild from the anonymised events gives the same rows.
 * Set-based: one statement per 10,000 users (PostgreSQL: arrays; SQLite: a VALUES list). Each
 * pseudonym must be new to the account (it then collides with no existing row). "EventRollup"
 * and the day counts hold no end users (an erased end user still counts, as the pseudonym).
 */
export async function eraseEndUsersFromRollups(
  tx: Pick<Tx, "$executeRawUnsafe" | "$queryRawUnsafe">,
  accountId: string,
  mapping: readonly { endUserId: string; pseudonym: string }[],
  dialect: Dialect = dbKind(),
): Promise<number> {
  // The worker must not count an erased user's events under the old id after this moved its rows.
  await lockRollups(tx, accountId);
  let changed = 0;
  for (let i = 0; i < mapping.length; i += 10_000) {
    const part = mapping.slice(i, i + 10_000);
    for (const table of USER_TABLES) {
      if (dialect === "postgres") {
        changed += await tx.$executeRawUnsafe(
          `UPDATE "${table}" r SET "endUserId" = m."pseudonym" FROM unnest($2::text[], $3::text[]) AS m("endUserId", "pseudonym")
           WHERE r."accountId" = $1 AND r."endUserId" = m."endUserId"`,
          accountId,
          part.map((m) => m.endUserId),
          part.map((m) => m.pseudonym),
        );
      } else {
        const values = part.map(() => "(?, ?)").join(", ");
        changed += await tx.$executeRawUnsafe(
          `UPDATE "${table}" SET "endUserId" = m.column2 FROM (VALUES ${values}) AS m
           WHERE "${table}"."accountId" = ? AND "${table}"."endUserId" = m.column1`,
          ...part.flatMap((m) => [m.endUserId, m.pseudonym]),
          accountId,
        );
      }
    }
  }
  return changed;
}
