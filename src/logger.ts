// Structured JSON logs (pino). One logger for the process; requests get child loggers with their id.
import pino from "pino";
import { currentScope } from "./audit/requestScope.js";
import { tracing } from "./observability/tracing.js";

// The logger exists as soon as this module loads, before the configuration is validated: a level
// pino does not know (LOG_LEVEL=verbose) must not throw here, with a stack, ahead of the message that
// names LOG_LEVEL (src/config.ts refuses it, and start-up stops there).
const requested = process.env.LOG_LEVEL;
const known = requested !== undefined && (requested === "silent" || Object.hasOwn(pino.levels.values, requested));

export const logger = pino({
  level: known ? requested : process.env.NODE_ENV === "test" ? "silent" : "info",
  base: { service: "guidegate" },
  redact: {
    paths: ['req.headers["x-service-integration-key"]', "req.headers.authorization", "req.headers.cookie", "*.key", "*.hash"],
    censor: "[redacted]",
  },
  // Every line logged while a request is handled carries its id, whoever logs it (the request scope
  // is an AsyncLocalStorage set by the app for each request), and with tracing on the trace and span
  // it was written in, so a log line and its trace find each other.
  mixin: () => {
    const requestId = currentScope()?.requestId;
    const ids = tracing?.logIds();
    return requestId ? (ids ? { requestId, ...ids } : { requestId }) : (ids ?? {});
  },
});
