// Per-account rate limits (issue 4): REST and GraphQL draw on one budget per account (points since
// issue 33; every request here is a cheap read or write of 1 point, test/cost-budget.test.ts prices the rest); 429 with
// Retry-After and RateLimit-* headers; per-account limits; one account exhausting its budget leaves
// the others alone; and two instances sharing the local Redis share one budget. Segment-format
// ingestion (write keys, which are public) has a budget of its own (issue 31, item 3). With Redis
// unreachable or stopped, requests are answered at once, limited by each instance on its own, and
// budgets are shared again once it is back (a redis-server of the test's own on a port of 4690–4699).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { STATUS_CODES } from "node:http";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createKey, setAccount } from "../src/admin.js";
import { logger } from "../src/logger.js";
import { call, prisma, type Reply, redisAnswers, type Server, startServer, type Tenant, tenant, until } from "./helpers.js";

const REDIS_URL = "redis://127.0.0.1:6379";

const redisUp = await redisAnswers(REDIS_URL);
if (!redisUp) console.warn(`ratelimit.test.ts: Redis does not answer at ${REDIS_URL}; skipping the two-instance (shared budget) tests.`);

// ---- helpers ---------------------------------------------------------------------------------------

/** A tenant whose account id is unique across runs (Redis budgets outlive a test run by a minute). */
const fresh = (label: string) => tenant(`rl${label}${randomBytes(3).toString("hex")}`);

const list = (s: Server, t: Tenant) => call(`${s.url}/api/v1/${t.accountId}/content`, { headers: t.headers });
const graphql = (s: Server, t: Tenant, query = `query($a: String!) { account(id: $a) { id } }`) =>
  call(`${s.url}/graphql`, { method: "POST", headers: t.headers, body: { query, variables: { a: t.accountId } } });

