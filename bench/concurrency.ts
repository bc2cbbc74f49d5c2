// The concurrency reproducers at full size, against the real REST routes of one server: prints,
// per scenario, how many rounds lost a field, how many answers were 5xx or spurious 409s, and the
// time taken. Figures only: it never passes or fails (test/concurrency.test.ts asserts the same
// properties at a smaller size on both databases).
//
//   npm run bench:concurrency [-- --db sqlite|postgres]
//
// SQLite is a fresh file under data/bench/; PostgreSQL a fresh database on BENCH_DATABASE_URL's
// server (default the local one), dropped afterwards.
import { parseArgs } from "node:util";
import { benchServer } from "./server.js";

const { values } = parseArgs({ options: { db: { type: "string", default: "sqlite" } } });
const kind = values.db === "postgres" ? "postgres" : "sqlite";
const app = await benchServer(kind, "concurrency");
const { base, headers, prisma } = app;
try {
  const send = async (method: string, path: string, body: unknown) => {
    const r = await fetch(base + path, { method, headers, body: JSON.stringify(body) });
    return { status: r.status, body: (await r.json().catch(() => null)) as any };
  };
  const contents = async (n: number): Promise<string[]> =>
    (
      await send(
        "POST",
        "/api/v1/bench/content",
        Array.from({ length: n }, (_, i) => ({ title: `c${i}`, type: "text" })),
      )
    ).body.data.map((d: { id: string }) => d.id);

  type Row = [string, string, string, string, string, string];
  const rows: Row[] = [];
  const tally = (statuses: number[]) => ({ fiveXX: statuses.filter((s) => s >= 500).length, c409: statuses.filter((s) => s === 409).length });
  const timed = async (name: string, requests: number, run: () => Promise<{ statuses: number[]; lost: string }>) => {
    const t0 = performance.now();
    const { statuses, lost } = await run();
    const { fiveXX, c409 } = tally(statuses);
    rows.push([name, String(requests), lost, String(fiveXX), String(c409), ((performance.now() - t0) / 1000).toFixed(1)]);
  };

  await timed("4 title + 4 description PUTs of one content, 40 rounds", 320, async () => {
    const [id] = await contents(1);
    const statuses: number[] = [];
    let lost = 0;
    for (let round = 0; round < 40; round++) {
      const rs = await Promise.all([
        ...Array.from({ length: 4 }, (_, i) => send("PUT", "/api/v1/bench/content", [{ id, title: `t ${round}.${i}` }])),
        ...Array.from({ length: 4 }, (_, i) => send("PUT", "/api/v1/bench/content", [{ id, description: `d ${round}.${i}` }])),
      ]);
      statuses.push(...rs.map((r) => r.status));
      const row = await prisma.content.findUniqueOrThrow({ where: { id: id! } });
      if (!row.title.startsWith(`t ${round}.`) || !row.description?.startsWith(`d ${round}.`)) lost++;
    }
    return { statuses, lost: `${lost} of 40 rounds` };
  });

  await timed("2 PUTs of the same 2 ids in opposite order, 40 rounds", 80, async () => {
    const [a, b] = await contents(2);
    const statuses: number[] = [];
    for (let round = 0; round < 40; round++) {
      const rs = await Promise.all([
        send("PUT", "/api/v1/bench/content", [
          { id: a, title: `a${round}` },
          { id: b, title: `b${round}` },
        ]),
        send("PUT", "/api/v1/bench/content", [
          { id: b, description: `b${round}` },
          { id: a, description: `a${round}` },
        ]),
      ]);
      statuses.push(...rs.map((r) => r.status));
    }
    return { statuses, lost: "-" };
  });

  await timed("16 clients x 50 PUTs of the same 5 ids, random order", 800, async () => {
    const ids = await contents(5);
    const per = await Promise.all(
      Array.from({ length: 16 }, async (_, c) => {
        const out: number[] = [];
        for (let k = 0; k < 50; k++) {
          const order = [...ids].sort(() => Math.random() - 0.5);
          out.push(
            (
              await send(
                "PUT",
                "/api/v1/bench/content",
                order.map((id) => ({ id, title: `c${c} k${k}` })),
              )
            ).status,
          );
        }
        return out;
      }),
    );
    return { statuses: per.flat(), lost: "-" };
  });

  await timed("16 simultaneous PUT /tags of one new name, 20 rounds", 320, async () => {
    const statuses: number[] = [];
    let wrong = 0;
    for (let round = 0; round < 20; round++) {
      const rs = await Promise.all(
        Array.from({ length: 16 }, (_, i) => send("PUT", "/v1/accounts/bench/tags", [{ name: `tag-${round}`, description: `d${i}` }])),
      );
      statuses.push(...rs.map((r) => r.status));
      if (rs.filter((r) => r.status === 201).length !== 1) wrong++;
    }
    return { statuses, lost: `${wrong} rounds without exactly one 201` };
  });

  const audit = await prisma.auditLog.groupBy({ by: ["resourceType", "action"], where: { accountId: "bench" }, _count: { _all: true } });
  console.log(`\nguidegate concurrency bench: ${kind}, one server, concurrent REST clients on one account`);
  const head = ["scenario", "requests", "lost updates", "5xx", "409", "seconds"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  console.log(`audit entries: ${audit.map((a) => `${a.resourceType} ${a.action} ${a._count._all}`).join(", ")}`);
} finally {
  await app.close();
}
process.exit(0);
