// Bulk-write benchmark: every bulk route at the per-request maximum (10,000 items), created and then
// updated through the real REST route, plus the 10,000-row list of what was written. For each: the
// time, items per second, SQL statements issued (transaction control excluded) and the peak RSS of
// the process. Each route runs in a child process of its own on a fresh database, so the peak RSS
// belongs to that route alone. Figures only: it never passes or fails.
//
//   npm run bench:bulk [-- --db sqlite|postgres|both] [--items 10000] [--route <name>]
//
// Targets (issue "Bulk writes at database speed"): ≤ 2 s per request, ≤ 300 MB peak RSS,
// ≤ 10 statements per 1,000 items.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    db: { type: "string", default: "both" },
    items: { type: "string", default: "10000" },
    route: { type: "string" },
    child: { type: "boolean", default: false },
  },
});
const N = Number(values.items);

type Json = Record<string, unknown>;
interface Route {
  name: string;
  /** the account's schema and whatever the items refer to */
  setup?: (put: Send) => Promise<void>;
  create: { method: string; path: string; body: (n: number) => unknown; status: number[] };
  update?: { method: string; path: string; body: (n: number, created: Json) => unknown; status: number[] };
  list?: string;
}
type Send = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Json; ms: number; statements: number }>;

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

async function child(kind: "sqlite" | "postgres", route: Route): Promise<void> {
  const { benchServer } = await import("./server.js");
  const app = await benchServer(kind, "bulk");
  const { onQuery } = await import("../src/db/index.js");
  let statements = 0;
  onQuery((sql) => {
    if (!/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(sql.trim())) statements++;
  });
  const send: Send = async (method, path, body) => {
    statements = 0;
    const t0 = performance.now();
    const res = await fetch(app.base + path, { method, headers: app.headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    const ms = performance.now() - t0;
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {}, ms, statements };
  };
  const out: Json[] = [];
  const row = (op: string, r: Awaited<ReturnType<Send>>, ok: number[]) =>
    out.push({
      route: route.name,
      op,
      status: r.status,
      ok: ok.includes(r.status),
      ms: r.ms,
      statements: r.statements,
      rssMb: process.resourceUsage().maxRSS / 1024,
    });
  try {
    await route.setup?.(send);
    const created = await send(route.create.method, route.create.path, route.create.body(N));
    row("create", created, route.create.status);
    if (route.update) row("update", await send(route.update.method, route.update.path, route.update.body(N, created.body)), route.update.status);
    if (route.list) row("list 10,000", await send("GET", route.list), [200]);
  } finally {
    await app.close();
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
}

if (values.child) {
  const route = ROUTES.find((r) => r.name === values.route);
  if (!route) throw new Error(`unknown route ${values.route}`);
  await child(values.db === "postgres" ? "postgres" : "sqlite", route);
} else {
  const kinds = values.db === "both" ? (["sqlite", "postgres"] as const) : ([values.db === "postgres" ? "postgres" : "sqlite"] as const);
  const rows: Json[] = [];
  for (const kind of kinds) {
    for (const route of ROUTES.filter((r) => !values.route || r.name === values.route)) {
      process.stderr.write(`bench:bulk ${kind}: ${route.name} ...\n`);
      const r = spawnSync(
        process.execPath,
        ["--import", "tsx", fileURLToPath(import.meta.url), "--child", "--db", kind, "--route", route.name, "--items", String(N)],
        { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "inherit"] },
      );
      const line = r.stdout.trim().split("\n").at(-1) ?? "";
      try {
        for (const x of JSON.parse(line) as Json[]) rows.push({ db: kind, ...x });
      } catch {
        rows.push({ db: kind, route: route.name, op: "(failed)", status: r.status, ok: false, ms: 0, statements: 0, rssMb: 0 });
      }
    }
  }
  console.log(`\nguidegate bulk bench: ${N.toLocaleString()} items per request; targets ≤ 2 s, ≤ 300 MB peak RSS, ≤ 10 statements per 1,000 items\n`);
  console.log("| DB | Route | Operation | Status | Time | Items/s | Statements | per 1,000 | Peak RSS |");
  console.log("|---|---|---|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    const ms = Number(r.ms);
    const per1000 = (Number(r.statements) / N) * 1000;
    console.log(
      `| ${r.db} | ${r.route} | ${r.op} | ${r.status}${r.ok ? "" : " ✗"} | ${(ms / 1000).toFixed(2)} s${ms > 2000 ? " ✗" : ""} | ${Math.round(N / (ms / 1000)).toLocaleString()} | ${r.statements} | ${per1000.toFixed(1)}${per1000 > 10 ? " ✗" : ""} | ${Math.round(Number(r.rssMb))} MB${Number(r.rssMb) > 300 ? " ✗" : ""} |`,
    );
  }
  console.log(
    "\n✗ marks a figure past its target (or a status other than the route's success). Peak RSS is the child process's: server, Prisma and this client.",
  );
}
