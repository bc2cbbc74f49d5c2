// How GraphQL results become REST responses: pages, single records, and the contract's rules for
// bulk outcomes (201/200/204 all succeeded, 207 mixed, the shared status when all failed alike).
import type { FieldError } from "../errors.js";
import type { Reply, ResponseDoc, RestInput, RestReply } from "./contract.js";
import type { JsonSchema } from "./docs.js";
import { problem } from "./problem.js";

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
 * None succeeded: a problem listing each item's outcome (`errors` by `[index]`, and `failure`, the
 * 207's failure items), with the items' status when they all failed alike (a DELETE naming nothing
 * that exists: 404), else 400: a 2xx always means something was applied. Otherwise 207.
 */
export function bulkReply<N>(results: ItemOutcome<N>[], record: ((n: N) => unknown) | null, opts: { created?: number } = {}): RestReply {
  const ok = results.filter((r) => r.statusCode < 300);
  const failed = results.filter((r) => r.statusCode >= 300);
  if (failed.length === 0) {
    if (!record) return { status: 204 };
    const status = ok.some((r) => r.statusCode === 201) ? (opts.created ?? 201) : 200;
    return { status, body: { data: ok.map((r) => (r.record == null ? null : record(r.record))) } };
  }
  const failure = failed.map((r) => ({ index: r.index, id: r.id, statusCode: r.statusCode, errors: r.errors }));
  if (ok.length === 0) {
    const statuses = [...new Set(failed.map((r) => r.statusCode))].sort((a, b) => a - b);
    const status = statuses.length === 1 ? statuses[0]! : 400;
    const errors: FieldError[] = failed.flatMap((r) => r.errors.map((message) => ({ path: `[${r.index}]`, message })));
    const detail =
      failed.length === 1
        ? failed[0]!.errors.join("; ")
        : statuses.length === 1
          ? `All ${failed.length} items failed; see errors.`
          : `All ${failed.length} items failed, with statuses ${statuses.join(", ")}; see failure.`;
    return { status, problem: { ...problem(status, detail, errors), failure } };
  }
  return {
    status: 207,
    body: { success: ok.map((r) => ({ index: r.index, id: r.id, statusCode: r.statusCode })), failure },
  };
}

// ---- declared replies -------------------------------------------------------------------------------
// A route row declares its reply as one of a few kinds, with a typed record mapper that carries the
// record's JSON Schema. The router sends what `send` builds; src/openapi documents `responses`, so
// the documented responses are the ones the route sends (test/openapi.test.ts checks real answers
// against them).

/** A REST record: its JSON Schema and how a GraphQL result node becomes it. */
export interface WireRecord<N> {
  schema: JsonSchema;
  map(node: N): unknown;
}

/** `example`: a record as the server sends it (ids, times and URLs of their real shapes; src/rest/examples.ts). */
export const wireRecord = <N>(schema: JsonSchema, map: (node: N) => unknown, example?: unknown): WireRecord<N> => ({
  schema: example === undefined ? schema : { ...schema, example },
  map,
});

/**
 * `names` of a record as a request body documents them (BodyDoc.readOnly), and `without` drops them
 * from an item: one list says both what the server ignores and what the document marks read-only.
 */
export function readOnlyFields<N>(record: WireRecord<N>, names: readonly string[]) {
  const props = record.schema.properties as Record<string, JsonSchema>;
  return {
    docs: Object.fromEntries(names.map((n) => [n, props[n]!])),
    without: (item: Record<string, unknown>) => Object.fromEntries(Object.entries(item).filter(([k]) => !names.includes(k))),
  };
}

const PAGE_CURSOR: JsonSchema = {
  type: ["string", "null"],
  description: "Cursor of the next page (pass it back unchanged as `cursor`); null on the last page.",
  // The examples' pages hold one record: the last page.
  example: null,
};
/** One item of a 207's `success` (its `failure` items add `errors`). */
export const ITEM_OUTCOME: JsonSchema = {
  type: "object",
  required: ["index", "id", "statusCode"],
  properties: { index: { type: "integer", minimum: 0 }, id: { type: ["string", "null"] }, statusCode: { type: "integer" } },
};

