// Prometheus metrics (prom-client), served at GET /metrics. One registry per process: metrics are
// about the process, whatever number of apps the tests build in it. Labels are bounded on purpose
// (route names, not URLs; a capped set of operation names) so a client cannot blow up cardinality.
import { createHash, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type GraphQLError, getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import client from "prom-client";
import { onQuery } from "../db/index.js";
import { LIMIT_CODE } from "../graphql/armor.js";
import { problem, sendProblem } from "../rest/problem.js";
import { rateLimitRejections as rateLimitEvents, redisLinks, webhookDeliveriesDropped as webhookDropEvents } from "./counters.js";

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

const httpRequests = new client.Counter({
  name: "http_requests_total",
  help: "HTTP requests by route (REST row name or path pattern), method and status.",
  labelNames: ["route", "method", "status"] as const,
  registers: [registry],
});
const httpDuration = new client.Histogram({
  name: "http_request_duration_seconds",
  help: "HTTP request duration by route, method and status.",
  labelNames: ["route", "method", "status"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
const httpInFlight = new client.Gauge({
  name: "http_requests_in_flight",
  help: "HTTP requests being handled (drains to 0 during a graceful shutdown).",
  registers: [registry],
});
const graphqlOperations = new client.Counter({
  name: "graphql_operations_total",
  help: "Executed GraphQL operations (REST routes included) by operation name, type and outcome.",
  labelNames: ["operation", "type", "outcome"] as const,
  registers: [registry],
});
const graphqlRejected = new client.Counter({
  name: "graphql_rejected_documents_total",
  help: "GraphQL documents refused before execution: no valid credentials, parse errors, validation errors, or limits (depth, cost, aliases, tokens, directives).",
  labelNames: ["reason"] as const,
  registers: [registry],
});
const dbQueries = new client.Counter({
  name: "db_queries_total",
  help: "SQL statements sent to the database, by kind.",
  labelNames: ["kind"] as const,
  registers: [registry],
});
const jobQueueDepth = new client.Gauge({
  name: "job_queue_depth",
  help: "Jobs waiting in the background queue (labelled by queue once queues report).",
  labelNames: ["queue"] as const,
  registers: [registry],
});
jobQueueDepth.set(0);
const rateLimitRejections = new client.Counter({
  name: "rate_limit_rejections_total",
  help: "Requests refused with 429 by the per-account rate limit.",
  labelNames: ["account"] as const,
  registers: [registry],
});

/** For the job runner: how many jobs wait in `queue`. */
export function setJobQueueDepth(depth: number, queue?: string): void {
  if (queue) jobQueueDepth.set({ queue }, depth);
  else jobQueueDepth.set(depth);
}

const rollupLag = new client.Gauge({
  name: "rollup_lag_seconds",
  help: "Age of the oldest event not yet counted in the report rollups, after the rollup worker's last pass (0: up to date). Reports stay exact; a lag only moves their cost to reading raw events.",
  registers: [registry],
});
rollupLag.set(0);

/** For the rollup worker: how far behind the rollups are after its pass. */
export const setRollupLag = (seconds: number): void => void rollupLag.set(seconds);

/** For POST /graphql without valid credentials (src/graphql/requireCredentials.ts). */
export const graphqlUnauthenticated = (): void => void graphqlRejected.inc({ reason: "unauthenticated" });

new client.Gauge({
  name: "ratelimit_redis_connected",
  help: "1 while the rate limits' Redis (REDIS_URL) is connected and budgets are shared by the instances; 0 during an outage, when each instance counts on its own (N instances allow up to N times the budget). Absent without REDIS_URL.",
  labelNames: ["budget"] as const,
  registers: [registry],
  collect() {
    this.reset();
    const up = new Map<string, boolean>();
    for (const link of redisLinks) up.set(link.budget, (up.get(link.budget) ?? true) && link.connected);
    for (const [budget, connected] of up) this.set({ budget }, connected ? 1 : 0);
  },
});

/** For the rate limiter: one request of `accountId` was refused. */
export function rateLimitRejected(accountId: string): void {
  rateLimitRejections.inc({ account: accountId });
}

const webhookDropped = new client.Counter({
  name: "webhook_deliveries_dropped_total",
  help: "Webhook deliveries stored as dropped instead of queued: their endpoint already had WEBHOOK_MAX_PENDING_PER_ENDPOINT pending.",
  labelNames: ["account"] as const,
  registers: [registry],
});

let collecting = false;
/**
 * Subscribes to what other modules report without depending on prom-client: SQL statements (the db
 * module's query hook), rate-limit rejections and dropped webhook deliveries (src/observability/counters.ts). Once per process.
 */
export function collectMetrics(): void {
  if (collecting) return;
  collecting = true;
  rateLimitEvents.subscribe(rateLimitRejected);
  webhookDropEvents.subscribe((account, by) => webhookDropped.inc({ account }, by));
  onQuery((sql) => {
    const kind = /^\s*(select|insert|update|delete|begin|commit|rollback|with|pragma)\b/i.exec(sql)?.[1]?.toLowerCase() ?? "other";
    dbQueries.inc({ kind });
  });
}

/** What a route label is made from: a REST row's method, Express path and name (the app hands these in). */
export interface NamedRoute {
  method: string;
  path: string;
  name: string;
}

/**
 * The route label of a finished request: the REST row's name, the Express route path of other
 * routes, "graphql", or "unmatched" (never the raw URL: ids in paths would make a series each).
 */
export function routeLabeler(routes: readonly NamedRoute[]): (req: Request) => string {
  const names = new Map(routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r.name]));
  return (req) => {
    const path = (req.route as { path?: unknown } | undefined)?.path;
    if (typeof path === "string") return names.get(`${req.method} ${path}`) ?? `${req.baseUrl}${path}`;
    const url = req.originalUrl.split("?")[0] ?? "";
    if (url === "/graphql") return "graphql";
    if (url.startsWith("/docs/assets/")) return "/docs/assets";
    if (url.startsWith("/reports/assets/")) return "/reports/assets";
    return "unmatched";
  };
}

export function httpMetrics(label: (req: Request) => string): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const end = httpDuration.startTimer();
    httpInFlight.inc();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      httpInFlight.dec();
      const labels = { route: label(req), method: req.method, status: String(res.statusCode) };
      httpRequests.inc(labels);
      end(labels);
    };
    res.once("finish", finish);
    res.once("close", finish);
    next();
  };
}

