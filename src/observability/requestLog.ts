// One structured access-log line per request (pino-http) with its id, route name, status and
// duration. Other lines logged during the request get the id from the logger's mixin.
import type { Request, RequestHandler } from "express";
import { pinoHttp } from "pino-http";
import { logger } from "../logger.js";

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** A caller's x-request-id, if it is safe to echo and log (bounded, no control characters). */
export function acceptRequestId(value: string | undefined): string | undefined {
  return value !== undefined && REQUEST_ID.test(value) ? value : undefined;
}

// Probes and scrapes every few seconds would drown the log.
const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

export function requestLogging(routeLabel: (req: Request) => string): RequestHandler {
  return pinoHttp({
    logger,
    // The app has settled the id (the caller's or a new one) before this middleware runs.
    genReqId: (req) => String(req.headers["x-request-id"] ?? ""),
    autoLogging: { ignore: (req) => QUIET.has((req.url ?? "").split("?")[0] ?? "") },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "warn" : "info"),
    customSuccessMessage: (req, res, ms) => `${req.method} ${(req as Request).originalUrl} ${res.statusCode} ${ms}ms`,
    customErrorMessage: (req, res) => `${req.method} ${(req as Request).originalUrl} ${res.statusCode} failed`,
    customSuccessObject: (req, _res, val) => ({ ...val, requestId: req.id, route: routeLabel(req as Request) }),
    customErrorObject: (req, _res, _err, val) => ({ ...val, requestId: req.id, route: routeLabel(req as Request) }),
    // Only what an operator needs; headers would log the caller's e-mail on every line.
    serializers: {
      req: (req: { id: unknown; method: string; url: string; remoteAddress?: string; headers: Record<string, unknown> }) => ({
        id: req.id,
        method: req.method,
        url: req.url,
        remoteAddress: req.remoteAddress,
        userAgent: req.headers["user-agent"],
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  }) as unknown as RequestHandler;
}
