// Serves the route table. Every route executes its GraphQL operation in process: compiled at
// start-up (src/graphql/compiled.ts), run with the request's context from the same factory as POST
// /graphql, its errors masked as POST /graphql masks them and its execution counted in the same
// metric. No HTTP request to ourselves, no per-request envelope, no JSON between the layers: the
// variables are the route's objects and the reply maps the execution result object. Every read
// answers an ETag and honours If-None-Match (src/rest/conditional.ts): JSON through Express's own
// res.json, long pages and streamed bodies tagged here over their bytes, except a streamed body
// whose reply gives a tag of its own (the event export), which is sent as it is read.
import { isUtf8 } from "node:buffer";
import { pipeline } from "node:stream/promises";
import express, { type Request, type Response, type Router } from "express";
import type { ExecutionResult } from "graphql";
import { authorize } from "../auth/identity.js";
import type { Context } from "../context.js";
import { AppError, knownError } from "../errors.js";
import type { ChargeRequest } from "../graphql/budget.js";
import type { CompiledOperation } from "../graphql/compiled.js";
import type { CostPlan } from "../graphql/cost.js";
import { maskErrors } from "../graphql/masking.js";
import { inOperationSpan } from "../graphql/tracing.js";
import { logger } from "../logger.js";
import { countOperation } from "../observability/metrics.js";
import { tracing } from "../observability/tracing.js";
import { findUnstorableText, mayCarryUnstorableText, notUtf8Error, unstorableTextError } from "../text.js";
import { bounded, decodedStream } from "./bodyLimit.js";
import { collect, isRead, sendTagged } from "./conditional.js";
import type { RawBody, RestReply, StagedBody } from "./contract.js";
import { nestedPast, tooDeepError } from "./jsonDepth.js";
import { refuseEmptyQuery } from "./params.js";
import { methodNotAllowed, type Problem, problem, problemFromGraphQL, problemOf, sendProblem } from "./problem.js";
import type { RestInput, RestRoute } from "./routes.js";

/** The size limit of JSON bodies, REST and GraphQL alike (413 past it). */
export const JSON_BODY_LIMIT_BYTES = 10 * 1024 * 1024;
/** How routes run their operations: the compiled operations and the request's context. */
export interface RouteExecution {
  /** The compiled operation of each route document, by its source text. */
  operations: ReadonlyMap<string, CompiledOperation>;
  /** The cost plan of each route document, by its source text (made once: src/graphql/cost.ts). */
  costs: ReadonlyMap<string, CostPlan>;
  /** Charges a priced request to its account before it runs (429, or 400 past the hard maximum). */
  charge: ChargeRequest;
  /** The request's GraphQL context, from the factory POST /graphql uses. */
  context(req: Request, res: Response): Context;
}

