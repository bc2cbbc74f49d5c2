// POST /graphql for documents the service has already accepted: a dashboard or a segmentation
// service sends the same few queries on every page view of its users, and for those Yoga's
// per-request envelope (a fetch Request and Response made from Node's, the plugin chain, the result
// processors) cost as much as the query itself. A query whose exact text Yoga has parsed, validated
// (armor limits, introspection rule and all) and executed before is run here, compiled, with the
// same context factory, priced and charged the same way (src/graphql/budget.ts), and answered as
// Yoga answers a successful result: 200, the media type Yoga's Accept negotiation picks,
// `{"data":…,"extensions":{"cost":…}}`.
//
// Anything else goes to Yoga untouched, the body already read handed over as `req.body`: a document
// not yet seen, a mutation or subscription, credentials that do not authenticate, variables that
// are not storable text. A result with errors is handed to Yoga with the body and the context (the
// same identity, the rate-limit points already charged): Yoga parses and validates the text from
// its caches and, instead of executing, takes that result (answerHandedOverResults below), so the
// resolvers run once and the errors are masked, given their status and answered exactly as Yoga
// always answers them. test/graphql-fast-path.test.ts compares both answers header for header and
// byte for byte.
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type DocumentNode, type ExecutionResult, getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { LRUCache } from "lru-cache";
import type { Context } from "../context.js";
import { countOperation } from "../observability/metrics.js";
import { tracing } from "../observability/tracing.js";
import { findUnstorableText } from "../text.js";
import { type TextCacheLimits, textCache } from "../textCache.js";
import type { OperationBudget } from "./budget.js";
import type { CompiledDocuments } from "./compiled.js";
import { inOperationSpan } from "./tracing.js";

/** Query texts Yoga has accepted and executed, with their documents: a bounded LRU (src/textCache.ts). */
export class AcceptedQueries {
  private readonly entries: LRUCache<string, DocumentNode>;
  /** Requests the fast path answered (the rest went to Yoga): for the operator's and the tests' eyes. */
  served = 0;
  /** Requests the fast path executed and handed to Yoga to answer (a result with errors). */
  handedOver = 0;
  constructor(limits: TextCacheLimits) {
    this.entries = textCache(limits);
  }

  get(text: string): DocumentNode | undefined {
    return this.entries.get(text);
  }