/** `{success, failure}` of a 207. */
export const MULTI_STATUS: JsonSchema = {
  type: "object",
  required: ["success", "failure"],
  properties: {
    success: { type: "array", items: ITEM_OUTCOME },
    failure: {
      type: "array",
      items: {
        ...ITEM_OUTCOME,
        required: ["index", "id", "statusCode", "errors"],
        properties: { ...(ITEM_OUTCOME.properties as object), errors: { type: "array", items: { type: "string" } } },
      },
    },
  },
};

/** A 207's example: the request's two items, `ids` as the outcomes name them, the first succeeded, the second failed with `error`. */
export interface MultiStatusExample {
  ids: [string | null, string | null];
  error: string;
  /** The failed item's status (default: the first of the route's failure statuses). */
  failed?: number;
}

/** A 207 the route could answer: item 0 with its success status, item 1 with a failure status, each once. */
export function multiStatusExample(success: number[], failure: number[], ex: MultiStatusExample) {
  return {
    success: [{ index: 0, id: ex.ids[0], statusCode: success.at(-1)! }],
    failure: [{ index: 1, id: ex.ids[1], statusCode: ex.failed ?? failure[0]!, errors: [ex.error] }],
  };
}

export const reply = {
  /** A page of records: 200 `{data, cursor}`. */
  page<N, R>(pick: (data: R) => Connection<N>, record: WireRecord<N>, opts: { headers?: Record<string, string> } = {}): Reply<R> {
    return {
      kind: "page",
      responses: {
        200: { json: { type: "object", required: ["data", "cursor"], properties: { data: { type: "array", items: record.schema }, cursor: PAGE_CURSOR } } },
      },
      headers: opts.headers,
      send: (data) => ({ ...pageReply(pick(data), record.map), ...(opts.headers ? { headers: opts.headers } : {}) }),
    };
  },

  /** One record: 200, or 404 when the lookup found nothing. */
  one<N, R>(pick: (data: R, input: RestInput) => N | null | undefined, record: WireRecord<N>, notFound: (input: RestInput) => string): Reply<R> {
    return {
      kind: "one",
      responses: { 200: { json: record.schema }, 404: "problem" },
      send: (data, input) => oneReply(pick(data, input), record.map, notFound(input)),
    };
  },

  /**
   * Per-item outcomes: `success` lists the statuses all-succeeded answers use (201/200 with
   * `{data}`, 204 empty for deletes), `failure` the statuses every item can fail with alike (a
   * problem); 207 `{success, failure}` for mixed outcomes.
   */
  bulk<N, R>(
    pick: (data: R) => ItemOutcome<N>[],
    record: WireRecord<N> | null,
    statuses: { success: number[]; failure: number[]; created?: number; example: MultiStatusExample },
  ): Reply<R> {
    const responses: Record<number, ResponseDoc> = {
      207: { json: MULTI_STATUS, example: multiStatusExample(statuses.success, statuses.failure, statuses.example) },
    };
    for (const s of statuses.success) {
      responses[s] =
        s === 204 || !record ? "empty" : { json: { type: "object", required: ["data"], properties: { data: { type: "array", items: record.schema } } } };
    }
    for (const s of statuses.failure) responses[s] = "problem";
    return { kind: "bulk", responses, send: (data) => bulkReply(pick(data), record ? record.map : null, { created: statuses.created }) };
  },

  /** Anything else, with its responses declared alongside. */
  custom<R>(responses: Record<number, ResponseDoc>, send: (data: R, input: RestInput) => RestReply): Reply<R> {
    return { kind: "custom", responses, send };
  },
};