export function restRouter(routes: readonly RestRoute[], execution: RouteExecution): Router {
  // strict: `/content/` (an empty id) is not the list `/content`.
  const router = express.Router({ strict: true });
  const parseBody = jsonBodyParser();
  const serve = (route: RestRoute) => {
    const handlers = route.jsonBody ? [parseBody] : [];
    router[route.method](route.path, ...handlers, async (req: Request, res: Response) => {
      const input: RestInput = {
        params: req.params as Record<string, string>,
        query: req.query as Record<string, unknown>,
        body: req.body,
        header: (name) => req.get(name),
        method: req.method,
      };
      try {
        const plan = { operation: execution.operations.get(route.document)!, cost: execution.costs.get(route.document)!, charge: execution.charge };
        await runRoute(route, plan, execution.context(req, res), input, req, res);
      } catch (err) {
        // A streamed reply that failed half way: nothing sensible can follow the bytes already sent.
        if (res.headersSent) return void res.destroy();
        // A raw body refused before it was read to its end: answer, then close the connection
        // (the rest of the body is drained, not parsed as a next request).
        if (route.rawBody && !req.complete) {
          res.set("Connection", "close");
          // (Unpiped first: a compressed body flows into a decoder nobody reads any more, whose
          // back-pressure would pause the request again.)
          req.unpipe();
          req.resume();
        }
        const known = knownError(err);
        if (known) return fail(route, input, res, ...problemOf(known));
        logger.error({ err, route: route.name, requestId: req.get("x-request-id") }, "REST route failed");
        fail(route, input, res, problem(500, "Unexpected error; the request may succeed on retry."));
      }
    });
  };
  // Each path's methods, then its 405 (naming the methods it does serve), path by path with literal
  // segments before parameters: `/integrationAttributes/search` is its own resource, never the
  // record named "search" of `/integrationAttributes/{primaryAttrNameValue}`, for any method.
  // Unless the literal is also a value of the parameter (literalIsAlsoParam): then a method the
  // literal path does not serve goes on to the parameter path, and a 405 names the methods of both.
  const byPath = new Map<string, RestRoute[]>();
  for (const r of routes) (byPath.get(r.path) ?? byPath.set(r.path, []).get(r.path)!).push(r);
  for (const path of [...byPath.keys()].sort(moreSpecificFirst)) {
    const served = byPath.get(path)!;
    for (const route of served) serve(route);
    const behind = served.some((r) => r.literalIsAlsoParam)
      ? [...byPath.keys()].filter((other) => other !== path && covers(other, path)).flatMap((other) => byPath.get(other)!.map((r) => r.method))
      : [];
    const notAllowed = methodNotAllowed([...new Set([...served.map((r) => r.method), ...behind])]);
    router.all(path, (req, res, next) => {
      // (Express answers HEAD with a GET route.)
      const method = req.method === "HEAD" ? "get" : req.method.toLowerCase();
      if (behind.some((m) => m === method)) return next();
      notAllowed(req, res);
    });
  }
  return router;
}

/**
 * The JSON body parser of REST routes: bounded (413), and a failure kept in res.locals.bodyProblem
 * for the route to report after authentication (401/403 come first).
 */
export function jsonBodyParser(): (req: Request, res: Response, next: () => void) => void {
  // The limit holds however the body is framed (chunked too): src/rest/bodyLimit.ts.
  const json = bounded(
    express.json({
      limit: JSON_BODY_LIMIT_BYTES,
      type: ["application/json", "application/*+json"],
      // Text a database cannot store as sent only arrives as a `\u` escape: walk the parsed body for it then.
      // (body-parser hands verify the response parseBody passed it: Express's, with its locals.)
      verify: (_req, res: Response, raw, encoding) => {
        // Bytes that are not UTF-8 would decode to U+FFFD and be stored so (src/text.ts). A declared
        // utf-16 or utf-32 charset is body-parser's to decode.
        if (encoding === "utf-8" && !isUtf8(raw)) res.locals.notUtf8 = true;
        else if (nestedPast(raw)) res.locals.tooDeep = true;
        else if (raw.includes("\\u") && mayCarryUnstorableText(raw.toString("latin1"))) res.locals.mayCarryUnstorableText = true;
      },
    }),
    JSON_BODY_LIMIT_BYTES,
  );
  // A body-parser failure is kept for the route to report after authentication (401/403 come first).
  return (req: Request, res: Response, next: () => void) =>
    json(req, res, (err?: unknown) => {
      if (err) res.locals.bodyProblem = problemOf(knownError(err) ?? new AppError(400, "The request body could not be read."))[0];
      else if (res.locals.notUtf8) res.locals.bodyProblem = problemOf(notUtf8Error("body"))[0];
      else if (res.locals.tooDeep) res.locals.bodyProblem = problemOf(tooDeepError("body"))[0];
      else if (res.locals.mayCarryUnstorableText) {
        const path = findUnstorableText(req.body, "body");
        if (path) res.locals.bodyProblem = problemOf(unstorableTextError(path))[0];
      }
      next();
    });
}

export { allowHeader } from "./problem.js";

