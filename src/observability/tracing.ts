// OpenTelemetry traces, off unless an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). This module is the only part of tracing the rest of the code
// imports, and it imports no OpenTelemetry package: the SDK (./otel.ts) is loaded by startTracing()
// with a dynamic import, so with tracing off nothing of it is even loaded, and every call site costs
// one test of `tracing` (undefined) on the hot path.
import { type Config, tracingEnabled } from "../config.js";
import type { SpanAttributes, Tracing } from "./traceContract.js";

/** The process's tracing, or undefined when it is off (the default). */
export let tracing: Tracing | undefined;

/**
 * Loads the OpenTelemetry SDK and starts exporting, when an endpoint is configured; else does
 * nothing. Called once, before the app is built (src/main.ts): Prisma's instrumentation must be in
 * place before its first query.
 */
export async function startTracing(config: Config): Promise<boolean> {
  if (tracing || !tracingEnabled(config)) return Boolean(tracing);
  const { createTracing } = await import("./otel.js");
  tracing = createTracing(config);
  return true;
}

/** Flushes and stops tracing (shutdown); a no-op when it is off. */
export async function stopTracing(): Promise<void> {
  const t = tracing;
  tracing = undefined;
  await t?.shutdown();
}

/** The active traceparent to store with work queued for later (a job, a webhook delivery); null when tracing is off. */
export const currentTraceparent = (): string | null => tracing?.traceparent() ?? null;

/**
 * `target` with each named async method run in a span of its own (the rate limiter's `consume`):
 * the object itself when tracing is off, so nothing is wrapped.
 */
export function traced<T extends object>(target: T, spans: { [K in keyof T]?: { name: string; attributes?: (args: unknown[]) => SpanAttributes } }): T {
  const t = tracing;
  if (!t) return target;
  const wrapped = Object.create(target) as T;
  for (const [method, span] of Object.entries(spans) as [keyof T & string, { name: string; attributes?: (args: unknown[]) => SpanAttributes }][]) {
    const fn = target[method];
    if (typeof fn !== "function") continue;
    (wrapped as Record<string, unknown>)[method] = (...args: unknown[]) => t.inSpan(span.name, span.attributes?.(args) ?? {}, () => fn.apply(target, args));
  }
  return wrapped;
}
