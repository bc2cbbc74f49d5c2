// `npm run bench`: guidegate's read path against a raw-SQL baseline, each server in a process of
// its own, the load generator (autocannon, in a worker thread) in this one.
//
//   guidegate   the server as production runs it: dist/ built and started as `node dist/main.js`
//               (bench/serverProcess.ts), NODE_ENV=production, no demo seed, a rate limit it cannot reach;
//   raw SQL     Express 5 over the driver with prepared statements (bench/rawServer.ts, started with tsx),
//               answering the same JSON byte for byte: the floor guidegate is measured against.
//
// Routes, each against its baseline (both answers are fetched first and compared byte for byte):
//   content list   GET /api/v1/{a}/content?limit=10 and 1000
//   B14            GET /v1/accounts/{a}/endUsers/{id}?fields=custom
//   B16            GET /v1/accounts/{a}/segments/{s}/contentOrder?id={id}
//   GraphQL        POST /graphql with the content list route's own document, limit 10 and 1000 (its
//                  data, through the route's reply mapping, must be the REST answer; its baseline is
//                  the raw content list)
//   saved endpoint GET /v1/accounts/{a}/run/{name}?first=… : the same document saved as an endpoint of
//                  the account (issue 35), its target CPU ms/req within 10 % of the GraphQL row's
// Per route: req/s of both, their ratio, CPU ms per request of each server process (/proc), p50/p99,
// and issue 19's targets met or missed; for B16, the SQL statements per request after auth (the
// server's db_queries_total). It never passes or fails.
//
//   flock /tmp/bench.lock npm run bench [-- --db sqlite|postgres|both] [--duration 10] [--requests 20000]
//                 [--connections 8] [--warmup 2] [--contents 5000] [--tracing on|off]
//
// --tracing on (the default) measures the routes again on a server with OpenTelemetry tracing on
// (every request sampled, spans exported over OTLP/HTTP to a sink in the bench process) and prints
// its CPU ms per request beside the rows above, which run with tracing off (no SDK loaded).
// Benchmarks must never run two at once on this machine: run every invocation under flock as above.
// On 2 cores, `BENCH_SERVER_CPUS=1 flock /tmp/bench.lock taskset -c 0 npm run bench …` keeps the
// servers on one core and the load generator on the other (bench/serverProcess.ts pinned()).
//
// Databases: SQLite is a fresh file under data/bench/; PostgreSQL is a fresh database created on the
// server named by BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres) and
// dropped afterwards. Without --db: BENCH_DATABASE_URL set → PostgreSQL only (as TEST_DATABASE_URL
// does for the tests); otherwise SQLite, plus PostgreSQL when the default server answers.
//
// Nothing under src/ may be imported statically here: src/db reads DATABASE_URL once, at import,
// so the database is chosen (and seeded, in this process) first and src/ imported after. For the
// same reason each database of a multi-database run gets a child process of its own.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { LoadGenerator, type LoadResult, type LoadSpec } from "./loadgen.js";
import { commandCpuMs, cpuMs, memoryMb, pinned, type ServerProcess, startServerProcess } from "./serverProcess.js";

type DbKind = "sqlite" | "postgres";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DEFAULT_PG_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres";
const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

/** A problem with how the bench was asked to run, not with the code it measures. */
class UsageError extends Error {}

// ---- options -----------------------------------------------------------------------------------

interface Options {
  db: DbKind | "both" | undefined;
  /** Seconds a measured run should last, and a cap on its requests. */
  duration: number;
  requests: number;
  connections: number;
  warmup: number;
  contents: number;
  /** Measure the read routes again on a server with tracing on (OTLP to a sink in this process). */
  tracing: boolean;
}

const OPTIONS = {
  db: { type: "string" },
  duration: { type: "string", default: "10" },
  requests: { type: "string", default: "20000" },
  connections: { type: "string", default: "8" },
  warmup: { type: "string", default: "2" },
  contents: { type: "string", default: "5000" },
  tracing: { type: "string", default: "on" },
} as const;

