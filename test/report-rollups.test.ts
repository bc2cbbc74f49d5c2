// The rollups behind the reports: on a randomized event set, every report over the rollups (whole
// days and hours from "EventRollup" / "EventUserRollup", the events above the rollup watermark and
// the raw events at the edges) equals the same report computed from the raw events alone, for
// windows with odd edges, domain filters and flows, with the rollup worker part way and caught up;
// pages walked with a small limit give the same rows; workers running at once count every event
// once, in one process and in two server processes on one database; a rebuild reproduces what the
// worker built; erasing end users to pseudonyms keeps every report and the rebuild consistent,
// events not yet rolled up included.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dbKind, withTransaction } from "../src/db/index.js";
import { REPORTS, type ReportParams, runReport, useReportSettings } from "../src/domains/reports/registry.js";
import { eraseEndUsersFromRollups, param, watermarkOf } from "../src/domains/reports/rollups.js";
import { catchUpRollups, RollupWorker, rebuildRollups, rollUpAccount, rollupStatus } from "../src/domains/reports/rollupWorker.js";
import { decodeReportCursor, encodeReportCursor } from "../src/domains/reports/schema.js";
import { rng } from "../src/seed/random.js";
import { killChildren, startServerProcess } from "./childProcess.js";
import { call, gql, prisma, requester, type Server, startServer, type Tenant, tenant, testSeed } from "./helpers.js";

let server: Server;
let t: Tenant;
const req = requester(() => server);

const H = 3_600_000;
const M = 60_000;
const D0 = Date.UTC(2024, 2, 10); // 2024-03-10 00:00 UTC
const DOMAINS = ["a.x.com", "b.x.com", null];

/** A deterministic random event stream over four days: every type, anonymous events, repeats. */
function randomEvents(n: number, seed: number): Record<string, unknown>[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const users = [...Array.from({ length: 40 }, (_, i) => `u${i}`), "Zed", "_u", null];
  const flows = ["f1", "f2", "f3", "F4"];
  const contents = ["c1", "c2", "cX", "c_3"];
  const widgets = ["self_help", "task_list", "beacon", "guided_popup", "smart_tip", "popup", "direct"];
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const user = pick(users);
    const domain = pick(DOMAINS);
    const common = {
      // Clustered on hour and day boundaries too, where the edge arithmetic could slip.
      time: r() < 0.1 ? D0 + Math.floor(r() * 4) * 24 * H + (r() < 0.5 ? -1 : 0) + (r() < 0.5 ? 0 : H) : D0 - 2 * H + Math.floor(r() * 4.2 * 24 * H),
      ...(user ? { endUserId: user } : {}),
      ...(domain ? { domain } : {}),
      // A name only with an end user (POST /events refuses one without); drawn either way, so the
      // rest of the stream stays what it was.
      ...(r() < 0.2 ? ((userName: string) => (user ? { userName } : {}))(`N${Math.floor(r() * 100)}`) : {}),
    };
    const k = r();
    const flowId = pick(flows);
    if (k < 0.15) out.push({ ...common, type: "flow_started", flowId, widget: pick(widgets), ...(r() < 0.5 ? { contentId: pick(contents) } : {}) });
    else if (k < 0.3) out.push({ ...common, type: "flow_step", flowId, step: 1 + Math.floor(r() * 4) });
    else if (k < 0.38) out.push({ ...common, type: pick(["flow_completed", "flow_exited", "flow_failed"]), flowId, widget: pick(widgets) });
    else if (k < 0.44)
      out.push({ ...common, type: "flow_feedback", flowId, useful: r() < 0.5, ...(r() < 0.5 ? { comment: pick(["ok", "bad", "=x", "a, b"]) } : {}) });
    else if (k < 0.56) {
      const resultCount = r() < 0.3 ? 0 : 1 + Math.floor(r() * 3);
      out.push({
        ...common,
        type: "selfhelp_search",
        searchTerm: pick(["Invoice", "invoice ", "refund", "Été"]),
        resultCount,
        ...(resultCount && r() < 0.5 ? { contentId: pick(contents) } : {}),
      });
    } else if (k < 0.64) out.push({ ...common, type: pick(["task_started", "task_completed"]), flowId });
    else if (k < 0.94)
      out.push({
        ...common,
        type: pick([
          "selfhelp_content_viewed",
          "guided_popup_shown",
          "popup_shown",
          "popup_clicked",
          "smart_popup_shown",
          "smarttip_shown",
          "smarttip_played",
          "beacon_shown",
          "beacon_clicked",
        ]),
        contentId: pick(contents),
      });
    else out.push({ ...common, type: "user_action", actionId: pick(["export", "login", "Save"]) });
  }
  return out;
}

