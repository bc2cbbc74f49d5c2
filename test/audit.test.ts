// The audit log (issue 4): B25 `POST /v1/accounts/{accountId}/auditlogs` and the GraphQL `auditLogs`
// query, rule by rule with a fixed clock (entries seeded directly at chosen times); one entry per
// change, written in the same transaction as the change, for every kind of change; none when a
// change fails; no secrets in entries; entries append-only; no unaudited writes.
import { STATUS_CODES } from "node:http";
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createAccount, createKey, createUser, revokeKey, setAccount } from "../src/admin.js";
import { requestScope } from "../src/audit/requestScope.js";
import { clock } from "../src/clock.js";
import { type Db, withTransaction } from "../src/db/index.js";
import { newId } from "../src/ids.js";
import { call, prisma, startServer, tenant, type Reply, type Server, type Tenant } from "./helpers.js";

/** The client with its write methods: the exported type has none outside withTransaction(); these tests check that run time refuses them as well. */
const writable = prisma as unknown as Db;

// PostgreSQL deployments must set ENCRYPTION_KEY (src/crypto.ts); SQLite makes its own key file.
if (/^postgres/.test(process.env.DATABASE_URL ?? "")) process.env.ENCRYPTION_KEY ??= Buffer.alloc(32, 7).toString("base64");

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => {
  vi.restoreAllMocks();
});

// ---- helpers ---------------------------------------------------------------------------------------

const LOCALHOST = /^(::ffff:)?127\.0\.0\.1$/;
const DAY = 86_400_000;

interface Entry {
  id: string;
  accountId: string | null;
  timestamp: Date;
  userId: string | null;
  action: string;
  resourceType: string;
  resourceId: string;
  sourceIp: string | null;
  requestId: string | null;
  details: any;
}

/** Runs `fn` and returns the audit entries it added (oldest first). */
async function entriesOf<T>(fn: () => Promise<T>): Promise<{ result: T; entries: Entry[] }> {
  const before = new Set((await prisma.auditLog.findMany({ select: { id: true } })).map((r) => r.id));
  const result = await fn();
  const all = await prisma.auditLog.findMany({ orderBy: [{ timestamp: "asc" }, { id: "asc" }] });
  return { result, entries: all.filter((e) => !before.has(e.id)).map((e) => ({ ...e, details: JSON.parse(e.details) })) };
}

/** A REST call with its own x-request-id, with the audit entries it added. */
async function audited(path: string, t: Tenant | null, init: { method: string; body?: unknown; headers?: Record<string, string> }) {
  const requestId = randomUUID();
  const { result: r, entries } = await entriesOf(() =>
    call(server.url + path, { method: init.method, headers: { ...(t?.headers ?? {}), ...(init.headers ?? {}), "x-request-id": requestId }, body: init.body }),
  );
  for (const e of entries) expect(e.requestId, "entries carry the request's id").toBe(requestId);
  return { r, entries, requestId };
}

/** The fields every entry written by `t`'s request must carry. */
function expectByRequest(e: Entry, t: Tenant, expected: { action: string; resourceType: string; resourceId: string }) {
  expect(e).toMatchObject({ ...expected, accountId: t.accountId, userId: t.email });
  expect(e.sourceIp).toMatch(LOCALHOST);
  expect(e.timestamp).toBeInstanceOf(Date);
}

function expectProblem(r: Reply, status: number, detail?: RegExp) {
  expect(r.status, r.text.slice(0, 500)).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json(;|$)/);
  expect(r.body).toMatchObject({ type: "about:blank", title: STATUS_CODES[status], status });
  expect(typeof r.body.detail).toBe("string");
  if (detail) expect(r.body.detail).toMatch(detail);
}

const b25Path = (accountId: string, query = "") => `/v1/accounts/${accountId}/auditlogs${query}`;

/** POST B25; `body` undefined sends no body at all. */
function b25(t: Tenant, body?: unknown, query = "", headers: Record<string, string> = t.headers) {
  return call(server.url + b25Path(t.accountId, query), { method: "POST", headers, ...(body === undefined ? {} : { body }) });
}

/** B25 that must succeed: 200 JSON with Cache-Control: no-store. */
async function b25ok(t: Tenant, body?: unknown, query = "") {
  const r = await b25(t, body, query);
  expect(r.status, r.text.slice(0, 500)).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  expect(r.headers.get("cache-control")).toBe("no-store");
  return r;
}

/** An entry seeded directly (AuditLog is append-only; creating is allowed) at an exact time. */
async function seed(accountId: string, at: string, opts: { userId?: string; label?: string } = {}) {
  return writable.auditLog.create({
    data: {
      id: newId("a"),
      accountId,
      timestamp: new Date(at),
      userId: opts.userId ?? "seed@example.com",
      action: "update",
      resourceType: "probe",
      resourceId: opts.label ?? at,
      sourceIp: "10.0.0.1",
      details: JSON.stringify({ at }),
    },
  });
}

/** The seeded (probe) entries of a B25 page, as their labels, in response order. */
const probes = (r: Reply) => (r.body.data as { resourceType: string; resourceId: string }[]).filter((e) => e.resourceType === "probe").map((e) => e.resourceId);

/** Fixes the service's "now". */
const fixNow = (iso: string) => vi.spyOn(clock, "now").mockReturnValue(new Date(iso));

async function gqlHttp(t: Tenant, query: string, variables: Record<string, unknown> = {}) {
  return call(`${server.url}/graphql`, { method: "POST", headers: t.headers, body: { query, variables } });
}

const AUDIT_QUERY = `query Q($accountId: String!, $first: Int, $after: String, $filter: AuditLogFilter) {
  auditLogs(accountId: $accountId, first: $first, after: $after, filter: $filter) {
    nodes { id timestamp accountId userId action resourceType resourceId sourceIp details }
    pageInfo { hasNextPage endCursor } } }`;

// ---- B25: the six rules ----------------------------------------------------------------------------

describe("B25 rule 1: no dates → the last 90 days", () => {
  it("returns entries from exactly 90 days before now up to now, newest first", async () => {
    const t = await tenant("r1");
    fixNow("2026-03-15T12:00:00Z"); // 90 days before: 2025-12-15T12:00Z
    for (const at of [
      "2025-12-15T11:59:00Z", // 90 days and a minute ago: out
      "2025-12-15T12:00:00Z", // exactly 90 days ago: in
      "2026-01-01T00:00:00Z",
      "2026-03-15T11:59:00Z",
      "2026-03-15T12:01:00Z", // after now: out
      "2025-06-01T00:00:00Z", // long ago: out
    ])
      await seed(t.accountId, at);
    const expected = ["2026-03-15T11:59:00Z", "2026-01-01T00:00:00Z", "2025-12-15T12:00:00Z"];
    for (const body of [undefined, {}, { startDate: null, endDate: null, userId: null }]) {
      const r = await b25ok(t, body);
      expect(probes(r), JSON.stringify(body)).toEqual(expected);
      expect(r.body.cursor).toBeNull();
    }
    // the wire record: times in epoch ms, details as an object
    const [first] = (await b25ok(t)).body.data.filter((e: any) => e.resourceType === "probe");
    expect(first).toEqual({
      id: expect.any(String),
      timestamp: Date.parse("2026-03-15T11:59:00Z"),
      accountId: t.accountId,
      userId: "seed@example.com",
      action: "update",
      resourceType: "probe",
      resourceId: "2026-03-15T11:59:00Z",
      sourceIp: "10.0.0.1",
      details: { at: "2026-03-15T11:59:00Z" },
    });
  });

  it("the window moves with the clock", async () => {
    const t = await tenant("r1m");
    await seed(t.accountId, "2026-01-10T00:00:00Z");
    fixNow("2026-04-10T00:00:00Z"); // exactly 90 days after the entry
    expect(probes(await b25ok(t))).toEqual(["2026-01-10T00:00:00Z"]);
    fixNow("2026-04-10T00:01:00Z"); // 90 days and a minute
    expect(probes(await b25ok(t))).toEqual([]);
    fixNow("2026-01-09T23:59:00Z"); // before the entry
    expect(probes(await b25ok(t))).toEqual([]);
  });
});

