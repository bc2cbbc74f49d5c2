// Keyset pagination shared by every list: rows are ordered by (sort key, id) and the opaque cursor
// holds the last row's pair, so a walk returns every row once even while rows are inserted.
// Cursors are base64url JSON; anything that does not decode to the expected pair is a 400. A list
// read in more than one order (the end users: by creation, or by update) adds the order's name as a
// third element, so that a cursor of one order is refused by the other instead of being read there
// as a position in another order (it would skip or repeat rows).
import { badRequest } from "../errors.js";

/** Defaults and maxima of `limit` / `first`, from the spec's Limits table. */
export const LIST_LIMITS = {
  standard: { default: 10, max: 10_000 },
  files: { default: 50, max: 10_000 },
  auditLogs: { default: 100, max: 500 },
} as const;

/** A list's page sizes: what a page holds without `first`/`limit`, and the most it may hold. */
export interface PageLimits {
  readonly default: number;
  readonly max: number;
}

/**
 * A connection field's `extensions`: the limits its resolver pages with (pageLimit), declared on the
 * field so that the cost walk (src/graphql/cost.ts) prices a page as it is served: a page asked
 * without `first` at the list's own default (the audit log's 100, files' 50), not a guessed 10.
 */
export const pageExtensions = (limits: PageLimits) => ({ pageLimits: limits });

/** Where a connection's records are in its selection (for plugin-prisma's queryFromInfo and selectsChild). */
export const CONNECTION_RECORDS: string[][] = [["nodes"], ["edges", "node"]];

export type SortValue = string | number;

/**
 * The order a cursor belongs to, for a list read in several orders: `name` is written into the
 * cursors of that order; `untagged` reads a cursor without a name (one issued before the list named
 * its orders) as one of this order.
 */
export interface CursorOrder {
  readonly name: string;
  readonly untagged?: boolean;
}

/**
 * A list's cursor: the last row's (sort value, id), the order read (for a list read in several) and
 * the account whose list it is. Row ids and sort values alone would let another account's cursor
 * pass as a position in this account's list, silently skipping its rows before that position (a
 * sync loop mixing up its accounts); with the account, such a cursor is a 400.
 */
export function encodeCursor(sort: SortValue | Date, id: string, account: string, order?: string): string {
  const v = sort instanceof Date ? sort.getTime() : sort;
  return Buffer.from(JSON.stringify([v, id, order ?? null, account])).toString("base64url");
}

/** The (sort value, id) pair of a cursor of this account's list read in one order; a cursor naming an order is another list's. */
export function decodeCursor(cursor: string, account: string): [SortValue, string] {
  const [sort, id, order] = decodeOrderedCursor(cursor, account);
  if (order !== undefined) throw decodeCursorMismatch();
  return [sort, id];
}

/**
 * A cursor's parts. Cursors issued before they named the account (`[sort, id]` or `[sort, id,
 * order]`) are still read, so a client paging across a deploy keeps its place.
 */
function decodeOrderedCursor(cursor: string, account: string): [SortValue, string, string | undefined] {
  let parts: [SortValue, string, string | undefined, string | undefined] | null = null;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error("not base64url");
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    // (Text holding NUL would reach the database, which refuses it: a 500, not a 400.)
    const text = (x: unknown) => typeof x === "string" && !x.includes("\u0000");
    if (Array.isArray(v) && (text(v[0]) || typeof v[0] === "number") && text(v[1])) {
      if (v.length === 2 || (v.length === 3 && typeof v[2] === "string")) parts = [v[0], v[1], v[2], undefined];
      else if (v.length === 4 && (v[2] === null || typeof v[2] === "string") && typeof v[3] === "string") parts = [v[0], v[1], v[2] ?? undefined, v[3]];
    }
  } catch {
    // fall through
  }
  if (!parts) throw malformedCursor();
  if (parts[3] !== undefined && parts[3] !== account)
    throw badRequest("cursor belongs to another account's list", [{ path: "cursor", message: "cursor from another account" }]);
  return [parts[0], parts[1], parts[2]];
}

function malformedCursor() {
  return badRequest("cursor is malformed: pass the cursor value of a previous page unchanged", [{ path: "cursor", message: "malformed cursor" }]);
}

/**
 * The (sort value, id) pair a cursor holds, checked against the list's kind of sort key and, for a
 * list read in several orders, against the order read (`order`); null without a cursor.
 */
