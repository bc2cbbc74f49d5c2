// The route contract of the REST layer: what a row of the table declares (method, path, GraphQL
// document, how path/query/body become variables, how the result becomes the reply, its OpenAPI
// descriptions). Domains declare their rows with these types (src/domains/*/routes.ts);
// src/rest/router.ts executes them all the same way.
import type { Readable } from "node:stream";
import type { KeyScope } from "../auth/keys.js";
import type { BodyDoc, JsonSchema, QueryParamDoc } from "./docs.js";
import type { Operation } from "./operation.js";
import type { Problem } from "./problem.js";

/** The two path styles of the spec; they differ only in how content refers to tags (id or name). */
export type Style = "A" | "B";
export const A = "/api/v1/:accountId";
export const B = "/v1/accounts/:accountId";

export interface RestInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  /** A request header (absent where there is no HTTP request, e.g. OpenAPI samples). */
  header?: (name: string) => string | undefined;
  /** The request's method, upper case (HEAD is served by GET routes); absent where there is no HTTP request. */
  method?: string;
}

/** A raw (non-JSON) request body, streamed by the route before its document runs (the PDF upload). */
export interface RawBody {
  /** The one media type accepted (415 otherwise). */
  contentType: string;
  /** 413 past it: checked against Content-Length before reading, and by `receive` while reading. */
  limitBytes: number;
  /** OpenAPI: what the body is. */
  description: string;
  /**
   * Consumes the body, after authentication and the row's variables() (so bad path values are a
   * 400 before anything is read). What it returns is the GraphQL context's `rawBody` while the
   * document runs; the router calls its discard() afterwards, whatever happened.
   */
  receive(body: Readable, input: RestInput): Promise<StagedBody>;
}

export interface StagedBody {
  discard(): Promise<void>;
}

/**
 * What a status answers with: a JSON body of this schema (and, with `text`, other media types the
 * caller can ask for, e.g. `text/csv`), bytes of a media type, a problem, or nothing. `example`: the
 * JSON body shown for this status, where the schema's own example does not fit it (a 207's statuses).
 */
export type ResponseDoc =
  | { json: JsonSchema; text?: Record<string, { description: string; example: string }>; example?: unknown }
  | { binary: string; headers: Record<string, string> }
  | "problem"
  | "empty";

/** How a route answers, given what its operation returned (`Result`: its data, typed by the route's document). */
export interface Reply<Result = unknown> {
  kind: "page" | "one" | "bulk" | "custom";
  responses: Record<number, ResponseDoc>;
  /** Headers every successful answer carries. */
  headers?: Record<string, string>;
  // A method (its parameter checked bivariantly): a row's Reply<its result> is a Reply of the table.
  send(data: Result, input: RestInput): RestReply;
}

/** What a route answers: a status, and a JSON body, a problem or a stream. */
export interface RestReply {
  status: number;
  body?: unknown;
  problem?: Problem;
  headers?: Record<string, string>;
  /** A body other than JSON, streamed as it is produced (a file download, a CSV report); `headers` say what it is. */
  stream?: () => Promise<Readable>;
  /**
   * With `stream`: the answer's ETag, computed before the body is opened from something cheaper
   * than its bytes (the event export: a fingerprint of the page's rows). A read is then answered
   * 304 without opening the body, or streamed as it is produced. Without it (and without an ETag
   * in `headers`), a streamed read is tagged over its bytes, so read whole before it is sent.
   */
  etag?: () => Promise<string>;
}

declare const ROUTED: unique symbol;

/**
 * A row of the table, as route() makes it (its document's text, and its variables() and reply
 * already checked against the document's types). Only route() makes one: the brand is a type alone.
 */
