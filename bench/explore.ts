// The Explore questions at scale (issue #32's targets): PostgreSQL at 3,000,000 events and SQLite at
// 1,000,000, 50,000 end users with a `plan` field, 28 whole UTC days ending yesterday, the rollups
// caught up (rebuilt) and planner statistics taken. Each question is asked through the real REST
// route: one warm-up, then `--rounds` (default 7) timed rounds over all the questions; the median
// wall time per question beside its target, and the process CPU per request (the app and, on
// SQLite, its worker threads; on PostgreSQL also the database server's processes, which other
// work on this machine may share: the load average is printed with the table).
//
//   flock /tmp/bench.lock npm run bench:explore [-- --db sqlite|postgres|both] [--pg-events N] [--sqlite-events N] [--rounds N] [--fresh]
//
// Seeding is set-based (INSERT ... SELECT over generate_series on PostgreSQL, a recursive series in
// batches of 250,000 on SQLite) from an integer hash of the row number, so both databases hold the
// same events for the same size. The seeded database is kept between runs, keyed by the seed's
// version, size and first day: a PostgreSQL template database (each run works on a copy made with
// CREATE DATABASE ... TEMPLATE) or a SQLite file under data/bench/ (copied for the run). `--fresh`
// seeds again. Figures only: it never fails on a missed target.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { commandCpuMs } from "./serverProcess.js";

const { values } = parseArgs({
  options: {
    db: { type: "string", default: "both" },
    "pg-events": { type: "string", default: "3000000" },
    "sqlite-events": { type: "string", default: "1000000" },
    rounds: { type: "string", default: "7" },
    fresh: { type: "boolean", default: false },
    child: { type: "boolean", default: false },
    events: { type: "string" },
    out: { type: "string" },
  },
});

/** Bump when the seeded data changes: cached databases of another version are not reused. */
const SEED_VERSION = 1;
const USERS = 50_000;
const DAYS = 28;
const DAY = 86_400_000;

interface Timing {
  name: string;
  target: number;
  medianMs: number;
  minMs: number;
  cpuMsPerRequest: number;
  dbCpuMsPerRequest: number | null;
  answer: string;
}
interface Result {
  kind: "sqlite" | "postgres";
  events: number;
  seededMs: number | null;
  load: [number, number];
  timings: Timing[];
}

if (!values.child) {
  const kinds = values.db === "both" ? (["postgres", "sqlite"] as const) : [values.db as "sqlite" | "postgres"];
  const results: Result[] = [];
  for (const kind of kinds) {
    const events = kind === "postgres" ? values["pg-events"]! : values["sqlite-events"]!;
    const file = `data/bench/explore-${kind}.json`;
    process.stderr.write(`${kind}: ${Number(events).toLocaleString("en")} events...\n`);
    execFileSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "bench/explore.ts",
        "--child",
        "--db",
        kind,
        "--events",
        events,
        "--rounds",
        values.rounds!,
        "--out",
        file,
        ...(values.fresh ? ["--fresh"] : []),
      ],
      { stdio: ["ignore", "inherit", "inherit"] },
    );
    results.push(JSON.parse(readFileSync(file, "utf8")) as Result);
  }
  const fmt = (n: number | null, digits = 0) => (n === null ? "–" : n.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits }));
  const size = (n: number) => `${n / 1e6}M`;
  console.log(`\n${new Date().toISOString().slice(0, 10)}, ${values.rounds} rounds after a warm-up, 28 days, ${fmt(USERS)} end users, rollups caught up\n`);
  console.log("| question | database | target | median ms | min ms | app CPU ms/request | database CPU ms/request | |");
  console.log("|---|---|---:|---:|---:|---:|---:|---|");
  for (const r of results)
    for (const t of r.timings)
      console.log(
        `| ${t.name} | ${r.kind} ${size(r.events)} | ≤ ${fmt(t.target)} | ${fmt(t.medianMs)} | ${fmt(t.minMs)} | ${fmt(t.cpuMsPerRequest)} | ${fmt(t.dbCpuMsPerRequest)} | ${t.medianMs <= t.target ? "met" : "MISSED"} |`,
      );
  for (const r of results)
    console.log(
      `\n${r.kind}: load average ${r.load.map((x) => fmt(x, 2)).join(" → ")} (before → after)${r.seededMs === null ? ", seeded database reused" : `, seeded in ${fmt(r.seededMs / 1000)} s`}`,
    );
  for (const r of results) for (const t of r.timings) console.log(`  ${r.kind} ${t.name}: ${t.answer}`);
  process.exit(0);
}