describe("B25 rule 2: only startDate → from it up to yesterday midnight (UTC)", () => {
  it("date-only startDate: from its 00:00 to today 00:00; today's entries are left out", async () => {
    const t = await tenant("r2");
    fixNow("2026-03-15T12:00:00Z");
    for (const at of [
      "2026-03-09T23:59:00Z", // before the start: out
      "2026-03-10T00:00:00Z", // the start: in
      "2026-03-12T08:00:00Z",
      "2026-03-14T23:59:00Z", // yesterday, last minute: in
      "2026-03-15T00:00:00Z", // today midnight: out
      "2026-03-15T11:00:00Z", // today, before now: out
    ])
      await seed(t.accountId, at);
    expect(probes(await b25ok(t, { startDate: "2026-03-10" }))).toEqual(["2026-03-14T23:59:00Z", "2026-03-12T08:00:00Z", "2026-03-10T00:00:00Z"]);
  });

  it("startDate with a time starts at that minute; an old startDate is not capped at 90 days", async () => {
    const t = await tenant("r2b");
    fixNow("2026-03-15T12:00:00Z");
    for (const at of ["2025-01-01T06:29:00Z", "2025-01-01T06:30:00Z", "2025-06-01T00:00:00Z", "2026-03-14T12:00:00Z", "2026-03-15T01:00:00Z"]) {
      await seed(t.accountId, at);
    }
    expect(probes(await b25ok(t, { startDate: "2025-01-01 06:30" }))).toEqual(["2026-03-14T12:00:00Z", "2025-06-01T00:00:00Z", "2025-01-01T06:30:00Z"]);
  });

  it("startDate today or later, alone: an empty page (200), not an error; the window ends at today 00:00", async () => {
    const t = await tenant("r2c");
    fixNow("2026-03-15T12:00:00Z");
    await seed(t.accountId, "2026-03-15T01:00:00Z");
    await seed(t.accountId, "2026-03-16T01:00:00Z");
    expect(probes(await b25ok(t, { startDate: "2026-03-15" }))).toEqual([]);
    expect(probes(await b25ok(t, { startDate: "2026-03-16" }))).toEqual([]);
    expect(probes(await b25ok(t, { startDate: "2026-03-15 11:00" }))).toEqual([]);
  });
});

describe("B25 rule 3: only endDate → the 90 days ending then", () => {
  it("date-only endDate includes that whole day and reaches back 90 days", async () => {
    const t = await tenant("r3");
    fixNow("2026-03-15T12:00:00Z");
    // endDate 2026-02-01 → [2025-11-04T00:00, 2026-02-02T00:00)
    for (const at of [
      "2025-11-03T23:59:00Z", // out
      "2025-11-04T00:00:00Z", // in: exactly 90 days before the end
      "2026-01-15T10:00:00Z",
      "2026-02-01T23:59:00Z", // in: the end day is included
      "2026-02-02T00:00:00Z", // out
      "2026-03-14T00:00:00Z", // out (within the default window, not this one)
    ])
      await seed(t.accountId, at);
    expect(probes(await b25ok(t, { endDate: "2026-02-01" }))).toEqual(["2026-02-01T23:59:00Z", "2026-01-15T10:00:00Z", "2025-11-04T00:00:00Z"]);
  });

  it("endDate with a time ends at that minute", async () => {
    const t = await tenant("r3b");
    fixNow("2026-03-15T12:00:00Z");
    // endDate 2026-02-01 10:00 → [2025-11-03T10:00, 2026-02-01T10:00)
    for (const at of ["2025-11-03T09:59:00Z", "2025-11-03T10:00:00Z", "2026-02-01T09:59:00Z", "2026-02-01T10:01:00Z"]) await seed(t.accountId, at);
    expect(probes(await b25ok(t, { endDate: "2026-02-01 10:00" }))).toEqual(["2026-02-01T09:59:00Z", "2025-11-03T10:00:00Z"]);
  });

  it("an endDate in the future still gives the 90 days ending then", async () => {
    const t = await tenant("r3c");
    fixNow("2026-03-15T12:00:00Z");
    for (const at of ["2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z", "2026-01-01T00:00:00Z"]) await seed(t.accountId, at);
    // endDate 2026-05-10 → [2026-02-09T00:00, 2026-05-11T00:00)
    expect(probes(await b25ok(t, { endDate: "2026-05-10" }))).toEqual(["2026-05-01T00:00:00Z", "2026-03-01T00:00:00Z"]);
  });
});