/** Windows whose edges fall mid-hour, on hours, on days, inside one hour, and none at all. */
const WINDOWS: [number, number][] = [
  [D0, D0 + 3 * 24 * H], // whole days only
  [D0 + 3 * H + 17 * M + 5, D0 + 2 * 24 * H + 20 * H + 59 * M], // partial hours, whole hours, whole days
  [D0 + 5 * H, D0 + 24 * H + 7 * H], // whole hours on both sides of a midnight, no whole day
  [D0 + 5 * H + 1, D0 + 5 * H + 40 * M], // inside one hour
  [D0 + 23 * H + 30 * M, D0 + 24 * H + 30 * M], // across midnight, no whole day
  [D0 - 3 * H, D0 + 5 * 24 * H], // more than the events
  // Ends mid-day after that day's last event (as "the last 30 days up to now" does): the per-user
  // reports read that day's rollup rows instead of its raw events. (The second window ends mid-day
  // before later events of its day: there they read the raw events.)
  [D0 + 7 * H + 3 * M, D0 + 4 * 24 * H + 6 * H],
  [D0 + 12 * H, D0 + 12 * H], // empty
  // From midnight past every event: distinct users from the last-seen day counts, no start-day part.
  [D0 + 24 * H, D0 + 6 * 24 * H],
  // Inside the last day of events, ending after them: the day counts hold none of it, all raw.
  [D0 + 4 * 24 * H + 1 * H + 7 * M, D0 + 4 * 24 * H + 10 * H],
  // Two drawn from the seed (TEST_SEED draws others): each edge on a day, on an hour or anywhere.
  ...randomWindows(2, testSeed(50)),
];

function randomWindows(n: number, seed: number): [number, number][] {
  const r = rng(seed);
  const edge = () => {
    const t = D0 - 3 * H + Math.floor(r() * (5 * 24 + 3) * H);
    const snap = r();
    return snap < 0.3 ? Math.floor(t / (24 * H)) * 24 * H : snap < 0.6 ? Math.floor(t / H) * H : t;
  };
  return Array.from({ length: n }, () => {
    const [a, b] = [edge(), edge()];
    return [Math.min(a, b), Math.max(a, b)];
  });
}
const FILTERS = [
  { includeDomains: [], excludeDomains: [] },
  { includeDomains: ["a.x.com"], excludeDomains: [] },
  { includeDomains: [], excludeDomains: ["a.x.com"] },
  { includeDomains: ["a.x.com", "b.x.com"], excludeDomains: ["b.x.com"] },
];

const params = (from: number, to: number, f: (typeof FILTERS)[number], flowId: string | null = null): ReportParams => ({
  accountId: t.accountId,
  from: new Date(from),
  to: new Date(to),
  flowId,
  ...f,
});

async function rollupRows(accountId: string) {
  const where = { accountId };
  const [rollup, user, lastSeen, lastSeenCounts, activeUsers] = await Promise.all([
    prisma.eventRollup.findMany({ where }),
    prisma.eventUserRollup.findMany({ where }),
    prisma.eventUserLastSeen.findMany({ where }),
    // A day whose last-seen end users all moved to a later day keeps its row at 0; a rebuild has none.
    prisma.eventLastSeenCount.findMany({ where: { accountId, users: { not: 0 } } }),
    prisma.eventActiveUserCount.findMany({ where }),
  ]);
  const key = (r: object) => JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? Number(v) : v));
  const rows = (list: object[]) => list.map(key).sort();
  return { rollup: rows(rollup), user: rows(user), lastSeen: rows(lastSeen), lastSeenCounts: rows(lastSeenCounts), activeUsers: rows(activeUsers) };
}