/** Whether the pattern `general` (with `:param` segments) matches the path `specific`. */
function covers(general: string, specific: string): boolean {
  const gs = general.split("/");
  const ss = specific.split("/");
  return gs.length === ss.length && gs.every((g, i) => g === ss[i] || g.startsWith(":"));
}

/** Route paths ordered so that, segment by segment, a literal comes before a parameter (stable otherwise). */
function moreSpecificFirst(a: string, b: string): number {
  const as = a.split("/");
  const bs = b.split("/");
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const ap = as[i]!.startsWith(":");
    const bp = bs[i]!.startsWith(":");
    if (ap !== bp) return ap ? 1 : -1;
  }
  return 0;
}

declare global {
  namespace Express {
    /** What the JSON body parser found, for the route (res.locals lives as long as the request). */
    interface Locals {
      /** The body could not be read or holds text no database stores: answered after authentication. */
      bodyProblem?: Problem;
      /** The raw body is not UTF-8: decoded, it would hold U+FFFD where the client sent other text. */
      notUtf8?: boolean;
      /** The raw body has a `\u` escape that may decode to such text: the parsed body is walked for it. */
      mayCarryUnstorableText?: boolean;
    }
  }
}

/** Failure response: problem+json, or the route's own error body where the spec gives one. */
function fail(route: RestRoute, input: RestInput, res: Response, p: Problem, headers?: Record<string, string>) {
  if (!route.errorBody) return sendProblem(res, p, headers);
  if (headers) res.set(headers);
  const messages = p.errors?.length ? p.errors.map((e) => e.message) : [p.detail];
  res.status(p.status).json(route.errorBody(p.status, p.status >= 500 ? [p.detail] : messages, input));
}

/** What one row runs: its compiled operation, its cost plan, and how a request is charged. */
export interface RoutePlan {
  operation: CompiledOperation;
  cost: CostPlan;
  charge: ChargeRequest;
  /**
   * The accounts a request is charged to, from its variables: a spec route's is its path's; a saved
   * endpoint's, those its operation's root fields name, as over POST /graphql (its path's when none).
   */
  accounts?: (variables: Record<string, unknown>) => string[];
}

/** Runs one row for one request (the table's handler, and a saved endpoint's call: src/domains/endpoints/run.ts). */
export async function runRoute(route: RestRoute, plan: RoutePlan, contextValue: Context, input: RestInput, req: Request, res: Response) {
  const { operation } = plan;
  const accountId = input.params.accountId!;
  // Who may do this is decided before what was sent is checked: no key and a bad limit is a 401,
  // a foreign account and a bad body a 403. (The resolver's own check reuses this one.)
  authorize(await contextValue.identity(), accountId, route.scopes);
  // Then the price, before anything runs: the operation's cost with these variables (a request
  // refused for what it sent costs the minimum, 1 point: it touched the account), then the charge:
  // 429 over the account's remaining points (before the 400 of a bad input, as always), 400 over the
  // hard maximum.
  const { bodyProblem } = res.locals;
  let variables: Record<string, unknown> | undefined;
  let refused: unknown;
  if (!bodyProblem) {
    try {
      variables = checkedVariables(route, input, req);
    } catch (err) {
      refused = err;
    }
  }
  const named = variables && plan.accounts ? plan.accounts(variables) : [];
  await plan.charge(contextValue, variables ? plan.cost(variables) : 0, named.length ? named : [accountId], route.scopes);
  if (bodyProblem) return fail(route, input, res, bodyProblem);
  if (!variables) throw refused;
  if (route.reply.kind === "page" && typeof variables.first === "number" && variables.first > PAGE_SLICE) {
    return streamPage(route, operation, contextValue, variables, input, req, res);
  }
  let result: ExecutionResult;
  const staged = route.rawBody ? await receiveRawBody(route.rawBody, input, req) : undefined;
  try {
    contextValue.rawBody = staged;
    result = await execute(operation, contextValue, variables);
  } finally {
    await staged?.discard();
  }
  if (result.errors?.length) return fail(route, input, res, ...problemFromGraphQL(result.errors, route));
  const reply = route.reply.send(result.data, input);
  if (reply.stream && reply.etag && isRead(req)) return streamWithTag(reply as Required<Pick<RestReply, "stream" | "etag">> & RestReply, req, res);
  if (reply.stream) {
    // Opened before anything is sent: a source that cannot deliver is still a clean problem answer.
    const body = await reply.stream();
    if (reply.headers) res.set(reply.headers);
    // A GET answer without a validator of its own (a file has its sha256) is tagged over its bytes,
    // so it is read whole before its headers go (a failure while reading is still a clean problem).
    // (Read no further once the client has gone: nobody is left to answer.)
    if (isRead(req) && !res.get("ETag")) {
      const bytes = await collect(body, res);
      if (bytes === null) return;
      return sendTagged(req, res, reply.status, bytes);
    }
    // HEAD: the headers alone (the body was opened only to know that it can be delivered).
    if (req.method === "HEAD") {
      body.destroy();
      return void res.status(reply.status).end();
    }
    // Headers go with the first chunk: a failure after it can only cut the body short.
    res.status(reply.status);
    await pipeline(body, res);
    return;
  }
  if (reply.headers) res.set(reply.headers);
  if (reply.problem) return fail(route, input, res, reply.problem);
  if (reply.body === undefined) return void res.status(reply.status).end();
  res.status(reply.status).json(reply.body);
}