describe("B25 rule 4: dates are UTC", () => {
  it("'2026-03-01 10:00' is 10:00Z whatever the server's time zone; both dates bound the window", async () => {
    const t = await tenant("r4");
    fixNow("2026-03-15T12:00:00Z");
    for (const at of [
      "2026-03-01T04:30:00Z", // 10:00 in Asia/Kolkata: out
      "2026-03-01T09:59:00Z", // out
      "2026-03-01T10:00:00Z", // in
      "2026-03-01T11:59:00Z", // in
      "2026-03-01T12:01:00Z", // out
      "2026-03-01T17:30:00Z", // 12:00 in America/Los_Angeles-ish offsets: out
    ])
      await seed(t.accountId, at);
    const tz = process.env.TZ;
    try {
      for (const zone of ["UTC", "Asia/Kolkata", "America/Los_Angeles", "Pacific/Kiritimati"]) {
        process.env.TZ = zone;
        const r = await b25ok(t, { startDate: "2026-03-01 10:00", endDate: "2026-03-01 12:00" });
        expect(probes(r), zone).toEqual(["2026-03-01T11:59:00Z", "2026-03-01T10:00:00Z"]);
        expect(r.body.data.find((e: any) => e.resourceId === "2026-03-01T10:00:00Z").timestamp).toBe(Date.parse("2026-03-01T10:00:00Z"));
      }
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it("a date-only pair covers whole UTC days, both included", async () => {
    const t = await tenant("r4b");
    fixNow("2026-03-15T12:00:00Z");
    for (const at of ["2026-02-28T23:59:00Z", "2026-03-01T00:00:00Z", "2026-03-02T23:59:00Z", "2026-03-03T00:00:00Z"]) await seed(t.accountId, at);
    expect(probes(await b25ok(t, { startDate: "2026-03-01", endDate: "2026-03-02" }))).toEqual(["2026-03-02T23:59:00Z", "2026-03-01T00:00:00Z"]);
    expect(probes(await b25ok(t, { startDate: "2026-03-01", endDate: "2026-03-01" }))).toEqual(["2026-03-01T00:00:00Z"]);
  });
});

describe("B25 rule 5: userId", () => {
  it("given: only that user's entries; not given: every user's; never another account's", async () => {
    const t = await tenant("r5");
    const other = await tenant("r5o");
    fixNow("2026-03-15T12:00:00Z");
    await seed(t.accountId, "2026-03-10T01:00:00Z", { userId: "alice@example.com", label: "a1" });
    await seed(t.accountId, "2026-03-10T02:00:00Z", { userId: "bob@example.com", label: "b1" });
    await seed(t.accountId, "2026-03-10T03:00:00Z", { userId: "alice@example.com", label: "a2" });
    await seed(other.accountId, "2026-03-10T04:00:00Z", { userId: "alice@example.com", label: "elsewhere" });
    expect(probes(await b25ok(t, { userId: "alice@example.com" }))).toEqual(["a2", "a1"]);
    expect(probes(await b25ok(t, { userId: "bob@example.com" }))).toEqual(["b1"]);
    expect(probes(await b25ok(t, {}))).toEqual(["a2", "b1", "a1"]);
    expect((await b25ok(t, { userId: "nobody@example.com" })).body.data).toEqual([]);
    // with dates too
    expect(probes(await b25ok(t, { userId: "alice@example.com", startDate: "2026-03-10 02:30", endDate: "2026-03-10" }))).toEqual(["a2"]);
    const all = (await b25ok(t, {})).body.data as { userId: string; accountId: string }[];
    expect(all.every((e) => e.accountId === t.accountId)).toBe(true);
  });

  it("real entries name the acting user's e-mail, and userId filters on it", async () => {
    const t = await tenant("r5r");
    const second = `second-${t.accountId}@example.com`;
    await createUser(second, [t.accountId]);
    const { key } = await createKey(second);
    const h2 = { "x-service-integration-key": key, "x-service-user": second };
    expect((await call(`${server.url}/v1/accounts/${t.accountId}/tags`, { method: "PUT", headers: t.headers, body: [{ name: "by-first" }] })).status).toBe(201);
    expect((await call(`${server.url}/v1/accounts/${t.accountId}/tags`, { method: "PUT", headers: h2, body: [{ name: "by-second" }] })).status).toBe(201);
    const mine = (await b25ok(t, { userId: second })).body.data;
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ userId: second, action: "create", resourceType: "tag", details: { name: "by-second" } });
    const firsts = (await b25ok(t, { userId: t.email })).body.data;
    expect(firsts.map((e: any) => e.details.name)).toEqual(["by-first"]);
  });
});

describe("B25 rule 6: POST only, never cached", () => {
  it("GET (and other methods) on the path are a problem, not a page", async () => {
    const t = await tenant("r6");
    for (const method of ["GET", "PUT", "DELETE"]) {
      const r = await call(server.url + b25Path(t.accountId), { method, headers: t.headers });
      expect([404, 405], `${method} → ${r.status}`).toContain(r.status);
      expectProblem(r, r.status);
    }
    const withQuery = await call(server.url + b25Path(t.accountId, "?startDate=2026-03-01"), { headers: t.headers });
    expect([404, 405]).toContain(withQuery.status);
  });

  it("responses carry Cache-Control: no-store", async () => {
    const t = await tenant("r6c");
    await seed(t.accountId, new Date(Date.now() - DAY).toISOString());
    for (const body of [undefined, {}, { userId: t.email }]) {
      const r = await b25(t, body, "?limit=1");
      expect(r.status).toBe(200);
      expect(r.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("authentication: 401 without or with a bad key, 403 for another account", async () => {
    const t = await tenant("r6a");
    const other = await tenant("r6b");
    expectProblem(await b25(t, {}, "", {}), 401);
    expectProblem(await b25(t, {}, "", { ...t.headers, "x-service-integration-key": "ggk_not-a-real-key" }), 401);
    expectProblem(await b25(t, {}, "", other.headers), 403);
  });
});

// ---- B25: input ------------------------------------------------------------------------------------

describe("B25 input", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant("in");
  });

  it.each([
    ["2026-02-30", "impossible day"],
    ["2026-02-29", "not a leap year"],
    ["2026-13-01", "month 13"],
    ["2026-00-10", "month 0"],
    ["2026-04-31", "April 31"],
    ["2026-03-01T10:00", "ISO T separator"],
    ["2026-03-01T10:00:00Z", "ISO with zone"],
    ["2026-03-01 25:00", "hour 25"],
    ["2026-03-01 24:00", "hour 24"],
    ["2026-03-01 10:60", "minute 60"],
    ["2026-03-01 10:00:00", "seconds"],
    ["2026-3-1", "unpadded"],
    ["01/03/2026", "other format"],
    ["yesterday", "words"],
  ])("date %j (%s) → 400 problem+json, for startDate and endDate", async (value) => {
    for (const name of ["startDate", "endDate"]) {
      const r = await b25(t, { [name]: value });
      expectProblem(r, 400);
      expect(r.body.detail, r.text).toMatch(new RegExp(name));
    }
  });

  it("a leap day is a real date", async () => {
    await b25ok(t, { startDate: "2024-02-29", endDate: "2024-03-01" });
  });

  it.each([[{ startDate: 20260301 }], [{ endDate: true }], [{ userId: 5 }], [{ startDate: ["2026-03-01"] }], [{ userId: { eq: "x" } }]])(
    "wrong type %j → 400",
    async (body) => {
      expectProblem(await b25(t, body), 400);
    },
  );

  it("startDate after endDate → 400", async () => {
    expectProblem(await b25(t, { startDate: "2026-03-02", endDate: "2026-03-01" }), 400);
    expectProblem(await b25(t, { startDate: "2026-03-01 12:01", endDate: "2026-03-01 12:00" }), 400);
    expectProblem(await b25(t, { startDate: "2026-03-02 00:00", endDate: "2026-03-01" }), 400);
    // within the end day (a date-only endDate includes it), and an empty minute, are not inverted
    await b25ok(t, { startDate: "2026-03-01 23:59", endDate: "2026-03-01" });
    await b25ok(t, { startDate: "2026-03-01 12:00", endDate: "2026-03-01 12:00" });
  });

  it("unknown body fields, non-object bodies and malformed JSON → 400", async () => {
    expectProblem(await b25(t, { startDate: "2026-03-01", from: "2026-03-01" }), 400, /from/);
    expectProblem(await b25(t, { user: "a@example.com" }), 400, /user/);
    expectProblem(await b25(t, ["2026-03-01"]), 400);
    expectProblem(await b25(t, "2026-03-01"), 400);
    expectProblem(
      await call(server.url + b25Path(t.accountId), { method: "POST", headers: { ...t.headers, "content-type": "application/json" }, raw: "{" }),
      400,
    );
  });

  it("an empty body is allowed (no body at all, or {})", async () => {
    await b25ok(t);
    await b25ok(t, {});
    const raw = await call(server.url + b25Path(t.accountId), { method: "POST", headers: { ...t.headers, "content-type": "application/json" }, raw: "" });
    expect(raw.status, raw.text).toBe(200);
  });

  it("limit: default 100, max 500; 501, 0, negative and non-integers → 400", async () => {
    const u = await tenant("lim");
    fixNow("2026-03-15T12:00:00Z");
    const base = Date.parse("2026-03-01T00:00:00Z");
    await writable.auditLog.createMany({
      data: Array.from({ length: 120 }, (_, i) => ({
        id: newId("a"),
        accountId: u.accountId,
        timestamp: new Date(base + i * 60_000),
        userId: "seed@example.com",
        action: "update",
        resourceType: "probe",
        resourceId: `p${i}`,
        details: "{}",
      })),
    });
    const dflt = await b25ok(u, {});
    expect(dflt.body.data).toHaveLength(100);
    expect(dflt.body.cursor).toEqual(expect.any(String));
    const max = await b25ok(u, {}, "?limit=500");
    expect(max.body.data.filter((e: any) => e.resourceType === "probe")).toHaveLength(120);
    expect(max.body.cursor).toBeNull();
    expect((await b25ok(u, {}, "?limit=1")).body.data).toHaveLength(1);
    for (const limit of ["501", "0", "-1", "1.5", "abc", "100000"]) expectProblem(await b25(u, {}, `?limit=${limit}`), 400, /limit/);
    expectProblem(await b25(u, {}, "?limit=5&limit=6"), 400);
  });

  it("keyset cursors: a walk newest-first returns every entry exactly once (ties on time included)", async () => {
    const u = await tenant("walk");
    fixNow("2026-03-15T12:00:00Z");
    const base = Date.parse("2026-02-01T00:00:00Z");
    // 157 entries, three to a timestamp
    await writable.auditLog.createMany({
      data: Array.from({ length: 157 }, (_, i) => ({
        id: newId("a"),
        accountId: u.accountId,
        timestamp: new Date(base + Math.floor(i / 3) * 60_000),
        userId: i % 2 ? "odd@example.com" : "even@example.com",
        action: "update",
        resourceType: "probe",
        resourceId: `w${i}`,
        details: "{}",
      })),
    });
    const expected = await prisma.auditLog.findMany({
      where: { accountId: u.accountId, resourceType: "probe" },
      orderBy: [{ timestamp: "desc" }, { id: "desc" }],
    });
    expect(expected).toHaveLength(157);
    const walk = async (body: object) => {
      const seen: { id: string; timestamp: number; resourceType: string; resourceId: string }[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const r: Reply = await b25ok(u, body, `?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(r.body.data.length).toBeLessThanOrEqual(20);
        seen.push(...r.body.data);
        cursor = r.body.cursor;
        // an entry written during the walk (newer than every page) does not disturb it
        if (pages === 1) await seed(u.accountId, "2026-03-01T00:00:00Z", { label: "during-walk" });
        expect(++pages).toBeLessThan(20);
      } while (cursor);
      expect(seen.map((e) => e.resourceId)).not.toContain("during-walk"); // newer than the first page: not in this walk
      return seen.filter((e) => e.resourceType === "probe");
    };
    const seen = await walk({});
    expect(seen.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(new Set(seen.map((e) => e.id)).size).toBe(157);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.timestamp).toBeLessThanOrEqual(seen[i - 1]!.timestamp);
    // the same walk, filtered
    const odd = await walk({ userId: "odd@example.com" });
    expect(odd.map((e) => e.id)).toEqual(expected.filter((e) => e.userId === "odd@example.com").map((e) => e.id));
  });

  it("a malformed cursor → 400", async () => {
    for (const cursor of ["not-a-cursor!", "eyJ4IjoxfQ", Buffer.from(JSON.stringify(["x", "y"])).toString("base64url")]) {
      expectProblem(await b25(t, {}, `?cursor=${encodeURIComponent(cursor)}`), 400, /cursor/);
    }
  });
});

// ---- GraphQL auditLogs ---------------------------------------------------------------------------------

describe("GraphQL auditLogs", () => {
  it("applies the same window rules and filters as B25, with connection cursors", async () => {
    const t = await tenant("gql");
    fixNow("2026-03-15T12:00:00Z");
    await seed(t.accountId, "2025-12-02T00:00:00Z", { label: "old" }); // 90 days before 2026-03-02
    await seed(t.accountId, "2026-03-01T09:59:00Z", { label: "before", userId: "alice@example.com" });
    await seed(t.accountId, "2026-03-01T10:00:00Z", { label: "start", userId: "alice@example.com" });
    await seed(t.accountId, "2026-03-05T00:00:00Z", { label: "mid", userId: "bob@example.com" });
    await seed(t.accountId, "2026-03-15T01:00:00Z", { label: "today", userId: "alice@example.com" });
    const run = async (variables: Record<string, unknown>) => {
      const r = await gqlHttp(t, AUDIT_QUERY, { accountId: t.accountId, ...variables });
      expect(r.body.errors, r.text).toBeUndefined();
      return r.body.data.auditLogs as { nodes: any[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
    };
    const labels = (c: { nodes: any[] }) => c.nodes.filter((n) => n.resourceType === "probe").map((n) => n.resourceId);
    expect(labels(await run({}))).toEqual(["today", "mid", "start", "before"]); // rule 1
    expect(labels(await run({ filter: { startDate: "2026-03-01 10:00" } }))).toEqual(["mid", "start"]); // rules 2 and 4
    expect(labels(await run({ filter: { endDate: "2026-03-01" } }))).toEqual(["start", "before", "old"]); // rule 3
    expect(labels(await run({ filter: { userId: "alice@example.com" } }))).toEqual(["today", "start", "before"]); // rule 5
    expect(labels(await run({ filter: { userId: "alice@example.com", startDate: "2026-03-01", endDate: "2026-03-14" } }))).toEqual(["start", "before"]);
    // the same page as B25
    const rest = await b25ok(t, { startDate: "2026-02-01", endDate: "2026-03-14" });
    const graph = await run({ filter: { startDate: "2026-02-01", endDate: "2026-03-14" } });
    expect(graph.nodes.map((n) => n.id)).toEqual(rest.body.data.map((e: any) => e.id));
    expect(graph.nodes[0]).toEqual(rest.body.data[0]);
    // cursors
    const p1 = await run({ first: 2 });
    expect(labels(p1)).toEqual(["today", "mid"]);
    expect(p1.pageInfo.hasNextPage).toBe(true);
    const p2 = await run({ first: 2, after: p1.pageInfo.endCursor });
    expect(labels(p2)).toEqual(["start", "before"]);
  });

  it("bad dates, an inverted window and a limit past 500 are BAD_REQUEST errors; no access is FORBIDDEN", async () => {
    const t = await tenant("gqlbad");
    const other = await tenant("gqlother");
    for (const variables of [
      { filter: { startDate: "2026-02-30" } },
      { filter: { endDate: "2026-03-01T10:00" } },
      { filter: { startDate: "2026-03-01 25:00" } },
      { filter: { startDate: "2026-03-02", endDate: "2026-03-01" } },
      { first: 501 },
      { first: 0 },
    ]) {
      const r = await gqlHttp(t, AUDIT_QUERY, { accountId: t.accountId, ...variables });
      expect(r.body.errors?.[0]?.extensions?.code, `${JSON.stringify(variables)}: ${r.text}`).toBe("BAD_REQUEST");
    }
    const wrongType = await gqlHttp(t, AUDIT_QUERY, { accountId: t.accountId, filter: { startDate: 20260301 } });
    expect(wrongType.body.errors?.length).toBeGreaterThan(0);
    expect(wrongType.body.data?.auditLogs ?? null).toBeNull();
    const denied = await gqlHttp(other, AUDIT_QUERY, { accountId: t.accountId });
    expect(denied.body.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });
});

// ---- one entry per change, in the same transaction -------------------------------------------------------

describe("every change leaves exactly one entry", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant("chg");
  });
  const A = () => `/api/v1/${t.accountId}`;
  const B = () => `/v1/accounts/${t.accountId}`;

  it("tags: create, describe, rename, delete", async () => {
    const created = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "alpha", description: "first" }] });
    expect(created.r.status, created.r.text).toBe(201);
    const id = created.r.body.data[0].id as string;
    expect(created.entries).toHaveLength(1);
    expectByRequest(created.entries[0]!, t, { action: "create", resourceType: "tag", resourceId: id });
    expect(created.entries[0]!.details).toMatchObject({ name: "alpha", description: "first", type: "USER" });

    const described = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "alpha", description: "second" }] });
    expect(described.r.status).toBe(200);
    expect(described.entries).toHaveLength(1);
    expectByRequest(described.entries[0]!, t, { action: "update", resourceType: "tag", resourceId: id });
    expect(described.entries[0]!.details).toMatchObject({ description: "second" });

    const renamed = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "alpha", newName: "beta" }] });
    expect(renamed.r.status).toBe(200);
    expect(renamed.entries).toHaveLength(1);
    expectByRequest(renamed.entries[0]!, t, { action: "update", resourceType: "tag", resourceId: id });
    expect(renamed.entries[0]!.details).toMatchObject({ name: "beta" });

    const deleted = await audited(`${B()}/tags/beta`, t, { method: "DELETE" });
    expect(deleted.r.status).toBe(204);
    expect(deleted.entries).toHaveLength(1);
    expectByRequest(deleted.entries[0]!, t, { action: "delete", resourceType: "tag", resourceId: id });
    expect(deleted.entries[0]!.details).toMatchObject({ deleted: { id, name: "beta" } });
  });

  it("content: create, update (changed fields and tagIds), delete", async () => {
    const tags = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "c-one" }, { name: "c-two" }] });
    expect(tags.entries).toHaveLength(2);
    const [one, two] = tags.r.body.data as { id: string }[];

    const created = await audited(`${A()}/content`, t, {
      method: "POST",
      body: [{ title: "Guide", type: "link", url: "https://example.com/g", tags: [one!.id] }],
    });
    expect(created.r.status, created.r.text).toBe(201);
    const id = created.r.body.data[0].id as string;
    expect(created.entries).toHaveLength(1);
    expectByRequest(created.entries[0]!, t, { action: "create", resourceType: "content", resourceId: id });
    expect(created.entries[0]!.details).toMatchObject({ title: "Guide", type: "link", url: "https://example.com/g", tagIds: [one!.id] });

    const updated = await audited(`${A()}/content`, t, { method: "PUT", body: [{ id, title: "Guide v2", tags: [two!.id] }] });
    expect(updated.r.status, updated.r.text).toBe(200);
    expect(updated.entries).toHaveLength(1);
    expectByRequest(updated.entries[0]!, t, { action: "update", resourceType: "content", resourceId: id });
    expect(updated.entries[0]!.details).toMatchObject({ title: "Guide v2", tagIds: [two!.id] });

    const styleB = await audited(`${B()}/content`, t, { method: "PUT", body: [{ id, title: "Guide v3", tags: ["c-one", "c-two"] }] });
    expect(styleB.r.status, styleB.r.text).toBe(200);
    expect(styleB.entries).toHaveLength(1);
    expect(styleB.entries[0]!.details.title).toBe("Guide v3");
    expect([...styleB.entries[0]!.details.tagIds].sort()).toEqual([one!.id, two!.id].sort());

    const untagged = await audited(`${A()}/content`, t, { method: "PUT", body: [{ id, tags: [] }] });
    expect(untagged.r.status).toBe(200);
    expect(untagged.entries).toHaveLength(1);
    expect(untagged.entries[0]!.details.tagIds).toEqual([]);

    const deleted = await audited(`${A()}/content/${id}`, t, { method: "DELETE" });
    expect(deleted.r.status).toBe(204);
    expect(deleted.entries).toHaveLength(1);
    expectByRequest(deleted.entries[0]!, t, { action: "delete", resourceType: "content", resourceId: id });
    expect(deleted.entries[0]!.details).toMatchObject({ deleted: { id, title: "Guide v3" } });
  });

  it("a bulk request of N valid items leaves exactly N entries; a mixed one only the valid items'", async () => {
    const N = 7;
    const bulk = await audited(`${A()}/content`, t, {
      method: "POST",
      body: Array.from({ length: N }, (_, i) => ({ title: `Bulk ${i}`, type: "text", description: `d${i}` })),
    });
    expect(bulk.r.status, bulk.r.text).toBe(201);
    const ids = (bulk.r.body.data as { id: string }[]).map((c) => c.id);
    expect(bulk.entries).toHaveLength(N);
    expect(bulk.entries.map((e) => e.resourceId).sort()).toEqual([...ids].sort());
    for (const e of bulk.entries) expectByRequest(e, t, { action: "create", resourceType: "content", resourceId: e.resourceId });

    const updates = await audited(`${A()}/content`, t, { method: "PUT", body: ids.map((id, i) => ({ id, title: `Bulk ${i} v2` })) });
    expect(updates.r.status).toBe(200);
    expect(updates.entries.map((e) => e.resourceId).sort()).toEqual([...ids].sort());
    expect(updates.entries.every((e) => e.action === "update")).toBe(true);

    const mixed = await audited(`${A()}/content`, t, {
      method: "POST",
      body: [{ title: "ok 1", type: "text" }, { type: "text" }, { title: "ok 2", type: "video", url: "https://example.com/v" }],
    });
    expect(mixed.r.status, mixed.r.text).toBe(207);
    const okIds = (mixed.r.body.success as { id: string }[]).map((s) => s.id);
    expect(okIds).toHaveLength(2);
    expect(mixed.entries.map((e) => e.resourceId).sort()).toEqual([...okIds].sort());

    const dels = await audited(`${A()}/content/${ids.join(",")},missing-id`, t, { method: "DELETE" });
    expect(dels.r.status).toBe(207);
    expect(dels.entries.map((e) => e.resourceId).sort()).toEqual([...ids].sort());
    expect(dels.entries.every((e) => e.action === "delete")).toBe(true);
  });

  it("end users: upsert (create, update with values and actions) and delete", async () => {
    expect(
      (
        await call(`${server.url}${A()}/endUserSchema`, {
          method: "PUT",
          headers: t.headers,
          body: [
            { name: "plan", type: "string" },
            { name: "score", type: "double" },
          ],
        })
      ).status,
    ).toBe(200);
    const created = await audited(`${A()}/endUsers`, t, { method: "PUT", body: [{ id: "eu-1", custom: { plan: "gold", score: 3 } }] });
    expect(created.r.status, created.r.text).toBe(201);
    expect(created.entries).toHaveLength(1);
    expectByRequest(created.entries[0]!, t, { action: "create", resourceType: "endUser", resourceId: "eu-1" });
    expect(created.entries[0]!.details.custom).toEqual({ plan: "gold", score: 3 });

    const updated = await audited(`${B()}/endUsers`, t, { method: "PUT", body: [{ id: "eu-1", custom: { plan: "silver" }, userActionCount: { clicked: 2 } }] });
    expect(updated.r.status, updated.r.text).toBe(200);
    expect(updated.entries).toHaveLength(1);
    expectByRequest(updated.entries[0]!, t, { action: "update", resourceType: "endUser", resourceId: "eu-1" });
    expect(updated.entries[0]!.details.custom).toEqual({ plan: "silver" });
    expect(updated.entries[0]!.details.userActions).toMatchObject({ clicked: { count: 2 } });

    const single = await audited(`${A()}/endUsers/eu-1`, t, { method: "PUT", body: { score: 9.5 } });
    expect(single.r.status, single.r.text).toBe(200);
    expect(single.entries).toHaveLength(1);
    expect(single.entries[0]!.details.custom).toEqual({ score: 9.5 });

    const two = await audited(`${A()}/endUsers`, t, {
      method: "PUT",
      body: [
        { id: "eu-2", custom: {} },
        { id: "eu-3", custom: { plan: "p" } },
      ],
    });
    expect(two.r.status).toBe(201);
    expect(two.entries.map((e) => e.resourceId).sort()).toEqual(["eu-2", "eu-3"]);

    const deleted = await audited(`${A()}/endUsers/eu-1,eu-2`, t, { method: "DELETE" });
    expect(deleted.r.status).toBe(204);
    // Deleting an end user erases them: the entries name a pseudonym and carry no values
    // (test/erasure.test.ts follows the user through the reports and the earlier entries).
    expect(deleted.entries).toHaveLength(2);
    for (const e of deleted.entries) {
      expectByRequest(e, t, { action: "delete", resourceType: "endUser", resourceId: expect.stringMatching(/^erased_/) });
      expect(e.details).toEqual({ erased: true });
    }
    expect(new Set(deleted.entries.map((e) => e.resourceId)).size).toBe(2);
  });

  it("end-user schema: field add, description update, delete (values removed with it: still one entry)", async () => {
    const added = await audited(`${B()}/endUserSchema`, t, { method: "PUT", body: [{ name: "tier", type: "string", description: "d1" }] });
    expect(added.r.status, added.r.text).toBe(200);
    expect(added.entries).toHaveLength(1);
    expectByRequest(added.entries[0]!, t, { action: "create", resourceType: "endUserField", resourceId: "tier" });
    expect(added.entries[0]!.details).toMatchObject({ name: "tier", type: "string", description: "d1" });

    const described = await audited(`${B()}/endUserSchema`, t, { method: "PUT", body: [{ name: "tier", description: "d2" }] });
    expect(described.r.status).toBe(200);
    expect(described.entries).toHaveLength(1);
    expectByRequest(described.entries[0]!, t, { action: "update", resourceType: "endUserField", resourceId: "tier" });
    expect(described.entries[0]!.details).toEqual({ description: "d2" });

    expect((await call(`${server.url}${A()}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "has-tier", custom: { tier: "x" } }] })).status).toBe(
      201,
    );
    const deleted = await audited(`${A()}/endUserSchema/tier`, t, { method: "DELETE" });
    expect(deleted.r.status).toBe(204);
    expect(deleted.entries).toHaveLength(1);
    expectByRequest(deleted.entries[0]!, t, { action: "delete", resourceType: "endUserField", resourceId: "tier" });
  });

  it("GraphQL mutations are audited the same way", async () => {
    const requestId = randomUUID();
    const { result: r, entries } = await entriesOf(() =>
      call(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...t.headers, "x-request-id": requestId },
        body: {
          query: `mutation($a: String!) { upsertTags(accountId: $a, input: [{ name: "via-graphql" }]) { results { id statusCode } } }`,
          variables: { a: t.accountId },
        },
      }),
    );
    expect(r.body.errors, r.text).toBeUndefined();
    expect(entries).toHaveLength(1);
    expectByRequest(entries[0]!, t, { action: "create", resourceType: "tag", resourceId: r.body.data.upsertTags.results[0].id });
    expect(entries[0]!.requestId).toBe(requestId);
  });

  it("admin operations (CLI): account create/set, user create + membership, key create/revoke", async () => {
    const cli = <T>(fn: () => Promise<T>) => entriesOf(() => requestScope.run({ requestId: null, ip: null, actor: "cli:test" }, fn));
    const id = `cli-${process.pid}-${Date.now().toString(36)}`;
    const email = `${id}@example.com`;

    const acct = await cli(() => createAccount(id, { name: "CLI account" }));
    expect(acct.entries).toHaveLength(1);
    expect(acct.entries[0]).toMatchObject({ action: "create", resourceType: "account", resourceId: id, accountId: id, userId: "cli:test", sourceIp: null });
    expect(acct.entries[0]!.details).toMatchObject({ id, name: "CLI account", idMethod: "cookie" });

    const set = await cli(() => setAccount(id, { auditTokenTtl: 3600, rateLimitPerMinute: 50 }));
    expect(set.entries).toHaveLength(1);
    expect(set.entries[0]).toMatchObject({ action: "update", resourceType: "account", resourceId: id, accountId: id, userId: "cli:test" });
    expect(set.entries[0]!.details).toEqual({ auditTokenTtlSeconds: 3600, rateLimitPerMinute: 50 });

    const user = await cli(() => createUser(email, [id]));
    const byType = (es: Entry[], type: string) => es.filter((e) => e.resourceType === type);
    expect(byType(user.entries, "user")).toHaveLength(1);
    expect(byType(user.entries, "user")[0]).toMatchObject({ action: "create", resourceId: email, userId: "cli:test" });
    expect(byType(user.entries, "membership")).toHaveLength(1);
    expect(byType(user.entries, "membership")[0]).toMatchObject({ action: "create", accountId: id, resourceId: `${user.result.id}:${id}`, userId: "cli:test" });
    expect(user.entries).toHaveLength(2);

    // granting a second account: one membership entry; granting again: nothing changed, no entry
    const id2 = `${id}-b`;
    await createAccount(id2);
    const grant = await cli(() => createUser(email, [id2]));
    expect(grant.entries.map((e) => [e.action, e.resourceType, e.accountId])).toEqual([["create", "membership", id2]]);
    const again = await cli(() => createUser(email, [id, id2]));
    expect(again.entries).toEqual([]);

    const key = await cli(() => createKey(email, { scope: "auditlogs", ttlSeconds: 600 }));
    expect(key.entries).toHaveLength(1);
    expect(key.entries[0]).toMatchObject({ action: "create", resourceType: "apiKey", resourceId: key.result.prefix, userId: "cli:test" });
    expect(key.entries[0]!.details).toMatchObject({ prefix: key.result.prefix, scope: "auditlogs" });
    expect(key.entries[0]!.details).not.toHaveProperty("hash");

    const revoked = await cli(() => revokeKey(key.result.prefix));
    expect(revoked.entries).toHaveLength(1);
    expect(revoked.entries[0]).toMatchObject({ action: "update", resourceType: "apiKey", resourceId: key.result.prefix, userId: "cli:test" });
    expect(revoked.entries[0]!.details).toEqual({ revokedAt: expect.any(String) });
    // revoking again changes nothing
    expect((await cli(() => revokeKey(key.result.prefix))).entries).toEqual([]);

    // account-level admin entries are readable through B25
    const reader = { accountId: id, email, key: "", headers: {} } as Tenant;
    const { key: k2 } = await createKey(email);
    reader.headers = { "x-service-integration-key": k2, "x-service-user": email };
    const page = await b25ok(reader, { userId: "cli:test" });
    expect(page.body.data.map((e: any) => `${e.action} ${e.resourceType}`).sort()).toEqual(["create account", "create membership", "update account"]);
  });

  it("an entry's time is the service clock's", async () => {
    fixNow("2026-03-15T12:00:00Z");
    const { entries } = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "clocked" }] });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.timestamp.toISOString()).toBe("2026-03-15T12:00:00.000Z");
  });
});

