// What the process's code and the OpenTelemetry module (./otel.ts, loaded only with tracing on)
// agree on: the tracing interface, and where a request's trace ids wait for its access log line.
import type { RequestHandler, Response } from "express";

export type SpanKindName = "internal" | "server" | "client" | "producer" | "consumer";
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** What a span's code may add to its span while it runs. */
export interface SpanHandle {
  setAttribute(key: string, value: string | number | boolean): void;
}

/** The ids a log line carries (the trace and span active where it was written). */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

export interface Tracing {
  /** Runs `fn` (sync or async) in a child span of the active one; a throw or rejection marks it failed. */
  inSpan<T>(name: string, attributes: SpanAttributes, fn: (span: SpanHandle) => T, kind?: SpanKindName): T;
  /**
   * Runs background work in a trace of its own (a new root span), linked to the trace that caused
   * it: `cause` is the W3C traceparent stored with the job when the request queued it.
   */
  inLinkedTrace<T>(name: string, attributes: SpanAttributes, cause: string | null | undefined, fn: (span: SpanHandle) => T): T;
  /** The active span as a W3C `traceparent` header value (undefined outside any span). */
  traceparent(): string | undefined;
  /** The active span's ids for a log line. */
  logIds(): TraceIds | undefined;
  /** Express middleware: the request's server span (continuing an incoming traceparent), active for everything after it. */
  httpServer(routeOf: (req: Parameters<RequestHandler>[0]) => string): RequestHandler;
  /** Exports what is buffered and stops (shutdown). */
  shutdown(): Promise<void>;
}

/** Where the HTTP span's ids are kept for the access log line (written when the response closes, outside the span's context). */
const TRACE_IDS = "traceIds";

export function rememberTraceIds(res: Response, ids: TraceIds): void {
  res.locals[TRACE_IDS] = ids;
}

export function traceIdsOf(res: Response): TraceIds | undefined {
  return res.locals[TRACE_IDS] as TraceIds | undefined;
}
