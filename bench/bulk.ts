// Bulk-write benchmark: every bulk route at the per-request maximum (10,000 items), created and then
// updated through the real REST route, plus the 10,000-row list of what was written. For each: the
// time, items per second, SQL statements issued (the server's db_queries_total, transaction control
// excluded) and the server's peak RSS during the request. Each route gets a server process of its
// own, started as `npm start` starts it (compiled JavaScript, production settings) on a fresh
// database, so the client's memory (building 10,000-item bodies, parsing replies) is not counted
// and the peak belongs to that route alone. Figures only: it never passes or fails.
//
//   npm run bench:bulk [-- --db sqlite|postgres|both] [--items 10000] [--route <name>] [--warm-up 100]
//                  [--server-args="<node flags>"] [--ops create,update,list]
//
// Targets (issue "Bulk writes at database speed"): ≤ 2 s per request, ≤ 300 MB peak RSS,
// ≤ 10 statements per 1,000 items.
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { cpuMs, memoryMb, resetPeak, root, runNode, type ServerProcess, startServerProcess } from "./serverProcess.js";

const { values } = parseArgs({
  options: {
    db: { type: "string", default: "both" },
    items: { type: "string", default: "10000" },
    route: { type: "string" },
    "warm-up": { type: "string", default: "100" },
    // e.g. --server-args="--cpu-prof --cpu-prof-dir=data/bench/prof" or --server-args=--max-old-space-size=256
    "server-args": { type: "string", default: "" },
    // Which measured requests to make, e.g. --ops create (with --server-args="--cpu-prof …": a profile of one request).
    ops: { type: "string", default: "create,update,list" },
  },
});
const OPS = new Set(values.ops!.split(","));
const N = Number(values.items);
const WARM_UP = Number(values["warm-up"]);

type Json = Record<string, unknown>;
interface Route {
  name: string;
  /** the account's schema and whatever the items refer to */
  setup?: (put: Send) => Promise<void>;
  create: { method: string; path: string; body: (n: number) => unknown; status: number[] };
  update?: { method: string; path: string; body: (n: number, created: Json) => unknown; status: number[] };
  list?: string;
}
type Send = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Json; ms: number; cpu: number; statements: number; rssMb: number }>;

const ROUTES: Route[] = [
  {
    name: "content (style A)",
    create: {
      method: "POST",
      path: "/api/v1/bench/content",
      body: (n) => Array.from({ length: n }, (_, i) => ({ title: `Content ${i}`, type: "link", url: `https://example.com/${i}`, description: `d${i}` })),
      status: [201],
    },
    update: {
      method: "PUT",
      path: "/api/v1/bench/content",
      body: (_n, created) => (created.data as { id: string }[]).map((c, i) => ({ id: c.id, title: `Content ${i} v2` })),
      status: [200],
    },
    list: "/api/v1/bench/content?limit=10000",
  },
  {
    name: "tags (B7)",
    create: {
      method: "PUT",
      path: "/v1/accounts/bench/tags",
      body: (n) => Array.from({ length: n }, (_, i) => ({ name: `tag-${i}`, description: "x" })),
      status: [201],
    },
    update: {
      method: "PUT",
      path: "/v1/accounts/bench/tags",
      body: (n) => Array.from({ length: n }, (_, i) => ({ name: `tag-${i}`, description: "y" })),
      status: [200],
    },
    list: "/v1/accounts/bench/tags?limit=10000",
  },
  {
    name: "end users (B12)",
    setup: async (send) => {
      await send("PUT", "/v1/accounts/bench/endUserSchema", [
        { name: "plan", type: "string" },
        { name: "seats", type: "double" },
        { name: "trial", type: "boolean" },
        { name: "renewal", type: "timestamp" },
        { name: "taxId", type: "encrypted_string" },
      ]);
    },
    create: {
      method: "PUT",
      path: "/v1/accounts/bench/endUsers",
      body: (n) =>
        Array.from({ length: n }, (_, i) => ({
          id: `user-${i}`,
          custom: { plan: "pro", seats: i % 50, trial: i % 2 === 0, renewal: 1_767_225_600_000 + i, taxId: `TX-${i}` },
          userActionCount: { login: i % 20, export: i % 3 },
          userActions: { login: 1_767_225_600_000 + i },
        })),
      status: [201],
    },
    update: {
      method: "PUT",
      path: "/v1/accounts/bench/endUsers",
      body: (n) =>
        Array.from({ length: n }, (_, i) => ({
          id: `user-${i}`,
          custom: { plan: "enterprise", seats: (i % 50) + 1 },
          userActionCount: { login: 1 + (i % 20) },
        })),
      status: [200],
    },
    list: "/api/v1/bench/endUsers?limit=10000",
  },
  {
    name: "integration attributes (B20)",
    setup: async (send) => {
      await send("PUT", "/v1/accounts/bench/integrationAttributeSchema", [
        { name: "company", type: "string" },
        { name: "region", type: "string" },
        { name: "seats", type: "double" },
        { name: "tier", type: "string" },
      ]);
    },
    create: {
      method: "PUT",
      path: "/v1/accounts/bench/integrationAttributes",
      body: (n) =>
        Array.from({ length: n }, (_, i) => ({
          attributeName: "company",
          attributeValue: `co-${i}`,
          additionalAttributes: { region: "emea", seats: i, tier: "t1" },
        })),
      status: [201],
    },
    update: {
      method: "PUT",
      path: "/v1/accounts/bench/integrationAttributes",
      body: (n) => Array.from({ length: n }, (_, i) => ({ attributeName: "company", attributeValue: `co-${i}`, additionalAttributes: { seats: i + 1 } })),
      status: [200],
    },
    list: "/v1/accounts/bench/integrationAttributes?primaryAttrName=company&limit=10000",
  },
];