/**
 * A streamed read whose reply gives its own ETag (the event export): the tag first, then a 304 when
 * If-None-Match names it (the body never opened), else the body piped to the client as it is
 * produced, never held whole. When the client goes away the pipeline destroys the body, whose
 * reads stop there (at most the slice in hand completes); nothing is logged as a failure then.
 */
async function streamWithTag(reply: RestReply & Required<Pick<RestReply, "stream" | "etag">>, req: Request, res: Response) {
  const etag = await reply.etag();
  if (clientGone(res)) return;
  res.set("ETag", etag);
  if (reply.status === 200 && req.fresh) {
    if (reply.headers) res.set(reply.headers);
    return void res.status(304).end();
  }
  // Opened before anything is sent: a source that cannot deliver is still a clean problem answer.
  res.removeHeader("ETag");
  const body = await reply.stream();
  if (reply.headers) res.set(reply.headers);
  res.set("ETag", etag).status(reply.status);
  if (req.method === "HEAD" || clientGone(res)) {
    body.destroy();
    return void res.end();
  }
  try {
    await pipeline(body, res);
  } catch (err) {
    // The client went away mid-body: the pipeline has destroyed the body, which is all there is to
    // do. (A failure of the body itself destroys the response too: that one goes on to the caller.)
    if (CLIENT_CLOSED.has((err as NodeJS.ErrnoException).code ?? "")) return;
    throw err;
  }
}

/** How a pipeline into a response fails when the client closed the connection. */
const CLIENT_CLOSED = new Set(["ERR_STREAM_PREMATURE_CLOSE", "ERR_STREAM_DESTROYED", "EPIPE", "ECONNRESET"]);

/** The client closed the connection (or the answer was cut off): nothing more can reach it. */
const clientGone = (res: Response) => res.destroyed || res.socket?.destroyed === true;

/** A route's variables from what was sent, with what the operation cannot check itself (400, 415). */
function checkedVariables(route: RestRoute, input: RestInput, req: Request): Record<string, unknown> {
  // Path segments and query parameters are text too (`/endUsers/%00`).
  const badParam = findUnstorableText(input.params, "path") ?? findUnstorableText(input.query, "query");
  if (badParam) throw unstorableTextError(badParam);
  // A parameter the route reads, sent without a value, is a 400 naming it (never read as absent).
  refuseEmptyQuery(input.query, Object.keys(route.query ?? {}));
  // No body at all: no Content-Length (or `Content-Length: 0`, which fetch sends for a bodiless POST) and no chunked body.
  const noBody = Number(req.get("content-length") ?? 0) === 0 && !req.get("transfer-encoding");
  if (route.jsonBody && req.body === undefined && !(route.optionalBody && noBody)) {
    throw new AppError(415, "Send the body as JSON with Content-Type: application/json.");
  }
  return route.variables(input);
}