async function expectRollupsMatchRaw(label: string, filters = FILTERS) {
  let rows = 0;
  for (const [from, to] of WINDOWS) {
    for (const f of filters) {
      for (const def of REPORTS) {
        for (const flowId of def.flow ? ["f1", "F4"] : [null]) {
          const p = params(from, to, f, flowId);
          const [fromRollups, fromEvents] = await Promise.all([runReport(def, p), runReport(def, { ...p, raw: true })]);
          expect(fromRollups, `${label}: ${def.name} ${new Date(from).toISOString()}..${new Date(to).toISOString()} ${JSON.stringify(f)} ${flowId}`).toEqual(
            fromEvents,
          );
          rows += fromEvents.length;
        }
      }
    }
  }
  // The comparison is about real answers, not empty ones.
  expect(rows).toBeGreaterThan(filters.length * 2_500);
}

beforeAll(async () => {
  server = await startServer();
  t = await tenant("roll");
  const events = randomEvents(6_000, testSeed(20));
  for (let i = 0; i < events.length; i += 1_500) {
    const r = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events.slice(i, i + 1_500) });
    expect(r.status, r.text).toBe(202);
  }
  // Another tenant's events must not reach these rollups.
  const other = await tenant("rollb");
  const r = await req(`/v1/accounts/${other.accountId}/events`, { method: "POST", headers: other.headers, body: randomEvents(500, 3) });
  expect(r.status, r.text).toBe(202);
  await catchUpRollups(other.accountId);
  // The worker part way: 3,500 of the 6,000 events counted, the rest above the watermark.
  expect(await rollUpAccount(t.accountId, 2_000)).toBe(2_000);
  expect(await rollUpAccount(t.accountId, 1_500)).toBe(1_500);
}, 120_000);
afterAll(() => server.close());