/** An ingest-scope write key of the tenant's account, and a batch sent with it (Basic auth). */
const writeKeyOf = async (t: Tenant) => (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
const ingest = (s: Server, key: string, body: unknown = { batch: [{ type: "track", userId: "u1", event: "Signed Up" }] }) =>
  call(`${s.url}/segment/v1/batch`, { method: "POST", headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}` }, body });

function rate(r: Reply) {
  return {
    limit: r.headers.get("ratelimit-limit"),
    remaining: r.headers.get("ratelimit-remaining"),
    reset: Number(r.headers.get("ratelimit-reset")),
    retryAfter: r.headers.get("retry-after"),
  };
}

/** A successful response within the budget: RateLimit-* headers, no Retry-After. */
function expectAllowed(r: Reply, limit: number, remaining: number) {
  expect(r.status, r.text.slice(0, 300)).toBe(200);
  const h = rate(r);
  expect(h.limit).toBe(String(limit));
  expect(h.remaining).toBe(String(remaining));
  expect(h.reset).toBeGreaterThanOrEqual(1);
  expect(h.reset).toBeLessThanOrEqual(60);
  expect(h.retryAfter).toBeNull();
}

/** REST over budget: 429 problem+json with Retry-After and RateLimit-Remaining 0. */
function expectLimited(r: Reply, limit: number) {
  expect(r.status, r.text.slice(0, 300)).toBe(429);
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json(;|$)/);
  expect(r.body).toMatchObject({ type: "about:blank", title: STATUS_CODES[429], status: 429, detail: expect.stringMatching(/rate limit/i) });
  const h = rate(r);
  expect(h.limit).toBe(String(limit));
  expect(h.remaining).toBe("0");
  expect(Number(h.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(h.retryAfter)).toBeLessThanOrEqual(60);
  expect(h.reset).toBeGreaterThanOrEqual(1);
}

/** GraphQL over budget: a RATE_LIMITED error, the same headers. */
function expectGraphqlLimited(r: Reply, limit: number) {
  expect(r.body?.errors?.[0]?.extensions?.code, r.text.slice(0, 300)).toBe("RATE_LIMITED");
  expect(r.status).toBe(429);
  expect(rate(r).limit).toBe(String(limit));
  expect(rate(r).remaining).toBe("0");
  expect(Number(rate(r).retryAfter)).toBeGreaterThanOrEqual(1);
}

// ---- one instance, in memory ---------------------------------------------------------------------------

describe("one instance (in memory), RATE_LIMIT_PER_MINUTE=5", () => {
  let server: Server;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PER_MINUTE: "5" });
  });
  afterAll(() => server.close());

  it("requests 1–5 succeed with decreasing RateLimit-Remaining; the 6th is a 429 problem with Retry-After", async () => {
    const t = await fresh("a");
    for (let i = 1; i <= 5; i++) expectAllowed(await list(server, t), 5, 5 - i);
    expectLimited(await list(server, t), 5);
    // every route of the account, writes included, and nothing is written
    const before = await prisma.auditLog.count();
    expectLimited(await call(`${server.url}/api/v1/${t.accountId}/content`, { method: "POST", headers: t.headers, body: [{ title: "x", type: "text" }] }), 5);
    expectLimited(await call(`${server.url}/v1/accounts/${t.accountId}/auditlogs`, { method: "POST", headers: t.headers, body: {} }), 5);
    expect(await prisma.auditLog.count()).toBe(before);
    expect(await prisma.content.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("a second account on the same server is unaffected", async () => {
    const busy = await fresh("busy");
    const calm = await fresh("calm");
    for (let i = 0; i < 5; i++) await list(server, busy);
    expectLimited(await list(server, busy), 5);
    expectAllowed(await list(server, calm), 5, 4);
    expectAllowed(await graphql(server, calm), 5, 3);
    expectLimited(await list(server, busy), 5);
  });

  it("GraphQL requests count against the same budget as REST", async () => {
    const t = await fresh("g");
    expectAllowed(await list(server, t), 5, 4);
    expectAllowed(await graphql(server, t), 5, 3);
    expectAllowed(await list(server, t), 5, 2);
    // one GraphQL request touching the account twice is charged once
    expectAllowed(await graphql(server, t, `query($a: String!) { account(id: $a) { id } auditLogs(accountId: $a, first: 1) { nodes { id } } }`), 5, 1);
    expectAllowed(await graphql(server, t), 5, 0);
    expectGraphqlLimited(await graphql(server, t), 5);
    expectLimited(await list(server, t), 5);
  });

  it("401 requests are not charged to the account", async () => {
    const t = await fresh("unauth");
    for (let i = 0; i < 6; i++) {
      const r = await call(`${server.url}/api/v1/${t.accountId}/content`, { headers: { ...t.headers, "x-service-integration-key": "ggk_wrongwrong" } });
      expect(r.status).toBe(401);
    }
    expectAllowed(await list(server, t), 5, 4);
  });

  it("a per-account limit (account set --rate-limit) applies to that account alone", async () => {
    const t = await fresh("own");
    const neighbour = await fresh("nb");
    // set before the account's first request (with the identity cache on, a change from another process applies within IDENTITY_CACHE_MS)
    await setAccount(t.accountId, { rateLimitPerMinute: 2 });
    expectAllowed(await list(server, t), 2, 1);
    expectAllowed(await graphql(server, t), 2, 0);
    expectLimited(await list(server, t), 2);
    expectGraphqlLimited(await graphql(server, t), 2);
    expectAllowed(await list(server, neighbour), 5, 4);
    // a higher limit than the global one works the same way
    const big = await fresh("big");
    await setAccount(big.accountId, { rateLimitPerMinute: 8 });
    for (let i = 1; i <= 8; i++) expectAllowed(await list(server, big), 8, 8 - i);
    expectLimited(await list(server, big), 8);
  });

  it("two in-memory instances keep separate budgets (what Redis is for)", async () => {
    const other = await startServer({ RATE_LIMIT_PER_MINUTE: "5" });
    try {
      const t = await fresh("mem2");
      for (let i = 1; i <= 3; i++) expectAllowed(await list(server, t), 5, 5 - i);
      for (let i = 1; i <= 3; i++) expectAllowed(await list(other, t), 5, 5 - i);
    } finally {
      await other.close();
    }
  });
});

describe("the default limit", () => {
  it("is 600 points a minute when RATE_LIMIT_PER_MINUTE is not set", async () => {
    const saved = process.env.RATE_LIMIT_PER_MINUTE;
    delete process.env.RATE_LIMIT_PER_MINUTE;
    let server: Server;
    try {
      server = await startServer();
    } finally {
      if (saved !== undefined) process.env.RATE_LIMIT_PER_MINUTE = saved;
    }
    try {
      const t = await fresh("dflt");
      expectAllowed(await list(server, t), 600, 599);
    } finally {
      await server.close();
    }
  });
});

// ---- Segment ingestion's own budget ---------------------------------------------------------------------------

describe("Segment ingestion has a budget of its own (RATE_LIMIT_PER_MINUTE=20, INGEST_RATE_LIMIT_PER_MINUTE=40)", () => {
  let server: Server;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PER_MINUTE: "20", INGEST_RATE_LIMIT_PER_MINUTE: "40" });
  });
  afterAll(() => server.close());

  it("30 batches with the write key (accepted, empty, rejected) leave the integration key's budget whole", async () => {
    const t = await fresh("ing30");
    const key = await writeKeyOf(t);
    for (let i = 1; i <= 30; i++) {
      // every third an empty batch, every fifth one the service rejects (not JSON): each costs an ingest point only
      const r =
        i % 5 === 0
          ? await call(`${server.url}/segment/v1/batch`, {
              method: "POST",
              headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}` },
              raw: "{nope",
            })
          : await ingest(server, key, i % 3 === 0 ? { batch: [] } : undefined);
      expect(r.status, r.text.slice(0, 300)).toBe(i % 5 === 0 ? 400 : 200);
      expect(rate(r)).toMatchObject({ limit: "40", remaining: String(40 - i), retryAfter: null });
    }
    // the API budget is untouched: the first request of the integration key sees all 20 points
    expectAllowed(await list(server, t), 20, 19);
    expectAllowed(await graphql(server, t), 20, 18);
    // 30 batches: 6 rejected, 8 of the rest empty → 16 events
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(16);
  });

  it("past the ingest budget: 429 problem with Retry-After and the ingest RateLimit-* headers; nothing stored; the API still answers", async () => {
    const t = await fresh("ing429");
    const key = await writeKeyOf(t);
    for (let i = 1; i <= 40; i++) expectAllowed(await ingest(server, key), 40, 40 - i);
    const over = await ingest(server, key, { batch: [{ type: "track", userId: "late", event: "Signed Up" }] });
    expectLimited(over, 40);
    expect(over.body.detail).toMatch(/^Ingest rate limit of 40 requests a minute exceeded for account/);
    // One wait, said three times: Retry-After, RateLimit-Reset and the detail's seconds agree.
    const said = Number(/retry after (\d+) s\.$/.exec(over.body.detail)?.[1]);
    expect([rate(over).retryAfter, rate(over).reset]).toEqual([String(said), said]);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(40);
    expect(await prisma.event.count({ where: { accountId: t.accountId, endUserId: "late" } })).toBe(0);
    expectAllowed(await list(server, t), 20, 19);
  });

  it("the API budget exhausted leaves ingestion alone; the account's own --rate-limit is the API's only", async () => {
    const t = await fresh("ingapi");
    const key = await writeKeyOf(t);
    await setAccount(t.accountId, { rateLimitPerMinute: 3 });
    for (let i = 1; i <= 3; i++) expectAllowed(await list(server, t), 3, 3 - i);
    expectLimited(await list(server, t), 3);
    expectAllowed(await ingest(server, key), 40, 39);
    expectAllowed(await ingest(server, key), 40, 38);
    expectLimited(await list(server, t), 3);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(2);
  });

  it("INGEST_RATE_LIMIT_PER_MINUTE is 6000 by default", async () => {
    const saved = process.env.INGEST_RATE_LIMIT_PER_MINUTE;
    delete process.env.INGEST_RATE_LIMIT_PER_MINUTE;
    let other: Server;
    try {
      other = await startServer({ RATE_LIMIT_PER_MINUTE: "20" });
    } finally {
      if (saved !== undefined) process.env.INGEST_RATE_LIMIT_PER_MINUTE = saved;
    }
    try {
      const t = await fresh("ingdflt");
      expectAllowed(await ingest(other, await writeKeyOf(t)), 6000, 5999);
    } finally {
      await other.close();
    }
  });
});

