// Engagement events and reports at scale: ingests N events (default 1,000,000) through the real
// REST route in requests of 10,000 (events/s), then times every report over all of them (the
// default 30-day window holds them all) through the real REST route, JSON. Figures only: it never
// passes or fails.
//
//   npm run bench:reports [-- --db sqlite|postgres|both] [--events 1000000]
//
// Each database runs in a child process of its own (the app reads DATABASE_URL once); `both`
// prints one table with the two side by side. bench/server.ts makes the fresh database.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    db: { type: "string", default: "both" },
    events: { type: "string", default: "1000000" },
    child: { type: "boolean", default: false },
    out: { type: "string" },
  },
});
const total = Number(values.events);
const BATCH = 10_000;

interface Result {
  kind: string;
  events: number;
  ingestSeconds: number;
  analyzeMs: number;
  reports: { name: string; rows: number; ms: number }[];
}

if (!values.child) {
  const kinds = values.db === "both" ? ["sqlite", "postgres"] : [values.db!];
  const results: Result[] = [];
  for (const kind of kinds) {
    process.stderr.write(`${kind}: ingesting ${total.toLocaleString("en")} events, then every report...\n`);
    const file = `data/bench/reports-${kind}.json`;
    execFileSync(process.execPath, ["--import", "tsx", "bench/reports.ts", "--child", "--db", kind, "--events", String(total), "--out", file], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    results.push(JSON.parse(readFileSync(file, "utf8")) as Result);
  }
  const fmt = (n: number | undefined) => (typeof n === "number" && Number.isFinite(n) ? n.toLocaleString("en", { maximumFractionDigits: 0 }) : "?");
  console.log(`\nEvents: ${fmt(total)}, ingested through POST /events in requests of ${fmt(BATCH)}\n`);
  console.log(`| | ${results.map((r) => r.kind).join(" | ")} |`);
  console.log(`|---|${results.map(() => "---:").join("|")}|`);
  console.log(`| ingest, events/s | ${results.map((r) => fmt(r.events / r.ingestSeconds)).join(" | ")} |`);
  console.log(`| ANALYZE after ingest, ms | ${results.map((r) => fmt(r.analyzeMs)).join(" | ")} |`);
  console.log(`\n| report | rows | ${results.map((r) => `${r.kind} ms`).join(" | ")} |`);
  console.log(`|---|---:|${results.map(() => "---:").join("|")}|`);
  for (const [i, rep] of results[0]!.reports.entries()) {
    console.log(`| ${rep.name} | ${fmt(rep.rows)} | ${results.map((r) => fmt(r.reports[i]!.ms)).join(" | ")} |`);
  }
  for (const r of results) {
    const slow = r.reports.filter((x) => x.ms >= 1_000).map((x) => x.name);
    console.log(`\n${r.kind}: ${slow.length ? `over 1 s: ${slow.join(", ")}` : "every report under 1 s"}`);
  }
  process.exit(0);
}

// ---- one database (child process) -----------------------------------------------------------------
const { benchServer } = await import("./server.js");
const kind = values.db === "postgres" ? "postgres" : "sqlite";
const app = await benchServer(kind, "reports");
// Imported after benchServer set up the environment (the logger reads LOG_LEVEL when it loads).
const { rng } = await import("../src/seed/demo.js");
const { REPORTS } = await import("../src/domains/reports/registry.js");
try {
  const random = rng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const flows = Array.from({ length: 50 }, (_, i) => `flow-${i}`);
  const contents = Array.from({ length: 300 }, (_, i) => `content-${i}`);
  const users = Array.from({ length: 20_000 }, (_, i) => `user-${i}`);
  const domains = ["app.acme.com", "admin.acme.com", "help.acme.com", null];
  const widgets = ["self_help", "task_list", "beacon", "guided_popup", "smart_tip", "popup", "direct"];
  const end = Date.now() - 3_600_000;
  const span = 29 * 86_400_000;
  const one = (): Record<string, unknown> => {
    const r = random();
    const flowId = pick(flows);
    const common = {
      time: Math.floor(end - random() * span),
      endUserId: pick(users),
      domain: pick(domains),
      ...(random() < 0.1 ? { userName: `Name ${Math.floor(random() * 1e6)}` } : {}),
    };
    if (r < 0.12) return { ...common, type: "flow_started", flowId, widget: pick(widgets), ...(random() < 0.2 ? { contentId: pick(contents) } : {}) };
    if (r < 0.3) return { ...common, type: "flow_step", flowId, step: 1 + Math.floor(random() * 6) };
    if (r < 0.36) return { ...common, type: "flow_completed", flowId, widget: pick(widgets) };
    if (r < 0.39) return { ...common, type: pick(["flow_exited", "flow_failed"]), flowId, widget: pick(widgets) };
    if (r < 0.42)
      return {
        ...common,
        type: "flow_feedback",
        flowId,
        useful: random() < 0.7,
        ...(random() < 0.4 ? { comment: `comment ${Math.floor(random() * 1e5)}` } : {}),
      };
    if (r < 0.55) {
      const resultCount = random() < 0.2 ? 0 : 1 + Math.floor(random() * 9);
      return {
        ...common,
        type: "selfhelp_search",
        searchTerm: `term ${Math.floor(random() * 2_000)}`,
        resultCount,
        ...(resultCount && random() < 0.5 ? { contentId: pick(contents) } : {}),
      };
    }
    if (r < 0.62) return { ...common, type: "selfhelp_content_viewed", contentId: pick(contents) };
    if (r < 0.67) return { ...common, type: pick(["task_started", "task_completed"]), flowId };
    if (r < 0.78) return { ...common, type: pick(["guided_popup_shown", "popup_shown", "popup_clicked", "smart_popup_shown"]), contentId: pick(contents) };
    if (r < 0.86) return { ...common, type: pick(["smarttip_shown", "smarttip_played"]), contentId: pick(contents) };
    if (r < 0.94) return { ...common, type: pick(["beacon_shown", "beacon_clicked"]), contentId: pick(contents) };
    return { ...common, type: "user_action", actionId: `action-${Math.floor(random() * 40)}` };
  };

  let ingestMs = 0;
  for (let done = 0; done < total; done += BATCH) {
    const body = JSON.stringify(Array.from({ length: Math.min(BATCH, total - done) }, one));
    const t0 = performance.now();
    const res = await fetch(`${app.base}/v1/accounts/bench/events`, { method: "POST", headers: app.headers, body });
    ingestMs += performance.now() - t0;
    if (res.status !== 202) throw new Error(`ingest: ${res.status} ${(await res.text()).slice(0, 300)}`);
    if ((done / BATCH) % 10 === 9)
      process.stderr.write(`  ${kind}: ${(done + BATCH).toLocaleString("en")} events, ${Math.round((done + BATCH) / (ingestMs / 1000))} events/s so far\n`);
  }
  // Planner statistics, as autovacuum (PostgreSQL) or `PRAGMA optimize` (SQLite) would gather them in production.
  const a0 = performance.now();
  await app.prisma.$queryRawUnsafe("ANALYZE");
  const analyzeMs = performance.now() - a0;
  process.stderr.write(`  ${kind}: ingest ${Math.round(total / (ingestMs / 1000))} events/s; ANALYZE ${Math.round(analyzeMs)} ms\n`);

  const reports: Result["reports"] = [];
  for (const def of REPORTS) {
    const url = `${app.base}/v1/accounts/bench/reports/${def.name}${def.flow ? "?flowId=flow-1" : ""}`;
    let best = Number.POSITIVE_INFINITY;
    let rows = 0;
    for (let run = 0; run < 2; run++) {
      const t0 = performance.now();
      const res = await fetch(url, { headers: app.headers });
      const body = (await res.json()) as { rows: unknown[] };
      best = Math.min(best, performance.now() - t0);
      if (res.status !== 200) throw new Error(`${def.name}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      rows = body.rows.length;
    }
    reports.push({ name: def.name, rows, ms: best });
    process.stderr.write(`  ${kind}: ${def.name} ${best.toFixed(0)} ms (${rows} rows)\n`);
  }
  writeFileSync(
    values.out ?? `data/bench/reports-${kind}.json`,
    JSON.stringify({ kind, events: total, ingestSeconds: ingestMs / 1000, analyzeMs, reports } satisfies Result),
  );
} finally {
  await app.close();
}