describe("rollups", () => {
  it("with the worker part way, every report equals the raw-event computation (odd window edges, domain filters, flows)", async () => {
    const [status] = await rollupStatus([t.accountId]);
    expect(status).toMatchObject({ accountId: t.accountId, pending: 2_500 });
    expect(status!.lagSeconds).toBeGreaterThanOrEqual(0);
    await expectRollupsMatchRaw("worker part way");
  }, 180_000);

  it("workers running at once count every event once; the watermark ends at the last event", async () => {
    // Three at once, as several instances would (PostgreSQL: separate connections and the advisory lock).
    const worker = new RollupWorker({ quietMs: 0 });
    const added = await Promise.all([catchUpRollups(t.accountId), catchUpRollups(t.accountId), worker.pass()]);
    expect(added.reduce((a, b) => a + b, 0)).toBe(2_500);
    expect(await rollUpAccount(t.accountId)).toBe(0);
    const last = await prisma.event.findFirst({ where: { accountId: t.accountId }, orderBy: { id: "desc" }, select: { id: true } });
    expect(await watermarkOf(prisma, t.accountId)).toBe(last!.id);
    expect(await rollupStatus([t.accountId])).toEqual([{ accountId: t.accountId, watermark: last!.id, pending: 0, lagSeconds: 0 }]);
    await expectRollupsMatchRaw("caught up", FILTERS.slice(0, 2));
  }, 180_000);

  it("ingest goes first: the worker waits until an account's ingest pauses, or until the lag reaches its bound", async () => {
    const watermark = await watermarkOf(prisma, t.accountId);
    const r = await req(`/v1/accounts/${t.accountId}/events`, {
      method: "POST",
      headers: t.headers,
      body: randomEvents(10, 9).map((e) => ({ ...e, time: D0 })),
    });
    expect(r.status, r.text).toBe(202);
    // Just ingested: not quiet for a minute yet, and the lag is under its bound.
    expect(await new RollupWorker({ quietMs: 60_000, maxLagMs: 120_000 }).pass()).toBe(0);
    expect(await watermarkOf(prisma, t.accountId)).toBe(watermark);
    expect((await rollupStatus([t.accountId]))[0]).toMatchObject({ pending: 10 });
    // The lag's bound reached (0 here): rolled up although ingest has not paused.
    expect(await new RollupWorker({ quietMs: 60_000, maxLagMs: 0 }).pass()).toBe(10);
    expect((await rollupStatus([t.accountId]))[0]).toMatchObject({ pending: 0, lagSeconds: 0 });
  }, 60_000);

  it("beside ingest the workers take their share of the time: a batch, then the account rests, for every instance; a paused account is counted at once", async () => {
    const ingest = async (n: number, seed: number) => {
      const r = await req(`/v1/accounts/${t.accountId}/events`, {
        method: "POST",
        headers: t.headers,
        body: randomEvents(n, seed).map((e) => ({ ...e, time: D0 })),
      });
      expect(r.status, r.text).toBe(202);
      // The stored receivedAt is rounded to the millisecond: let the lag bound (0) be reached.
      await new Promise((resolve) => setTimeout(resolve, 5));
    };
    // Still ingesting (never quiet for an hour), due by the lag bound (0 ms).
    const ingesting = { quietMs: 3_600_000, maxLagMs: 0, batch: 10 };
    // At share 1 a worker counts batch after batch beside ingest. (The previous test's worker, at
    // the default share, left the account resting for a moment after its batch: over now.)
    await withTransaction((tx) => tx.$executeRawUnsafe(`UPDATE "RollupWatermark" SET "restUntil" = 0 WHERE "accountId" = ${param(1)}`, t.accountId));
    await ingest(30, 10);
    expect(await new RollupWorker({ ...ingesting, ingestShare: 1 }).pass()).toBe(30);
    // Share 0.001: after a batch of ~10 ms the account rests for ~10 s, far longer than these passes.
    await ingest(30, 11);
    const worker = new RollupWorker({ ...ingesting, ingestShare: 0.001 });
    expect(await worker.pass()).toBe(10);
    expect(await worker.pass()).toBe(0);
    // Another instance's worker leaves it alone too: the rest is kept in the watermark's row.
    expect(await new RollupWorker({ ...ingesting, ingestShare: 0.001 }).pass()).toBe(0);
    const [row] = await prisma.$queryRawUnsafe<{ restUntil: bigint | number }[]>(
      `SELECT "restUntil" FROM "RollupWatermark" WHERE "accountId" = ${param(1)}`,
      t.accountId,
    );
    expect(Number(row!.restUntil)).toBeGreaterThan(Date.now());
    expect((await rollupStatus([t.accountId]))[0]).toMatchObject({ pending: 20 });
    // Ingest pausing ends the rest: the resting worker counts a quiet account's batches back to back.
    const counted = await watermarkOf(prisma, t.accountId);
    await withTransaction((tx) =>
      tx.$executeRawUnsafe(
        `UPDATE "Event" SET "receivedAt" = ${param(1)} WHERE "accountId" = ${param(2)} AND "id" > ${param(3)}`,
        new Date(Date.now() - 7_200_000),
        t.accountId,
        counted,
      ),
    );
    expect(await worker.pass()).toBe(20);
    expect((await rollupStatus([t.accountId]))[0]).toMatchObject({ pending: 0 });
    expect(() => new RollupWorker({ ingestShare: 0 })).toThrow(RangeError);
  }, 60_000);

  it("a rebuild reproduces the rollups the worker built", async () => {
    const before = await rollupRows(t.accountId);
    expect(before.rollup.length).toBeGreaterThan(100);
    expect(before.user.length).toBeGreaterThan(100);
    expect(before.lastSeen.length).toBeGreaterThan(100);
    expect(before.lastSeenCounts.length).toBeGreaterThan(20);
    expect(before.activeUsers.length).toBeGreaterThan(3);
    expect(await rebuildRollups(t.accountId)).toEqual({ accounts: 1, events: 6_070 });
    expect(await rollupRows(t.accountId)).toEqual(before);
  }, 60_000);

  it("pages walked with a small limit give every row once, in order", async () => {
    // A fixed window at limit 7 (the reports without a flow), then the seeded random windows with a
    // domain filter and a limit drawn from the seed (flow reports for two flows).
    const r = rng(testSeed(60));
    const walks = [
      { p: params(D0 + 3 * H + 17 * M, D0 + 3 * 24 * H + 5 * H, FILTERS[0]!), limit: 7 },
      ...randomWindows(2, testSeed(50)).map(([from, to]) => ({
        p: params(from, to, FILTERS[Math.floor(r() * FILTERS.length)]!),
        limit: 1 + Math.floor(r() * 13),
      })),
    ];
    // The worker part way (the rollups counted again from nothing, 70 % of the events): the pages
    // read rollup rows and raw events both. Caught up again after.
    const where = { accountId: t.accountId };
    await withTransaction(async (tx) => {
      await tx.eventRollup.deleteMany({ where });
      await tx.eventUserRollup.deleteMany({ where });
      await tx.eventUserLastSeen.deleteMany({ where });
      await tx.eventLastSeenCount.deleteMany({ where });
      await tx.eventActiveUserCount.deleteMany({ where });
      await tx.rollupWatermark.deleteMany({ where });
    });
    const events = await prisma.event.count({ where });
    expect(await rollUpAccount(t.accountId, Math.floor(events * 0.7))).toBe(Math.floor(events * 0.7));
    let rows = 0;
    try {
      for (const [i, { p: base, limit }] of walks.entries()) {
        for (const def of REPORTS) {
          for (const flowId of def.flow ? (i ? ["f1", "F4"] : []) : [null]) {
            const p = { ...base, flowId };
            const all = await runReport(def, p);
            const walked: unknown[][] = [];
            let after = null;
            for (let n = 0; n < 2_000; n++) {
              const page: { rows: unknown[][]; next: import("../src/domains/reports/registry.js").Keyset | null } = await runReport(def, p, { limit, after });
              expect(page.rows.length).toBeLessThanOrEqual(limit);
              walked.push(...page.rows);
              if (!page.next) break;
              // Through the opaque cursor, as clients pass it.
              after = decodeReportCursor(def, p.accountId, encodeReportCursor(def.name, p.accountId, page.next));
            }
            rows += walked.length;
            expect(
              walked,
              `${def.name} ${flowId} by ${limit}: ${p.from.toISOString()}..${p.to.toISOString()} ${JSON.stringify(base.includeDomains)} ${JSON.stringify(base.excludeDomains)}`,
            ).toEqual(all);
          }
        }
      }
    } finally {
      await catchUpRollups(t.accountId);
    }
    expect(rows).toBeGreaterThan(1_000);
  }, 180_000);

  it("REST: limit and cursor page a report; CSV ignores them; bad ones are 400s", async () => {
    const base = `/v1/accounts/${t.accountId}/reports/flowCompletionByUser?startDate=2024-03-10&endDate=2024-03-13`;
    const full = await req(`${base}&format=csv`, { headers: t.headers });
    expect(full.status).toBe(200);
    const csvRows = full.text.split("\r\n").length - 2;
    const first = await req(`${base}&limit=10`, { headers: t.headers });
    expect(first.status, first.text).toBe(200);
    expect(first.body.rows).toHaveLength(10);
    expect(typeof first.body.cursor).toBe("string");
    let rows = [...first.body.rows];
    let cursor = first.body.cursor;
    while (cursor) {
      const next = await req(`${base}&limit=50&cursor=${cursor}`, { headers: t.headers });
      expect(next.status, next.text).toBe(200);
      rows = rows.concat(next.body.rows);
      cursor = next.body.cursor;
    }
    expect(rows).toHaveLength(csvRows);
    expect(rows).toEqual((await req(`${base}&limit=10000`, { headers: t.headers })).body.rows);
    expect((await req(`${base}&format=csv&limit=1`, { headers: t.headers })).text).toBe(full.text);
    for (const [q, detail] of [
      ["limit=0", /limit must be between 1 and 10000/],
      ["limit=10001", /limit must be between 1 and 10000/],
      ["limit=x", /limit must be an integer/],
      ["cursor=%%%", /Query parameter cursor is not valid percent-encoded UTF-8/],
      ["cursor=nonsense", /cursor is malformed/],
      [`cursor=${Buffer.from('{"r":"flowCompletionByUser","v":[1,2,3,4,5],"s":1}').toString("base64url")}`, /cursor is malformed/],
    ] as const) {
      const r = await req(`${base}&${q}`, { headers: t.headers });
      expect(r.status, `${q}: ${r.text}`).toBe(400);
      expect(r.body.detail).toMatch(detail);
    }
    // A keyset value of the wrong kind for its column's SQL, or text with NUL, is a 400 (the database
    // refused them: a 500 on PostgreSQL). flowEditors' time is an audit timestamp, the comments' an
    // event's epoch milliseconds.
    const forged = (report: string, v: unknown[]) => Buffer.from(JSON.stringify({ r: report, v, s: 1 })).toString("base64url");
    const range = "startDate=2024-03-10&endDate=2024-03-13";
    for (const [path, cursor] of [
      [`flowEditors?flowId=f1&${range}`, forged("flowEditors", ["u", 1, "Thu Jan 01 2026 00:00:00 GMT+0000 (Coordinated Universal Time)"])],
      [`flowEditors?flowId=f1&${range}`, forged("flowEditors", ["u", 1, 1767225600000])],
      [`flowEditors?flowId=f1&${range}`, forged("flowEditors", ["u\u0000", 1, null])],
      [`positiveFeedbackComments?${range}`, forged("positiveFeedbackComments", ["2026-01-01", "f", "u", null, "c"])],
      [`positiveFeedbackComments?${range}`, forged("positiveFeedbackComments", [1767225600000, "f\u0000", "u", null, "c"])],
      // A flow step past the 32 bits of Event.step (PostgreSQL refused the comparison: a 500).
      [`flowDropOff?flowId=f1&${range}`, forged("flowDropOff", [2 ** 31, 1, 1])],
      [`flowDropOff?flowId=f1&${range}`, forged("flowDropOff", [-(2 ** 31) - 1, 1, 1])],
      [`flowDropOff?flowId=f1&${range}`, forged("flowDropOff", [Number.MAX_SAFE_INTEGER, 1, 1])],
    ]) {
      const r = await req(`/v1/accounts/${t.accountId}/reports/${path}&cursor=${cursor}`, { headers: t.headers });
      expect([path, r.status, r.body.detail]).toEqual([path, 400, expect.stringMatching(/cursor is malformed/)]);
      expect(r.body.errors).toEqual([{ path: "cursor", message: "malformed cursor" }]);
    }
    // Well-formed ones of the right kinds position the walk.
    for (const [path, cursor] of [
      [`flowEditors?flowId=f1&${range}`, forged("flowEditors", ["u", 1, "2026-01-01T00:00:00.000Z"])],
      [`positiveFeedbackComments?${range}`, forged("positiveFeedbackComments", [1767225600000, "f", "u", null, "c"])],
      [`flowDropOff?flowId=f1&${range}`, forged("flowDropOff", [2 ** 31 - 1, 1, 1])],
      // counts are not 32-bit: any safe integer
      [`flowDropOff?flowId=f1&${range}`, forged("flowDropOff", [1, Number.MAX_SAFE_INTEGER, 1])],
    ])
      expect((await req(`/v1/accounts/${t.accountId}/reports/${path}&cursor=${cursor}`, { headers: t.headers })).status).toBe(200);
    // A cursor of another report is refused.
    const other = await req(`/v1/accounts/${t.accountId}/reports/popupsByUser?startDate=2024-03-10&endDate=2024-03-13&cursor=${first.body.cursor}`, {
      headers: t.headers,
    });
    expect(other.status).toBe(400);
    expect(other.body.detail).toMatch(/cursor belongs to another report/);
    // Counts summed by PostgreSQL (numeric, a Decimal in the driver) in the keyset: the distinct
    // users of a window past every event come from the day counts. Page 2 was a 400 "cursor is
    // malformed" there.
    const beacons = `/v1/accounts/${t.accountId}/reports/beacons?startDate=2024-03-09&endDate=2024-03-20`;
    const all = (await req(`${beacons}&limit=10000`, { headers: t.headers })).body.rows;
    expect(all.length).toBeGreaterThan(2);
    const walked: unknown[][] = [];
    for (let c: string | null = "", n = 0; c !== null && n < 10; n++) {
      const page = await req(`${beacons}&limit=1${c ? `&cursor=${c}` : ""}`, { headers: t.headers });
      expect(page.status, page.text).toBe(200);
      walked.push(...page.body.rows);
      c = page.body.cursor;
    }
    expect(walked).toEqual(all);
  }, 60_000);

  it("GraphQL: per-user reports are connections (first/after), the others lists", async () => {
    const q = `query($id: String!, $after: String) { reports(accountId: $id, startDate: "2024-03-10", endDate: "2024-03-12") {
      flowCompletionByUser(first: 25, after: $after) { nodes { endUserId flowId plays completed } pageInfo { hasNextPage endCursor } }
      flowViews { flowId plays uniqueUsers } } }`;
    const all = (
      await req(`/v1/accounts/${t.accountId}/reports/flowCompletionByUser?startDate=2024-03-10&endDate=2024-03-12&limit=10000`, { headers: t.headers })
    ).body.rows.map((r: unknown[]) => ({ endUserId: r[0], flowId: r[2], plays: r[3], completed: r[4] }));
    expect(all.length).toBeGreaterThan(25);
    const walked: unknown[] = [];
    let after: string | null = null;
    for (let i = 0; i < 100; i++) {
      const r: { errors?: unknown; data?: any } = await gql(server, t, q, { id: t.accountId, after });
      expect(r.errors).toBeUndefined();
      const c: { nodes: unknown[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } = r.data.reports.flowCompletionByUser;
      expect(c.nodes.length).toBeLessThanOrEqual(25);
      walked.push(...c.nodes);
      expect(r.data.reports.flowViews.length).toBeGreaterThan(0);
      if (!c.pageInfo.hasNextPage) {
        expect(c.pageInfo.endCursor).toBeNull();
        break;
      }
      after = c.pageInfo.endCursor;
    }
    expect(walked).toEqual(all);
    const bad = await gql(server, t, `{ reports(accountId: "${t.accountId}") { popupsByUser(first: 0) { nodes { endUserId } } } }`);
    expect(bad.errors?.[0]?.message).toMatch(/first must be between 1 and 10000/);
  }, 60_000);

  it.runIf(dbKind() === "postgres")("PostgreSQL: a report's statement runs with 64 MB of work_mem and no JIT, in its transaction only", async () => {
    const show = async (tx: Parameters<typeof useReportSettings>[0]) =>
      (await tx.$queryRawUnsafe<{ w: string; j: string }[]>(`SELECT current_setting('work_mem') AS "w", current_setting('jit') AS "j"`))[0];
    const before = await show(prisma);
    expect(before).not.toEqual({ w: "64MB", j: "off" });
    const inside = await withTransaction(async (tx) => {
      await useReportSettings(tx);
      return show(tx);
    });
    expect(inside).toEqual({ w: "64MB", j: "off" });
    expect(await show(prisma)).toEqual(before);
  });

  it("erasing end users to pseudonyms keeps every report and the rebuild consistent", async () => {
    // Events of an erased user the worker has not counted yet: counted under the pseudonym.
    const more = randomEvents(300, 21).map((e) => ({ ...e, endUserId: "u1" }));
    const r = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: more });
    expect(r.status, r.text).toBe(202);
    const mapping = ["u1", "u2", "Zed"].map((endUserId, i) => ({ endUserId, pseudonym: `erased-${i}-${t.accountId}` }));
    await withTransaction(async (tx) => {
      // What the end-user deletion does to the events (anonymised, kept), then the rollups.
      for (const m of mapping)
        await tx.event.updateMany({
          where: { accountId: t.accountId, endUserId: m.endUserId },
          data: { endUserId: m.pseudonym, userName: null, comment: null },
        });
      const moved = await eraseEndUsersFromRollups(tx, t.accountId, mapping);
      expect(moved).toBeGreaterThan(0);
    });
    expect(await prisma.eventUserRollup.count({ where: { accountId: t.accountId, endUserId: { in: ["u1", "u2", "Zed"] } } })).toBe(0);
    expect(await prisma.eventUserLastSeen.count({ where: { accountId: t.accountId, endUserId: { in: ["u1", "u2", "Zed"] } } })).toBe(0);
    await expectRollupsMatchRaw("after erasure, before the worker", FILTERS.slice(0, 1));
    expect(await catchUpRollups(t.accountId)).toBe(300);
    expect(await prisma.eventUserRollup.count({ where: { accountId: t.accountId, endUserId: { in: ["u1", "u2", "Zed"] } } })).toBe(0);
    const before = await rollupRows(t.accountId);
    await rebuildRollups(t.accountId);
    expect(await rollupRows(t.accountId)).toEqual(before);
    await expectRollupsMatchRaw("after erasure");
  }, 180_000);
});