// ---- two instances, one Redis ------------------------------------------------------------------------------

describe.skipIf(!redisUp)(`two instances sharing Redis (${REDIS_URL})`, () => {
  let a: Server;
  let b: Server;
  beforeAll(async () => {
    a = await startServer({ RATE_LIMIT_PER_MINUTE: "5", REDIS_URL });
    b = await startServer({ RATE_LIMIT_PER_MINUTE: "5", REDIS_URL });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it("requests split across both share one budget: 3 + 3 with limit 5 → the 6th is a 429 on either", async () => {
    const t = await fresh("redis");
    expectAllowed(await list(a, t), 5, 4);
    expectAllowed(await list(a, t), 5, 3);
    expectAllowed(await graphql(a, t), 5, 2);
    expectAllowed(await list(b, t), 5, 1);
    expectAllowed(await graphql(b, t), 5, 0);
    expectLimited(await list(b, t), 5);
    expectLimited(await list(a, t), 5);
    expectGraphqlLimited(await graphql(a, t), 5);
  });

  it("a second account is unaffected on both instances", async () => {
    const busy = await fresh("rbusy");
    const calm = await fresh("rcalm");
    for (let i = 0; i < 5; i++) expect((await list(i % 2 ? a : b, busy)).status).toBe(200);
    expectLimited(await list(a, busy), 5);
    expectLimited(await list(b, busy), 5);
    expectAllowed(await list(a, calm), 5, 4);
    expectAllowed(await list(b, calm), 5, 3);
  });

  it("a per-account limit is shared too", async () => {
    const t = await fresh("rown");
    await setAccount(t.accountId, { rateLimitPerMinute: 2 });
    expectAllowed(await list(a, t), 2, 1);
    expectAllowed(await list(b, t), 2, 0);
    expectLimited(await list(a, t), 2);
    expectLimited(await list(b, t), 2);
  });
});

describe.skipIf(!redisUp)(`the ingest budget, two instances sharing Redis (${REDIS_URL})`, () => {
  let a: Server;
  let b: Server;
  beforeAll(async () => {
    a = await startServer({ RATE_LIMIT_PER_MINUTE: "5", INGEST_RATE_LIMIT_PER_MINUTE: "4", REDIS_URL });
    b = await startServer({ RATE_LIMIT_PER_MINUTE: "5", INGEST_RATE_LIMIT_PER_MINUTE: "4", REDIS_URL });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it("batches split across both share one ingest budget (2 + 2 with limit 4 → a 429 on either), apart from the API's", async () => {
    const t = await fresh("ringest");
    const key = await writeKeyOf(t);
    expectAllowed(await ingest(a, key), 4, 3);
    expectAllowed(await ingest(b, key), 4, 2);
    expectAllowed(await ingest(a, key), 4, 1);
    expectAllowed(await ingest(b, key), 4, 0);
    expectLimited(await ingest(a, key), 4);
    expectLimited(await ingest(b, key), 4);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(4);
    // the API budget (shared too) is whole
    expectAllowed(await list(b, t), 5, 4);
    expectAllowed(await list(a, t), 5, 3);
  });
});

// ---- Redis out ---------------------------------------------------------------------------------------------

const redisServerBinary = (() => {
  try {
    return execFileSync("sh", ["-c", "command -v redis-server"]).toString().trim() || null;
  } catch {
    return null;
  }
})();
if (!redisServerBinary) console.warn("ratelimit.test.ts: no redis-server on PATH; skipping the Redis outage tests.");

/** A port of 4690–4699 nothing listens on (the range the tests' own Redis servers use), tried from a random one. */
async function freePort(): Promise<number> {
  const first = Math.floor(Math.random() * 10);
  for (let i = 0; i < 10; i++) {
    const port = 4690 + ((first + i) % 10);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer()
        .once("error", () => resolve(false))
        .listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (free && !(await redisAnswers(`redis://127.0.0.1:${port}`))) return port;
  }
  throw new Error("no free port in 4690-4699");
}

/** The value of `ratelimit_redis_connected{budget}` on /metrics (process-wide: every server of this file). */
async function redisConnected(s: Server, budget: string): Promise<number | null> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const m = new RegExp(`^ratelimit_redis_connected\\{budget="${budget}"\\} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : null;
}

/** A call and how long it took. */
async function timed(fn: () => Promise<Reply>): Promise<{ r: Reply; ms: number }> {
  const start = performance.now();
  const r = await fn();
  return { r, ms: performance.now() - start };
}

/** Each of these answered well under a second (waiting on Redis took 5–25 s). */
const PROMPT_MS = 1_000;

/** Spends a fresh budget of `limit` with `fn`, then is refused once: every answer prompt. */
async function spendPromptly(fn: () => Promise<Reply>, limit: number): Promise<void> {
  for (let i = 1; i <= limit; i++) {
    const { r, ms } = await timed(fn);
    expectAllowed(r, limit, limit - i);
    expect(ms).toBeLessThan(PROMPT_MS);
  }
  const refused = await timed(fn);
  expectLimited(refused.r, limit);
  expect(refused.ms).toBeLessThan(PROMPT_MS);
}

describe.skipIf(!redisServerBinary)("Redis unreachable, then back, then stopped (REDIS_URL on a port of the test's own)", () => {
  let port: number;
  let redisUrl: string;
  let a: Server;
  let b: Server;
  let redis: ChildProcess | null = null;
  const warn = vi.spyOn(logger, "warn");
  const info = vi.spyOn(logger, "info");
  const outageLines = () => warn.mock.calls.filter((c) => /^Redis unreachable/.test(String(c[1])));
  const recoveryLines = () => info.mock.calls.filter((c) => /^Redis reachable again/.test(String(c[1])));

  const startRedis = async () => {
    redis = spawn(redisServerBinary!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    await until("our redis-server", () => redisAnswers(redisUrl));
  };
  const stopRedis = async () => {
    const proc = redis;
    redis = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGTERM");
    await exited;
  };

  beforeAll(async () => {
    port = await freePort();
    redisUrl = `redis://127.0.0.1:${port}`;
    a = await startServer({ RATE_LIMIT_PER_MINUTE: "3", INGEST_RATE_LIMIT_PER_MINUTE: "2", REDIS_URL: redisUrl });
    b = await startServer({ RATE_LIMIT_PER_MINUTE: "3", INGEST_RATE_LIMIT_PER_MINUTE: "2", REDIS_URL: redisUrl });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await stopRedis();
    warn.mockRestore();
    info.mockRestore();
  });

  it("nothing listening: charged requests answer at once and are still limited, per instance; one warning per limiter; /readyz ready; the metric 0", async () => {
    const t = await fresh("down");
    // Allowed, then refused (its points given back, on this instance's own count): all at once.
    await spendPromptly(() => list(a, t), 3);
    const g = await timed(() => graphql(a, t));
    expectGraphqlLimited(g.r, 3);
    expect(g.ms).toBeLessThan(PROMPT_MS);
    expect(await prisma.content.count({ where: { accountId: t.accountId } })).toBe(0);
    // The other instance counts on its own: N instances allow up to N× the budget during an outage.
    for (let i = 1; i <= 3; i++) expectAllowed(await list(b, t), 3, 3 - i);
    expectLimited(await list(b, t), 3);
    // The Segment ingest limiter alike.
    const key = await writeKeyOf(t);
    await spendPromptly(() => ingest(a, key), 2);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(2);
    // Ready all along: an outage of Redis does not take instances out of rotation.
    const ready = await call(`${a.url}/readyz`);
    expect([ready.status, ready.body]).toEqual([200, { status: "ready" }]);
    expect([await redisConnected(a, "api"), await redisConnected(a, "ingest")]).toEqual([0, 0]);
    // Logged once per limiter (2 servers × api and ingest), however many requests and reconnection attempts.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(outageLines()).toHaveLength(4);
    expect(
      outageLines()
        .map((c) => (c[0] as { budget: string }).budget)
        .sort(),
    ).toEqual(["api", "api", "ingest", "ingest"]);
  });

  it("Redis back: the instances reconnect by themselves (logged once each) and share one budget again", async () => {
    await startRedis();
    await until("both instances reconnected", async () => (await redisConnected(a, "api")) === 1 && (await redisConnected(a, "ingest")) === 1);
    expect(recoveryLines()).toHaveLength(4);
    const t = await fresh("back");
    expectAllowed(await list(a, t), 3, 2);
    expectAllowed(await list(b, t), 3, 1);
    expectAllowed(await graphql(a, t), 3, 0);
    expectLimited(await list(b, t), 3);
    expectLimited(await list(a, t), 3);
    // The points are in Redis.
    expect(await redisAnswers(redisUrl)).toBe(true);
  });

  it("Redis hung (SIGSTOP: connected, answering nothing): a command times out once, then requests are counted here at once; after SIGCONT shared again", async () => {
    redis!.kill("SIGSTOP");
    try {
      const t = await fresh("hung");
      await spendPromptly(() => list(a, t), 3);
      // The command that timed out started an outage of this limiter (logged once).
      expect(await redisConnected(a, "api")).toBe(0);
      expect(outageLines()).toHaveLength(5);
    } finally {
      redis!.kill("SIGCONT");
    }
    await until("reconnected after SIGCONT", async () => (await redisConnected(a, "api")) === 1 && (await redisConnected(a, "ingest")) === 1);
    const t = await fresh("resumed");
    expectAllowed(await list(a, t), 3, 2);
    expectAllowed(await list(b, t), 3, 1);
    expectAllowed(await list(b, t), 3, 0);
    expectLimited(await list(a, t), 3);
  });

  it("Redis stopped while in use: still answered at once and limited; one more warning per limiter", async () => {
    const before = outageLines().length;
    await stopRedis();
    const t = await fresh("stopped");
    await spendPromptly(() => list(a, t), 3);
    expect((await call(`${b.url}/readyz`)).status).toBe(200);
    await until("the outage seen by every limiter", async () => outageLines().length === before + 4 && (await redisConnected(a, "api")) === 0);
  });
});