describe("no entry when a change fails", () => {
  let t: Tenant;
  let other: Tenant;
  beforeAll(async () => {
    t = await tenant("fail");
    other = await tenant("failo");
  });
  const A = () => `/api/v1/${t.accountId}`;
  const B = () => `/v1/accounts/${t.accountId}`;

  it.each([
    ["all content items invalid", () => ({ path: `${A()}/content`, method: "POST", body: [{ type: "text" }, { title: "x", type: "folder" }] })],
    ["content update of unknown ids", () => ({ path: `${A()}/content`, method: "PUT", body: [{ id: "nope", title: "x" }] })],
    ["content delete of unknown ids", () => ({ path: `${A()}/content/nope1,nope2`, method: "DELETE" })],
    ["tags all invalid", () => ({ path: `${B()}/tags`, method: "PUT", body: [{ name: "" }, { name: "a,b" }] })],
    ["tag delete unknown", () => ({ path: `${B()}/tags/ghost`, method: "DELETE" })],
    [
      "end users all invalid",
      () => ({
        path: `${A()}/endUsers`,
        method: "PUT",
        body: [
          { id: "", custom: {} },
          { id: "x", custom: { undefinedField: 1 } },
        ],
      }),
    ],
    [
      "schema fields all invalid",
      () => ({
        path: `${A()}/endUserSchema`,
        method: "PUT",
        body: [
          { name: "1bad", type: "string" },
          { name: "ok", type: "integer" },
        ],
      }),
    ],
    ["schema delete of a default field", () => ({ path: `${A()}/endUserSchema/email`, method: "DELETE" })],
    ["malformed body", () => ({ path: `${A()}/content`, method: "POST", body: { title: "not an array" } })],
  ])("%s → 4xx and no entry", async (_name, make) => {
    const { path, method, body } = make() as { path: string; method: string; body?: unknown };
    const { r, entries } = await audited(path, t, { method, body });
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(entries).toEqual([]);
  });

  it("401 and 403 requests change nothing and leave no entry", async () => {
    const write = { method: "POST", body: [{ title: "intruder", type: "text" }] };
    for (const headers of [{}, { ...t.headers, "x-service-integration-key": "ggk_bogus_key_value" }, { ...t.headers, "x-service-user": other.email }]) {
      const { r, entries } = await audited(`${A()}/content`, null, { ...write, headers });
      expect(r.status).toBe(401);
      expect(entries).toEqual([]);
    }
    const forbidden = await audited(`${A()}/content`, other, write);
    expect(forbidden.r.status).toBe(403);
    expect(forbidden.entries).toEqual([]);
    const gql = await entriesOf(() =>
      gqlHttp(other, `mutation($a: String!) { upsertTags(accountId: $a, input: [{ name: "x" }]) { results { id } } }`, { a: t.accountId }),
    );
    expect(gql.result.body.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(gql.entries).toEqual([]);
    expect(await prisma.content.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("the entry is written in the change's transaction: a rolled-back change leaves none, and a failed entry rolls the change back", async () => {
    const name = `rollback-${Date.now()}`;
    const thrown = await entriesOf(() =>
      withTransaction(async (tx) => {
        await tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name } });
        throw new Error("boom");
      }).catch((e: Error) => e),
    );
    expect(thrown.result).toBeInstanceOf(Error);
    expect(thrown.entries).toEqual([]);
    expect(await prisma.tag.count({ where: { name } })).toBe(0);

    // An entry that cannot be written (an invalid time) fails the transaction, change included.
    vi.spyOn(clock, "now").mockReturnValue(new Date(Number.NaN));
    const failed = await entriesOf(() =>
      withTransaction((tx) => tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name } })).catch((e: Error) => e),
    );
    vi.restoreAllMocks();
    expect(failed.result).toBeInstanceOf(Error);
    expect(failed.entries).toEqual([]);
    expect(await prisma.tag.count({ where: { name } })).toBe(0);

    // and the same change, once it can be recorded, leaves its one entry
    const ok = await entriesOf(() => withTransaction((tx) => tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name } })));
    expect(ok.entries).toHaveLength(1);
    expect(ok.entries[0]).toMatchObject({ action: "create", resourceType: "tag", resourceId: ok.result.id, accountId: t.accountId, userId: "system" });
  });
});