/**
 * Pages longer than this are read in slices of this many rows: one slice's result objects at a
 * time are in memory (a 10,000-row page is ten reads), the rows before it already serialised.
 */
export const PAGE_SLICE = 1_000;

/**
 * A long page: the route's operation runs once per slice (`first` ≤ PAGE_SLICE, `after` the previous
 * slice's cursor) with the same context (one authentication, one rate-limit charge), and each
 * slice's records are serialised as they come. The body is the same JSON a single read would give
 * (`{"data":[…],"cursor":…}`), walking the same keyset order: every row once, as pages do. It is
 * sent once the last slice is read: its ETag is of the whole body, and a header goes before the body.
 */
async function streamPage(
  route: RestRoute,
  operation: CompiledOperation,
  contextValue: Context,
  variables: Record<string, unknown>,
  input: RestInput,
  req: Request,
  res: Response,
) {
  let remaining = variables.first as number;
  let after = variables.after as string | undefined;
  let written = 0;
  const parts: string[] = ['{"data":['];
  let status = 200;
  for (;;) {
    const first = Math.min(PAGE_SLICE, remaining);
    const result = await execute(operation, contextValue, { ...variables, first, after });
    if (result.errors?.length) return fail(route, input, res, ...problemFromGraphQL(result.errors, route));
    const reply = route.reply.send(result.data, input);
    const page = reply.body as { data: unknown[]; cursor: string | null };
    if (written === 0) {
      if (reply.headers) res.set(reply.headers);
      status = reply.status;
    }
    let chunk = "";
    for (const record of page.data) chunk += (written++ ? "," : "") + JSON.stringify(record);
    parts.push(chunk);
    remaining -= page.data.length;
    if (!page.cursor || remaining === 0) {
      parts.push(`],"cursor":${JSON.stringify(page.cursor)}}`);
      break;
    }
    // Let other requests in before reading the next slice: a read on the driver may complete
    // without ever yielding to the event loop.
    await new Promise(setImmediate);
    if (res.destroyed) return; // the client went away: read no further
    after = page.cursor!;
  }
  res.type("application/json");
  sendTagged(req, res, status, Buffer.from(parts.join(""), "utf8"));
}

/** A raw body: its media type (415) and declared length (413) checked before the route streams it. */
async function receiveRawBody(raw: RawBody, input: RestInput, req: Request): Promise<StagedBody> {
  const type = (req.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== raw.contentType) throw new AppError(415, `Send the body as raw bytes with Content-Type: ${raw.contentType}.`);
  if (Number(req.get("content-length") ?? 0) > raw.limitBytes) {
    throw new AppError(413, `Request body larger than the limit (${raw.limitBytes / 1024 / 1024} MiB).`);
  }
  // Compressed as the JSON bodies may be (gzip, deflate, br), the limit on the decoded bytes.
  return raw.receive(decodedStream(req, req.get("content-encoding")), input);
}

/** Runs a route's operation: counted and error-masked as POST /graphql's operations are. */
async function execute(operation: CompiledOperation, contextValue: Context, variables: Record<string, unknown>): Promise<ExecutionResult> {
  // The span's arguments are built only with tracing on: nothing is allocated for it otherwise.
  const result = await (tracing
    ? inOperationSpan({ name: operation.name, type: operation.type, documentId: operation.documentId, cost: () => operation.cost(variables) }, () =>
        operation.execute(contextValue, variables),
      )
    : operation.execute(contextValue, variables));
  const failed = Boolean(result.errors?.length);
  countOperation(operation.name, operation.type, failed);
  return failed ? { ...result, errors: maskErrors(result.errors!) } : result;
}