  /** Keeps the text unless it is too big to cache. */
  add(text: string, document: DocumentNode): void {
    this.entries.set(text, document);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The Yoga plugin that records what Yoga accepted (an execution follows parse, validation and every check). */
export function recordAcceptedQueries(accepted: AcceptedQueries): Plugin {
  return {
    onExecute({ args }) {
      const query = (args.contextValue as { params?: { query?: unknown } }).params?.query;
      if (typeof query === "string" && getOperationAST(args.document, args.operationName)?.operation === "query") accepted.add(query, args.document);
    },
  };
}

/**
 * The media type Yoga's result processing answers a regular result with, for an Accept header:
 * its processors are tried in order and the last match wins, the header's first types last.
 * Null: Yoga would answer otherwise (a 406, a stream): not ours to answer.
 */
export function regularMediaType(accept: string | undefined): string | null {
  let chosen: string | null = null;
  const asked = (accept || "*/*").replace(/\s/g, "").toLowerCase().split(",").reverse();
  for (const entry of asked) {
    const [type, ...params] = entry.split(";");
    if (!type || (params.find((p) => p.includes("charset=")) ?? "charset=utf-8") !== "charset=utf-8") continue;
    const [pre, suf] = type.split("/");
    for (const offered of ["application/graphql-response+json", "application/json"]) {
      const [oPre, oSuf] = offered.split("/");
      if ((pre === "*" || pre === oPre) && (suf === "*" || suf === oSuf)) chosen = offered;
    }
  }
  // Yoga tries its stream processors first and the regular one last: a regular match is final.
  return chosen;
}

const JSON_TYPE = /^application\/json\s*(;\s*charset=utf-8\s*)?$/i;
const PARAM_KEYS = new Set(["query", "variables", "operationName", "extensions"]);

interface Params {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

function asParams(body: unknown): Params | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const p = body as Record<string, unknown>;
  for (const key of Object.keys(p)) if (!PARAM_KEYS.has(key)) return null;
  if (typeof p.query !== "string" || p.extensions != null) return null;
  if (p.operationName != null && typeof p.operationName !== "string") return null;
  if (p.variables != null && (typeof p.variables !== "object" || Array.isArray(p.variables))) return null;
  return p as unknown as Params;
}

/** Where the context of a request the fast path handed to Yoga is kept, for Yoga's context factory. */
const HANDED_OVER = "graphqlContext";
export const handedOverContext = (res: Response | undefined): Context | undefined => res?.locals?.[HANDED_OVER] as Context | undefined;
/** Where the result of a request the fast path executed and handed to Yoga is kept, for Yoga to answer. */
const HANDED_OVER_RESULT = "graphqlResult";

/**
 * The Yoga plugin that answers a request the fast path executed from that execution, instead of
 * running it again. It sets the execute function, so it comes after every plugin that sets one
 * (useCompiledExecution); every other hook still runs on the result: the metrics' onExecuteDone,
 * Yoga's error masking (after all plugins given) and the result processing that picks the status.
 */
export function answerHandedOverResults(): Plugin {
  return {
    onExecute({ args, setExecuteFn }) {
      const locals = (args.contextValue as { res?: Response }).res?.locals;
      const result = locals?.[HANDED_OVER_RESULT] as ExecutionResult | undefined;
      if (!locals || !result) return;
      // One execution per request (batching is off): the result answers it once.
      delete locals[HANDED_OVER_RESULT];
      setExecuteFn(() => result);
    },
  };
}

export function graphqlFastPath(options: {
  accepted: AcceptedQueries;
  compiled: CompiledDocuments;
  budget: OperationBudget;
  context: (req: Request, res: Response) => Context;
}): RequestHandler {
  const { accepted, compiled, budget, context } = options;
  return async (req: Request, res: Response, next: NextFunction) => {
    // The body was read before (src/app.ts: within the size limit, after the credentials); without
    // one (credentials that do not authenticate) the request is Yoga's.
    const body: unknown = req.body;
    if (req.method !== "POST" || accepted.size === 0 || req.url.includes("?") || !Buffer.isBuffer(body) || body.length === 0) return next();
    if (!JSON_TYPE.test(req.headers["content-type"] ?? "")) return next();
    // (A compressed body arrives decoded: src/app.ts.)
    const mediaType = regularMediaType(req.headers.accept);
    if (!mediaType) return next();
    const toYoga = (ctx?: Context, result?: ExecutionResult) => {
      if (ctx) res.locals[HANDED_OVER] = ctx;
      if (result) {
        res.locals[HANDED_OVER_RESULT] = result;
        accepted.handedOver++;
      }
      next();
    };
    let params: Params | null;
    try {
      params = asParams(JSON.parse(body.toString("utf8")));
    } catch {
      return toYoga();
    }
    const document = params && accepted.get(params.query);
    if (!params || !document) return toYoga();
    if (params.variables && findUnstorableText(params.variables, "variables")) return toYoga();
    const op = compiled.get(document, params.operationName);
    if (op?.type !== "query") return toYoga();
    const ctx = context(req, res);
    try {
      // A persisted-only key's text is Yoga's to refuse (src/graphql/persistedDocuments.ts), and so
      // is a write key (src/graphql/requireCredentials.ts).
      const identity = await ctx.identity();
      if (identity.persistedOnly || identity.scope === "ingest") return toYoga(ctx);
    } catch {
      return toYoga(ctx);
    }
    try {
      // Priced and charged before it runs, as Yoga's requests are (a refusal is Yoga's to answer: it keeps ctx.cost).
      await budget.charge(ctx, document, params.operationName, params.variables);
    } catch {
      // Not a refusal (a store failure): Yoga prices it again and answers what happens then.
      if (!ctx.cost?.refused) ctx.cost = undefined;
      return toYoga(ctx);
    }
    let result: ExecutionResult;
    try {
      const variables = params.variables ?? {};
      result = await (tracing
        ? inOperationSpan({ name: op.name, type: op.type, cost: () => op.cost(variables) }, () => op.execute(ctx, variables))
        : op.execute(ctx, variables));
    } catch {
      return toYoga(ctx);
    }
    if (result.errors?.length) return toYoga(ctx, result);
    countOperation(op.name, op.type, false);
    accepted.served++;
    res
      .status(200)
      .set("Content-Type", `${mediaType}; charset=utf-8`)
      .end(JSON.stringify(budget.withCost(ctx, result)));
  };
}
