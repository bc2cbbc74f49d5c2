// Structured JSON logs (pino). One logger for the process; requests get child loggers with their id.
import pino from "pino";
import { currentScope } from "./audit/requestScope.js";
import { tracing } from "./observability/tracing.js";

export const logger = pino({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === "test" ? "silent" : "info"),
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
