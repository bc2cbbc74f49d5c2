// Benchmark of the style A content list, five ways over the same data in one process:
//   (a) the REST route GET /api/v1/:accountId/content (route table → in-process execution → Pothos → Prisma),
//   (b) the same GraphQL operation sent to the same app's POST /graphql,
//   (c) a hand-written Express + Prisma handler returning the same JSON (bench/handwritten.ts),
//   (d) raw SQL: Express over the driver (better-sqlite3 / pg), one statement for the key, one for the
//       page with tags aggregated in SQL, the same JSON byte for byte (bench/rawsql.ts),
//   (e) (c) with (d)'s one page statement run through Prisma's $queryRaw instead of the
//       three-statement include: what one statement per page is worth inside Prisma.
// It prints figures and never passes or fails.
//
//   npm run bench [-- --db sqlite|postgres|both] [--duration 10] [--requests 20000] [--connections 8]
//                 [--warmup 2] [--contents 5000]
//
// Databases: SQLite is a fresh file under data/bench/; PostgreSQL is a fresh database created on the
// server named by BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres) and
// dropped afterwards. Without --db: BENCH_DATABASE_URL set → PostgreSQL only (as TEST_DATABASE_URL
// does for the tests); otherwise SQLite, plus PostgreSQL when the default server answers.
//
// Nothing under src/ may be imported statically here: src/db reads DATABASE_URL once, at import,
// so the database is chosen first and the app is imported after. For the same reason each database
// of a multi-database run gets a child process of its own.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { LoadGenerator, type LoadResult, type LoadSpec } from "./loadgen.js";

type DbKind = "sqlite" | "postgres";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DEFAULT_PG_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres";
const LIMITS = [10, 1000] as const;
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
}

