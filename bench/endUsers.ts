// Bulk end-user benchmark: one PUT of 10,000 end users (the spec's per-request maximum) through
// the real REST route, as creates and again as updates, then a list with limit=10000; prints
// users/s, response sizes and the process's peak RSS. Figures only: it never passes or fails.
//
//   npm run bench:endusers [-- --db sqlite|postgres] [--users 10000]
//
// The database and the app come from bench/server.ts:
// SQLite is a fresh file under data/bench/; PostgreSQL a fresh database on
// BENCH_DATABASE_URL's server (default the local one), dropped afterwards.
import { parseArgs } from "node:util";
import { benchServer } from "./server.js";

const { values } = parseArgs({ options: { db: { type: "string", default: "sqlite" }, users: { type: "string", default: "10000" } } });
const users = Number(values.users);
const kind = values.db === "postgres" ? "postgres" : "sqlite";
const mb = () => Math.round(process.resourceUsage().maxRSS / 1024);
const app = await benchServer(kind, "endusers");
const { base, headers, prisma } = app;
try {
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
} finally {
  await app.close();
}
process.exit(0);