// ---- secrets never appear -------------------------------------------------------------------------------

describe("secrets never appear in entries", () => {
  it("encrypted_string values (clear or ciphertext) and API-key hashes are absent from every entry's details", async () => {
    const t = await tenant("sec");
    const A = `${server.url}/api/v1/${t.accountId}`;
    const B = `${server.url}/v1/accounts/${t.accountId}`;
    expect(
      (
        await call(`${A}/endUserSchema`, {
          method: "PUT",
          headers: t.headers,
          body: [
            { name: "ssn", type: "encrypted_string" },
            { name: "plan", type: "string" },
          ],
        })
      ).status,
    ).toBe(200);
    const secrets = ["secret-ssn-111-22-3333", "secret-ssn-444-55-6666", "secret-ssn-777-88-9999"];
    expect((await call(`${A}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "s1", custom: { ssn: secrets[0], plan: "gold" } }] })).status).toBe(
      201,
    );
    expect((await call(`${B}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "s1", custom: { ssn: secrets[1] } }] })).status).toBe(200);
    expect((await call(`${A}/endUsers/s2`, { method: "PUT", headers: t.headers, body: { ssn: secrets[2] } })).status).toBe(201);
    const stored = await prisma.endUserValue.findMany({ where: { accountId: t.accountId, field: "ssn" } });
    expect(stored).toHaveLength(2);
    for (const v of stored) expect(v.text).toMatch(/^v1:/);

    // the entries say a value changed, never what it is
    const entries = await prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType: "endUser" } });
    expect(entries).toHaveLength(3);
    for (const e of entries) expect(JSON.parse(e.details).custom.ssn).toBe("[encrypted]");
    // delete an end user too: the deleted record's details hold no values
    expect((await call(`${A}/endUsers/s1`, { method: "DELETE", headers: t.headers })).status).toBe(204);

    // rotate keys too, so key creation and revocation entries exist
    const extra = await createKey(t.email);
    await revokeKey(extra.prefix);

    const all = await prisma.auditLog.findMany({ select: { details: true } });
    const hashes = (await prisma.apiKey.findMany({ select: { hash: true } })).map((k) => k.hash);
    expect(hashes.length).toBeGreaterThan(1);
    for (const { details } of all) {
      for (const s of secrets) expect(details).not.toContain(s);
      expect(details).not.toMatch(/v1:[A-Za-z0-9+/=]+:/);
      for (const h of hashes) expect(details).not.toContain(h);
      for (const k of [t.key, extra.key]) expect(details).not.toContain(k);
      expect(JSON.parse(details)).not.toHaveProperty("hash");
    }
    // and B25 returns them the same way
    const page = await b25ok(t, {});
    expect(page.text).not.toMatch(/secret-ssn|v1:/);
  });
});