const MAX_OPERATION_NAMES = 200;
const seenOperations = new Set<string>();

/** Operation names come from clients: keep well-formed ones, up to a fixed number of distinct names. */
function operationLabel(name: string | undefined): string {
  if (!name) return "anonymous";
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) return "other";
  if (seenOperations.has(name)) return name;
  if (seenOperations.size >= MAX_OPERATION_NAMES) return "other";
  seenOperations.add(name);
  return name;
}

const isLimit = (errors: readonly Error[]) => errors.some((e) => (e as GraphQLError).extensions?.code === LIMIT_CODE);

/** Counts one executed operation (POST /graphql through the plugin below, REST routes directly). */
export function countOperation(name: string | undefined, type: string, failed: boolean): void {
  graphqlOperations.inc({ operation: operationLabel(name), type, outcome: failed ? "error" : "ok" });
}

export function graphqlMetricsPlugin(): Plugin {
  return {
    onParse() {
      return ({ result }) => {
        if (result instanceof Error) graphqlRejected.inc({ reason: isLimit([result]) ? "limit" : "parse" });
      };
    },
    onValidate() {
      return ({ valid, result }) => {
        if (!valid) graphqlRejected.inc({ reason: isLimit(result) ? "limit" : "validation" });
      };
    },
    onExecute({ args }) {
      const op = getOperationAST(args.document, args.operationName);
      const name = args.operationName ?? op?.name?.value;
      const type = op?.operation ?? "unknown";
      return {
        onExecuteDone({ result }) {
          countOperation(name, type, !(Symbol.asyncIterator in result) && Boolean(result.errors?.length));
        },
      };
    },
  };
}

/**
 * GET /metrics. With a token (METRICS_TOKEN) only for `Authorization: Bearer <token>`, else a 401:
 * the labels name accounts (rate_limit_rejections_total). The comparison takes the same time
 * wherever the two differ (their digests are compared, so their lengths leak nothing either).
 */
export function metricsHandler(token: string | undefined): RequestHandler {
  const expected = token === undefined ? undefined : digest(token);
  return async (req, res) => {
    if (expected) {
      const [scheme, given] = (req.get("authorization") ?? "").trim().split(/\s+/, 2);
      if (scheme?.toLowerCase() !== "bearer" || !given || !timingSafeEqual(digest(given), expected)) {
        return sendProblem(res, problem(401, "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>."), { "WWW-Authenticate": 'Bearer realm="metrics"' });
      }
    }
    res.set("Content-Type", registry.contentType);
    res.send(await registry.metrics());
  };
}

const digest = (text: string) => createHash("sha256").update(text).digest();
