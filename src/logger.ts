// Structured JSON logs (pino). One logger for the process; requests get child loggers with their id.
import pino from "pino";
import { currentScope } from "./audit/requestScope.js";

export const logger = pino({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === "test" ? "silent" : "info"),
  base: { service: "guidegate" },
  redact: {
    paths: ['req.headers["x-service-integration-key"]', "req.headers.authorization", "req.headers.cookie", "*.key", "*.hash"],
    censor: "[redacted]",
  },
  // Every line logged while a request is handled carries its id, whoever logs it (the request scope
  // is an AsyncLocalStorage set by the app for each request).
  mixin: () => {
    const requestId = currentScope()?.requestId;
    return requestId ? { requestId } : {};
  },
});