// ---- append-only; no unaudited writes ---------------------------------------------------------------------

describe("entries are append-only", () => {
  it("update, upsert and delete of entries throw, on the shared client and in transactions; nothing changes", async () => {
    const t = await tenant("ro");
    const e = await seed(t.accountId, "2026-03-01T00:00:00Z", { label: "keep-me" });
    const attempts: [string, () => unknown][] = [
      ["update", () => writable.auditLog.update({ where: { id: e.id }, data: { action: "tampered" } })],
      ["updateMany", () => writable.auditLog.updateMany({ where: { id: e.id }, data: { action: "tampered" } })],
      ["upsert", () => writable.auditLog.upsert({ where: { id: e.id }, create: { ...e, action: "tampered" }, update: { action: "tampered" } })],
      ["delete", () => writable.auditLog.delete({ where: { id: e.id } })],
      ["deleteMany", () => writable.auditLog.deleteMany({ where: { id: e.id } })],
      ["deleteMany (all)", () => writable.auditLog.deleteMany()],
      ["tx update", () => withTransaction((tx) => tx.auditLog.update({ where: { id: e.id }, data: { action: "tampered" } }))],
      ["tx delete", () => withTransaction((tx) => tx.auditLog.delete({ where: { id: e.id } }))],
      ["tx deleteMany", () => withTransaction((tx) => tx.auditLog.deleteMany({ where: { accountId: t.accountId } }))],
    ];
    for (const [name, attempt] of attempts) {
      await expect((async () => attempt())(), name).rejects.toThrow(/append-only/);
    }
    expect(await prisma.auditLog.findUnique({ where: { id: e.id } })).toEqual(e);
  });

  it("no GraphQL mutation edits or deletes entries", async () => {
    const t = await tenant("intro");
    const r = await gqlHttp(t, `{ __schema { mutationType { fields { name args { name type { name ofType { name ofType { name ofType { name } } } } } } } } }`);
    expect(r.body.errors, r.text).toBeUndefined();
    const fields = r.body.data.__schema.mutationType.fields as { name: string; args: unknown[] }[];
    const names = fields.map((f) => f.name);
    expect(names).toEqual(expect.arrayContaining(["createContents", "upsertTags", "deleteEndUsers"]));
    expect(names.filter((n) => /audit/i.test(n))).toEqual([]);
    expect(JSON.stringify(fields)).not.toMatch(/AuditLog/);
    // and no REST route other than B25 answers on the audit-log path
    const entry = await seed(t.accountId, "2026-03-01T00:00:00Z");
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const res = await call(`${server.url}${b25Path(t.accountId)}/${entry.id}`, { method, headers: t.headers, body: { action: "x" } });
      expect(res.status).toBe(404);
    }
    expect(await prisma.auditLog.findUnique({ where: { id: entry.id } })).toEqual(entry);
  });
});

