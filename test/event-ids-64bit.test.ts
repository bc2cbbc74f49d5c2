// Event ids come from one sequence shared by every account: a service's events pass 2^31 (as SERIAL,
// PostgreSQL's ingest then failed for every account) and 2^32 in its life. Ingest, the export (REST
// and GraphQL, cursors), the rollup worker's watermark and the reports above and below it work past
// both, on both databases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dbKind } from "../src/db/index.js";
import { REPORTS } from "../src/domains/reports/registry.js";
import { catchUpRollups } from "../src/domains/reports/rollupWorker.js";
import { gql, prisma, requester, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
const req = requester(() => server);
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const FROM = 2 ** 32 + 5; // past int4 and past uint32

async function jumpEventIds(to: number) {
  if (dbKind() === "postgres") await prisma.$queryRawUnsafe(`SELECT setval('"Event_id_seq"', ${to})`);
  else await prisma.$queryRawUnsafe(`UPDATE sqlite_sequence SET seq = ${to} WHERE name = 'Event' RETURNING seq`);
}

const day = Date.UTC(2026, 10, 2);
const events = (n: number, user = "u1") =>
  Array.from({ length: n }, (_, i) => ({ type: "flow_started", time: day + i * 60_000, endUserId: `${user}-${i % 3}`, flowId: "f1", widget: "self_help" }));

async function reports(t: Tenant) {
  const out: Record<string, unknown> = {};
  for (const r of REPORTS.filter((x) => ["summary", "flowViews", "endUserEngagement", "flowPlaysByDay"].includes(x.name))) {
    const a = await req(`/v1/accounts/${t.accountId}/reports/${r.name}?startDate=2026-11-01&endDate=2026-11-05${r.flow ? "&flowId=f1" : ""}`, {
      headers: t.headers,
    });
    expect([r.name, a.status]).toEqual([r.name, 200]);
    out[r.name] = a.body;
  }
  return out;
}

describe("event ids past 2^32", () => {
  it("are stored, exported in order with cursors that resume, counted by the rollups, and reported the same raw or counted", async () => {
    const t = await tenant("big-ids");
    // Something stored before the jump (the sequence must exist on SQLite), then ids past 2^32.
    expect((await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events(1, "early") })).status).toBe(202);
    await jumpEventIds(FROM);
    const posted = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events(7) });
    expect(posted.status, posted.text).toBe(202);

    const stored = await prisma.event.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" }, select: { id: true } });
    expect(stored).toHaveLength(8);
    expect(stored.slice(1).every((e) => e.id > FROM)).toBe(true);

    // REST export: pages of 3 walk every event once, in order, with cursors past 2^32.
    const seen: number[] = [];
    let cursor = "";
    for (let page = 0; page < 5; page++) {
      const r = await req(`/v1/accounts/${t.accountId}/events/export?limit=3${cursor ? `&cursor=${cursor}` : ""}`, { headers: t.headers });
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.data.map((e: { id: number }) => e.id));
      cursor = r.body.cursor;
      if (!r.body.hasMore) break;
    }
    expect(seen).toEqual(stored.map((e) => e.id));

    // GraphQL: the page's bounds are EventIds (GraphQL's Int stops at 2^31 − 1).
    const page = await gql(server, t, `query ($a: String!) { account(id: $a) { eventExport(limit: 8) { afterId upToId events } } }`, { a: t.accountId });
    expect(page.errors).toBeUndefined();
    expect(page.data.account.eventExport.afterId).toBe(0);
    expect(page.data.account.eventExport.upToId).toBe(stored.at(-1)!.id);
    expect(page.data.account.eventExport.events.map((e: { id: number }) => e.id)).toEqual(seen);

    // Reports read the events above the watermark raw, then the rollups once counted: the same.
    const raw = await reports(t);
    expect(await catchUpRollups(t.accountId)).toBe(8);
    const watermark = await prisma.rollupWatermark.findUniqueOrThrow({ where: { accountId: t.accountId } });
    expect(watermark.eventId).toBe(stored.at(-1)!.id);
    expect(await reports(t)).toEqual(raw);
    expect(JSON.stringify(raw)).toContain("u1-2");

    // Events stored after the counted ones are reported too (above a watermark past 2^32).
    expect((await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events(2, "late") })).status).toBe(202);
    const withLate = await reports(t);
    expect(JSON.stringify(withLate)).toContain("late-1");
    expect(await catchUpRollups(t.accountId)).toBe(2);
    expect(await reports(t)).toEqual(withLate);
  });
});
