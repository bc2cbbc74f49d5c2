// The audit log: B25 `POST /v1/accounts/{accountId}/auditlogs`, rule by rule with a fixed clock
// (entries seeded directly at chosen times).
import { describe, expect, it } from "vitest";
import { createKey, createUser } from "../../src/admin.js";
import { call, expectProblem, tenant } from "../helpers.js";
import { b25, b25ok, b25Path, DAY, fixNow, probes, seed, server, withServer } from "./shared.js";

withServer();

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
