// Rollups of the engagement events, kept up to date at ingest in the events' own transaction, so a
// report never sees an event without its counts or counts without their event:
//
// - "EventRollup": events counted per account, hour and UTC day (two grains), type, domain and the
//   keys the counting reports group or filter by (flow, content, widget, search term, outcome,
//   action, useful), and per day, type and domain alone (TOTALS). No end user: many events fold
//   into one row.
// - "EventUserRollup": events counted per account, end user, UTC day, type, domain and the keys the
//   per-user and distinct-user reports need (flow, content, action, step), with the latest time.
//   Distinct-user counts stay exact: they count distinct end users over these rows.
//
// Each type keeps only the keys its reports read (a flow_completed's widget is read by none), which
// is what makes rows fold. '' stands for "none" in key columns (event strings are never empty), so
// the key can be a primary key and an upsert target on both databases; readers turn it back to NULL.
//
// The projection exists twice, in TypeScript (ingest) and in SQL (rebuild); both are generated from
// the KEYS table below, and test/report-rollups.test.ts checks that a rebuild reproduces ingest.
import { dbKind, type Tx, withTransaction } from "../../db/index.js";
import { type Dialect, insertRows } from "../../db/insert.js";
import type { EventRow } from "../events/validate.js";

const HOUR = 3_600_000;
const DAY = 86_400_000;

export type RollupKey = "flowId" | "contentId" | "widget" | "searchTerm" | "outcome" | "actionId" | "useful";
export type UserKey = "flowId" | "contentId" | "actionId" | "step";

const FLOW = ["flowId"] as const;
const CONTENT = ["contentId"] as const;
/** Per type: the keys of its "EventRollup" rows and of its "EventUserRollup" rows. */
export const KEYS: Record<string, { rollup: readonly RollupKey[]; user: readonly UserKey[] }> = {
  // contentId of a play only when played from a guided popup (guidedPopups counts those per popup).
  flow_started: { rollup: ["flowId", "widget", "contentId"], user: FLOW },
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
  beacon_shown: { rollup: CONTENT, user: CONTENT },
  beacon_clicked: { rollup: CONTENT, user: CONTENT },
  user_action: { rollup: ["actionId"], user: ["actionId"] },
};

export const ROLLUP_KEYS: readonly RollupKey[] = ["flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful"];
export const USER_KEYS: readonly UserKey[] = ["flowId", "contentId", "actionId", "step"];
/**
 * Grain of the day totals: per UTC day, type and domain, no keys. Reports that only count types
 * (summary) read these: a month of them is 30 × types × domains rows, whatever the keys' variety.
 */
export const TOTALS = 0;
const NO_KEYS = ["", "", "", "", "", "", -1] as const;

/** The primary keys, in the order the migrations declare them (upsert targets). */
const ROLLUP_PK = ["accountId", "type", "grain", "bucket", "domain", ...ROLLUP_KEYS];
const USER_PK = ["accountId", "endUserId", "day", "type", "domain", ...USER_KEYS];

/** A search's outcome, as the search reports classify it. */
export const outcomeOf = (e: Pick<EventRow, "contentId" | "resultCount">) =>
  e.contentId !== null ? "successful" : e.resultCount === 0 ? "no_results" : "unsuccessful";

function rollupValue(e: EventRow, k: RollupKey): string | number {
  const keep = KEYS[e.type]!.rollup.includes(k);
  if (k === "useful") return keep && e.useful !== null ? (e.useful ? 1 : 0) : -1;
  if (!keep) return "";
  if (k === "outcome") return outcomeOf(e);
  if (k === "contentId" && e.type === "flow_started" && e.widget !== "guided_popup") return "";
  return (e[k] as string | null) ?? "";
}
function userValue(e: EventRow, k: UserKey): string | number {
  const keep = KEYS[e.type]!.user.includes(k);
  if (k === "step") return keep ? (e.step ?? 0) : 0;
  return keep ? ((e[k] as string | null) ?? "") : "";
}

type Row = Record<string, unknown>;

/**
 * The rollup rows of a set of events (all of one account), folded, in primary-key order. Runs on
 * every ingest (10,000 events: a few ms): one string key per row, objects only for new rows.
 */
