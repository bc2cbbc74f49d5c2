// Reading events for the incremental export: in ingestion order (id), from a cursor that holds the
// last id handed out. A page's bounds are fixed first (the id of its last row), so its cursor is
// known before any row is sent (the NDJSON answer carries it in a header) and the rows are then
// read in slices: a 10,000-row page never sits in memory whole. Ids of an account commit in
// increasing order (order.ts), so no event can later appear behind a cursor.

import { createHash } from "node:crypto";
import { epochMs } from "../../db/columns.js";
import { dbKind, prisma } from "../../db/index.js";
import { badRequest } from "../../errors.js";
import { EVENT_FIELDS } from "../events/validate.js";

export const EXPORT_LIMITS = { default: 1_000, max: 10_000 } as const;
export const EXPORT_SLICE = 1_000;

/**
 * What a page of the export costs before it runs, in the budget's cost units (src/graphql/cost.ts,
 * 100 a point): the page, and one for each event it may hold, as any list of that many objects is
 * priced (a 10,000-content page costs by its size too): the default 1,000 events 10 points, 10,000
 * events 100. Its own declared cost because its events are JSON values, which the walk prices at
 * nothing, and a REST call selects none of them (the route streams them after the operation). A
 * `limit` no page takes is refused (400) before any read: 1 unit.
 */
export function exportPageCost(args: { limit?: unknown }): number {
  const limit = args.limit ?? EXPORT_LIMITS.default;
  return typeof limit === "number" && Number.isInteger(limit) && limit >= 1 && limit <= EXPORT_LIMITS.max ? 1 + limit : 1;
}

export interface ExportBounds {
  accountId: string;
  /** rows after this id ... */
  after: number;
  /** ... up to this one (inclusive); equal to `after` when the page is empty */
  upTo: number;
  types: string[] | null;
  hasMore: boolean;
  /** the cursor to resume from: after upTo */
  cursor: string;
}

/**
 * The cursor: the last id handed out, and the account it was handed out in. Ids come from one
 * sequence shared by every account, so another account's cursor is a valid position here too: read
 * as one, it skipped this account's events below it without a word. Its account says whose it is.
 */
export const encodeExportCursor = (after: number, accountId: string): string =>
  Buffer.from(JSON.stringify({ after, account: accountId })).toString("base64url");

/** The id a cursor of `accountId`'s export resumes after (0 without one); a 400 for a malformed cursor or one of another account. */
export function decodeExportCursor(cursor: string | null | undefined, accountId: string): number {
  if (!cursor) return 0;
  let v: { after?: unknown; account?: unknown } | null = null;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error("not base64url");
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { after?: unknown; account?: unknown };
  } catch {
    // fall through
  }
  // Event ids are 64-bit in both databases; a JavaScript number is exact to 2^53 − 1, past which
  // no cursor of ours points. Cursors issued before they named their account have none: read as before.
  if (
    v === null ||
    typeof v !== "object" ||
    typeof v.after !== "number" ||
    !Number.isSafeInteger(v.after) ||
    v.after < 0 ||
    (v.account !== undefined && typeof v.account !== "string")
  )
    throw badRequest("cursor is malformed: pass the cursor of a previous export page unchanged", [{ path: "cursor", message: "malformed cursor" }]);
  if (v.account !== undefined && v.account !== accountId)
    throw badRequest("cursor belongs to another account: pass a cursor of this account's export", [{ path: "cursor", message: "cursor of another account" }]);
  return v.after;
}

const ph = (i: number) => (dbKind() === "postgres" ? `$${i}` : "?");

function filter(accountId: string, after: number, types: string[] | null) {
  const params: unknown[] = [accountId, after];
  let sql = `"accountId" = ${ph(1)} AND "id" > ${ph(2)}`;
  if (types?.length) {
    sql += ` AND "type" IN (${types.map((t) => ph(params.push(t))).join(", ")})`;
  }
  return { sql, params };
}

