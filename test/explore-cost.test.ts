// Explore's bounded cost: a question past EXPLORE_TIMEOUT_MS is stopped and answered with a 422
// that says what to narrow (both databases), and on SQLite, where the driver is synchronous, a long
// question runs in a worker thread: a B16 call answers while it runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, dbKind } from "../src/db/index.js";
import { expectProblem, gql, prisma, requester, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
let segmentId: string;
const req = requester(() => server);
const START = Date.UTC(2026, 5, 1);
const ROWS = 400_000;

/** A long question: distinct users per user, flow and hour over every generated event. */
const LONG = {
  metrics: ["users", "events", "avg:step"],
  dimensions: ["event:endUserId", "event:flowId"],
  interval: "hour",
  filters: [["contains", "event:flowId", ["f"]]],
  startDate: "2026-06-01",
  endDate: "2026-06-05",
};

beforeAll(async () => {
  server = await startServer();
  t = await tenant("explore-cost");
  expect(
    (await req(`/api/v1/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] })).status,
  ).toBeLessThan(300);
  expect(
    (await req(`/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "u1", custom: { plan: "gold" } }] })).status,
  ).toBeLessThan(300);
  const s = await gql(server, t, `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }`, {
    a: t.accountId,
    input: { name: "gold", rule: { field: "custom.plan", op: "eq", value: "gold" }, contentIds: [] },
  });
  segmentId = s.data.createSegment.id;
  // The bulk rows are test data written past the API (the audit has nothing to say about events).
  const writeDb = prisma as unknown as Db;
  // One event through the API (PostgreSQL: it makes the month's partition), the rest in one statement.
  expect(
    (
      await req(`/v1/accounts/${t.accountId}/events`, {
        method: "POST",
        headers: t.headers,
        body: [{ type: "flow_step", time: START, endUserId: "u1", flowId: "f1", step: 1 }],
      })
    ).status,
  ).toBe(202);
  if (dbKind() === "postgres")
    await writeDb.$executeRawUnsafe(
      `INSERT INTO "Event" ("accountId", "type", "time", "endUserId", "flowId", "step", "receivedAt")
       SELECT $1, 'flow_step', $2::bigint + i * 800, 'u' || (i % 20000), 'f' || (i % 40), i % 7, now() FROM generate_series(1, ${ROWS}) i`,
      t.accountId,
      START,
    );
  else
    await writeDb.$executeRawUnsafe(
      `INSERT INTO "Event" ("accountId", "type", "time", "endUserId", "flowId", "step", "receivedAt")
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
       SELECT ?, 'flow_step', ? + i * 800, 'u' || (i % 20000), 'f' || (i % 40), i % 7, CURRENT_TIMESTAMP FROM n`,
      t.accountId,
      START,
    );
});

afterAll(async () => {
  delete process.env.EXPLORE_TIMEOUT_MS;
  await server?.close();
});

const ask = (body: unknown) => req(`/v1/accounts/${t.accountId}/analytics/query`, { method: "POST", headers: t.headers, body });

