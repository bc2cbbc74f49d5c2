// The audit log: B25's input, and the GraphQL `auditLogs` query.
import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/ids.js";
import { call, expectProblem, prisma, type Reply, type Tenant, tenant } from "../helpers.js";
import { AUDIT_QUERY, b25, b25ok, b25Path, fixNow, gqlHttp, seed, server, withServer, writable } from "./shared.js";

withServer();

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

  it("windows reaching before 1970 are answered, empty (year 0 was a 500 on PostgreSQL)", async () => {
    for (const body of [{ endDate: "0001-01-01" }, { startDate: "0001-01-01", endDate: "0001-01-02" }, { startDate: "1900-01-01", endDate: "1969-12-31" }]) {
      const r = await b25ok(t, body);
      expect([body, r.body.data]).toEqual([body, []]);
    }
  });

  it("userId matches an e-mail in any letter case, as the auth header's", async () => {
    expect((await call(`${server.url}/v1/accounts/${t.accountId}/tags`, { method: "PUT", headers: t.headers, body: [{ name: "by-me" }] })).status).toBe(201);
    const own = await b25ok(t, { userId: t.email });
    expect(own.body.data.length).toBeGreaterThan(0);
    const upper = await b25ok(t, { userId: t.email.toUpperCase() });
    expect(upper.body.data).toEqual(own.body.data);
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
    const beforeYearZero = Buffer.from(JSON.stringify([-62198755200000, "a_x"])).toString("base64url");
    for (const cursor of ["not-a-cursor!", "eyJ4IjoxfQ", Buffer.from(JSON.stringify(["x", "y"])).toString("base64url"), beforeYearZero]) {
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
