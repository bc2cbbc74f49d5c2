// One structured access-log line per request, written with pino directly when the response is done
// (no pino-http wrapper: no per-request child logger, no serializer pass over the request). Its
// level says whose mistake it was: a client's (4xx) is `info`, or `warn` for 401/403/429, which an
// operator may want to watch; only the server's own failures (5xx) are `error`. The stack of an
// unexpected error is logged once, at `error`, where it is caught (src/app.ts, src/rest/router.ts).
import { STATUS_CODES } from "node:http";
import type { Request, RequestHandler } from "express";
import type { Level } from "pino";
import { logger } from "../logger.js";
import { traceIdsOf } from "./traceContract.js";

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** A caller's x-request-id, if it is safe to echo and log (bounded, no control characters). */
export function acceptRequestId(value: string | undefined): string | undefined {
  return value !== undefined && REQUEST_ID.test(value) ? value : undefined;
}

// Probes and scrapes every few seconds would drown the log (and the traces).
const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

/** A health probe or a metrics scrape: neither access-logged nor traced. */
export const isProbe = (path: string): boolean => QUIET.has(path);

/** The access line's level for a response status. */
export function accessLevel(status: number): Level {
  if (status >= 500) return "error";
  if (status === 401 || status === 403 || status === 429) return "warn";
  return "info";
}

export function requestLogging(routeLabel: (req: Request) => string): RequestHandler {
  return (req, res, next) => {
    if (isProbe(req.path)) return next();
    const start = performance.now();
    res.once("close", () => {
      const status = res.statusCode;
      const ms = Math.round(performance.now() - start);
      const requestId = String(req.headers["x-request-id"] ?? "");
      const aborted = !res.writableFinished;
      // Only what an operator needs; headers would log the caller's e-mail on every line.
      const line = {
        requestId,
        req: { id: requestId, method: req.method, url: req.originalUrl, remoteAddress: req.socket?.remoteAddress, userAgent: req.get("user-agent") },
        res: { statusCode: status },
        responseTime: ms,
        route: routeLabel(req),
        ...(status >= 400 ? { title: STATUS_CODES[status] } : {}),
        ...(aborted ? { aborted: true } : {}),
        // Written after the response, outside the request's span: its ids were kept on the response.
        ...traceIdsOf(res),
      };
      const level = aborted && status < 500 ? "warn" : accessLevel(status);
      logger[level](line, `${req.method} ${req.originalUrl} ${status} ${ms}ms${aborted ? " (connection closed before the response ended)" : ""}`);
    });
    next();
  };
}
