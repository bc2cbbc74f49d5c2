// Integration-attribute and segment benchmark, through the real REST routes:
//   - B20: one PUT of 10,000 records (3 secondary attributes each), as creates and again as updates;
//   - B22: searches over `--records` records (default 100,000), with the database's plan of the
//     id query (PostgreSQL: EXPLAIN ANALYZE; SQLite: EXPLAIN QUERY PLAN), to show it reads indexes;
//   - B16: one segment's content order for one user, latency and statements per request.
// Figures only: it never passes or fails.
//
//   npm run bench:attributes [-- --db sqlite|postgres] [--records 100000]
import { parseArgs } from "node:util";
import { benchServer } from "./server.js";

const { values } = parseArgs({ options: { db: { type: "string", default: "postgres" }, records: { type: "string", default: "100000" } } });
const kind = values.db === "sqlite" ? "sqlite" : "postgres";
const total = Number(values.records);
const BATCH = 10_000;
const mb = () => Math.round(process.resourceUsage().maxRSS / 1024);
const app = await benchServer(kind, "attributes");
const { base, headers, prisma } = app;
const { onQuery } = await import("../src/db/index.js");
let statements = 0;
onQuery(() => statements++);

async function timed(label: string, run: () => Promise<Response>, expected: number[]) {
  statements = 0;
  const t0 = performance.now();
  const res = await run();
  const text = await res.text();
  const ms = performance.now() - t0;
  if (!expected.includes(res.status)) throw new Error(`${label}: ${res.status} ${text.slice(0, 300)}`);
  return { label, ms, statements, bytes: text.length };
}

