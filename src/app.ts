// The app factory: Express with GraphQL Yoga at /graphql and the REST route table beside it.
// It does not listen; src/main.ts does. Tests, the CLI and the bench build the same app.

import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import cors from "cors";
import express, { type NextFunction, type Request, type Response } from "express";
import type { DocumentNode } from "graphql";
import { createYoga } from "graphql-yoga";
import { requestScope } from "./audit/requestScope.js";
import { configureIdentityCache, KEY_HEADER, USER_HEADER } from "./auth/identity.js";
import { configureBlobStore } from "./blob/index.js";
import { type Config, sessionDatabaseUrl } from "./config.js";
import { createContext } from "./context.js";
import { configureDatabase, forgetQueryArguments, prisma } from "./db/index.js";
import { chargeRequest, costExtension } from "./domains/accounts/schema.js";
import { endpointsOpenApiExtra } from "./domains/endpoints/openapi.js";
import { endpointRouter, RUN_PATH } from "./domains/endpoints/run.js";
import { openApiTags, writePolicy } from "./domains/index.js";
import { configureWebhooks } from "./domains/webhooks/settings.js";
import { AppError, knownError } from "./errors.js";
import { armorPlugins, configureDocumentLimits, limitsOf } from "./graphql/armor.js";
import { operationBudget, useCostBudget } from "./graphql/budget.js";
import { CompiledDocuments, useCompiledExecution } from "./graphql/compiled.js";
import { AcceptedQueries, answerHandedOverResults, graphqlFastPath, handedOverContext, recordAcceptedQueries } from "./graphql/fastPath.js";
import { renderLocalGraphiQL } from "./graphql/graphiql.js";
import { maskError, partialResultsAre2xx } from "./graphql/masking.js";
import { conditionalGets, PersistedDocuments, usePersistedDocuments } from "./graphql/persistedDocuments.js";
import { acceptableAnswers, jsonRequestParams, malformedRequestsAre400 } from "./graphql/requestParams.js";
import { authenticateBeforeBody, identityBeforeBody, preauthenticated, requireCredentials } from "./graphql/requireCredentials.js";
import { storableText } from "./graphql/storableText.js";
import { traceOperations } from "./graphql/tracing.js";
import { trustDocuments } from "./graphql/trustedDocuments.js";
import { releaseHeapAfterLargeRequests } from "./heapRelease.js";
import { SECURITY_HEADERS } from "./httpServer.js";
import { ingestOpenApi } from "./ingest/openapi.js";
import { segmentRouter } from "./ingest/router.js";
import { closeConnectionsWhileDraining, createLifecycle, slowTestRoute } from "./lifecycle.js";
import { logger } from "./logger.js";
import { configureMail } from "./mail/index.js";
import { collectMetrics, graphqlMetricsPlugin, httpMetrics, metricsHandler, routeLabeler } from "./observability/metrics.js";
import { acceptRequestId, isProbe, requestLogging } from "./observability/requestLog.js";
import { traced, tracing } from "./observability/tracing.js";
import { openApiRouter } from "./openapi/index.js";
import { configurePublicUrl, publicBaseUrl } from "./publicUrl.js";
import { createRateLimiter } from "./ratelimit.js";
import { readBounded } from "./rest/bodyLimit.js";
import { nestedPast, tooDeepError } from "./rest/jsonDepth.js";
import { methodNotAllowed, problem, problemOf, sendProblem } from "./rest/problem.js";
import { JSON_BODY_LIMIT_BYTES, restRouter } from "./rest/router.js";
import { routes } from "./rest/routes.js";
import { rejectUndecodableUrls } from "./rest/urlDecoding.js";
import { schema } from "./schema/index.js";
import { notUtf8Error } from "./text.js";
import { textCache } from "./textCache.js";
import { reportViewerRouter } from "./viewer/index.js";

type ServerContext = { req: Request; res: Response };

/**
 * Yoga's logger. Yoga logs, at `error`, every error its masking replaced: a client's mistake (our
 * AppError, a 4xx) is not a server error, and an unexpected one was already logged with its stack
 * by maskError below. So thrown errors are not logged again here; anything else Yoga says is.
 */