/** A real server process (bench/serverProcess.ts) on a fresh database, with an account, user and key. */
interface Server extends ServerProcess {
  headers: Record<string, string>;
}

async function startServer(kind: "sqlite" | "postgres"): Promise<Server> {
  const pgServer = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const dbName = `gg_bench_bulk_${randomBytes(3).toString("hex")}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: pgServer });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  let url: string;
  if (kind === "postgres") {
    await admin(`CREATE DATABASE ${dbName}`);
    const u = new URL(pgServer);
    u.pathname = `/${dbName}`;
    url = u.toString();
  } else {
    mkdirSync(join(root, "data/bench"), { recursive: true });
    for (const s of ["", "-wal", "-shm"]) rmSync(join(root, `data/bench/bulk.db${s}`), { force: true });
    url = "file:./data/bench/bulk.db";
  }
  const env = {
    ...process.env,
    DATABASE_URL: url,
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    NODE_ENV: "production",
    SEED_DEMO: "false",
    LOG_LEVEL: "warn",
  };
  const server = await startServerProcess(env, (values["server-args"] ?? "").split(" ").filter(Boolean)).catch(async (err) => {
    if (kind === "postgres") await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    throw err;
  });
  // Set up with the admin CLI once the server runs (starting it built dist/ and migrated the database).
  const cli = (...args: string[]) => runNode(["dist/cli/index.js", ...args], env);
  const email = "bench@example.com";
  cli("account", "create", "bench");
  // A budget no bench exhausts: 429s would measure the limiter, not the route.
  cli("account", "set", "bench", "--rate-limit", "100000000");
  cli("user", "create", email, "--account", "bench");
  const key = cli("key", "create", email);
  return {
    ...server,
    headers: { "x-service-integration-key": key, "x-service-user": email, "content-type": "application/json" },
    stop: async () => {
      await server.stop();
      if (kind === "postgres") await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    },
  };
}

/** Statements the server sent (its db_queries_total), transaction control and savepoints excluded. */
async function statementCount(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^db_queries_total\{kind="(\w+)"\} (\d+)/gm)) if (!["begin", "commit", "rollback", "other"].includes(m[1]!)) n += Number(m[2]);
  return n;
}

async function benchRoute(kind: "sqlite" | "postgres", route: Route): Promise<Json[]> {
  const server = await startServer(kind);
  const out: Json[] = [];
  const send: Send = async (method, path, body) => {
    resetPeak(server.pid); // the peak is per request
    const before = await statementCount(server.base);
    const cpu0 = cpuMs(server.pid);
    const t0 = performance.now();
    const res = await fetch(server.base + path, { method, headers: server.headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    const ms = performance.now() - t0;
    const cpu = cpuMs(server.pid) - cpu0;
    return {
      status: res.status,
      body: text ? (JSON.parse(text) as Json) : {},
      ms,
      cpu,
      statements: (await statementCount(server.base)) - before,
      rssMb: memoryMb(server.pid, "VmHWM"),
    };
  };
  const row = (op: string, r: Awaited<ReturnType<Send>>, ok: number[]) =>
    out.push({ route: route.name, op, status: r.status, ok: ok.includes(r.status), ms: r.ms, cpu: r.cpu, statements: r.statements, rssMb: r.rssMb });
  try {
    await route.setup?.(send);
    out.push({ route: route.name, op: "(idle server)", status: 0, ok: true, ms: 0, statements: 0, rssMb: memoryMb(server.pid, "VmRSS"), idle: true });
    // A warm-up of WARM_UP items of their own (the last ones of an N + WARM_UP body), created and
    // updated: a serving process has run its code paths before (JIT, Prisma's query plans, the
    // connection pool); the first request of a new process costs ~0.3-0.8 s more on PostgreSQL.
    if (WARM_UP) {
      const warm = await send(route.create.method, route.create.path, (route.create.body(N + WARM_UP) as unknown[]).slice(-WARM_UP));
      if (!route.create.status.includes(warm.status)) throw new Error(`warm-up create answered ${warm.status}`);
      if (route.update) await send(route.update.method, route.update.path, (route.update.body(N + WARM_UP, warm.body) as unknown[]).slice(-WARM_UP));
    }
    const created = await send(route.create.method, route.create.path, route.create.body(N));
    row("create", created, route.create.status);
    if (route.update && OPS.has("update"))
      row("update", await send(route.update.method, route.update.path, route.update.body(N, created.body)), route.update.status);
    if (route.list && OPS.has("list")) row("list 10,000", await send("GET", route.list), [200]);
  } finally {
    await server.stop();
  }
  return out;
}

const kinds = values.db === "both" ? (["sqlite", "postgres"] as const) : ([values.db === "postgres" ? "postgres" : "sqlite"] as const);
const rows: Json[] = [];
for (const kind of kinds) {
  for (const route of ROUTES.filter((r) => !values.route || r.name === values.route)) {
    process.stderr.write(`bench:bulk ${kind}: ${route.name} ...\n`);
    try {
      rows.push(...(await benchRoute(kind, route)).map((r) => ({ db: kind, ...r })));
    } catch (err) {
      process.stderr.write(`  failed: ${(err as Error).message}\n`);
      rows.push({ db: kind, route: route.name, op: "(failed)", status: 0, ok: false, ms: 0, statements: 0, rssMb: 0 });
    }
  }
}
console.log(
  `\nguidegate bulk bench: ${N.toLocaleString()} items per request, after a warm-up request of ${WARM_UP} items; targets ≤ 2 s, ≤ 300 MB peak RSS, ≤ 10 statements per 1,000 items\n`,
);
console.log("| DB | Route | Operation | Status | Time | Server CPU | Items/s | Statements | per 1,000 | Server peak RSS |");
console.log("|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  const mb = `${Math.round(Number(r.rssMb))} MB${Number(r.rssMb) > 300 ? " ✗" : ""}`;
  if (r.idle) {
    console.log(`| ${r.db} | ${r.route} | idle, before the requests | | | | | | | ${mb} |`);
    continue;
  }
  const ms = Number(r.ms);
  const per1000 = (Number(r.statements) / N) * 1000;
  console.log(
    `| ${r.db} | ${r.route} | ${r.op} | ${r.status}${r.ok ? "" : " ✗"} | ${(ms / 1000).toFixed(2)} s${ms > 2000 ? " ✗" : ""} | ${(Number(r.cpu) / 1000).toFixed(2)} s | ${Math.round(N / (ms / 1000)).toLocaleString()} | ${r.statements} | ${per1000.toFixed(1)}${per1000 > 10 ? " ✗" : ""} | ${mb} |`,
  );
}
console.log(
  "\n✗ marks a figure past its target (or a status other than the route's success). Server CPU: the server process's CPU time (user + system) during the request: steadier than the time on a busy machine; on PostgreSQL the database's own work is not in it. Server peak RSS: the server process's high-water mark of resident memory during that request (reset before each); the idle row is its resident memory after start-up.",
);