/** Fixes the page: the id of its `limit`-th row (or its last), whether more rows exist now, the next cursor. */
export async function exportBounds(accountId: string, cursor: string | null | undefined, limit: number, types: string[] | null): Promise<ExportBounds> {
  const after = decodeExportCursor(cursor, accountId);
  const f = filter(accountId, after, types);
  const nth = await prisma.$queryRawUnsafe<{ id: number | bigint }[]>(
    `SELECT "id" FROM "Event" WHERE ${f.sql} ORDER BY "id" LIMIT 1 OFFSET ${Number(limit) - 1}`,
    ...f.params,
  );
  let upTo: number;
  let hasMore = false;
  if (nth.length) {
    upTo = Number(nth[0]!.id);
    const g = filter(accountId, upTo, types);
    hasMore = (await prisma.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM "Event" WHERE ${g.sql} LIMIT 1`, ...g.params)).length > 0;
  } else {
    const max = await prisma.$queryRawUnsafe<{ id: number | bigint | null }[]>(`SELECT MAX("id") AS "id" FROM "Event" WHERE ${f.sql}`, ...f.params);
    upTo = max[0]?.id == null ? after : Number(max[0].id);
  }
  return { accountId, after, upTo, types, hasMore, cursor: encodeExportCursor(upTo, accountId) };
}

/**
 * What can change in a page once its bounds are fixed: rows are never inserted behind the last id
 * (ids commit in order per account: order.ts), and a stored event is never updated except by an
 * erasure, which rewrites its endUserId, userName and comment (src/domains/events/erasure.ts);
 * retention deletes rows. So the ids of the page's rows and those three columns say whether the
 * page is what it was. Both only ever move forward (a deleted row does not come back, a pseudonym
 * is random), so a tag read just before the rows can at worst be older than the body it goes
 * with: the next conditional request then gets the body again, never a 304 for a page that changed.
 */
const MUTABLE = ["id", "endUserId", "userName", "comment"].map((c) => `"${c}"`).join(", ");

/**
 * A fingerprint of the page's rows, in one aggregate statement: their count and a digest of their
 * ids and mutable columns (PostgreSQL: md5 computed by the server; SQLite, in process, has no hash
 * function: the rows' short JSON arrays, hashed here). The body's rows are not read for it.
 */
export async function exportFingerprint(b: ExportBounds): Promise<string> {
  const f = filter(b.accountId, b.after, b.types);
  const upTo = ph(f.params.length + 1);
  const [row] =
    dbKind() === "postgres"
      ? await prisma.$queryRawUnsafe<{ n: number | bigint; h: string | null }[]>(
          `SELECT COUNT(*) AS "n", md5(string_agg(json_build_array(${MUTABLE})::text, ',' ORDER BY "id")) AS "h" FROM "Event" WHERE ${f.sql} AND "id" <= ${upTo}`,
          ...f.params,
          b.upTo,
        )
      : await prisma.$queryRawUnsafe<{ n: number | bigint; h: string | null }[]>(
          `SELECT COUNT(*) AS "n", group_concat(json_array(${MUTABLE}), ',' ORDER BY "id") AS "h" FROM "Event" WHERE ${f.sql} AND "id" <= ${upTo}`,
          ...f.params,
          b.upTo,
        );
  const digest = row?.h == null ? "" : dbKind() === "postgres" ? row.h : createHash("sha1").update(row.h).digest("base64");
  return `${Number(row?.n ?? 0)}:${digest}`;
}

// receivedAt as epoch ms (src/db/columns.ts): on SQLite it is CURRENT_TIMESTAMP's zoneless text.
const columns = () => [...["id", ...EVENT_FIELDS].map((c) => `"${c}"`), `${epochMs(dbKind(), '"receivedAt"')} AS "receivedAt"`].join(", ");

/** The page's events, a slice at a time, each in the contract's shape with `id` and `receivedTime`. */
export async function* exportRows(b: ExportBounds): AsyncGenerator<Record<string, unknown>[]> {
  let after = b.after;
  while (after < b.upTo) {
    const f = filter(b.accountId, after, b.types);
    const rows = await prisma.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT ${columns()} FROM "Event" WHERE ${f.sql} AND "id" <= ${ph(f.params.length + 1)} ORDER BY "id" LIMIT ${EXPORT_SLICE}`,
      ...f.params,
      b.upTo,
    );
    if (!rows.length) return;
    after = Number(rows.at(-1)!.id);
    yield rows.map(wire);
  }
}

function wire(r: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { id: Number(r.id) };
  for (const f of EVENT_FIELDS) {
    const v = r[f];
    out[f] =
      v === undefined || v === null
        ? null
        : f === "time" || f === "step" || f === "resultCount"
          ? Number(v)
          : f === "useful"
            ? v === true || v === 1 || v === 1n
            : v;
  }
  out.receivedTime = r.receivedAt == null ? null : Number(r.receivedAt);
  return out;
}