describe("writes outside withTransaction", () => {
  it("throw on the shared client, for every audited model, and change nothing", async () => {
    const t = await tenant("guard");
    const name = `unaudited-${Date.now()}`;
    const attempts: [string, () => unknown][] = [
      ["tag.create", () => writable.tag.create({ data: { id: newId("t"), accountId: t.accountId, name } })],
      ["content.createMany", () => writable.content.createMany({ data: [{ id: newId("c"), accountId: t.accountId, title: name, type: "text" }] })],
      ["account.update", () => writable.account.update({ where: { id: t.accountId }, data: { name } })],
      ["account.upsert", () => writable.account.upsert({ where: { id: t.accountId }, create: { id: t.accountId, name }, update: { name } })],
      ["user.deleteMany", () => writable.user.deleteMany({ where: { email: t.email } })],
      ["membership.delete", () => writable.membership.deleteMany({ where: { accountId: t.accountId } })],
      ["apiKey.update", () => writable.apiKey.updateMany({ where: {}, data: { revokedAt: new Date() } })],
      ["endUser.create", () => writable.endUser.create({ data: { id: newId("u"), accountId: t.accountId, externalId: name } })],
      ["endUserField.create", () => writable.endUserField.create({ data: { accountId: t.accountId, name: "f", type: "string" } })],
      ["contentTag.deleteMany", () => writable.contentTag.deleteMany()],
      ["endUserValue.deleteMany", () => writable.endUserValue.deleteMany()],
      ["endUserAction.deleteMany", () => writable.endUserAction.deleteMany()],
      ["$transaction", () => writable.$transaction(async () => 1)],
    ];
    const before = await prisma.auditLog.count();
    for (const [label, attempt] of attempts) {
      await expect((async () => attempt())(), label).rejects.toThrow(/withTransaction/);
    }
    expect(await prisma.auditLog.count()).toBe(before);
    expect(await prisma.tag.count({ where: { name } })).toBe(0);
    expect((await prisma.account.findUnique({ where: { id: t.accountId } }))?.name).toBe(t.accountId);
    expect(await prisma.apiKey.count({ where: { revokedAt: { not: null }, prefix: t.key.slice(0, 12) } })).toBe(0);
    expect(await prisma.user.count({ where: { email: t.email } })).toBe(1);
  });
});