const OPTIONS = {
  db: { type: "string" },
  duration: { type: "string", default: "10" },
  requests: { type: "string", default: "20000" },
  connections: { type: "string", default: "8" },
  warmup: { type: "string", default: "2" },
  contents: { type: "string", default: "5000" },
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
  return {
    db: values.db as Options["db"],
    duration: positive("duration"),
    requests: positive("requests"),
    connections: positive("connections"),
    warmup: positive("warmup"),
    contents: positive("contents"),
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

// ---- servers -------------------------------------------------------------------------------------

interface Listening {
  url: string;
  close(): Promise<void>;
}

async function listen(handler: RequestListener): Promise<Listening> {
  const server = createServer(handler);
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

type HttpCall = Pick<LoadSpec, "url" | "method" | "headers" | "body">;
interface Target {
  id: "a" | "b" | "c" | "d" | "e";
  name: string;
  request(limit: number): HttpCall;
}

// ---- measuring -----------------------------------------------------------------------------------

/**
 * One target at one page size: a short probe, a warm-up, then the measured run. Runs end by request
 * count, sized from the rate seen so far, so that each takes about the time asked for without
 * cutting requests off mid-flight (the server would go on working on them during the next run).
 * The time limit is only a safety net; when it does cut a run short, the servers get time to finish
 * the dropped requests before anything else is measured.
 */
async function measure(loadgen: LoadGenerator, call: HttpCall, opts: Options): Promise<Measured> {
  const run = async (requests: number, seconds: number): Promise<Measured> => {
    const before = process.cpuUsage();
    const result = await loadgen.run({ ...call, connections: opts.connections, maxRequests: requests, durationSeconds: seconds });
    const cpu = process.cpuUsage(before);
    if (result.cutOff) await sleep(Math.min(15_000, 2 * (Number.isFinite(result.p99) ? result.p99 : 5_000)));
    return { result, cpuMsPerRequest: (cpu.user + cpu.system) / 1000 / result.completed };
  };
  const sized = (perSecond: number, seconds: number) => Math.min(opts.requests, Math.max(opts.connections, Math.round(perSecond * seconds)));
  process.stderr.write("probe… ");
  const probe = await run(opts.connections * 4, 60);
  process.stderr.write("warm-up… ");
  const warm = await run(sized(probe.result.requestsPerSecond, opts.warmup), runLimit(opts.warmup));
  process.stderr.write("measuring… ");
  return run(sized(warm.result.requestsPerSecond, opts.duration), runLimit(opts.duration));
}

interface Measured {
  result: LoadResult;
  /**
   * CPU time of this process (servers and load generator; not the PostgreSQL server) per request.
   * Less sensitive than req/s and latency to other processes competing for the CPUs.
   */
  cpuMsPerRequest: number;
}

/** The safety-net time limit of a run meant to last `seconds`. */
const runLimit = (seconds: number) => 2 * seconds + 5;

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

/**
 * The first page from (a) and (c) must be byte-identical, and (b)'s nodes must be the same records,
 * or the comparison would not be like for like. Returns the problems found (none: equivalent).
 */
async function compareResponses(targets: Record<Target["id"], Target>, contents: number, toRestPage: (graphql: unknown) => unknown): Promise<string[]> {
  const problems: string[] = [];
  for (const limit of LIMITS) {
    const [a, b, c, d, e] = await Promise.all([targets.a, targets.b, targets.c, targets.d, targets.e].map((t) => fetchText(t.request(limit))));
    for (const [id, r] of [
      ["a", a],
      ["b", b],
      ["c", c],
      ["d", d],
      ["e", e],
    ] as const) {
      if (r!.status !== 200) problems.push(`limit ${limit}: (${id}) answered ${r!.status}: ${r!.text.slice(0, 200)}`);
    }
    if (a!.text !== c!.text) problems.push(`limit ${limit}: (a) and (c) differ ${firstDifference(a!.text, c!.text)}`);
    if (a!.text !== d!.text) problems.push(`limit ${limit}: (a) and (d) differ ${firstDifference(a!.text, d!.text)}`);
    if (a!.text !== e!.text) problems.push(`limit ${limit}: (a) and (e) differ ${firstDifference(a!.text, e!.text)}`);
    let fromGraphql: string;
    try {
      fromGraphql = JSON.stringify(toRestPage(JSON.parse(b!.text)));
    } catch (err) {
      fromGraphql = `(b) not a content page: ${String(err)}`;
    }
    if (fromGraphql !== a!.text) problems.push(`limit ${limit}: (b) and (a) differ ${firstDifference(fromGraphql, a!.text)}`);
    const rows = a!.status === 200 ? (JSON.parse(a!.text) as { data?: unknown[] }).data?.length : undefined;
    if (a!.status === 200 && rows !== Math.min(limit, contents)) problems.push(`limit ${limit}: (a) returned ${rows} records`);
  }
  return problems;
}

// ---- report --------------------------------------------------------------------------------------

interface Row {
  limit: number;
  target: Target;
  result: LoadResult;
  cpuMsPerRequest: number;
  rssMb: number;
}

const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
const rate = (n: number) => fixed(n, n >= 100 ? 0 : 1);

function printTable(rows: Row[]): void {
  const header = ["limit", "target", "req/s", "p50 ms", "p99 ms", "x raw req/s", "CPU ms/req", "requests", "failures", "KB/resp", "peak RSS MB"];
  const lines: string[][] = [];
  for (const limit of LIMITS) {
    const group = rows.filter((r) => r.limit === limit);
    const raw = group.find((r) => r.target.id === "d")?.result;
    group.forEach((r, i) => {
      lines.push([
        i === 0 ? String(limit) : "",
        r.target.name,
        rate(r.result.requestsPerSecond),
        fixed(r.result.p50, 2),
        fixed(r.result.p99, 2),
        raw ? fixed(r.result.requestsPerSecond / raw.requestsPerSecond, 2) : "n/a",
        fixed(r.cpuMsPerRequest, 2),
        `${r.result.completed}${r.result.cutOff ? "*" : ""}`,
        String(r.result.failures),
        fixed(r.result.meanBytes / 1024, 1),
        fixed(r.rssMb, 0),
      ]);
    });
  }
  const widths = header.map((h, col) => Math.max(h.length, ...lines.map((l) => l[col]!.length)));
  // The target name is text: left-aligned; every other column is a number: right-aligned.
  const format = (cells: string[]) => cells.map((c, col) => (col === 1 ? c.padEnd(widths[col]!) : c.padStart(widths[col]!))).join("  ");
  console.log(format(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const l of lines) console.log(format(l));
  console.log("");
  // The two ratios the REST layer is held to: its throughput against raw SQL, and its CPU cost
  // against the same operation over GraphQL.
  for (const limit of LIMITS) {
    const by = (id: Target["id"]) => rows.find((r) => r.limit === limit && r.target.id === id);
    const [a, b, d] = [by("a"), by("b"), by("d")];
    if (!a || !b || !d) continue;
    console.log(
      `limit ${String(limit).padStart(4)}: REST ÷ raw SQL req/s = ${fixed(a.result.requestsPerSecond / d.result.requestsPerSecond, 2)}` +
        `   REST ÷ GraphQL CPU ms/req = ${fixed(a.cpuMsPerRequest / b.cpuMsPerRequest, 2)}` +
        `   REST ÷ GraphQL req/s = ${fixed(a.result.requestsPerSecond / b.result.requestsPerSecond, 2)}`,
    );
  }
}

// ---- one database --------------------------------------------------------------------------------

async function benchOne(kind: DbKind, opts: Options): Promise<void> {
  const db = kind === "sqlite" ? sqliteDatabase() : await postgresDatabase(postgresServer());
  process.env.DATABASE_URL = db.url;
  process.env.SEED_DEMO = "false";
  // Production settings are what is worth measuring (this also turns off Pothos' dev-only checks).
  // The access log middleware still runs, but its info lines are not written: they would bury the
  // table. Warnings and errors still show, on stdout, before it.
  process.env.NODE_ENV ??= "production";
  process.env.LOG_LEVEL ??= "warn";
  // The per-account rate limit still runs (its cost is part of the real path) but with a budget a
  // bench cannot exhaust: 429s would measure the limiter, not the route.
  process.env.RATE_LIMIT_PER_MINUTE = String(1_000_000_000);

  const open: Array<() => Promise<unknown>> = [];
  let dropped = false;
  const cleanUp = async () => {
    for (const close of open.reverse()) await close().catch(() => {});
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
    const { prisma, prepareDb } = await import("../src/db/index.js");
    open.push(() => prisma.$disconnect());
    await prepareDb();
    const versionRows = await prisma.$queryRawUnsafe<{ v: string }[]>(kind === "sqlite" ? "SELECT sqlite_version() AS v" : "SHOW server_version");
    const version = Object.values(versionRows[0] ?? {})[0] ?? "?";

    const { seedBench } = await import("./seed.js");
    const seeded = await seedBench(opts.contents);

    const { createApp } = await import("../src/app.js");
    const { loadConfig } = await import("../src/config.js");
    const { routes } = await import("../src/rest/routes.js");
    const { handwrittenApp } = await import("./handwritten.js");
    const { rawSqlApp } = await import("./rawsql.js");

    const created = createApp(loadConfig());
    open.push(created.close);
    const real = await listen(created.app);
    open.push(real.close);
    const handwritten = await listen(handwrittenApp());
    open.push(handwritten.close);
    const rawSql = rawSqlApp(db.url);
    open.push(rawSql.close);
    const raw = await listen(rawSql.app);
    open.push(raw.close);
    const loadgen = new LoadGenerator();
    open.push(() => loadgen.close());

    // (b) sends exactly the document the REST route runs, so only the transport differs.
    const route = routes.find((r) => r.name === "listContentA");
    if (!route) throw new Error("route listContentA is missing from src/rest/routes.ts");
    const auth = { "x-service-integration-key": seeded.key, "x-service-user": seeded.email };
    const targets: Record<Target["id"], Target> = {
      a: {
        id: "a",
        name: "(a) REST GET /api/v1/:id/content",
        request: (limit) => ({ url: `${real.url}/api/v1/${seeded.accountId}/content?limit=${limit}`, method: "GET", headers: auth }),
      },
      b: {
        id: "b",
        name: "(b) GraphQL POST /graphql",
        request: (limit) => ({
          url: `${real.url}/graphql`,
          method: "POST",
          headers: { ...auth, "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ query: route.document, variables: { accountId: seeded.accountId, first: limit } }),
        }),
      },
      c: {
        id: "c",
        name: "(c) hand-written Express + Prisma",
        request: (limit) => ({ url: `${handwritten.url}/api/v1/${seeded.accountId}/content?limit=${limit}`, method: "GET", headers: auth }),
      },
      e: {
        id: "e",
        name: "(e) hand-written Prisma, 1 page statement ($queryRaw)",
        request: (limit) => ({ url: `${handwritten.url}/api/v1/${seeded.accountId}/content-onestatement?limit=${limit}`, method: "GET", headers: auth }),
      },
      d: {
        id: "d",
        name: "(d) raw SQL (driver, 2 statements)",
        request: (limit) => ({ url: `${raw.url}/api/v1/${seeded.accountId}/content?limit=${limit}`, method: "GET", headers: auth }),
      },
    };

    // (b)'s result goes through the route's own reply mapping: what (a) would have sent for it.
    const problems = await compareResponses(
      targets,
      opts.contents,
      (body) => route.reply.send((body as { data?: unknown }).data, { params: {}, query: {}, body: undefined }).body,
    );

    const loadBefore = loadavg()[0]!;
    const rows: Row[] = [];
    for (const limit of LIMITS) {
      for (const target of Object.values(targets)) {
        process.stderr.write(`bench ${kind}: limit ${limit} ${target.name}: `);
        const { result, cpuMsPerRequest } = await measure(loadgen, target.request(limit), opts);
        rows.push({ limit, target, result, cpuMsPerRequest, rssMb: process.resourceUsage().maxRSS / 1024 });
        process.stderr.write(`${rate(result.requestsPerSecond)} req/s, p50 ${fixed(result.p50, 2)} ms\n`);
      }
    }

    const loadAfter = loadavg()[0]!;
    const peakRss = process.resourceUsage().maxRSS / 1024;
    console.log("");
    console.log(`guidegate bench: ${kind} ${version} (${db.label}), ${opts.contents} contents`);
    console.log(`  ${opts.connections} connections to 127.0.0.1; per row a ~${opts.warmup} s warm-up, then ~${opts.duration} s measured`);
    console.log(`  (request count sized from the warm-up rate, at most ${opts.requests}; cut off at ${runLimit(opts.duration)} s)`);
    console.log(`  Node ${process.version}, NODE_ENV=${process.env.NODE_ENV}, ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? "?"})`);
    // The bench itself keeps about two CPUs busy; a much higher load means other work competed.
    console.log(`  1-min load average: ${fixed(loadBefore, 2)} before, ${fixed(loadAfter, 2)} after the runs`);
    console.log(
      `equivalent responses: ${problems.length ? "no" : "yes"}${problems.length ? "" : " ((a) = (c) = (d) = (e) byte for byte, (b) = same records; first page at limit 10 and 1000)"}`,
    );
    for (const p of problems) console.log(`  ${p}`);
    console.log("");
    printTable(rows);
    console.log("");
    console.log("x raw req/s = req/s of the row ÷ req/s of (d) raw SQL (1.00 = as fast as the driver alone).");
    console.log("CPU ms/req = this process's CPU time (servers and load generator, not a PostgreSQL server) per request:");
    console.log("  less sensitive than req/s and latency to other processes competing for the CPUs.");
    console.log("peak RSS MB = process.resourceUsage().maxRSS after the row's run: the whole process (both servers,");
    console.log("  Prisma, the load-generator worker), so it only grows.");
    console.log(`peak RSS: ${fixed(peakRss, 0)} MB (${kind})`);
    if (rows.some((r) => r.result.cutOff)) console.log("note: * = the time limit cut the run short (the rate estimate from the warm-up was off)");
    if (rows.some((r) => r.result.failures > 0)) console.log("note: some requests failed (see failures); their figures are not comparable");
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
