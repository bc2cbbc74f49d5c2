// Structured JSON logs (pino). One logger for the process; requests get child loggers with their id.
import pino from "pino";

export const logger = pino({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === "test" ? "silent" : "info"),
  base: { service: "guidegate" },
  redact: { paths: ["req.headers[\"x-service-integration-key\"]", "*.key", "*.hash"], censor: "[redacted]" },
});