export function rollupRowsOf(accountId: string, events: readonly EventRow[]): { rollup: Row[]; user: Row[] } {
  const rollup = new Map<string, Row>();
  const user = new Map<string, Row>();
  for (const e of events) {
    const domain = e.domain ?? "";
    const k = ROLLUP_KEYS.map((key) => rollupValue(e, key));
    const hour = Math.floor(e.time / HOUR);
    const dayHour = Math.floor(e.time / DAY) * 24;
    for (const [grain, bucket, keys] of [
      [1, hour, k],
      [24, dayHour, k],
      [TOTALS, dayHour, NO_KEYS],
    ] as const) {
      const id = `${e.type}\u0000${grain}\u0000${bucket}\u0000${domain}\u0000${keys.join("\u0000")}`;
      const seen = rollup.get(id);
      if (seen) (seen as { n: number }).n++;
      else
        rollup.set(id, {
          accountId,
          type: e.type,
          grain,
          bucket,
          domain,
          flowId: keys[0],
          contentId: keys[1],
          widget: keys[2],
          searchTerm: keys[3],
          outcome: keys[4],
          actionId: keys[5],
          useful: keys[6],
          n: 1,
        });
    }
    if (e.endUserId === null) continue;
    const u = USER_KEYS.map((key) => userValue(e, key));
    const day = Math.floor(e.time / DAY);
    const id = `${e.endUserId}\u0000${day}\u0000${e.type}\u0000${domain}\u0000${u.join("\u0000")}`;
    const seen = user.get(id) as { n: number; lastTime: number } | undefined;
    if (seen) {
      seen.n++;
      if (e.time > seen.lastTime) seen.lastTime = e.time;
    } else
      user.set(id, {
        accountId,
        endUserId: e.endUserId,
        day,
        type: e.type,
        domain,
        flowId: u[0],
        contentId: u[1],
        actionId: u[2],
        step: u[3],
        n: 1,
        lastTime: e.time,
      });
  }
  // Key order: concurrent ingests lock the rows they both touch in the same order (no deadlock).
  // (Any fixed total order will do; the string key's is cheap.)
  const sorted = (m: Map<string, Row>) => [...m.keys()].sort().map((id) => m.get(id)!);
  return { rollup: sorted(rollup), user: sorted(user) };
}

const quoted = (cols: readonly string[]) => cols.map((c) => `"${c}"`).join(", ");

/**
 * Adds `events` (the rows the ingest actually inserted, all of `accountId`) to the rollups, inside
 * the caller's transaction: folded in memory, then one upsert per table (PostgreSQL: one array
 * per column; SQLite: multi-row VALUES).
 */
export async function addToRollups(tx: Tx, accountId: string, events: readonly EventRow[], dialect: Dialect = dbKind()): Promise<void> {
  if (!events.length) return;
  const { rollup, user } = rollupRowsOf(accountId, events);
  await insertRows(tx, dialect, "EventRollup", rollup, {
    onConflict: `ON CONFLICT (${quoted(ROLLUP_PK)}) DO UPDATE SET "n" = "EventRollup"."n" + excluded."n"`,
  });
  if (user.length)
    await insertRows(tx, dialect, "EventUserRollup", user, {
      onConflict: `ON CONFLICT (${quoted(USER_PK)}) DO UPDATE SET "n" = "EventUserRollup"."n" + excluded."n", "lastTime" = CASE WHEN excluded."lastTime" > "EventUserRollup"."lastTime" THEN excluded."lastTime" ELSE "EventUserRollup"."lastTime" END`,
    });
}

// ---- rebuild (the same projection in SQL) ----------------------------------------------------------

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

/**
 * Recomputes the rollups of one account (or of all) from its events: deletes them and groups the
 * events again, in one transaction. For a repair after a bug or a manual change of events; ingest
 * keeps them up to date otherwise. End users erased by pseudonym come out under their pseudonym,
 * as eraseEndUsersFromRollups leaves them.
 */
export async function rebuildRollups(accountId?: string): Promise<{ rollupRows: number; userRows: number }> {
  const dialect = dbKind();
  const params = accountId === undefined ? [] : [accountId];
  const p = (s: string) => (dialect === "sqlite" ? s.replace(/\$1/g, "?") : s);
  const del = accountId === undefined ? "" : ` WHERE "accountId" = $1`;
  const [hours, days, totals, users] = rebuildStatements(accountId !== undefined);
  return withTransaction(
    async (tx) => {
      await tx.$executeRawUnsafe(p(`DELETE FROM "EventRollup"${del}`), ...params);
      await tx.$executeRawUnsafe(p(`DELETE FROM "EventUserRollup"${del}`), ...params);
      let rollupRows = await tx.$executeRawUnsafe(p(hours!), ...params);
      rollupRows += await tx.$executeRawUnsafe(p(days!), ...params);
      rollupRows += await tx.$executeRawUnsafe(p(totals!), ...params);
      const userRows = await tx.$executeRawUnsafe(p(users!), ...params);
      return { rollupRows, userRows };
    },
    { timeout: 3_600_000, maxWait: 10_000 },
  );
}