const rows: { label: string; ms: number; statements: number; bytes: number; note?: string }[] = [];
try {
  const put = (path: string, body: unknown) => fetch(`${base}/v1/accounts/bench${path}`, { method: "PUT", headers, body: JSON.stringify(body) });
  const post = (path: string, body: unknown) => fetch(`${base}/v1/accounts/bench${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  await put("/integrationAttributeSchema", [
    { name: "company", type: "string" },
    { name: "region", type: "string" },
    { name: "seats", type: "double" },
    { name: "tier", type: "string" },
  ]);
  const REGIONS = ["emea", "amer", "apac", "latam"];
  const batch = (from: number, round: number) =>
    Array.from({ length: BATCH }, (_, k) => {
      const i = from + k;
      return {
        attributeName: "company",
        attributeValue: `co-${i}`,
        additionalAttributes: { region: REGIONS[i % 4], seats: (i % 500) + round, tier: `t${i % 10}` },
      };
    });

  // B20 at the per-request maximum: creates, then the same keys as updates.
  rows.push(await timed("B20 PUT 10,000 records (create)", () => put("/integrationAttributes", batch(0, 0)), [201]));
  rows.push(await timed("B20 PUT 10,000 records (update)", () => put("/integrationAttributes", batch(0, 1)), [200]));
  let fill = performance.now();
  for (let from = BATCH; from < total; from += BATCH) {
    const r = await timed("B20 PUT 10,000 records (create, warm: the next batch)", () => put("/integrationAttributes", batch(from, 0)), [201]);
    if (from === BATCH) rows.push(r);
    process.stderr.write(`\rseeded ${Math.min(from + BATCH, total).toLocaleString()} / ${total.toLocaleString()} records`);
  }
  fill = performance.now() - fill;
  process.stderr.write("\n");
  if (kind === "postgres") for (const table of ["AttributeRecord", "AttributeRecordValue"]) await prisma.$queryRawUnsafe(`ANALYZE "${table}"`);

  // B22: a primary lookup, a secondary lookup (a quarter of all records match; first page), both ANDed.
  rows.push(await timed("B22 {company: 3 values}", () => post("/integrationAttributes/search?limit=100", { company: "co-1,co-500,co-99999" }), [200]));
  rows.push(await timed("B22 {region: emea} first 100", () => post("/integrationAttributes/search?limit=100", { region: "emea" }), [200]));
  rows.push(
    await timed(
      "B22 {company: 3 values, region: emea}",
      () => post("/integrationAttributes/search?limit=100", { company: "co-0,co-4,co-5", region: "emea" }),
      [200],
    ),
  );
  rows.push(
    await timed(
      "B23 primaryAttrName=company, limit 1000",
      () => fetch(`${base}/v1/accounts/bench/integrationAttributes?primaryAttrName=company&limit=1000`, { headers }),
      [200],
    ),
  );

  // The plan of the search's id query (the same SQL the route runs, its parameters inlined).
  const q = (s: string) => `'${s}'`;
  const primary = `SELECT "id" FROM "AttributeRecord" WHERE "accountId" = 'bench' AND "attributeName" = 'company' AND "attributeValue" IN (${["co-0", "co-4", "co-5"].map(q).join(", ")})`;
  const secondaryOf = (name: string) =>
    `SELECT "recordId" FROM "AttributeRecordValue" WHERE "accountId" = 'bench' AND "name" = ${q(name)} AND "text" IN ('emea')`;
  const sql = `SELECT "id" FROM (SELECT "id" FROM (${primary} UNION SELECT "recordId" FROM "AttributeRecordValue" WHERE "accountId" = 'bench' AND "name" = 'company' AND "text" IN ('co-0','co-4','co-5')) AS m INTERSECT SELECT "id" FROM (SELECT "id" FROM "AttributeRecord" WHERE "accountId" = 'bench' AND "attributeName" = 'region' AND "attributeValue" IN ('emea') UNION ${secondaryOf("region")}) AS m) AS hits ORDER BY "id" LIMIT 101`;
  const plan = (await prisma.$queryRawUnsafe(kind === "postgres" ? `EXPLAIN ANALYZE ${sql}` : `EXPLAIN QUERY PLAN ${sql}`)) as Record<string, unknown>[];

  // B16: a segment over a custom field and a linked attribute, evaluated for one user.
  await put("/endUserSchema", [
    { name: "company", type: "string" },
    { name: "plan", type: "string" },
  ]);
  await put("/endUsers", [{ id: "u1", custom: { company: "co-0", plan: "gold" } }]);
  const made = await post(
    "/content",
    Array.from({ length: 20 }, (_, i) => ({ title: `Content ${i}`, type: "text" })),
  );
  const contentIds = ((await made.json()) as { data: { id: string }[] }).data.map((c) => c.id);
  const seg = await fetch(`${base}/graphql`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      query: `mutation($input: SegmentInput!) { createSegment(accountId: "bench", input: $input) { id } }`,
      variables: {
        input: {
          name: "emea gold",
          rule: {
            and: [
              { field: "custom.plan", op: "eq", value: "gold" },
              { field: "attribute.company.region", op: "eq", value: "emea" },
            ],
          },
          contentIds,
        },
      },
    }),
  });
  const segmentId = ((await seg.json()) as { data: { createSegment: { id: string } } }).data.createSegment.id;
  const b16: number[] = [];
  for (let i = 0; i < 200; i++) {
    const r = await timed("B16", () => fetch(`${base}/v1/accounts/bench/segments/${segmentId}/contentOrder?id=u1`, { headers }), [200]);
    b16.push(r.ms);
    if (i === 199) rows.push({ ...r, label: "B16 contentOrder (20 contents), p50 of 200", ms: b16.sort((a, b) => a - b)[100]! });
  }

  console.log(`\n${kind}: integration attributes and segments (${total.toLocaleString()} records; seeding took ${(fill / 1000).toFixed(1)} s)\n`);
  console.log("| Request | Time | Statements | Response |");
  console.log("|---|---:|---:|---:|");
  for (const r of rows)
    console.log(
      `| ${r.label} | ${r.ms >= 1000 ? `${(r.ms / 1000).toFixed(2)} s` : `${r.ms.toFixed(1)} ms`} | ${r.statements} | ${(r.bytes / 1024).toFixed(0)} KiB |`,
    );
  console.log(`\nPeak RSS: ${mb()} MB`);
  console.log(`\nPlan of the B22 id query {company: 3 values, region: emea}:`);
  for (const p of plan) console.log(`  ${kind === "postgres" ? String(Object.values(p)[0]) : String(p.detail)}`);
} finally {
  await app.close();
}
