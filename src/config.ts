// Configuration, read once from the environment and validated; a bad value stops start-up with
// an error that names the variable. An empty value (or only spaces) is refused for every variable:
// unset it to get the default (`PORT=` is not port 0, `GRAPHQL_MAX_ALIASES=` is not 0 aliases).
import { z } from "zod";

const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().default("0.0.0.0"),
  DATABASE_URL: z
    .string()
    .regex(/^(file:|postgres(ql)?:\/\/)/, "must start with file: (SQLite) or postgresql:// (PostgreSQL)")
    .refine((v) => !/^file:\s*$/.test(v), "file: needs the path of the SQLite file, e.g. file:./data/guidegate.db")
    .default("file:./data/guidegate.db"),
  // PostgreSQL connections of one instance (src/db/postgres.ts): one pool for Prisma and the direct
  // reads, a request waits at most DATABASE_POOL_TIMEOUT_MS for one of them (then 503 Retry-After);
  // pg-boss (copy jobs, the idempotency-key prune) has JOB_QUEUE_POOL_SIZE of its own; the auth-change
  // listener holds one more. See docs/production.md, "PostgreSQL connections".
  // Behind a pooler in transaction mode (PgBouncer, RDS Proxy, Supavisor): DATABASE_URL names the
  // pooler; what needs a session of its own (migrations under their advisory lock, the auth-change
  // LISTEN) connects to DATABASE_DIRECT_URL instead, as Prisma's directUrl does; and named prepared
  // statements, which PgBouncer before 1.21 cannot follow across server connections, are turned off.
  DATABASE_DIRECT_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL (the database itself, not the pooler)")
    .optional(),
  DATABASE_PREPARED_STATEMENTS: bool.default(true),
  // Without named statements, the direct reads run as PL/pgSQL functions the service creates on first
  // use (`gg_read_<hash>`, src/db/readFunctions.ts): PostgreSQL caches their plans per server
  // connection. false: plain unnamed statements, planned on every call (no CREATE FUNCTION needed).
  DATABASE_READ_FUNCTIONS: bool.default(true),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  DATABASE_POOL_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(5_000),
  JOB_QUEUE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(3),
  // `*` alone, or a comma-separated list of origins (scheme://host[:port]; a trailing slash is
  // dropped, the scheme and host lower-cased, a default port left out: what browsers send).
  CORS_ORIGINS: z
    .string()
    .transform((v, ctx): "*" | string[] => {
      const entries = v.split(",").map((e) => e.trim());
      if (entries.length === 1 && entries[0] === "*") return "*";
      const origins: string[] = [];
      for (const entry of entries) {
        const problem = entry === "*" ? "* allows every origin: it stands alone, not in a list" : entry === "" ? "has an empty entry" : undefined;
        const origin = problem ? undefined : originOf(entry);
        if (!origin) {
          ctx.addIssue({
            code: "custom",
            message: problem ?? `'${entry}' is not an origin: scheme://host[:port], without a path, e.g. https://app.example.com`,
          });
          return z.NEVER;
        }
        origins.push(origin);
      }
      return origins;
    })
    .default("*"),
  GRAPHIQL: bool.default(true),
  INTROSPECTION: bool.default(true),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .optional(),
  // Budget points a minute per account, REST and GraphQL together: a request costs what its operation
  // may read (src/graphql/cost.ts; a cheap read 1 point, one more per 100 objects).
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  // The most one request may cost, in points: past it a 400 naming its cost, before anything runs.
  RATE_LIMIT_MAX_REQUEST_POINTS: z.coerce.number().int().min(1).default(10_000),
  // Segment-format ingestion's own budget per account (write keys are public: browsers embed them,
  // so they must not be able to spend the API budget). Browser libraries send a request per call.
  INGEST_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  ENCRYPTION_KEY: z.string().optional(),
  SEED_DEMO: bool.default(true),
  // Raw engagement events older than this many days are removed (PostgreSQL: whole monthly
  // partitions; SQLite: deleted); the reports' rollups stay. Unset: events are kept.
  EVENTS_RETENTION_DAYS: z.coerce.number().int().min(1).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  NODE_ENV: z.string().default("development"),
  // GraphQL document limits (graphql-armor); REST routes' own documents are trusted and exempt.
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(1).default(10),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(1).default(5000),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).default(15),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(1).default(2000),
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(0).default(50),
  // Caches keyed by the document text clients send (parsed documents, parse errors, the fast path's
  // accepted queries; src/textCache.ts): each keeps at most this many texts and this many bytes of
  // them. A parsed document takes about 100 times its text in heap, so 1 MiB of texts is ~100 MB.
  GRAPHQL_CACHE_ENTRIES: z.coerce.number().int().min(1).default(500),
  GRAPHQL_CACHE_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
  // After a request that moved at least this many bytes (body and answer, on the socket), one full
  // garbage collection once it has answered, at most one per HEAP_RELEASE_MIN_INTERVAL_MS (sooner
  // when the heap in use has doubled since the last one): a bulk
  // write's garbage is given back instead of raising the next one's peak (src/heapRelease.ts). 0: off.
  HEAP_RELEASE_AFTER_BYTES: z.coerce.number().int().min(0).default(1_000_000),
  HEAP_RELEASE_MIN_INTERVAL_MS: z.coerce.number().int().min(0).default(1_000),
  // Graceful shutdown: readiness is false for SHUTDOWN_DELAY_MS before the listener closes (give the
  // load balancer time to notice), and everything must have drained by SHUTDOWN_TIMEOUT_MS.
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).default(0),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1).default(25_000),
  // The server's public base URL (scheme, host, optional path prefix): file `url`s, copy-job status
  // links (B6's message, the completion e-mail) and the OpenAPI document's servers and contact are
  // absolute with it. Unset: paths relative to the server.
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // How long a resolved API key (user, scope, memberships, account settings) is reused at most. Any
  // change to them drops the cache at once (src/auth/changes.ts); this bounds a lost signal. 0: off.
  IDENTITY_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  // HTTP server limits (src/httpServer.ts). Keep-alive stays open longer than a typical proxy's idle
  // timeout (60 s), so the proxy, not us, closes idle connections and never reuses one we closed.
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1).default(20_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1).default(120_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1).default(65_000),
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1_000),
  // Blob storage of uploaded files: a directory (default), or an S3-compatible store when
  // S3_BUCKET is set (S3_ENDPOINT for stores other than AWS, e.g. MinIO; credentials from
  // S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY or the SDK's usual chain).
  FILES_DIR: z.string().default("data/files"),
  S3_BUCKET: z.string().min(1).optional(),
  S3_ENDPOINT: z.url().optional(),
  S3_REGION: z.string().default("us-east-1"),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),
  S3_PREFIX: z.string().default(""),
  // E-mail of finished copy jobs: over SMTP when SMTP_URL is set (smtp://user:pass@host:587,
  // smtps://...), else written as .eml files into OUTBOX_DIR and logged.
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL")
    .optional(),
  MAIL_FROM: z.string().default("guidegate <no-reply@guidegate.local>"),
  OUTBOX_DIR: z.string().default("data/outbox"),
  // Copy jobs: whether this process works on them, how long a worker's claim on a job lasts
  // without renewal (a crashed worker's job is taken over after this), how often the queue is
  // polled, and how many times a failing item is tried.
  JOB_WORKER: bool.default(true),
  JOB_LEASE_MS: z.coerce.number().int().min(500).default(30_000),
  JOB_POLL_MS: z.coerce.number().int().min(50).default(1_000),
  JOB_ITEM_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
  // The reports' rollup worker (with JOB_WORKER): its pause between passes; how long an account's
  // ingest must have paused before its events are rolled up (ingest goes first); the lag at which
  // they are rolled up anyway; while an account still ingests, the share of the time the worker
  // counts (it rests in between, so a burst is not slowed by it throughout). Reports are exact
  // whatever the lag; a lag makes them read more raw events.
  ROLLUP_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
  ROLLUP_QUIET_MS: z.coerce.number().int().min(0).max(600_000).default(2_000),
  ROLLUP_MAX_LAG_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  ROLLUP_SHARE_WHILE_INGESTING: z.coerce.number().gt(0).max(1).default(0.25),
  // Explore questions (src/domains/explore/): the most time one question may take (PostgreSQL: its
  // statement timeout; SQLite: its worker thread is stopped); past it the answer is a 422 that says
  // what to narrow.
  EXPLORE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  // The most rows of an Explore answer with every row (CSV, GraphQL `allRows`), held in memory at once;
  // past it a 400 that says to narrow the question or page through it.
  EXPLORE_MAX_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(100_000),
  // Webhooks (src/domains/webhooks/): WEBHOOKS_ALLOW_PRIVATE=true lets endpoints be http:// and on
  // loopback/private addresses (development and tests only: it turns the SSRF guard off). The retry
  // schedule is the pause before each retry (ms, or with s/m/h units), the Standard Webhooks one by
  // default (about a day); an endpoint that failed for the whole of it is disabled.
  WEBHOOKS_ALLOW_PRIVATE: bool.default(false),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\s*\d+(ms|s|m|h)?\s*(,\s*\d+(ms|s|m|h)?\s*)*$/, "must be a comma-separated list of durations, e.g. 5s,5m,30m,2h,5h,10h,10h")
    .default("5s,5m,30m,2h,5h,10h,10h"),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  WEBHOOK_POLL_MS: z.coerce.number().int().min(20).default(1_000),
  // Attempts in flight at once, across instances, per endpoint and per account: a tenant's slow
  // endpoints hold at most this many of the workers' slots, so other tenants' deliveries go out
  // beside them. 4 an endpoint: one answering in 100 ms still gets ~40 a second, one at the 5-s
  // timeout holds 4 connections; 16 an account: four endpoints' worth, so one tenant fills at most
  // a sixth of an instance's 100 slots. Deliveries pending per endpoint beyond the last setting are
  // stored as `dropped` (visible in the delivery log, replayable) instead of growing without bound.
  WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: z.coerce.number().int().min(1).max(100).default(4),
  WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: z.coerce.number().int().min(1).max(100).default(16),
  WEBHOOK_MAX_PENDING_PER_ENDPOINT: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  // GET /metrics: when set, only with `Authorization: Bearer <this>` (its labels name accounts).
  // Unset: open, like the health endpoints. It travels in a header: visible ASCII, no spaces.
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,}$/, "must be at least 16 visible ASCII characters without spaces (e.g. openssl rand -hex 32)")
    .optional(),
  // OpenTelemetry traces (src/observability/tracing.ts), the SDK's own standard variables. Either
  // endpoint turns export over OTLP/HTTP on; with neither the SDK is not even loaded. The exporter
  // reads the endpoints (and OTEL_EXPORTER_OTLP_HEADERS / _TIMEOUT) itself; they are validated here
  // so a typo stops start-up instead of silently exporting nothing.
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .regex(/^https?:\/\/[^\s/]+\S*$/, "must be an http(s) URL such as http://collector:4318")
    .optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .string()
    .regex(/^https?:\/\/[^\s/]+\S*$/, "must be an http(s) URL such as http://collector:4318/v1/traces")
    .optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default("guidegate"),
  OTEL_TRACES_SAMPLER: z
    .enum(["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"])
    .default("parentbased_always_on"),
  // The ratio of the *traceidratio samplers (the specification's default: 1).
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  // Longest a finished span waits in memory before it is exported (batched; the specification's default).
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).max(600_000).default(5_000),
  /** Tests only: each copy-job item takes at least this long (the crash and drain tests). */
  TEST_COPY_ITEM_DELAY_MS: z.coerce.number().int().min(1).optional(),
  /** Tests only: mounts GET /__test/slow, which takes this many milliseconds. */
  TEST_SLOW_ROUTE_MS: z.coerce.number().int().min(1).optional(),
});

