// A CPU profile of the style A content list route under load (SQLite, 5,000 contents): where a
// request's time goes, by package, for the notes of performance work. Figures only.
//
//   npm run bench:profile [-- 10|1000 [graphql]]    (the page size, and POST /graphql instead of REST;
//                                                   writes data/bench/content-<limit>[-graphql].cpuprofile)
//   npm run bench:profile -- b16                    (B16, the segment's content order, instead:
//                                                   writes data/bench/b16.cpuprofile)
//   npm run bench:profile -- b14                    (B14, one end user with its custom values:
//                                                   writes data/bench/b14.cpuprofile)
//
// Open the .cpuprofile in Chrome DevTools (Performance) or speedscope; the summary printed groups
// the samples by package (inclusive time; the fetch client in this process counts as "node").
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import type { AddressInfo } from "node:net";

mkdirSync("data/bench", { recursive: true });
for (const s of ["", "-wal", "-shm"]) rmSync(`data/bench/profile.db${s}`, { force: true });
process.env.DATABASE_URL = "file:./data/bench/profile.db";
process.env.NODE_ENV = "production";
process.env.LOG_LEVEL = "warn";
process.env.RATE_LIMIT_PER_MINUTE = "1000000000";
const b16 = process.argv[2] === "b16";
const b14 = process.argv[2] === "b14";
const limit = b16 || b14 ? 20 : Number(process.argv[2] ?? 10);

const { migrate } = await import("../src/db/migrate.js");
await migrate(process.env.DATABASE_URL);
const { configureDatabase, prepareDb } = await import("../src/db/index.js");
configureDatabase((await import("../src/domains/index.js")).writePolicy);
await prepareDb();
const { seedBench } = await import("./seed.js");
const seeded = await seedBench(5000);
const { createApp } = await import("../src/app.js");
const { loadConfig } = await import("../src/config.js");
const { app } = createApp(loadConfig());
const server = app.listen(0, "127.0.0.1");
await new Promise((r) => server.once("listening", r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
// `-- 10 graphql`: the same operation over POST /graphql instead of the REST route.
const overGraphql = process.argv[3] === "graphql";
const { routes } = await import("../src/rest/routes.js");
const document = routes.find((r) => r.name === "listContentA")!.document;
const request = (): [string, RequestInit] =>
  b14
    ? [`${base}/v1/accounts/${seeded.accountId}/endUsers/${seeded.endUserId}?fields=custom`, { headers }]
    : b16
      ? [`${base}/v1/accounts/${seeded.accountId}/segments/${seeded.segmentId}/contentOrder?id=${seeded.endUserId}`, { headers }]
      : overGraphql
        ? [
            `${base}/graphql`,
            {
              method: "POST",
              headers: { ...headers, "content-type": "application/json" },
              body: JSON.stringify({ query: document, variables: { accountId: seeded.accountId, first: limit } }),
            },
          ]
        : [`${base}/api/v1/${seeded.accountId}/content?limit=${limit}`, { headers }];
const headers = { "x-service-integration-key": seeded.key, "x-service-user": seeded.email };
const n = limit >= 1000 ? 150 : 3000;
for (let i = 0; i < 50; i++) await (await fetch(...request())).text(); // warm-up

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.start");
const t0 = performance.now();
const c0 = process.cpuUsage();
await Promise.all(
  Array.from({ length: 4 }, async () => {
    for (let i = 0; i < n / 4; i++) await (await fetch(...request())).text();
  }),
);
const cpu = process.cpuUsage(c0);
const { profile } = await session.post("Profiler.stop");
console.log(
  `${b14 ? "B14" : b16 ? "B16" : `limit ${limit}`}: ${(n / ((performance.now() - t0) / 1000)).toFixed(0)} req/s, ${((cpu.user + cpu.system) / 1000 / n).toFixed(2)} CPU ms/req`,
);
const out = b14 ? "data/bench/b14.cpuprofile" : b16 ? "data/bench/b16.cpuprofile" : `data/bench/content-${limit}${overGraphql ? "-graphql" : ""}.cpuprofile`;
writeFileSync(out, JSON.stringify(profile));
console.log(`profile: ${out}`);
printByPackage(profile as unknown as Profile);
printTopFunctions(profile as unknown as Profile);
process.exit(0);

interface Profile {
  nodes: { id: number; callFrame: { url: string; functionName: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** Inclusive share of busy time per package (node_modules/<pkg>, src/<folder>, node internals). */
function printByPackage(p: Profile): void {
  const byId = new Map(p.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of p.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const area = (url: string): string | null => {
    if (url.includes("/src/")) return `src/${url.split("/src/")[1]?.split("/")[0]}`;
    const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    if (pkg) return pkg;
    return url.startsWith("node:") ? "node" : null;
  };
  const time = new Map<string, number>();
  const total = forEachBusySample(p, byId, (id, node, dt) => {
    const seen = new Set<string>();
    if (node.callFrame.functionName === "(garbage collector)") seen.add("(garbage collector)");
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
      const a = area(byId.get(x)?.callFrame.url ?? "");
      if (a) seen.add(a);
    }
    for (const a of seen) time.set(a, (time.get(a) ?? 0) + dt);
  });
  for (const [a, t] of [...time.entries()].sort((x, y) => y[1] - x[1]).slice(0, 20)) {
    console.log(`${((t / total) * 100).toFixed(1).padStart(6)}%  ${a}`);
  }
}

/** Self time per function (name and file:line), the 25 largest: where to look inside a package. */
function printTopFunctions(p: Profile): void {
  const byId = new Map(p.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  const total = forEachBusySample(p, byId, (_id, node, dt) => {
    const { functionName, url, lineNumber } = node.callFrame as { functionName: string; url: string; lineNumber?: number };
    const where = url ? `${url.replace(/^.*\/(node_modules|src)\//, "$1/")}:${(lineNumber ?? 0) + 1}` : "";
    const key = `${functionName || "(anonymous)"} ${where}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  console.log("self time:");
  for (const [k, t] of [...self.entries()].sort((x, y) => y[1] - x[1]).slice(0, 25)) {
    console.log(`${((t / total) * 100).toFixed(1).padStart(6)}%  ${k}`);
  }
}

/** Calls `each` for every sample the thread was busy in (not idle), with its node and duration; the busy time in all. */
function forEachBusySample(
  p: Profile,
  byId: Map<number, Profile["nodes"][number]>,
  each: (id: number, node: Profile["nodes"][number], dt: number) => void,
): number {
  let total = 0;
  p.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === "(idle)") return;
    const dt = p.timeDeltas[i] ?? 0;
    total += dt;
    each(id, node, dt);
  });
  return total;
}