/**
 * The INSERT ... SELECT statements that fill the rollups from "Event" (hours, days, day totals, users),
 * for one account (`$1`) or all. The migration that created the tables ran them once for the
 * events already stored.
 */
export function rebuildStatements(oneAccount: boolean): string[] {
  const where = oneAccount ? `WHERE e."accountId" = $1` : "";
  const keys = ROLLUP_KEYS.map(rollupExpr).join(", ");
  const rollupSql = (grain: number, bucket: string) =>
    `INSERT INTO "EventRollup" ("accountId", "type", "grain", "bucket", "domain", ${quoted(ROLLUP_KEYS)}, "n")
SELECT e."accountId", e."type", ${grain}, ${bucket}, COALESCE(e."domain", ''), ${keys}, COUNT(*)
FROM "Event" e ${where}
GROUP BY e."accountId", e."type", ${bucket}, COALESCE(e."domain", ''), ${keys}`;
  const totalsSql = `INSERT INTO "EventRollup" ("accountId", "type", "grain", "bucket", "domain", ${quoted(ROLLUP_KEYS)}, "n")
SELECT e."accountId", e."type", ${TOTALS}, ((e."time" / ${DAY}) * 24), COALESCE(e."domain", ''), ${NO_KEYS.map((v) => (v === "" ? "''" : String(v))).join(", ")}, COUNT(*)
FROM "Event" e ${where}
GROUP BY e."accountId", e."type", ((e."time" / ${DAY}) * 24), COALESCE(e."domain", '')`;
  const userKeys = USER_KEYS.map(userExpr).join(", ");
  const userSql = `INSERT INTO "EventUserRollup" ("accountId", "endUserId", "day", "type", "domain", ${quoted(USER_KEYS)}, "n", "lastTime")
SELECT e."accountId", e."endUserId", e."time" / ${DAY}, e."type", COALESCE(e."domain", ''), ${userKeys}, COUNT(*), MAX(e."time")
FROM "Event" e ${where ? `${where} AND` : "WHERE"} e."endUserId" IS NOT NULL
GROUP BY e."accountId", e."endUserId", e."time" / ${DAY}, e."type", COALESCE(e."domain", ''), ${userKeys}`;
  return [rollupSql(1, `(e."time" / ${HOUR})`), rollupSql(24, `((e."time" / ${DAY}) * 24)`), totalsSql, userSql];
}

// ---- erasure -----------------------------------------------------------------------------------------

/**
 * End-user erasure: the per-user rollups of the erased end users move to their pseudonyms, as
 * their events do (endUserId replaced by an opaque pseudonym per erased user), so totals and
 * distinct counts stay right and a rebuild from the anonymised events gives the same rows.
 * Set-based: one statement per 10,000 users (PostgreSQL: arrays; SQLite: a VALUES list). Each
 * pseudonym must be new to the account (it then collides with no existing row). "EventRollup"
 * holds no end users.
 */
export async function eraseEndUsersFromRollups(
  tx: Pick<Tx, "$executeRawUnsafe">,
  accountId: string,
  mapping: readonly { endUserId: string; pseudonym: string }[],
  dialect: Dialect = dbKind(),
): Promise<number> {
  let changed = 0;
  for (let i = 0; i < mapping.length; i += 10_000) {
    const part = mapping.slice(i, i + 10_000);
    if (dialect === "postgres") {
      changed += await tx.$executeRawUnsafe(
        `UPDATE "EventUserRollup" r SET "endUserId" = m."pseudonym" FROM unnest($2::text[], $3::text[]) AS m("endUserId", "pseudonym")
         WHERE r."accountId" = $1 AND r."endUserId" = m."endUserId"`,
        accountId,
        part.map((m) => m.endUserId),
        part.map((m) => m.pseudonym),
      );
    } else {
      const values = part.map(() => "(?, ?)").join(", ");
      changed += await tx.$executeRawUnsafe(
        `UPDATE "EventUserRollup" SET "endUserId" = m.column2 FROM (VALUES ${values}) AS m
         WHERE "EventUserRollup"."accountId" = ? AND "EventUserRollup"."endUserId" = m.column1`,
        ...part.flatMap((m) => [m.endUserId, m.pseudonym]),
        accountId,
      );
    }
  }
  return changed;
}