export interface RestRoute {
  readonly [ROUTED]: true;
  /** Stable operation name (OpenAPI operationId, metrics label). */
  name: string;
  method: "get" | "post" | "put" | "delete";
  /** Express path; `:accountId` is in every account route. */
  path: string;
  summary: string;
  /** The GraphQL operation the route runs: the text of the typed document route() was given. */
  document: string;
  /** The operation's variables (checked against the document by route()). */
  variables(input: RestInput): Record<string, unknown>;
  /** What it answers: a declared reply kind (`reply` of src/rest/responses.ts), typed by the document through route(). */
  reply: Reply<unknown>;
  /**
   * The literal last segment of this path is also a value of the parameter path beside it (B13's
   * `endUsers/lookup` beside `endUsers/:id`: "lookup" can be an end user's id): a method this path
   * does not serve goes on to the parameter path. Without it a literal path takes every method.
   */
  literalIsAlsoParam?: boolean;
  /** Key scopes allowed on this route (default: integration keys only). */
  scopes?: readonly KeyScope[];
  /** A raw body the route streams (instead of JSON). */
  rawBody?: RawBody;
  /** Whether the route reads a JSON body. */
  jsonBody?: boolean;
  /** With jsonBody: an empty body is allowed. */
  optionalBody?: boolean;
  /** A body other than problem+json for failures (the spec's single end-user update shape). */
  errorBody?: (status: number, messages: string[], input: RestInput) => unknown;
  /** With errorBody: its JSON Schema (OpenAPI). */
  errorSchema?: JsonSchema;
  /** OpenAPI: the query parameters variables() reads (test/openapi.test.ts checks the two agree). */
  query?: Record<string, QueryParamDoc>;
  /** OpenAPI: the JSON body, as a GraphQL input type or a JSON Schema. */
  body?: BodyDoc;
  /** OpenAPI: descriptions of path parameters other than accountId. */
  params?: Record<string, { description: string; example?: string }>;
  /** OpenAPI: request headers the route reads (optional ones; the auth headers are documented apart). */
  headers?: Record<string, { description: string; example?: string }>;
  /**
   * The REST input each variable of the operation (or a place inside one, `filter.type`) came from,
   * where the caller named it otherwise: a query parameter (`{ idType: "userid-type" }`), a path
   * parameter, or the body (`{ events: "body" }`). A value there that does not coerce, and a
   * resolver's field error about the argument the variable feeds (same name), is named so
   * (src/rest/problem.ts), never by a GraphQL name the caller did not send. `input` is the body.
   */
  names?: Readonly<Record<string, string>>;
}

/** Moves a bulk result's named record field to `record`, the shape bulkReply reads. */
export function withRecord<F extends string>(field: F) {
  return <R extends Record<F, unknown>>(r: R): R & { record: R[F] } => ({ ...r, record: r[field] });
}

declare const UNCHECKED: unique symbol;
/** A value GraphQL coercion checks rather than TypeScript: see unchecked(). */
export type Unchecked = { readonly [UNCHECKED]: true };

/**
 * A value passed on as the caller sent it (a JSON body, reshaped at most), for GraphQL coercion to
 * check: it answers a 400 that names the body's field (src/rest/problem.ts). Accepted for any
 * variable and any field of an input object; nothing is checked or changed at run time.
 */
export function unchecked(value: unknown): Unchecked {
  return value as Unchecked;
}

/** What a row may give for a variable of type `T`: `T` itself, read-only lists included, or an Unchecked value anywhere. */
type Variable<T> = T extends readonly (infer U)[]
  ? readonly Variable<U>[] | Unchecked
  : T extends object
    ? { [K in keyof T]: Variable<T[K]> } | Unchecked
    : T | Unchecked;

/** The variables a row's variables() gives for its document: each as the operation takes it (or unchecked()). */
export type RouteVariables<V> = { [K in keyof V]: Variable<V[K]> };

/** A row of the table without its document: route() takes the typed document first and the row second. */
export type RouteRow<R, V, Given = RouteVariables<V>> = Omit<RestRoute, typeof ROUTED | "document" | "variables" | "reply"> & {
  /** The document's variables from the request: checked against the operation, and no others. */
  variables(input: RestInput): Given & { [K in Exclude<keyof Given, keyof V>]: never };
  /** The reply: its picks get the operation's result type. */
  reply: Reply<R>;
};

/**
 * A row of the table: `route(DOCUMENT, { name, method, path, …, variables, reply })`. The typed
 * document (src/rest/operation.ts) comes first so that its result and variables types are fixed
 * before the row is read: the row's variables() is checked against it and its reply's callbacks
 * are typed by its result. The text is what runs.
 */
export function route<R, V, Given extends RouteVariables<V>>(document: Operation<R, V>, row: RouteRow<NoInfer<R>, NoInfer<V>, Given>): RestRoute {
  const checked: Omit<RestRoute, typeof ROUTED> = { ...row, document: document.text };
  // The brand is all this adds: the row's types were checked against its document here.
  return checked as RestRoute;
}