function graphqlLogger() {
  const log = logger.child({ component: "graphql" });
  return {
    debug: (...args: unknown[]) => log.debug(args.map(String).join(" ")),
    info: (...args: unknown[]) => log.info(args.map(String).join(" ")),
    warn: (...args: unknown[]) => log.warn(args.map(String).join(" ")),
    error: (...args: unknown[]) => {
      if (args[0] instanceof Error) return;
      log.error(args.map(String).join(" "));
    },
  };
}

export function createApp(config: Config) {
  configureDatabase(writePolicy);
  const releaseIdentityCache = configureIdentityCache(config.IDENTITY_CACHE_MS, sessionDatabaseUrl(config));
  configureBlobStore(config);
  configureMail(config);
  configurePublicUrl(config.PUBLIC_URL);
  configureWebhooks(config);
  configureDocumentLimits(limitsOf(config));
  // With tracing on, each budget check is a span (a Redis round trip with REDIS_URL).
  const rateLimiter = traced(
    createRateLimiter({ perMinute: config.RATE_LIMIT_PER_MINUTE, redisUrl: config.REDIS_URL, maxRequestPoints: config.RATE_LIMIT_MAX_REQUEST_POINTS }),
    { consume: { name: "rate limit", attributes: ([accountId]) => ({ "guidegate.account_id": String(accountId), "guidegate.budget": "api" }) } },
  );
  // Write keys are public, so ingestion draws on a budget of its own (other Redis keys), never on the API's.
  const ingestRateLimiter = traced(
    createRateLimiter({
      perMinute: config.INGEST_RATE_LIMIT_PER_MINUTE,
      redisUrl: config.REDIS_URL,
      keyPrefix: "gg:rl-ingest",
      budget: "ingest",
    }),
    { consume: { name: "rate limit", attributes: ([accountId]) => ({ "guidegate.account_id": String(accountId), "guidegate.budget": "ingest" }) } },
  );
  // REST documents are parsed and validated here, once; an invalid one stops start-up.
  const trusted = trustDocuments(routes, schema);
  const lifecycle = createLifecycle();
  const routeLabel = routeLabeler(routes.map(({ method, path, name }) => ({ method, path, name })));
  collectMetrics();
  const compiled = new CompiledDocuments(schema);
  // Every cache keyed by the text a client sends is bounded (src/textCache.ts): Yoga's own parse
  // caches (its defaults keep 1,024 texts of any size) and the fast path's accepted queries.
  const textLimits = { entries: config.GRAPHQL_CACHE_ENTRIES, bytes: config.GRAPHQL_CACHE_BYTES };
  const parsed = { documentCache: textCache<DocumentNode>(textLimits), errorCache: textCache<object>(textLimits) };
  const accepted = new AcceptedQueries(textLimits);
  const persisted = new PersistedDocuments();
  // Every GraphQL operation is priced and charged before it runs (REST routes: src/rest/router.ts).
  const budget = operationBudget(schema, chargeRequest, costExtension);
  const yoga = createYoga<ServerContext>({
    schema,
    graphqlEndpoint: "/graphql",
    graphiql: config.GRAPHIQL ? { title: "guidegate GraphiQL", headers: JSON.stringify({ [KEY_HEADER]: "<API key>", [USER_HEADER]: "<e-mail>" }) } : false,
    renderGraphiQL: renderLocalGraphiQL,
    landingPage: false,
    logging: graphqlLogger(),
    plugins: [
      requireCredentials(),
      jsonRequestParams(),
      malformedRequestsAre400(),
      acceptableAnswers(),
      // documentId in place of query (and persisted-only keys): after the credentials, before anything reads the text.
      usePersistedDocuments(persisted, compiled),
      storableText(),
      ...(config.INTROSPECTION ? [] : [useDisableIntrospection()]),
      trusted.plugin,
      ...armorPlugins(limitsOf(config)),
      graphqlMetricsPlugin(),
      useCostBudget(budget),
      useCompiledExecution(compiled),
      answerHandedOverResults(),
      recordAcceptedQueries(accepted),
      partialResultsAre2xx(),
      conditionalGets(),
      // Last: it wraps whichever execute function the plugins above settled on. Only with tracing on.
      ...(tracing ? [traceOperations(persisted)] : []),
    ],
    // CORS is the app's one policy (the cors middleware below, CORS_ORIGINS), not Yoga's own.
    cors: false,
    // A request the fast path handed over keeps its context: its identity and rate-limit points.
    context: ({ request, req, res }) => handedOverContext(res) ?? createContext(request.headers, req, res, rateLimiter, preauthenticated(request)),
    maskedErrors: { maskError },
    parserAndValidationCache: parsed,
  });

  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "extended");
  // On every answer, API and pages alike (one place, error pages included): browsers take the
  // declared media type as it is (no sniffing JSON or an upload into a script or a page), no page
  // of ours is framed by another site (clickjacking GraphiQL, /docs or /reports), and no URL of
  // ours leaks to the sites a page links to. A page may tighten its own CSP (src/viewer/index.ts).
  app.use((_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  app.use((req, res, next) => {
    const id = acceptRequestId(req.get("x-request-id")) ?? randomUUID();
    req.headers["x-request-id"] = id;
    res.set("x-request-id", id);
    // Everything this request does (REST, GraphQL, audit entries) runs in its scope.
    requestScope.run({ requestId: id, ip: req.ip ?? null, actor: null }, next);
  });
  // The request's span (with tracing on; not mounted otherwise), active for everything below it.
  // Probes and scrapes are not traced: a trace every few seconds per load balancer says nothing.
  if (tracing) {
    const traceRequest = tracing.httpServer(routeLabel);
    app.use((req, res, next) => (isProbe(req.path) ? next() : traceRequest(req, res, next)));
  }
  app.use(requestLogging(routeLabel), httpMetrics(routeLabel), closeConnectionsWhileDraining(lifecycle));
  app.use(
    releaseHeapAfterLargeRequests({
      afterBytes: config.HEAP_RELEASE_AFTER_BYTES,
      minIntervalMs: config.HEAP_RELEASE_MIN_INTERVAL_MS,
      beforeCollect: forgetQueryArguments,
    }),
  );
  app.use(
    cors({
      origin: config.CORS_ORIGINS,
      // Range and If-Range: a browser's PDF viewer (pdf.js) reads a file download by ranges, and
      // needs Accept-Ranges and Content-Range (and ETag, for If-Range) to see that it may.
      // If-None-Match: the ETag a page read is sent back for its 304 (conditional GETs, saved
      // endpoints). Content-Encoding: a compressed body. traceparent/tracestate: a browser's
      // OpenTelemetry continues its trace here. Exposed, what an answer carries in headers only: the
      // NDJSON export's resume cursor (X-Next-Cursor, X-Has-More) and a CSV's file name.
      allowedHeaders: [
        "content-type",
        "authorization",
        KEY_HEADER,
        USER_HEADER,
        "x-request-id",
        "x-retry-count",
        "idempotency-key",
        "range",
        "if-range",
        "if-none-match",
        "content-encoding",
        "traceparent",
        "tracestate",
      ],
      exposedHeaders: [
        "x-request-id",
        "RateLimit-Limit",
        "RateLimit-Remaining",
        "RateLimit-Reset",
        "Retry-After",
        "Accept-Ranges",
        "Content-Range",
        "ETag",
        "X-Next-Cursor",
        "X-Has-More",
        "Content-Disposition",
      ],
      maxAge: 600,
    }),
  );

  app.use(rejectUndecodableUrls([...routes.map((r) => r.path), RUN_PATH]));
  app.get("/healthz", (_req, res) => void res.json({ status: "ok" }));
  app.get("/readyz", async (_req, res) => {
    if (lifecycle.draining) return void res.status(503).json({ status: "draining" });
    try {
      await prisma.$queryRawUnsafe("SELECT 1");
      res.json({ status: "ready" });
    } catch {
      res.status(503).json({ status: "unavailable", detail: "database not reachable" });
    }
  });

  app.get("/metrics", metricsHandler(config.METRICS_TOKEN));
  // Other methods on these paths: 405 with Allow, as on every known path (the contract's common rule).
  app.all(["/healthz", "/readyz", "/metrics"], methodNotAllowed(["GET"]));
  app.use(
    openApiRouter(routes, schema, {
      rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
      publicUrl: publicBaseUrl(),
      resources: openApiTags,
      // What the route table does not describe: Segment-format ingestion and calling saved endpoints.
      extra: {
        ...ingestOpenApi,
        tags: [...ingestOpenApi.tags, ...endpointsOpenApiExtra.tags],
        paths: { ...ingestOpenApi.paths, ...endpointsOpenApiExtra.paths },
      },
    }),
  );
  if (config.TEST_SLOW_ROUTE_MS) app.get("/__test/slow", slowTestRoute(config.TEST_SLOW_ROUTE_MS));
  app.use(reportViewerRouter());

  // POST /graphql in the contract's order: the credentials first, from the headers alone (a request
  // they do not authenticate has its body never read: Yoga answers its 401, src/graphql/
  // requireCredentials.ts), then the body, read whole up to the JSON limit of REST bodies (a 413
  // problem as soon as it passes it, however it is framed; a 400 past src/rest/jsonDepth.ts's nesting),
  // decoded from gzip, deflate or br as it arrives, by the code that decodes REST and Segment bodies
  // (src/rest/bodyLimit.ts: the limit holds for the decoded bytes too, and decoding stops there),
  // and handed to the fast path and Yoga.
  // (app.use with a method check, not app.post: a matched route would become the request's metrics label.)
  // A body refused here (413; 415 for a coding; 400 nested too deep, not decoding or not UTF-8) is a problem as
  // on REST, and carries the `extensions.cost` every /graphql answer carries: nothing priced or charged.
  const refuseBody = (res: Response, err: unknown) => {
    const known = knownError(err);
    if (!known) logger.error({ err }, "reading a /graphql body failed");
    const [p, headers] = known ? problemOf(known) : [problem(500, "Unexpected error; the request may succeed on retry."), undefined];
    sendProblem(res, { ...p, extensions: { cost: budget.unpriced } }, headers);
  };
  app.use(yoga.graphqlEndpoint, (req, res, next) => {
    if (req.method !== "POST") return next();
    authenticateBeforeBody(req).then(
      () =>
        readBounded(req, res, JSON_BODY_LIMIT_BYTES).then(
          (body) => {
            const type = req.headers["content-type"] ?? "";
            const json = /json/i.test(type);
            // Yoga and the fast path read every body as UTF-8: another declared charset is refused
            // (415, as body-parser answers it on the REST routes), and bytes that are not UTF-8 are a
            // 400, not text stored with U+FFFD in place of what was sent.
            const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type)?.[1]?.toLowerCase();
            if (json && charset !== undefined && charset !== "utf-8" && charset !== "utf8")
              return refuseBody(res, new AppError(415, `unsupported charset "${charset.slice(0, 40).toUpperCase()}": send the JSON body in UTF-8`));
            if (json && !isUtf8(body)) return refuseBody(res, notUtf8Error("body"));
            if (json && nestedPast(body)) return refuseBody(res, tooDeepError("body"));
            // Decoded here, so the fast path and Yoga (which decodes none) read plain JSON.
            delete req.headers["content-encoding"];
            req.headers["content-length"] = String(body.length);
            req.body = body;
            next();
          },
          (err: unknown) => refuseBody(res, err),
        ),
      () => {
        res.set("Connection", "close");
        next();
      },
    );
  });
  app.use(
    yoga.graphqlEndpoint,
    graphqlFastPath({ accepted, compiled, budget, context: (req, res) => createContext(req, req, res, rateLimiter, identityBeforeBody(req)) }),
  );
  app.use(yoga.graphqlEndpoint, yoga as unknown as express.RequestHandler);
  // Segment-format sources (write keys, Segment's answers): src/ingest/.
  app.use(segmentRouter(ingestRateLimiter));
  // Before the table: its `/endpoints/:name` would take `/endpoints/openapi.json`.
  app.use(endpointRouter({ schema, charge: chargeRequest, context: (req, res) => createContext(req, req, res, rateLimiter) }));
  app.use(
    restRouter(routes, {
      operations: trusted.operations,
      costs: trusted.costs,
      charge: chargeRequest,
      // The Express request is the header source: no copy of its headers per request.
      context: (req, res) => createContext(req, req, res, rateLimiter),
    }),
  );

  app.use((req, res) => sendProblem(res, problem(404, `No route for ${req.method} ${req.path}.`)));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const known = knownError(err);
    if (known) return sendProblem(res, ...problemOf(known));
    logger.error({ err }, "unhandled error");
    sendProblem(res, problem(500, "Unexpected error; the request may succeed on retry."));
  });

  return {
    app,
    yoga,
    close: async () => {
      await Promise.all([rateLimiter.close(), ingestRateLimiter.close(), releaseIdentityCache()]);
    },
    lifecycle,
    trusted,
    accepted,
    compiled,
    parsed,
  };
}