describe("rollups, two server processes", () => {
  afterAll(() => killChildren());

  it("their workers share the ingest of both and count every event exactly once", async () => {
    const two = await tenant("roll2");
    // Two instances as main.ts runs them (worker on), quick to pick up an account once ingest pauses.
    const env = {
      DATABASE_URL: process.env.DATABASE_URL!,
      JOB_WORKER: "true",
      LOG_LEVEL: "debug",
      ROLLUP_POLL_MS: "100",
      ROLLUP_QUIET_MS: "200",
      ROLLUP_MAX_LAG_MS: "2000",
    };
    const instances = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    const events = randomEvents(4_000, 31);
    for (let i = 0; i < events.length; i += 500) {
      const { url } = instances[(i / 500) % 2]!;
      const r = await call(`${url}/v1/accounts/${two.accountId}/events`, { method: "POST", headers: two.headers, body: events.slice(i, i + 500) });
      expect(r.status, r.text).toBe(202);
      if (i % 1_000 === 0) await new Promise((done) => setTimeout(done, 300)); // a pause: the workers take what is there
    }
    // What each process says it added for this account: together, every event, once.
    const added = () =>
      instances.map(({ child }) =>
        child
          .logs()
          .filter((l) => l.msg === "events added to the rollups" && l.accountId === two.accountId)
          .reduce((sum, l) => sum + l.events, 0),
      );
    const deadline = Date.now() + 60_000;
    while ((await rollupStatus([two.accountId]))[0]?.pending !== 0 || added()[0]! + added()[1]! < events.length) {
      expect(Date.now(), `still pending; added so far ${added()}`).toBeLessThan(deadline);
      await new Promise((done) => setTimeout(done, 200));
    }
    await new Promise((done) => setTimeout(done, 500)); // a double count would show by now
    expect(added()[0]! + added()[1]!).toBe(events.length);
    const last = await prisma.event.findFirst({ where: { accountId: two.accountId }, orderBy: { id: "desc" }, select: { id: true } });
    expect(await watermarkOf(prisma, two.accountId)).toBe(last!.id);
    // The rollups are what a rebuild from the events makes, and the reports over them are exact.
    const built = await rollupRows(two.accountId);
    expect(built.rollup.length).toBeGreaterThan(100);
    expect(await rebuildRollups(two.accountId)).toEqual({ accounts: 1, events: events.length });
    expect(await rollupRows(two.accountId)).toEqual(built);
    const p = { ...params(D0 + 3 * H + 17 * M, D0 + 3 * 24 * H + 5 * H, FILTERS[0]!), accountId: two.accountId };
    for (const def of REPORTS.filter((d) => !d.flow)) expect(await runReport(def, p), def.name).toEqual(await runReport(def, { ...p, raw: true }));
  }, 120_000);
});
