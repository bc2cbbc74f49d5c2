// Bulk end-user benchmark: one PUT of 10,000 end users (the spec's per-request maximum) through
// the real REST route, as creates and again as updates, then a list with limit=10000; prints
// users/s, response sizes and the process's peak RSS. Figures only: it never passes or fails.
//
//   npm run bench:endusers [-- --db sqlite|postgres] [--users 10000]
//
// Like bench/index.ts, the database is chosen before anything under src/ is imported (src/db reads
// DATABASE_URL once): SQLite is a fresh file under data/bench/; PostgreSQL a fresh database on
// BENCH_DATABASE_URL's server (default the local one), dropped afterwards.
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import pg from "pg";

const { values } = parseArgs({ options: { db: { type: "string", default: "sqlite" }, users: { type: "string", default: "10000" } } });
const users = Number(values.users);
const kind = values.db === "postgres" ? "postgres" : "sqlite";
const server = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const dbName = `gg_bench_eu_${randomBytes(3).toString("hex")}`;

if (kind === "postgres") {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${dbName}`;
  process.env.DATABASE_URL = url.toString();
  process.env.ENCRYPTION_KEY ??= randomBytes(32).toString("base64");
} else {
  mkdirSync("data/bench", { recursive: true });
  for (const s of ["", "-wal", "-shm"]) rmSync(`data/bench/endusers.db${s}`, { force: true });
  process.env.DATABASE_URL = "file:./data/bench/endusers.db";
}
process.env.LOG_LEVEL = "silent";
process.env.NODE_ENV = "production";

const mb = () => Math.round(process.resourceUsage().maxRSS / 1024);
try {
  const { migrate } = await import("../src/db/migrate.js");
  await migrate(process.env.DATABASE_URL!);
  const { prepareDb, prisma } = await import("../src/db/index.js");
  await prepareDb();
  const { createAccount, createUser, createKey } = await import("../src/admin.js");
  const { requestScope } = await import("../src/audit/requestScope.js");
  const { createApp } = await import("../src/app.js");
  const { loadConfig } = await import("../src/config.js");

  const email = "bench@example.com";
  const key = await requestScope.run({ requestId: null, ip: null, actor: "system:bench" }, async () => {
    await createAccount("bench");
    await createUser(email, ["bench"]);
    return (await createKey(email)).key;
  });
  const { app, close } = createApp(loadConfig({ ...process.env, RATE_LIMIT_PER_MINUTE: "1000000" }));
  const http = app.listen(0, "127.0.0.1");
  await new Promise((r) => http.once("listening", r));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const headers = { "x-service-integration-key": key, "x-service-user": email, "content-type": "application/json" };

  const schema = [
    { name: "plan", type: "string" },
    { name: "seats", type: "double" },
    { name: "trial", type: "boolean" },
    { name: "renewal", type: "timestamp" },
    { name: "taxId", type: "encrypted_string" },
  ];
  await fetch(`${base}/api/v1/bench/endUserSchema`, { method: "PUT", headers, body: JSON.stringify(schema) });

  const body = (round: number) =>
    JSON.stringify(
      Array.from({ length: users }, (_, i) => ({
        id: `user-${i}`,
        custom: {
          plan: ["free", "pro", "enterprise"][i % 3],
          seats: (i % 50) + round,
          trial: i % 2 === 0,
          renewal: 1_767_225_600_000 + i,
          taxId: `TX-${i}`,
          email: `u${i}@example.com`,
        },
        userActionCount: { login: (i % 20) + round, export: i % 3 },
        userActions: { login: 1_767_225_600_000 + i },
      })),
    );

  // While each bulk PUT runs, small requests keep coming, one after another: liveness, a small read
  // and a small write. Their worst latency shows whether one bulk write stalls the server.
  const probes = {
    "GET /healthz": () => fetch(`${base}/healthz`),
    "GET /endUsers?limit=10": () => fetch(`${base}/api/v1/bench/endUsers?limit=10`, { headers }),
    "PUT /endUsers/{id} (1 user)": () => fetch(`${base}/api/v1/bench/endUsers/probe-user`, { method: "PUT", headers, body: JSON.stringify({ plan: "probe" }) }),
  };
  const during: string[][] = [];
  const rows: string[][] = [];
  for (const [round, label] of [
    [0, "PUT /endUsers, all created"],
    [1, "PUT /endUsers, all updated"],
  ] as const) {
    const payload = body(round);
    let running = true;
    const probeRuns = Object.entries(probes).map(async ([name, probe]) => {
      // Latency counts from when a probe was due (every 100 ms), not from when it could be sent:
      // client and server share this process, so a blocked event loop delays both.
      const times: number[] = [];
      let failures = 0;
      let due = performance.now() + 50;
      while (running) {
        await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
        const r = await probe();
        await r.arrayBuffer();
        if (r.status >= 300) failures++;
        times.push(performance.now() - due);
        due = Math.max(due + 100, performance.now());
      }
      times.sort((a, b) => a - b);
      return [
        `${label.replace("PUT /endUsers, ", "")}: ${name}`,
        String(times.length),
        String(failures),
        (times[Math.floor(times.length / 2)] ?? 0).toFixed(0),
        (times.at(-1) ?? 0).toFixed(0),
      ];
    });
    const t0 = performance.now();
    const res = await fetch(`${base}/v1/accounts/bench/endUsers`, { method: "PUT", headers, body: payload });
    const text = await res.text();
    const s = (performance.now() - t0) / 1000;
    running = false;
    during.push(...(await Promise.all(probeRuns)));
    rows.push([
      label,
      String(res.status),
      (users / s).toFixed(0),
      s.toFixed(2),
      (payload.length / 1024).toFixed(0),
      (text.length / 1024).toFixed(0),
      String(mb()),
    ]);
  }
  const t0 = performance.now();
  const list = await fetch(`${base}/api/v1/bench/endUsers?limit=${Math.min(users, 10_000)}`, { headers });
  const listed = await list.text();
  const s = (performance.now() - t0) / 1000;
  rows.push([
    `GET /endUsers?limit=${Math.min(users, 10_000)}`,
    String(list.status),
    (Math.min(users, 10_000) / s).toFixed(0),
    s.toFixed(2),
    "0",
    (listed.length / 1024).toFixed(0),
    String(mb()),
  ]);
  const entries = await prisma.auditLog.count();

  console.log(`\nguidegate end-user bulk bench: ${kind}, ${users} end users per request (5 custom fields incl. one encrypted_string, 2 user actions each)`);
  const head = ["operation", "status", "users/s", "seconds", "KB sent", "KB received", "peak RSS MB"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  const dHead = ["small request during the bulk PUT", "requests", "non-2xx", "p50 ms", "max ms"];
  const dWidths = dHead.map((h, i) => Math.max(h.length, ...during.map((r) => r[i]!.length)));
  const dLine = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(dWidths[i]!) : c.padStart(dWidths[i]!))).join("  ");
  console.log("");
  console.log(dLine(dHead));
  console.log(dWidths.map((w) => "-".repeat(w)).join("  "));
  for (const r of during) console.log(dLine(r));
  console.log(`audit entries written: ${entries} (one per end user and write, plus the schema fields)`);
  console.log("peak RSS is the whole process (server, Prisma, this client); it only grows.");

  http.closeAllConnections();
  http.close();
  await close();
  await prisma.$disconnect();
} finally {
  if (kind === "postgres") {
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
}
process.exit(0);