function parseOptions(): Options {
  const values = (() => {
    try {
      return parseArgs({ options: OPTIONS, strict: true }).values;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  })();
  const positive = (name: keyof typeof values): number => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive whole number`);
    return n;
  };
  if (values.db !== undefined && !["sqlite", "postgres", "both"].includes(values.db)) {
    throw new UsageError("--db must be sqlite, postgres or both");
  }
  if (values.tracing !== "on" && values.tracing !== "off") throw new UsageError("--tracing must be on or off");
  return {
    db: values.db as Options["db"],
    duration: positive("duration"),
    requests: positive("requests"),
    connections: positive("connections"),
    warmup: positive("warmup"),
    contents: positive("contents"),
    tracing: values.tracing === "on",
  };
}

/**
 * An OTLP/HTTP traces receiver that keeps nothing (the bench's tracing-on runs): it answers every
 * export and counts the spans in it (the JSON encoding's "spanId" keys; parents are "parentSpanId").
 */
async function startSpanSink(): Promise<{ url: string; spans: () => number; close: () => Promise<void> }> {
  let spans = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      for (let i = body.indexOf('"spanId"'); i !== -1; i = body.indexOf('"spanId"', i + 8)) spans++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}

/** The server new PostgreSQL databases are created on. */
function postgresServer(): string {
  const url = process.env.BENCH_DATABASE_URL;
  if (url && !isPostgresUrl(url)) {
    throw new UsageError("BENCH_DATABASE_URL must be a postgresql:// URL (SQLite always uses a fresh file under data/bench/)");
  }
  return url || DEFAULT_PG_SERVER;
}

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function databaseKinds(opts: Options): Promise<DbKind[]> {
  if (opts.db === "both") return ["sqlite", "postgres"];
  if (opts.db) return [opts.db];
  if (process.env.BENCH_DATABASE_URL) return ["postgres"];
  if (await postgresAnswers(postgresServer())) return ["sqlite", "postgres"];
  process.stderr.write(`bench: no PostgreSQL server answers at ${DEFAULT_PG_SERVER}; SQLite only\n`);
  return ["sqlite"];
}

/** Runs this script again for one database; resolves to the child's exit code. */
function runChild(kind: DbKind, opts: Options): Promise<number> {
  const script = process.argv[1];
  if (!script) throw new Error("cannot tell which script is running");
  const args = [
    ...process.execArgv,
    script,
    "--db",
    kind,
    "--duration",
    String(opts.duration),
    "--requests",
    String(opts.requests),
    "--connections",
    String(opts.connections),
    "--warmup",
    String(opts.warmup),
    "--contents",
    String(opts.contents),
    "--tracing",
    opts.tracing ? "on" : "off",
  ];
  const child = spawn(process.execPath, args, { stdio: "inherit" });
  return new Promise((done) => child.on("exit", (code, signal) => done(code ?? (signal ? 1 : 0))));
}

// ---- databases -----------------------------------------------------------------------------------

interface BenchDatabase {
  url: string;
  label: string;
  drop(): Promise<void>;
}

function sqliteDatabase(): BenchDatabase {
  const file = join(ROOT, "data", "bench", "guidegate-bench.db");
  const remove = () => {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${file}${suffix}`, { force: true });
  };
  remove();
  mkdirSync(dirname(file), { recursive: true });
  return { url: `file:${file}`, label: relative(ROOT, file), drop: async () => remove() };
}

