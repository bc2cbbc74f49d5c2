// How GraphQL results become REST responses: pages, single records, and the contract's rules for
// bulk outcomes (201/200/204 all succeeded, 207 mixed, the shared status when all failed alike).
import type { FieldError } from "../errors.js";
import { problem, type Problem } from "./problem.js";

export interface RestReply {
  status: number;
  body?: unknown;
  problem?: Problem;
  headers?: Record<string, string>;
}

interface Connection<N> {
  nodes: N[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

export function pageReply<N>(conn: Connection<N>, record: (n: N) => unknown): RestReply {
  return {
    status: 200,
    body: { data: conn.nodes.map(record), cursor: conn.pageInfo.hasNextPage ? conn.pageInfo.endCursor : null },
  };
}

export function oneReply<N>(node: N | null | undefined, record: (n: N) => unknown, notFoundDetail: string): RestReply {
  if (node == null) return { status: 404, problem: problem(404, notFoundDetail) };
  return { status: 200, body: record(node) };
}

export interface ItemOutcome<N> {
  index: number;
  statusCode: number;
  id: string | null;
  errors: string[];
  record?: N | null;
}

/**
 * Bulk outcome → response. All succeeded: `successStatus(results)` with `{data}` (or an empty 204).
 * All failed with one status: that status, a problem listing each item's errors. Otherwise 207.
 */
export function bulkReply<N>(results: ItemOutcome<N>[], record: ((n: N) => unknown) | null, opts: { created?: number } = {}): RestReply {
  const ok = results.filter((r) => r.statusCode < 300);
  const failed = results.filter((r) => r.statusCode >= 300);
  if (failed.length === 0) {
    if (!record) return { status: 204 };
    const status = ok.some((r) => r.statusCode === 201) ? (opts.created ?? 201) : 200;
    return { status, body: { data: ok.map((r) => (r.record == null ? null : record(r.record))) } };
  }
  const statuses = new Set(failed.map((r) => r.statusCode));
  if (ok.length === 0 && statuses.size === 1) {
    const status = failed[0]!.statusCode;
    const errors: FieldError[] = failed.flatMap((r) => r.errors.map((message) => ({ path: `[${r.index}]`, message })));
    const detail = failed.length === 1 ? failed[0]!.errors.join("; ") : `All ${failed.length} items failed; see errors.`;
    return { status, problem: problem(status, detail, errors) };
  }
  return {
    status: 207,
    body: {
      success: ok.map((r) => ({ index: r.index, id: r.id, statusCode: r.statusCode })),
      failure: failed.map((r) => ({ index: r.index, id: r.id, statusCode: r.statusCode, errors: r.errors })),
    },
  };
}