export function cursorPosition(
  cursor: string | null | undefined,
  isDate: boolean,
  account: string,
  order?: CursorOrder,
): { sort: SortValue | Date; id: string } | null {
  if (!cursor) return null;
  const [sort, id, name] = decodeOrderedCursor(cursor, account);
  if (name === undefined ? order !== undefined && !order.untagged : name !== order?.name) throw decodeCursorMismatch();
  if (isDate !== (typeof sort === "number")) throw decodeCursorMismatch();
  const value = isDate ? new Date(sort as number) : sort;
  // A time a Date cannot hold (|ms| > 8.64e15) would reach the database as an Invalid Date: a 500.
  // Nor one before 1970, which no row has, and PostgreSQL cannot hold in every case (year 0).
  if (value instanceof Date && (Number.isNaN(value.getTime()) || value.getTime() < 0)) throw malformedCursor();
  return { sort: value, id };
}

/**
 * Prisma `where` selecting the rows after the cursor in (field, tie) order; `tie` is the unique column
 * that breaks ties (the row's `id` unless the list orders by another, as the end users by update do).
 */
export function afterCursor(
  field: string,
  cursor: string | null | undefined,
  isDate: boolean,
  account: string,
  direction: "asc" | "desc" = "asc",
  tie = "id",
  order?: CursorOrder,
): object {
  const position = cursorPosition(cursor, isDate, account, order);
  if (!position) return {};
  const { sort: value, id } = position;
  const op = direction === "asc" ? "gt" : "lt";
  return { OR: [{ [field]: { [op]: value } }, { [field]: value, [tie]: { [op]: id } }] };
}

function decodeCursorMismatch() {
  return badRequest("cursor does not belong to this list", [{ path: "cursor", message: "cursor from another list" }]);
}

export interface Page<T> {
  rows: T[];
  hasNextPage: boolean;
}

/** Takes `limit + 1` rows (the extra one only tells whether there is a next page). */
export function toPage<T>(rows: T[], limit: number): Page<T> {
  return { rows: rows.slice(0, limit), hasNextPage: rows.length > limit };
}

/**
 * Relay connection shape for a keyset page; `tieKey`: the tie-breaking value a cursor holds (the
 * row's id unless afterCursor names another); `order`: the name of the order read, for a list read
 * in several (the one afterCursor is given).
 */
export function connectionFrom<T extends { id: string }>(
  page: Page<T>,
  account: string,
  sortKey: (row: T) => SortValue | Date,
  tieKey: (row: T) => string = (row) => row.id,
  order?: string,
) {
  const cursorOf = (node: T) => encodeCursor(sortKey(node), tieKey(node), account, order);
  // An edge's cursor is encoded only when it is read: REST pages ask for `nodes` and `endCursor`
  // alone, and a 1,000-row page would otherwise encode 1,000 cursors nobody sends.
  const edges = page.rows.map((node) => ({
    node,
    get cursor() {
      return cursorOf(node);
    },
  }));
  const first = page.rows[0];
  const last = page.rows.at(-1);
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: false,
      startCursor: first ? cursorOf(first) : null,
      endCursor: last ? cursorOf(last) : null,
    },
  };
}

/** The page size of a forward-only connection: `first` within limits; `last`/`before` refused. */
export function pageLimit(args: { first?: number | null; last?: number | null; before?: string | null }, limits: { default: number; max: number }): number {
  if (args.last != null || args.before != null) {
    throw badRequest("Only forward pagination is supported: use first and after.", [{ path: "last", message: "not supported" }]);
  }
  // Named as the GraphQL caller wrote it: `first` (REST's `limit` is checked, and named, before the
  // operation runs: src/rest/params.ts).
  return pageSize(args.first ?? limits.default, limits, "first");
}

/**
 * A page size within a list's limits: the one check of `limit` (REST) and `first` (GraphQL), with
 * the one message both answer. `name` is the argument or parameter the caller sent: `limit` over
 * REST (and for GraphQL arguments named `limit`), `first` for GraphQL connections (pageLimit).
 */
export function pageSize(size: number, limits: { max: number }, name = "limit"): number {
  if (!Number.isInteger(size) || size < 1 || size > limits.max) {
    throw badRequest(`${name} must be between 1 and ${limits.max}`, [{ path: name, message: `must be between 1 and ${limits.max}` }]);
  }
  return size;
}