// ---- one database (child process) -----------------------------------------------------------------
const kind = values.db === "postgres" ? "postgres" : "sqlite";
const events = Number(values.events);
const rounds = Number(values.rounds);
// 28 whole UTC days ending with yesterday.
const today = Math.floor(Date.now() / DAY) * DAY;
const first = today - DAYS * DAY;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const cacheKey = `v${SEED_VERSION}_${events}_${day(first).replaceAll("-", "")}`;

// An integer hash of the row number n for each stream k (the same on both databases: 64-bit
// integers, no value past 2^62): an affine step, then two squarings modulo the prime 2^31 − 1.
const P = 2_147_483_647;
const h = (k: number) => `((((((n * 1000003 + ${k * 7919}) % ${P}) * ((n * 1000003 + ${k * 7919}) % ${P})) % ${P}) * 48271 + ${k}) % ${P})`;
const pick = (list: readonly string[], k: number) => `CASE ${h(k)} % ${list.length} ${list.map((v, i) => `WHEN ${i} THEN '${v}'`).join(" ")} END`;
const WIDGETS = ["self_help", "task_list", "beacon", "guided_popup", "smart_tip", "popup", "direct"];
const DOMAINS = ["app.acme.com", "admin.acme.com", "help.acme.com"];

/** The events of rows n in [lo, hi]: the reports bench's mix of types, uniform over the 28 days. */
function eventsSelect(series: string): string {
  const r = `(${h(1)} % 100)`;
  const type = `CASE WHEN ${r} < 12 THEN 'flow_started' WHEN ${r} < 30 THEN 'flow_step' WHEN ${r} < 36 THEN 'flow_completed'
    WHEN ${r} < 39 THEN 'flow_exited' WHEN ${r} < 42 THEN 'flow_feedback' WHEN ${r} < 55 THEN 'selfhelp_search'
    WHEN ${r} < 62 THEN 'selfhelp_content_viewed' WHEN ${r} < 67 THEN 'task_completed' WHEN ${r} < 78 THEN 'popup_shown'
    WHEN ${r} < 86 THEN 'smarttip_shown' WHEN ${r} < 94 THEN 'beacon_shown' ELSE 'user_action' END`;
  const flow = `${r} < 42 OR (${r} >= 62 AND ${r} < 67)`;
  const content = `${r} >= 55 AND ${r} < 62 OR (${r} >= 67 AND ${r} < 94)`;
  return `SELECT 'bench', ${type}, ${first} + (${h(2)} % ${DAYS * 86_400}) * 1000 + ${h(3)} % 1000, 'user-' || (${h(4)} % ${USERS}),
      CASE WHEN ${flow} THEN 'flow-' || (${h(5)} % 200) END,
      CASE WHEN ${content} THEN 'content-' || (${h(5)} % 500) END,
      CASE WHEN ${r} < 12 OR (${r} >= 30 AND ${r} < 39) THEN ${pick(WIDGETS, 6)} END,
      CASE WHEN ${r} >= 12 AND ${r} < 30 THEN 1 + ${h(6)} % 6 END,
      CASE WHEN ${r} >= 42 AND ${r} < 55 THEN 'term ' || (${h(6)} % 2000) END,
      CASE WHEN ${r} >= 42 AND ${r} < 55 THEN ${h(7)} % 10 END,
      CASE WHEN ${r} >= 39 AND ${r} < 42 THEN (${h(7)} % 10) < 7 END,
      CASE WHEN ${r} >= 94 THEN 'action-' || (${h(6)} % 40) END,
      CASE WHEN ${h(8)} % 4 < 3 THEN ${pick(DOMAINS, 9)} END
    FROM ${series}`;
}
const EVENT_COLUMNS = `"accountId", "type", "time", "endUserId", "flowId", "contentId", "widget", "step", "searchTerm", "resultCount", "useful", "actionId", "domain"`;
const PLANS = ["free", "starter", "pro", "enterprise"];