describe("Explore's bounded cost", () => {
  it("stops a question past EXPLORE_TIMEOUT_MS with a 422 that says what to narrow", async () => {
    process.env.EXPLORE_TIMEOUT_MS = "100";
    try {
      const r = await ask(LONG);
      expectProblem(r, 422, /^The question took longer than the 100 ms allowed \(EXPLORE_TIMEOUT_MS\) and was stopped: narrow it \(a shorter window/);
      // GraphQL: the same 422, with a code of its own (not the generic "ERROR").
      const g = await gql(server, t, `query($a: String!, $input: AnalyticsQueryInput!) { account(id: $a) { analytics { query(input: $input) { totals } } } }`, {
        a: t.accountId,
        input: { ...LONG, filters: [{ op: "contains", dimension: "event:flowId", values: ["f"] }] },
      });
      expect(g.errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(/^The question took longer than the 100 ms allowed \(EXPLORE_TIMEOUT_MS\)/),
          path: ["account", "analytics", "query"],
          extensions: expect.objectContaining({ code: "EXPLORE_TIMEOUT" }),
        }),
      ]);
    } finally {
      delete process.env.EXPLORE_TIMEOUT_MS;
    }
    // The next question is answered (on SQLite by a fresh worker).
    const ok = await ask({ metrics: ["events"], startDate: "2026-06-01", endDate: "2026-06-01" });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.totals).toEqual([108_000]);
  });

  it("answers a funnel and retention over the 400,000 events, and (PostgreSQL) leaves the pool's settings as they were", async () => {
    // Before the funnels' joins were planned as hash joins, PostgreSQL compared every entrant with
    // every event (41 s over 100,000 events): this question ran into the 10 s timeout.
    const steps = [1, 2, 3].map((step) => ({
      filters: [
        ["is", "event:type", ["flow_step"]],
        ["is", "event:step", [step]],
      ],
    }));
    const f = await req(`/v1/accounts/${t.accountId}/analytics/funnel`, {
      method: "POST",
      headers: t.headers,
      body: { steps, conversionWindowMs: 86_400_000, startDate: "2026-06-01", endDate: "2026-06-05" },
    });
    expect(f.status, f.text).toBe(200);
    // Row i is user i % 20000's, step i % 7, at 0.8 s × i: each user has an event every 16,000 s
    // (4.4 hours), their steps counting up by one (20,000 % 7 = 1), so every user goes through
    // steps 1, 2, 3 within 9 hours of their first step 1.
    expect(f.body.steps.map((s: { users: number }) => s.users)).toEqual([20_000, 20_000, 20_000]);
    const r = await req(`/v1/accounts/${t.accountId}/analytics/retention`, {
      method: "POST",
      headers: t.headers,
      body: { startEvent: { filters: [["is", "event:type", ["flow_step"]]] }, period: "day", periods: 3, startDate: "2026-06-01", endDate: "2026-06-02" },
    });
    expect(r.status, r.text).toBe(200);
    // Every user starts in the first 16,000 s and comes back each of the next three days.
    expect(r.body.cohorts).toEqual([{ start: "2026-06-01", users: 20_000, retained: [20_000, 20_000, 20_000, 20_000] }]);
    if (dbKind() === "postgres") {
      // SET LOCAL: the settings ended with the question's transaction.
      const { sharedPool } = await import("../src/db/postgres.js");
      const { loadConfig } = await import("../src/config.js");
      const c = await sharedPool(loadConfig().DATABASE_URL).connect();
      try {
        const [nestloop, workMem] = [(await c.query("SHOW enable_nestloop")).rows[0], (await c.query("SHOW work_mem")).rows[0]];
        expect(nestloop.enable_nestloop).toBe("on");
        expect(workMem.work_mem).not.toBe("64MB");
        // And every other planner setting a question changes is back at the session's value.
        const changed = await c.query(`SELECT name FROM pg_settings WHERE name IN ('enable_sort', 'jit', 'statement_timeout') AND setting <> reset_val`);
        expect(changed.rows).toEqual([]);
      } finally {
        c.release();
      }
    }
  });

  it.runIf(dbKind() === "sqlite")("SQLite: a B16 call answers while a long question runs", async () => {
    let questionDone = 0;
    const question = ask(LONG).then((r) => {
      questionDone = performance.now();
      return r;
    });
    await new Promise((r) => setTimeout(r, 50));
    const b16 = await req(`/v1/accounts/${t.accountId}/segments/${segmentId}/contentOrder?id=u1`, { headers: t.headers });
    const b16Done = performance.now();
    expect(b16.status, b16.text).toBe(200);
    expect(b16.body).toEqual({ data: [] });
    const answer = await question;
    expect(answer.status, answer.text).toBe(200);
    // The B16 call did not wait for the question.
    expect(questionDone).toBeGreaterThan(b16Done);
  });
});