export type Config = z.infer<typeof Env>;

/** An origin as browsers send it in `Origin`, or undefined for what is not one (a path, a query, credentials). */
function originOf(entry: string): string | undefined {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return undefined;
  }
  if (!url.host || url.username || url.password || url.search || url.hash || !["", "/"].includes(url.pathname)) return undefined;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) return undefined;
  // http(s): URL's own origin (default port dropped); other schemes (capacitor://localhost) have none of URL's.
  return url.origin !== "null" ? url.origin : `${url.protocol}//${url.host}`;
}

/** Not guidegate's own: a convention of the Node ecosystem, read by other tools too; left as it comes. */
const NOT_OURS = new Set(["NODE_ENV"]);
const S3_SETTINGS = ["S3_ENDPOINT", "S3_REGION", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_FORCE_PATH_STYLE", "S3_PREFIX"] as const;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const issues: string[] = [];
  const given: NodeJS.ProcessEnv = { ...env };
  // One rule for every variable: empty is refused, never read as 0, false or "" (unset it for the default).
  for (const name of Object.keys(Env.shape)) {
    const value = env[name];
    if (value === undefined || NOT_OURS.has(name) || value.trim() !== "") continue;
    issues.push(`  ${name}: is empty; unset it to use the default`);
    delete given[name];
  }
  const parsed = Env.safeParse(given);
  if (!parsed.success) issues.push(...parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`));
  // S3 settings only mean something with S3_BUCKET (without it files go to FILES_DIR), and static
  // credentials come as a pair (one alone would make every upload fail).
  const s3Set = S3_SETTINGS.filter((name) => given[name] !== undefined);
  if (given.S3_BUCKET === undefined && s3Set.length)
    issues.push(`  S3_BUCKET: is not set, but ${s3Set.join(", ")} ${s3Set.length > 1 ? "are" : "is"}: set S3_BUCKET to store files in S3, or unset them`);
  if ((given.S3_ACCESS_KEY_ID === undefined) !== (given.S3_SECRET_ACCESS_KEY === undefined)) {
    const [missing, set] = given.S3_ACCESS_KEY_ID === undefined ? ["S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"] : ["S3_SECRET_ACCESS_KEY", "S3_ACCESS_KEY_ID"];
    issues.push(`  ${missing}: is not set, but ${set} is: set both (static credentials), or neither (the AWS SDK's usual chain)`);
  }
  if (issues.length || !parsed.success) throw new Error(`Invalid configuration:\n${issues.join("\n")}`);
  return parsed.data;
}

/**
 * Where what needs a database session of its own connects: DATABASE_DIRECT_URL past a pooler, else
 * DATABASE_URL. A direct URL means nothing beside an SQLite DATABASE_URL (a stray one in the
 * environment must not send the migrations of a SQLite file to PostgreSQL).
 */
export const sessionDatabaseUrl = (config: Pick<Config, "DATABASE_URL" | "DATABASE_DIRECT_URL">): string => config[sessionDatabaseVariable(config)]!;

/** The variable sessionDatabaseUrl() takes its URL from, for messages about that database. */
export const sessionDatabaseVariable = (config: Pick<Config, "DATABASE_URL" | "DATABASE_DIRECT_URL">): "DATABASE_URL" | "DATABASE_DIRECT_URL" =>
  isPostgresUrl(config.DATABASE_URL) && config.DATABASE_DIRECT_URL ? "DATABASE_DIRECT_URL" : "DATABASE_URL";

/** Whether OpenTelemetry export is configured (either OTLP endpoint). */
export const tracingEnabled = (config: Pick<Config, "OTEL_EXPORTER_OTLP_ENDPOINT" | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT">): boolean =>
  Boolean(config.OTEL_EXPORTER_OTLP_ENDPOINT || config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}