async function onServer(server: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function postgresDatabase(server: string): Promise<BenchDatabase> {
  const name = `gg_bench_${process.pid}_${randomBytes(3).toString("hex")}`;
  const url = new URL(server);
  try {
    await onServer(server, `CREATE DATABASE ${name}`);
  } catch (err) {
    throw new UsageError(`cannot create a database on the PostgreSQL server at ${url.host}: ${(err as Error).message || String(err)}`);
  }
  url.pathname = `/${name}`;
  // FORCE: a connection the Prisma pool has not yet closed must not keep the database alive.
  return { url: url.toString(), label: `database ${name} on ${url.host}`, drop: () => onServer(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * BENCH_PGBOUNCER_PREPARED=true: the pooler at BENCH_PGBOUNCER_URL keeps named statements across
 * server connections (PgBouncer ≥ 1.21 with `max_prepared_statements`), so the pooled server keeps
 * them too (DATABASE_PREPARED_STATEMENTS=true), as direct. Otherwise (Debian 12's PgBouncer 1.18)
 * its reads run as functions.
 */
const poolerPrepares = process.env.BENCH_PGBOUNCER_PREPARED === "true";

/** The bench database through PgBouncer (BENCH_PGBOUNCER_URL, default 127.0.0.1:6432), or null when no pooler answers. */
async function poolerUrl(direct: string): Promise<string | null> {
  const url = new URL(process.env.BENCH_PGBOUNCER_URL ?? "postgresql://postgres@127.0.0.1:6432/postgres");
  url.pathname = new URL(direct).pathname;
  return (await postgresAnswers(url.toString())) ? url.toString() : null;
}

// ---- servers -------------------------------------------------------------------------------------

/** The raw-SQL baseline in a process of its own (it prints {"port":N} once listening). */
async function startRawServer(env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const proc = spawn(...pinned(process.execPath, ["--import", "tsx", "bench/rawServer.ts"]), { cwd: ROOT, env, stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((done, fail) => {
    let buf = "";
    proc.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const m = /"port":(\d+)/.exec(buf);
      if (m) done(Number(m[1]));
    });
    proc.once("exit", (code) => fail(new Error(`the raw SQL server exited (${code}) before listening`)));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    pid: proc.pid!,
    stop: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

type HttpCall = Pick<LoadSpec, "url" | "method" | "headers" | "body">;

/** A route measured on guidegate against its raw-SQL baseline. */
interface Case {
  route: string;
  limit: number | null;
  guidegate: HttpCall;
  raw: HttpCall;
  /** guidegate's answer as the raw server's would be (GraphQL: through the REST route's reply mapping). */
  asRaw?: (text: string) => string;
  /** The issue's target: the minimum req/s ratio to raw, or for GraphQL the maximum CPU ms/req ÷ REST's. */
  target: { minRatio: number } | { maxCpuOverRest: number; rest: string };
}

// ---- measuring -----------------------------------------------------------------------------------

interface Measured {
  result: LoadResult;
  /** CPU time (user + system) of the server process per request, from /proc, over the measured run. */
  cpuMsPerRequest: number;
  /** The same of every postgres process and of every pgbouncer process (0 on SQLite): the rest of a request's CPU. */
  databaseCpuMsPerRequest: number;
  poolerCpuMsPerRequest: number;
}

/**
 * One server at one route: a short probe, a warm-up, then the measured run. Runs end by request
 * count, sized from the rate seen so far, so that each takes about the time asked for without
 * cutting requests off mid-flight (the server would go on working on them during the next run).
 * The time limit is only a safety net; when it does cut a run short, the server gets time to finish
 * the dropped requests before anything else is measured.
 */
async function measure(loadgen: LoadGenerator, server: ServerProcess, call: HttpCall, opts: Options): Promise<Measured> {
  const run = (requests: number, seconds: number) => measuredRun(loadgen, server, call, opts, requests, seconds);
  const sized = (perSecond: number, seconds: number) => sizedRun(opts, perSecond, seconds);
  process.stderr.write("probe… ");
  const probe = await run(opts.connections * 4, 60);
  process.stderr.write("warm-up… ");
  const warm = await run(sized(probe.result.requestsPerSecond, opts.warmup), runLimit(opts.warmup));
  process.stderr.write("measuring… ");
  return run(sized(warm.result.requestsPerSecond, opts.duration), runLimit(opts.duration));
}

/** One measured run of `requests` requests (`seconds`: the safety net), with the CPU of the server, PostgreSQL and PgBouncer. */
async function measuredRun(loadgen: LoadGenerator, server: ServerProcess, call: HttpCall, opts: Options, requests: number, seconds: number): Promise<Measured> {
  const before = [cpuMs(server.pid), commandCpuMs("postgres"), commandCpuMs("pgbouncer")] as const;
  const result = await loadgen.run({ ...call, connections: opts.connections, maxRequests: requests, durationSeconds: seconds });
  const [cpu, database, pooler] = [cpuMs(server.pid) - before[0], commandCpuMs("postgres") - before[1], commandCpuMs("pgbouncer") - before[2]];
  if (result.cutOff) await sleep(Math.min(15_000, 2 * (Number.isFinite(result.p99) ? result.p99 : 5_000)));
  const per = (ms: number) => ms / result.completed;
  return { result, cpuMsPerRequest: per(cpu), databaseCpuMsPerRequest: per(database), poolerCpuMsPerRequest: per(pooler) };
}

/**
 * The same call on several servers, each warmed up and measured as by measure(), then measured once
 * more in the reverse order (A B C, then C B A): a drift of the machine's speed over the runs (other
 * work, a checkpoint, autovacuum) weighs on every server alike, where runs minutes apart compared
 * one drift with another. Each server's figures are over both of its runs: requests ÷ their time,
 * CPU ÷ their requests.
 */
async function interleaved(loadgen: LoadGenerator, runs: { label: string; server: ServerProcess; call: HttpCall }[], opts: Options): Promise<Measured[]> {
  const first: Measured[] = [];
  for (const r of runs) {
    process.stderr.write(`${r.label}: `);
    first.push(await measure(loadgen, r.server, r.call, opts));
    process.stderr.write(`${rate(first.at(-1)!.result.requestsPerSecond)} req/s; `);
  }
  const second: Measured[] = new Array(runs.length);
  for (let i = runs.length - 1; i >= 0; i--) {
    const r = runs[i]!;
    const requests = sizedRun(opts, first[i]!.result.requestsPerSecond, opts.duration);
    second[i] = await measuredRun(loadgen, r.server, r.call, opts, requests, runLimit(opts.duration));
    process.stderr.write(`${r.label} again: ${rate(second[i]!.result.requestsPerSecond)} req/s; `);
  }
  process.stderr.write("\n");
  return first.map((a, i) => {
    const b = second[i]!;
    const completed = a.result.completed + b.result.completed;
    const elapsedMs = a.result.elapsedMs + b.result.elapsedMs;
    const per = (f: (m: Measured) => number) => (f(a) * a.result.completed + f(b) * b.result.completed) / completed;
    return {
      result: { ...a.result, completed, elapsedMs, requestsPerSecond: (completed * 1000) / elapsedMs, failures: a.result.failures + b.result.failures },
      cpuMsPerRequest: per((m) => m.cpuMsPerRequest),
      databaseCpuMsPerRequest: per((m) => m.databaseCpuMsPerRequest),
      poolerCpuMsPerRequest: per((m) => m.poolerCpuMsPerRequest),
    };
  });
}

/** Requests for a run of about `seconds` at `perSecond`: at least one per connection, at most --requests. */
const sizedRun = (opts: Options, perSecond: number, seconds: number) => Math.min(opts.requests, Math.max(opts.connections, Math.round(perSecond * seconds)));

/** The safety-net time limit of a run meant to last `seconds`. */
const runLimit = (seconds: number) => 2 * seconds + 5;

/** The server's db_queries_total by kind (GET /metrics). */
async function statementCounts(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^db_queries_total\{kind="([^"]+)"\} (\d+(?:\.\d+)?)$/gm)) counts.set(m[1]!, Number(m[2]));
  return counts;
}

/** Reads a read route issues: select and with statements (transaction control, pragmas and the batched key-use write are not the route's). */
const READ_KINDS = ["select", "with", "other"];

/** SQL statements per request of `call`, from `n` sequential requests (after warm ones): reads, and every kind. */
async function statementsPerRequest(base: string, call: HttpCall, n: number): Promise<{ reads: number; byKind: string }> {
  for (let i = 0; i < 20; i++) await fetchText(call);
  const before = await statementCounts(base);
  for (let i = 0; i < n; i++) {
    const r = await fetchText(call);
    if (r.status !== 200) throw new Error(`statement count: ${call.url} answered ${r.status}`);
  }
  const after = await statementCounts(base);
  const delta = [...after].map(([kind, v]) => [kind, (v - (before.get(kind) ?? 0)) / n] as const).filter(([, v]) => v > 0);
  return {
    reads: delta.filter(([k]) => READ_KINDS.includes(k)).reduce((sum, [, v]) => sum + v, 0),
    byKind: delta.map(([k, v]) => `${k} ${fixed(v, 2)}`).join(", ") || "none",
  };
}

// ---- equivalence ---------------------------------------------------------------------------------

async function fetchText(req: HttpCall): Promise<{ status: number; text: string }> {
  const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, text: await res.text() };
}

/** Where two strings first differ, with a little context. */
function firstDifference(x: string, y: string): string {
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  const at = Math.max(0, i - 40);
  return `at character ${i}: …${x.slice(at, i + 40)}… vs …${y.slice(at, i + 40)}…`;
}

/** Both answers of a case: 200 each and the same bytes, or the problems. */
async function compare(c: Case): Promise<string[]> {
  const [g, r] = await Promise.all([fetchText(c.guidegate), fetchText(c.raw)]);
  const problems: string[] = [];
  if (g.status !== 200) problems.push(`guidegate answered ${g.status}: ${g.text.slice(0, 200)}`);
  if (r.status !== 200) problems.push(`raw SQL answered ${r.status}: ${r.text.slice(0, 200)}`);
  if (problems.length) return problems;
  let mine: string;
  try {
    mine = c.asRaw ? c.asRaw(g.text) : g.text;
  } catch (err) {
    mine = `(not mappable: ${String(err)})`;
  }
  if (mine !== r.text) problems.push(`guidegate and raw SQL differ ${firstDifference(mine, r.text)}`);
  return problems;
}

// ---- report --------------------------------------------------------------------------------------

interface Row {
  c: Case;
  guidegate: Measured;
  raw: Measured;
  problems: string[];
}

const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
const rate = (n: number) => fixed(n, n >= 100 ? 0 : 1);
const latency = (r: LoadResult) => `${fixed(r.p50, 2)}/${fixed(r.p99, 1)}`;
const count = (r: LoadResult) => `${r.completed}${r.cutOff ? "*" : ""}${r.failures ? ` (${r.failures} failed)` : ""}`;

function printTable(rows: Row[]): void {
  const header = [
    "route",
    "limit",
    "gg req/s",
    "raw req/s",
    "ratio",
    "gg CPU ms/req",
    "raw CPU ms/req",
    "CPU ratio",
    "gg p50/p99 ms",
    "raw p50/p99 ms",
    "same JSON",
    "target",
    "",
    "requests gg/raw",
  ];
  const lines = rows.map((row) => {
    const { c, guidegate: g, raw: r } = row;
    let target: string;
    let met: boolean;
    if ("minRatio" in c.target) {
      target = `≥ ${c.target.minRatio}× raw req/s`;
      met = g.result.requestsPerSecond / r.result.requestsPerSecond >= c.target.minRatio;
    } else {
      const { rest, maxCpuOverRest } = c.target;
      const restRow = rows.find((x) => x.c.route === rest && x.c.limit === c.limit);
      const over = restRow ? g.cpuMsPerRequest / restRow.guidegate.cpuMsPerRequest : Number.NaN;
      target = `CPU ÷ ${rest === "content list" ? "REST" : rest} ${fixed(over, 2)} ≤ ${maxCpuOverRest}`;
      met = over <= maxCpuOverRest;
    }
    return [
      c.route,
      c.limit === null ? "" : String(c.limit),
      rate(g.result.requestsPerSecond),
      rate(r.result.requestsPerSecond),
      fixed(g.result.requestsPerSecond / r.result.requestsPerSecond, 2),
      fixed(g.cpuMsPerRequest, 3),
      fixed(r.cpuMsPerRequest, 3),
      fixed(r.cpuMsPerRequest / g.cpuMsPerRequest, 2),
      latency(g.result),
      latency(r.result),
      row.problems.length ? "NO !" : "yes",
      target,
      met ? "met" : "MISSED",
      `${count(g.result)}/${count(r.result)}`,
    ];
  });
  const widths = header.map((h, col) => Math.max(h.length, ...lines.map((l) => l[col]!.length)));
  // Text columns left-aligned, numbers right-aligned.
  const left = new Set([0, 10, 11, 12]);
  const format = (cells: string[]) =>
    cells
      .map((cell, col) => (left.has(col) ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!)))
      .join("  ")
      .trimEnd();
  console.log(format(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const l of lines) console.log(format(l));
}

// ---- one database --------------------------------------------------------------------------------

async function benchOne(kind: DbKind, opts: Options): Promise<void> {
  const db = kind === "sqlite" ? sqliteDatabase() : await postgresDatabase(postgresServer());
  // The seed (this process), guidegate and the raw server share the database and the key of
  // encrypted_string values.
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    ENCRYPTION_KEY: process.env.BENCH_ENCRYPTION_KEY ?? randomBytes(32).toString("base64"),
    // Production settings are what is worth measuring (this also turns off Pothos' dev-only checks).
    NODE_ENV: "production",
    SEED_DEMO: "false",
    // The per-account rate limit still runs (its cost is part of the real path) but with a budget a
    // bench cannot exhaust: 429s would measure the limiter, not the route.
    RATE_LIMIT_PER_MINUTE: String(1_000_000_000),
    // The longest identity-cache life: changes to keys drop it at once anyway, and a re-lookup every
    // 5 s would land in the B16 statement count as a fraction of a statement per request.
    IDENTITY_CACHE_MS: "60000",
    // No job workers (copy jobs, webhook deliveries): their polling is not the read path, and it
    // would land in the B16 statement count.
    JOB_WORKER: "false",
  };
  Object.assign(process.env, env, { LOG_LEVEL: "warn" });

  const open: Array<() => Promise<unknown>> = [];
  let dropped = false;
  const cleanUp = async () => {
    for (const close of open.reverse()) await close().catch(() => {});
    open.length = 0;
    if (!dropped) {
      dropped = true;
      await db.drop().catch((err: unknown) => process.stderr.write(`bench: could not drop the bench database: ${String(err)}\n`));
    }
  };
  // Ctrl-C in a long run must not leave a 5,000-row database behind on the server.
  process.once("SIGINT", () => void cleanUp().finally(() => process.exit(130)));

  try {
    const { migrate } = await import("../src/db/migrate.js");
    await migrate(db.url);
    const { configureDatabase, prisma, prepareDb } = await import("../src/db/index.js");
    configureDatabase((await import("../src/domains/index.js")).writePolicy);
    await prepareDb();
    const versionRows = await prisma.$queryRawUnsafe<{ v: string }[]>(kind === "sqlite" ? "SELECT sqlite_version() AS v" : "SHOW server_version");
    const version = Object.values(versionRows[0] ?? {})[0] ?? "?";
    const { seedBench } = await import("./seed.js");
    const seeded = await seedBench(opts.contents);
    // Planner statistics, as autovacuum keeps them on a live database: without them PostgreSQL
    // estimates the account's 5,000 contents at a dozen rows, and a custom plan (every unnamed
    // statement's, and a read function's first five) sorts the whole account for a page of 10 (3.6 ms against
    // 0.2 ms), where a named statement's generic plan happens to walk the index.
    if (kind === "postgres") await prisma.$queryRawUnsafe("ANALYZE");
    await prisma.$disconnect();
    const { routes } = await import("../src/rest/routes.js");

    process.stderr.write(`bench ${kind}: building dist/ and starting the servers…\n`);
    const guidegate = await startServerProcess(env);
    open.push(guidegate.stop);
    // Idle memory: the server after start-up (migrations checked, workers started), before any load.
    await sleep(3000);
    const idleRssMb = memoryMb(guidegate.pid, "VmRSS");
    // PostgreSQL behind PgBouncer in transaction mode (as production at scale runs it): a second
    // server on the same database through the pooler, when one answers (scripts/pgbouncer.sh).
    const pooler = kind === "postgres" ? await poolerUrl(db.url) : null;
    const pooled = pooler
      ? await startServerProcess({
          ...env,
          DATABASE_URL: pooler,
          DATABASE_DIRECT_URL: db.url,
          DATABASE_PREPARED_STATEMENTS: String(poolerPrepares),
          JOB_WORKER: "false",
        })
      : null;
    if (pooled) open.push(pooled.stop);
    // The same direct connection without named statements, as the pooled server runs its reads
    // (PL/pgSQL functions, src/db/readFunctions.ts): what the pooler's hop costs apart from that.
    const unnamed = pooled ? await startServerProcess({ ...env, DATABASE_PREPARED_STATEMENTS: "false", JOB_WORKER: "false" }) : null;
    if (unnamed) open.push(unnamed.stop);
    const raw = await startRawServer(env);
    open.push(raw.stop);
    const loadgen = new LoadGenerator();
    open.push(() => loadgen.close());

    // GraphQL sends exactly the document the REST route runs, so only the transport differs; its
    // data goes through the route's own reply mapping: what the REST route would have sent for it.
    const route = routes.find((r) => r.name === "listContentA");
    if (!route) throw new Error("route listContentA is missing from src/rest/routes.ts");
    const auth = { "x-service-integration-key": seeded.key, "x-service-user": seeded.email };
    const a = seeded.accountId;
    const get = (base: string, path: string): HttpCall => ({ url: `${base}${path}`, method: "GET", headers: auth });
    const contentPath = (limit: number) => `/api/v1/${a}/content?limit=${limit}`;
    const b14Path = `/v1/accounts/${a}/endUsers/${seeded.endUserId}?fields=custom`;
    const b16Path = `/v1/accounts/${a}/segments/${seeded.segmentId}/contentOrder?id=${seeded.endUserId}`;
    const graphql = (limit: number): HttpCall => ({
      url: `${guidegate.base}/graphql`,
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: route.document, variables: { accountId: a, first: limit } }),
    });
    const graphqlAsRest = (text: string) =>
      JSON.stringify(route.reply.send((JSON.parse(text) as { data?: unknown }).data, { params: {}, query: {}, body: undefined }).body);
    // The same document saved as an endpoint of the account: its answer is the operation's data itself.
    const saved = await fetch(`${guidegate.base}/v1/accounts/${a}/endpoints/benchContent`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ document: route.document }),
    });
    if (saved.status !== 201) throw new Error(`saving the bench endpoint: ${saved.status} ${await saved.text()}`);
    const endpointAsRest = (text: string) => JSON.stringify(route.reply.send(JSON.parse(text), { params: {}, query: {}, body: undefined }).body);
    const cases: Case[] = [
      ...[10, 1000].map((limit) => ({
        route: "content list",
        limit,
        guidegate: get(guidegate.base, contentPath(limit)),
        raw: get(raw.base, contentPath(limit)),
        target: { minRatio: limit === 10 ? 0.35 : 0.5 },
      })),
      { route: "B14 end user", limit: null, guidegate: get(guidegate.base, b14Path), raw: get(raw.base, b14Path), target: { minRatio: 0.4 } },
      { route: "B16 contentOrder", limit: null, guidegate: get(guidegate.base, b16Path), raw: get(raw.base, b16Path), target: { minRatio: 0.3 } },
      ...[10, 1000].map((limit) => ({
        route: "GraphQL content",
        limit,
        guidegate: graphql(limit),
        raw: get(raw.base, contentPath(limit)),
        asRaw: graphqlAsRest,
        target: { maxCpuOverRest: 1.2, rest: "content list" },
      })),
      ...[10, 1000].map((limit) => ({
        route: "saved endpoint",
        limit,
        guidegate: get(guidegate.base, `/v1/accounts/${a}/run/benchContent?first=${limit}`),
        raw: get(raw.base, contentPath(limit)),
        asRaw: endpointAsRest,
        target: { maxCpuOverRest: 1.1, rest: "GraphQL content" },
      })),
    ];

    const problems = new Map<Case, string[]>();
    for (const c of cases) problems.set(c, await compare(c));
    // What B16 contains, so an empty answer (the user not matching) cannot pass for a measurement.
    const b16 = await fetchText(get(raw.base, b16Path));
    const b16Items = b16.status === 200 ? ((JSON.parse(b16.text) as { data: unknown[] }).data?.length ?? 0) : 0;

    const loadBefore = loadavg()[0]!;
    const rows: Row[] = [];
    /** Raw measurements by URL: the GraphQL rows' baseline is the content list's, measured once. */
    const rawRuns = new Map<string, Measured>();
    for (const c of cases) {
      const label = `${c.route}${c.limit === null ? "" : ` ${c.limit}`}`;
      process.stderr.write(`bench ${kind}: ${label}: guidegate: `);
      const g = await measure(loadgen, guidegate, c.guidegate, opts);
      process.stderr.write(`${rate(g.result.requestsPerSecond)} req/s; raw: `);
      let r = rawRuns.get(c.raw.url);
      if (r) process.stderr.write("(measured above) ");
      else rawRuns.set(c.raw.url, (r = await measure(loadgen, raw, c.raw, opts)));
      process.stderr.write(`${rate(r.result.requestsPerSecond)} req/s\n`);
      rows.push({ c, guidegate: g, raw: r, problems: problems.get(c)! });
    }
    /** A guidegate case's call, sent to another guidegate server. */
    const on = (server: ServerProcess, call: HttpCall): HttpCall => ({ ...call, url: call.url.replace(guidegate.base, server.base) });
    // The same reads on a server with tracing on: every request sampled (the SDK's default,
    // parentbased_always_on), its spans exported over OTLP/HTTP to a sink in this process that
    // keeps nothing. Started only now, so it stood by during nothing else.
    const tracedRows: { label: string; off: Measured; on: Measured }[] = [];
    let spansReceived = 0;
    if (opts.tracing) {
      const sink = await startSpanSink();
      open.push(sink.close);
      const traced = await startServerProcess({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: "guidegate-bench", JOB_WORKER: "false" });
      open.push(traced.stop);
      for (const c of cases.filter((c) => c.route !== "saved endpoint")) {
        const label = `${c.route}${c.limit === null ? "" : ` ${c.limit}`}`;
        process.stderr.write(`bench ${kind}: ${label}: tracing on: `);
        const m = await measure(loadgen, traced, on(traced, c.guidegate), opts);
        process.stderr.write(`${rate(m.result.requestsPerSecond)} req/s\n`);
        tracedRows.push({ label, off: rows.find((r) => r.c === c)!.guidegate, on: m });
      }
      // The batch processor exports every few seconds: what the runs above sent.
      await traced.stop();
      spansReceived = sink.spans();
    }
    // The pooled server on the read routes, interleaved with the direct server and the direct one
    // without named statements (a ratio within 10 % is less than this machine drifts over minutes).
    const pooledRows: { label: string; direct: Measured; unnamed: Measured; pooled: Measured }[] = [];
    if (pooled && unnamed) {
      for (const c of cases.filter((c) => c.route !== "GraphQL content")) {
        const label = `${c.route}${c.limit === null ? "" : ` ${c.limit}`}`;
        process.stderr.write(`bench ${kind}: ${label}: `);
        const [d, u, m] = await interleaved(
          loadgen,
          [
            { label: "direct", server: guidegate, call: c.guidegate },
            { label: "direct without named statements", server: unnamed, call: on(unnamed, c.guidegate) },
            { label: "through PgBouncer", server: pooled, call: on(pooled, c.guidegate) },
          ],
          opts,
        );
        pooledRows.push({ label, direct: d!, unnamed: u!, pooled: m! });
      }
    }
    const loadAfter = loadavg()[0]!;

    // Statements of B16 after auth: B16's minus those of an authenticated request that reads nothing.
    const N = 200;
    const b16Statements = await statementsPerRequest(guidegate.base, get(guidegate.base, b16Path), N);
    const authStatements = await statementsPerRequest(guidegate.base, { ...graphql(10), body: JSON.stringify({ query: "{ __typename }" }) }, N);

    console.log("");
    console.log(`guidegate bench: ${kind} ${version} (${db.label}), ${opts.contents} contents; B16: a ${b16Items}-content segment`);
    console.log(`  guidegate: node dist/main.js (pid ${guidegate.pid}); raw SQL: bench/rawServer.ts (pid ${raw.pid}); load generator: this process`);
    console.log(`  ${opts.connections} connections to 127.0.0.1; per row a ~${opts.warmup} s warm-up, then ~${opts.duration} s measured`);
    console.log(`  (request count sized from the warm-up rate, at most ${opts.requests}; cut off at ${runLimit(opts.duration)} s)`);
    console.log(`  Node ${process.version}, NODE_ENV=production, ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? "?"})`);
    // The bench keeps about two CPUs busy; a much higher load means other work competed.
    console.log(`  1-min load average: ${fixed(loadBefore, 2)} before, ${fixed(loadAfter, 2)} after the runs`);
    const different = rows.filter((r) => r.problems.length);
    console.log(
      `same JSON: ${different.length ? `NO for ${different.length} route(s)` : "yes, every route: guidegate's answer = the raw server's, byte for byte (GraphQL: its data through the REST route's reply mapping)"}`,
    );
    for (const r of different) for (const p of r.problems) console.log(`  ${r.c.route}${r.c.limit === null ? "" : ` ${r.c.limit}`}: ${p}`);
    console.log("");
    printTable(rows);
    console.log("");
    for (const limit of [10, 1000]) {
      const by = (route: string) => rows.find((r) => r.c.route === route && r.c.limit === limit);
      const [rest, gql] = [by("content list"), by("GraphQL content")];
      if (rest && gql)
        console.log(
          `limit ${String(limit).padStart(4)}: GraphQL ÷ REST CPU ms/req = ${fixed(gql.guidegate.cpuMsPerRequest / rest.guidegate.cpuMsPerRequest, 2)}` +
            `   GraphQL ÷ REST req/s = ${fixed(gql.guidegate.result.requestsPerSecond / rest.guidegate.result.requestsPerSecond, 2)}`,
        );
      const endpoint = by("saved endpoint");
      if (endpoint && gql)
        console.log(
          `limit ${String(limit).padStart(4)}: saved endpoint ÷ GraphQL CPU ms/req = ${fixed(endpoint.guidegate.cpuMsPerRequest / gql.guidegate.cpuMsPerRequest, 2)}` +
            `   saved endpoint ÷ GraphQL req/s = ${fixed(endpoint.guidegate.result.requestsPerSecond / gql.guidegate.result.requestsPerSecond, 2)}`,
        );
    }
    const afterAuth = b16Statements.reads - authStatements.reads;
    console.log(
      `B16 SQL statements per request after auth: ${fixed(afterAuth, 2)} (target ≤ 3: ${afterAuth <= 3 ? "met" : "MISSED"}); ` +
        `${N} sequential requests, reads (select/with) of B16 ${fixed(b16Statements.reads, 2)} minus those of an authenticated { __typename } ${fixed(authStatements.reads, 2)}`,
    );
    console.log(`  all kinds per request: B16 ${b16Statements.byKind}; { __typename } ${authStatements.byKind}`);
    console.log(
      `idle RSS after start: ${Math.round(idleRssMb)} MB (target ≤ 150 MB: ${idleRssMb <= 150 ? "met" : "MISSED"}); peak RSS and time of 10,000-item writes: npm run bench:bulk`,
    );
    if (pooledRows.length) {
      console.log(
        `read routes through PgBouncer (transaction mode, ${poolerPrepares ? "named statements kept by the pooler (BENCH_PGBOUNCER_PREPARED=true)" : "DATABASE_PREPARED_STATEMENTS=false: the reads run as functions"}) vs direct ` +
          "(target: within 10 %); `unnamed` = the direct server without named statements, as the pooled one. CPU ms per request of " +
          "the server + PostgreSQL (every postgres process, and the backends that exited meanwhile) + PgBouncer " +
          "(processes sharing the machine's cores: req/s follows their sum). Each server measured twice, interleaved (direct, unnamed, pooled, " +
          "then the reverse order):",
      );
      for (const r of pooledRows) {
        const rps = (m: Measured) => m.result.requestsPerSecond;
        const ratio = rps(r.pooled) / rps(r.direct);
        const cpuSum = (m: Measured) => m.cpuMsPerRequest + m.databaseCpuMsPerRequest + m.poolerCpuMsPerRequest;
        const cpu = (m: Measured) =>
          `${fixed(m.cpuMsPerRequest, 2)} + ${fixed(m.databaseCpuMsPerRequest, 2)} + ${fixed(m.poolerCpuMsPerRequest, 2)} = ` +
          fixed(m.cpuMsPerRequest + m.databaseCpuMsPerRequest + m.poolerCpuMsPerRequest, 2);
        console.log(
          `  ${r.label.padEnd(22)} pooled ${rate(rps(r.pooled))}, unnamed ${rate(rps(r.unnamed))}, direct ${rate(rps(r.direct))} req/s: ` +
            `pooled ÷ direct ${fixed(ratio, 2)} (${ratio >= 0.9 ? "met" : "MISSED"}), pooled ÷ unnamed ${fixed(rps(r.pooled) / rps(r.unnamed), 2)}, ` +
            `CPU pooled ÷ direct ${fixed(cpuSum(r.pooled) / cpuSum(r.direct), 2)}; ` +
            `CPU ms/req pooled ${cpu(r.pooled)}, unnamed ${cpu(r.unnamed)}, direct ${cpu(r.direct)}`,
        );
      }
    } else if (kind === "postgres")
      console.log("PgBouncer vs direct: not measured (no pooler answers at BENCH_PGBOUNCER_URL; bash scripts/pgbouncer.sh starts one)");
    if (tracedRows.length) {
      console.log(
        `the cost of tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set, every request sampled, spans sent over OTLP/HTTP to a sink in this process: ` +
          `${spansReceived.toLocaleString("en")} spans received); the runs above are tracing off (no SDK loaded):`,
      );
      for (const r of tracedRows) {
        const [on, off] = [r.on.cpuMsPerRequest, r.off.cpuMsPerRequest];
        console.log(
          `  ${r.label.padEnd(22)} CPU ms/req ${fixed(on, 3)} on, ${fixed(off, 3)} off (${on >= off ? "+" : ""}${fixed((on / off - 1) * 100, 0)} %); ` +
            `req/s ${rate(r.on.result.requestsPerSecond)} on, ${rate(r.off.result.requestsPerSecond)} off`,
        );
      }
    }
    console.log("");
    console.log("ratio = guidegate req/s ÷ raw req/s (the target); CPU ratio = raw CPU ms/req ÷ guidegate CPU ms/req (1.00: as cheap as raw).");
    console.log("CPU ms/req = the server process's user + system time (/proc/<pid>/stat, 10 ms ticks) over the measured run ÷ its requests;");
    console.log("  a PostgreSQL server's own CPU is not included. GraphQL rows: raw = the raw content list at the same limit.");
    if (rows.some((r) => r.guidegate.result.cutOff || r.raw.result.cutOff))
      console.log("note: * = the time limit cut the run short (the rate estimate from the warm-up was off)");
    if (rows.some((r) => r.guidegate.result.failures || r.raw.result.failures)) console.log("note: some requests failed; their figures are not comparable");
  } finally {
    await cleanUp();
  }
}

// ---- main ----------------------------------------------------------------------------------------

try {
  const opts = parseOptions();
  const kinds = await databaseKinds(opts);
  if (kinds.length === 1) {
    await benchOne(kinds[0]!, opts);
  } else {
    let exitCode = 0;
    for (const kind of kinds) exitCode = Math.max(exitCode, await runChild(kind, opts));
    process.exitCode = exitCode;
  }
} catch (err) {
  // A bad option or an unreachable server deserves one line; anything else, the whole error.
  if (err instanceof UsageError) process.stderr.write(`bench: ${err.message}\n`);
  else console.error(err);
  process.exitCode = 1;
}