const server = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const pgUrl = (db: string) => Object.assign(new URL(server), { pathname: `/${db}` }).toString();
const pgAdmin = async (sql: string, db = "postgres") => {
  const pg = (await import("pg")).default;
  const c = new pg.Client({ connectionString: pgUrl(db) });
  await c.connect();
  try {
    return (await c.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
};

/** Seeds the database at DATABASE_URL (migrated, empty): account, end users, events, rollups, statistics. */
async function seed(): Promise<void> {
  const t0 = performance.now();
  const { migrate } = await import("../src/db/migrate.js");
  await migrate(process.env.DATABASE_URL!);
  const { configureDatabase, prepareDb, prisma } = await import("../src/db/index.js");
  configureDatabase((await import("../src/domains/index.js")).writePolicy);
  await prepareDb();
  const { createAccount, createUser } = await import("../src/admin.js");
  const { requestScope } = await import("../src/audit/requestScope.js");
  await requestScope.run({ requestId: null, ip: null, actor: "system:bench" }, async () => {
    await createAccount("bench");
    await createUser("bench@example.com", ["bench"]);
  });
  const users = `SELECT 'eu-' || n AS "id", 'user-' || n AS "externalId" FROM ${kind === "postgres" ? `generate_series(CAST(0 AS BIGINT), ${USERS - 1}) n` : `"s" WHERE n < ${USERS}`}`;
  const now = kind === "postgres" ? "now()" : "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
  const userStatements = [
    `INSERT INTO "EndUserField" ("accountId", "name", "type", "description", "createdAt", "updatedAt") VALUES ('bench', 'plan', 'string', 'Plan.', ${now}, ${now})`,
    `INSERT INTO "EndUser" ("id", "accountId", "externalId", "createdAt", "updatedAt") SELECT u."id", 'bench', u."externalId", ${now}, ${now} FROM (${users}) u`,
    // A tenth of the users have no plan.
    `INSERT INTO "EndUserValue" ("endUserId", "accountId", "field", "type", "text") SELECT 'eu-' || n, 'bench', 'plan', 'string', ${pick(PLANS, 10)}
      FROM ${kind === "postgres" ? `generate_series(CAST(0 AS BIGINT), ${USERS - 1}) n WHERE` : `"s" WHERE n < ${USERS} AND`} n % 10 <> 9`,
  ];
  if (kind === "postgres") {
    const { ensureEventPartitions } = await import("../src/domains/events/partitions.js");
    await ensureEventPartitions(first);
    const pg = (await import("pg")).default;
    const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
    // A failed seed drops the database under this connection: its end is no news.
    c.on("error", () => {});
    await c.connect();
    for (const s of userStatements) await c.query(s);
    for (let lo = 0; lo < events; lo += 1_000_000) {
      await c.query(
        `INSERT INTO "Event" (${EVENT_COLUMNS}) ${eventsSelect(`generate_series(CAST(${lo} AS BIGINT), ${Math.min(lo + 1_000_000, events) - 1}) n`)}`,
      );
      process.stderr.write(`  postgres: ${Math.min(lo + 1_000_000, events).toLocaleString("en")} events\n`);
    }
    await c.end();
  } else {
    const Database = (await import("better-sqlite3")).default;
    const { sqliteFile } = await import("../src/db/migrate.js");
    const db = new Database(sqliteFile(process.env.DATABASE_URL!));
    const series = (lo: number, hi: number) => `WITH RECURSIVE "s"(n) AS (SELECT ${lo} UNION ALL SELECT n + 1 FROM "s" WHERE n < ${hi - 1}) `;
    db.transaction(() => {
      for (const s of userStatements) db.exec(`${series(0, USERS)}${s}`);
    })();
    for (let lo = 0; lo < events; lo += 250_000) {
      const hi = Math.min(lo + 250_000, events);
      db.exec(`${series(lo, hi)}INSERT INTO "Event" (${EVENT_COLUMNS}) ${eventsSelect(`"s"`)}`);
      process.stderr.write(`  sqlite: ${hi.toLocaleString("en")} events\n`);
    }
    db.close();
  }
  const r0 = performance.now();
  const { rebuildRollups } = await import("../src/domains/reports/rollupWorker.js");
  await rebuildRollups("bench");
  process.stderr.write(`  ${kind}: rollups rebuilt in ${Math.round((performance.now() - r0) / 1000)} s\n`);
  await prisma.$queryRawUnsafe(kind === "postgres" ? "VACUUM (ANALYZE)" : "ANALYZE");
  if (kind === "postgres") await prisma.$queryRawUnsafe("CHECKPOINT");
  await prisma.$disconnect();
  await (await import("../src/db/postgres.js")).closeSharedPool();
  process.stderr.write(`  ${kind}: seeded in ${Math.round((performance.now() - t0) / 1000)} s\n`);
}

// ---- the database for this run: a copy of the cached seed ------------------------------------------
/**
 * After seeding: the app's modules read DATABASE_URL once, and it was the seed's; the run goes on
 * in a fresh child (which finds the seed cached), and its result gets the seeding time.
 */
function measureInChild(seededMs: number): never {
  execFileSync(process.execPath, process.execArgv.concat(process.argv.slice(1).filter((a) => a !== "--fresh")), { stdio: "inherit" });
  const out = JSON.parse(readFileSync(values.out!, "utf8")) as Result;
  writeFileSync(values.out!, JSON.stringify({ ...out, seededMs }));
  process.exit(0);
}
let dropRun = async () => {};
if (kind === "postgres") {
  const template = `gg_bench_explore_${cacheKey}`;
  const exists = (await pgAdmin(`SELECT 1 FROM pg_database WHERE datname = '${template}'`)).length > 0;
  if (exists && values.fresh) await pgAdmin(`DROP DATABASE ${template} WITH (FORCE)`);
  if (!exists || values.fresh) {
    // Templates of older seed versions or days are dropped (each is gigabytes); other sizes of this
    // version and day are kept.
    const current = new RegExp(`^gg_bench_explore_v${SEED_VERSION}_\\d+_${cacheKey.split("_").at(-1)}$`);
    for (const row of await pgAdmin(`SELECT datname FROM pg_database WHERE datname LIKE 'gg_bench_explore_v%'`))
      if (!current.test(row.datname as string)) await pgAdmin(`DROP DATABASE IF EXISTS ${row.datname as string} WITH (FORCE)`);
    const t0 = performance.now();
    await pgAdmin(`CREATE DATABASE ${template}`);
    process.env.DATABASE_URL = pgUrl(template);
    process.env.ENCRYPTION_KEY ??= randomBytes(32).toString("base64");
    try {
      await seed();
    } catch (err) {
      process.stderr.write(`seeding failed: ${(err as Error).stack}\n`);
      await pgAdmin(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
      process.exit(1);
    }
    measureInChild(performance.now() - t0);
  }
  // The template is this bench's alone: a session left on it (a seed that stopped half-way) would
  // keep it from being copied.
  await pgAdmin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${template}' AND pid <> pg_backend_pid()`);
  const run = `gg_bench_explore_run_${process.pid}`;
  await pgAdmin(`CREATE DATABASE ${run} TEMPLATE ${template}`);
  // A copy made from a template keeps the pages, not the statistics' freshness: analyze it again.
  await pgAdmin("ANALYZE", run);
  process.env.DATABASE_URL = pgUrl(run);
  process.env.ENCRYPTION_KEY ??= randomBytes(32).toString("base64");
  dropRun = async () => {
    await pgAdmin(`DROP DATABASE IF EXISTS ${run} WITH (FORCE)`);
  };
} else {
  mkdirSync("data/bench", { recursive: true });
  const cached = `data/bench/explore-seed-${cacheKey}.db`;
  if (!existsSync(cached) || values.fresh) {
    const current = new RegExp(`^explore-seed-v${SEED_VERSION}_\\d+_${cacheKey.split("_").at(-1)}\\.db$`);
    for (const f of readdirSync("data/bench").filter((f) => f.startsWith("explore-seed-") && !current.test(f))) rmSync(`data/bench/${f}`);
    const t0 = performance.now();
    process.env.DATABASE_URL = `file:./${cached}.tmp`;
    for (const s of ["", "-wal", "-shm"]) rmSync(`${cached}.tmp${s}`, { force: true });
    await seed();
    // Checkpointed and closed: the file alone holds everything.
    const Database = (await import("better-sqlite3")).default;
    const db = new Database(`${cached}.tmp`);
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    copyFileSync(`${cached}.tmp`, cached);
    for (const s of ["", "-wal", "-shm"]) rmSync(`${cached}.tmp${s}`, { force: true });
    measureInChild(performance.now() - t0);
  }
  const file = "data/bench/explore-run.db";
  for (const s of ["", "-wal", "-shm"]) rmSync(`${file}${s}`, { force: true });
  copyFileSync(cached, file);
  process.env.DATABASE_URL = `file:./${file}`;
}

// ---- the app on the copy, the questions -------------------------------------------------------------
process.env.LOG_LEVEL = "silent";
process.env.NODE_ENV = "production";
// A timeout past every target: a missed target shows as its time.
process.env.EXPLORE_TIMEOUT_MS = "60000";
const { migrate } = await import("../src/db/migrate.js");
await migrate(process.env.DATABASE_URL!);
const { configureDatabase, prepareDb, prisma } = await import("../src/db/index.js");
configureDatabase((await import("../src/domains/index.js")).writePolicy);
await prepareDb();
const { createKey } = await import("../src/admin.js");
const { requestScope } = await import("../src/audit/requestScope.js");
const { createApp } = await import("../src/app.js");
const { loadConfig } = await import("../src/config.js");
const key = await requestScope.run({ requestId: null, ip: null, actor: "system:bench" }, async () => (await createKey("bench@example.com")).key);
// A budget no bench exhausts.
const { app, close } = createApp(loadConfig({ ...process.env, RATE_LIMIT_PER_MINUTE: "100000000" }));
const http = app.listen(0, "127.0.0.1");
await new Promise((r) => http.once("listening", r));
const { port } = http.address() as import("node:net").AddressInfo;
const headers = { "x-service-integration-key": key, "x-service-user": "bench@example.com", "content-type": "application/json" };

// The 28 seeded days, [first, today): a date-only endDate includes its whole day.
const window = { startDate: day(first), endDate: day(today - DAY) };
const QUESTIONS: { name: string; route: string; target: number; body: Record<string, unknown> }[] = [
  {
    name: "query: events + users by day × event:type, 28 days",
    route: "query",
    target: 150,
    body: { ...window, metrics: ["events", "users"], interval: "day", dimensions: ["event:type"] },
  },
  {
    name: "query: by user:plan × event:flowId, contains filter",
    route: "query",
    target: 500,
    body: { ...window, metrics: ["events", "users"], dimensions: ["user:plan", "event:flowId"], filters: [["contains", "event:flowId", ["flow-1"]]] },
  },
  {
    name: "funnel: 3 steps, 7-day window, breakdown user:plan",
    route: "funnel",
    target: 1_000,
    body: {
      ...window,
      steps: [
        { filters: [["is", "event:type", ["flow_started"]]] },
        { filters: [["is", "event:type", ["flow_step"]]] },
        { filters: [["is", "event:type", ["flow_completed"]]] },
      ],
      conversionWindowMs: 7 * DAY,
      breakdown: "user:plan",
    },
  },
  {
    name: "retention: weekly, 4 periods",
    route: "retention",
    target: 1_500,
    body: { ...window, startEvent: { filters: [["is", "event:type", ["flow_started"]]] }, period: "week", periods: 4 },
  },
];

/** utime + stime of every postgres process, in ms (the database server's CPU; others' work included). */
const postgresCpuMs = (): number | null => (kind === "postgres" ? commandCpuMs("postgres") : null);

const samples = QUESTIONS.map(() => ({ ms: [] as number[], cpu: 0, db: 0, answer: "" }));
const load0 = loadavg()[0]!;
try {
  for (let round = -1; round < rounds; round++) {
    for (const [i, q] of QUESTIONS.entries()) {
      const cpu0 = process.cpuUsage();
      const db0 = postgresCpuMs();
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/v1/accounts/bench/analytics/${q.route}`, { method: "POST", headers, body: JSON.stringify(q.body) });
      const body = (await res.json()) as Record<string, unknown>;
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`${q.name}: ${res.status} ${JSON.stringify(body).slice(0, 400)}`);
      if (round < 0) {
        // What the question answered, in a few words (a check that it did real work).
        const rows = body.rows as unknown[] | undefined;
        const groups = body.groups as { value: unknown; steps: { users: number }[] }[] | undefined;
        const cohorts = body.cohorts as { users: number; retained: number[] }[] | undefined;
        samples[i]!.answer = rows
          ? `${rows.length} rows, totals ${JSON.stringify(body.totals)}`
          : groups
            ? groups.map((g) => `${String(g.value)}: ${g.steps.map((s) => s.users).join("→")}`).join("; ")
            : `${cohorts!.length} cohorts, first ${JSON.stringify(cohorts![0])}`;
        continue;
      }
      const cpu = process.cpuUsage(cpu0);
      samples[i]!.ms.push(ms);
      samples[i]!.cpu += (cpu.user + cpu.system) / 1000;
      if (db0 !== null) samples[i]!.db += postgresCpuMs()! - db0;
      process.stderr.write(`  ${kind} round ${round + 1}: ${q.name} ${ms.toFixed(0)} ms\n`);
    }
  }
} finally {
  http.closeAllConnections();
  http.close();
  await close();
  await prisma.$disconnect();
  await dropRun();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const result: Result = {
  kind,
  events,
  seededMs: null,
  load: [load0, loadavg()[0]!],
  timings: QUESTIONS.map((q, i) => ({
    name: q.name,
    target: kind === "postgres" ? q.target : 2_000,
    medianMs: median(samples[i]!.ms),
    minMs: Math.min(...samples[i]!.ms),
    cpuMsPerRequest: samples[i]!.cpu / rounds,
    dbCpuMsPerRequest: kind === "postgres" ? samples[i]!.db / rounds : null,
    answer: samples[i]!.answer,
  })),
};
// data/bench/ is made by the SQLite seed; a PostgreSQL-only run on a new checkout has none yet.
mkdirSync("data/bench", { recursive: true });
writeFileSync(values.out ?? `data/bench/explore-${kind}.json`, JSON.stringify(result));
process.exit(0);
