// The OpenTelemetry side of ./tracing.ts, loaded only when an OTLP endpoint is configured (a dynamic
// import from startTracing): the official SDK pieces wired by hand rather than sdk-node's
// auto-instrumentation, which patches every module it knows at load (http, express, pg...) and, in
// an ES module process, needs a loader hook. Our spans are few and placed where they mean
// something: the HTTP request, the GraphQL operation, the rate-limit and identity lookups, each SQL
// statement, and the background work. Prisma's own spans (operation and db_query, with the SQL)
// come from @prisma/instrumentation, which for Prisma 7 only installs a tracing helper the client
// looks for; it patches nothing and works with the driver adapters.
import type { IncomingHttpHeaders } from "node:http";
import { type Context, context, type Link, propagation, ROOT_CONTEXT, type Span, SpanKind, type SpanOptions, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { PrismaInstrumentation } from "@prisma/instrumentation";
import type { Config } from "../config.js";
import { rememberTraceIds, type SpanAttributes, type SpanHandle, type SpanKindName, type Tracing } from "./traceContract.js";

const KINDS: Record<SpanKindName, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

/** OTEL_TRACES_SAMPLER / _ARG as the specification defines them (the SDK package leaves reading them to the SDK's user). */
function sampler(config: Config): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG ?? 1);
  switch (config.OTEL_TRACES_SAMPLER) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio();
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * Statements run outside any request or job (the workers' polls, every second or so, for due jobs
 * and deliveries) would each be a trace of its own, a flood with nothing in it: they are not
 * recorded. Everything inside a request's or a job's trace is sampled as its root was.
 */
class NoOrphanStatements implements Sampler {
  constructor(private readonly inner: Sampler) {}
  shouldSample(...args: Parameters<Sampler["shouldSample"]>): ReturnType<Sampler["shouldSample"]> {
    const [parent, , name] = args;
    if (!trace.getSpanContext(parent) && (name.startsWith("prisma:") || name.startsWith("db_query"))) return { decision: SamplingDecision.NOT_RECORD };
    return this.inner.shouldSample(...args);
  }
  toString(): string {
    return `NoOrphanStatements{${this.inner.toString()}}`;
  }
}

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as PromiseLike<unknown> | null)?.then === "function";

function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** Runs `fn` with `span` active and ends it when `fn` (or the promise it returns) is done. */
function runIn<T>(span: Span, parent: Context, fn: (span: SpanHandle) => T): T {
  return context.with(trace.setSpan(parent, span), () => {
    let result: T;
    try {
      result = fn(span);
    } catch (err) {
      failed(span, err);
      span.end();
      throw err;
    }
    if (!isThenable(result)) {
      span.end();
      return result;
    }
    return result.then(
      (value) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        failed(span, err);
        span.end();
        throw err;
      },
    ) as T;
  });
}

const clean = (attributes: SpanAttributes) => {
  for (const k of Object.keys(attributes)) if (attributes[k] === undefined) delete attributes[k];
  return attributes as Record<string, string | number | boolean>;
};

export function createTracing(config: Config): Tracing {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const propagator = new W3CTraceContextPropagator();
  propagation.setGlobalPropagator(propagator);
  // The endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces),
  // headers and timeout are read from the environment by the exporter itself.
  const exporter = new OTLPTraceExporter();
  const provider = new TracerProvider({
    resource: defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ "service.name": config.OTEL_SERVICE_NAME })),
    sampler: new NoOrphanStatements(sampler(config)),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.OTEL_BSP_SCHEDULE_DELAY })],
  });
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer("guidegate");

  // Prisma's spans: the operation (model and method) and each statement it sends (db_query, with
  // the SQL). Serialising the arguments and compiling the query plan (cached) are left out: two
  // spans per call that say nothing an operator acts on.
  const prisma = new PrismaInstrumentation({ enabled: false, ignoreSpanTypes: ["prisma:client:serialize", "prisma:client:compile"] });
  prisma.setTracerProvider(provider);
  prisma.enable();

  const start = (name: string, attributes: SpanAttributes, options: SpanOptions, parent: Context) =>
    tracer.startSpan(name, { ...options, attributes: clean(attributes) }, parent);

  return {
    inSpan(name, attributes, fn, kind = "internal") {
      const parent = context.active();
      return runIn(start(name, attributes, { kind: KINDS[kind] }, parent), parent, fn);
    },

    inLinkedTrace(name, attributes, cause, fn) {
      const links: Link[] = [];
      const caused = cause ? trace.getSpanContext(propagator.extract(ROOT_CONTEXT, { traceparent: cause }, headerGetter)) : undefined;
      if (caused) links.push({ context: caused });
      return runIn(start(name, attributes, { kind: SpanKind.CONSUMER, root: true, links }, ROOT_CONTEXT), ROOT_CONTEXT, fn);
    },

    traceparent() {
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      return carrier.traceparent;
    },

    logIds() {
      const sc = trace.getSpanContext(context.active());
      return sc ? { trace_id: sc.traceId, span_id: sc.spanId } : undefined;
    },

    httpServer(routeOf) {
      return (req, res, next) => {
        // An incoming traceparent (a load balancer's, a calling service's) is continued.
        const parent = propagation.extract(ROOT_CONTEXT, req.headers, headerGetter);
        const span = tracer.startSpan(
          req.method,
          {
            kind: SpanKind.SERVER,
            attributes: clean({
              "http.request.method": req.method,
              "url.path": req.path,
              "url.scheme": req.protocol,
              "client.address": req.ip,
              "user_agent.original": req.get("user-agent"),
              "http.request.id": String(req.headers["x-request-id"] ?? ""),
            }),
          },
          parent,
        );
        const sc = span.spanContext();
        rememberTraceIds(res, { trace_id: sc.traceId, span_id: sc.spanId });
        res.once("close", () => {
          const route = routeOf(req);
          // POST/GET /graphql is mounted without an Express route (its metrics label is "graphql").
          const template = typeof req.route?.path === "string" ? `${req.baseUrl}${req.route.path}` : route === "graphql" ? "/graphql" : undefined;
          span.updateName(`${req.method} ${template ?? route}`);
          span.setAttributes(clean({ "http.route": template, "guidegate.route": route, "http.response.status_code": res.statusCode }));
          if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          if (!res.writableFinished) span.setAttribute("guidegate.aborted", true);
          span.end();
        });
        context.with(trace.setSpan(parent, span), next);
      };
    },

    async shutdown() {
      prisma.disable();
      await provider.shutdown();
      contextManager.disable();
    },
  };
}

const headerGetter = {
  get: (carrier: IncomingHttpHeaders | Record<string, string>, key: string) => carrier[key] as string | string[] | undefined,
  keys: (carrier: IncomingHttpHeaders | Record<string, string>) => Object.keys(carrier),
};
