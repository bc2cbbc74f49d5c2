// Incremental export: GET /v1/accounts/{accountId}/events/export (JSON and NDJSON, a cursor that
// always resumes, type filter, slices of 1,000 rows for long pages) and the end users changed since
// a time (GET /api/v1/{accountId}/endUsers?updatedSince=).
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { onQuery } from "../src/db/index.js";
import { logger } from "../src/logger.js";
import { expectProblem, httpGet, prisma, requester, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
const req = requester(() => server);
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const post = async (t: Tenant, body: unknown[]) => {
  const r = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body });
  expect(r.status, r.text).toBe(202);
};
const exp = (t: Tenant, query = "") => req(`/v1/accounts/${t.accountId}/events/export?${query}`, { headers: t.headers });
const actions = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ type: "user_action", time: Date.UTC(2024, 0, 1) + i, actionId: `a${from + i}`, endUserId: "u1" }));

describe("GET /events/export", () => {
  it("an empty account: no events, a cursor all the same, hasMore false", async () => {
    const t = await tenant("exe");
    const r = await exp(t);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.body).toEqual({ data: [], cursor: expect.stringMatching(/^[A-Za-z0-9_-]+$/), hasMore: false });
    // Events stored later appear after that cursor.
    await post(t, actions(2));
    const later = await exp(t, `cursor=${r.body.cursor}`);
    expect(later.body.data.map((e: any) => e.actionId)).toEqual(["a0", "a1"]);
  });

  it("pages walk every event once in ingestion order; the last cursor resumes with events stored later", async () => {
    const t = await tenant("exw");
    const other = await tenant("exo");
    await post(other, actions(5, 100));
    const before = Date.now();
    await post(t, actions(25));
    await post(t, [
      { type: "flow_started", time: Date.UTC(2024, 0, 2), endUserId: "u2", flowId: "f1", widget: "beacon", domain: "d.example", userName: "Kim" },
    ]);
    const seen: any[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const r = await exp(t, `limit=10${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get("x-next-cursor")).toBe(r.body.cursor);
      seen.push(...r.body.data);
      cursor = r.body.cursor;
      pages++;
      if (!r.body.hasMore) break;
    }
    expect(pages).toBe(3);
    expect(seen.map((e) => e.actionId ?? e.type)).toEqual([...actions(25).map((e) => e.actionId), "flow_started"]);
    const ids = seen.map((e) => e.id);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    expect(new Set(ids).size).toBe(26);
    expect(seen[25]).toEqual({
      id: ids[25],
      type: "flow_started",
      time: Date.UTC(2024, 0, 2),
      endUserId: "u2",
      flowId: "f1",
      contentId: null,
      widget: "beacon",
      step: null,
      searchTerm: null,
      resultCount: null,
      useful: null,
      comment: null,
      actionId: null,
      domain: "d.example",
      userName: "Kim",
      receivedTime: expect.any(Number),
    });
    expect(seen[25].receivedTime).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    expect(seen[25].receivedTime).toBeLessThanOrEqual(Date.now() + 1000);
    // Nothing new: the same cursor, an empty page.
    const idle = await exp(t, `cursor=${cursor}`);
    expect(idle.body).toEqual({ data: [], cursor, hasMore: false });
    await post(t, actions(3, 50));
    const resumed = await exp(t, `cursor=${cursor}`);
    expect(resumed.body.data.map((e: any) => e.actionId)).toEqual(["a50", "a51", "a52"]);
    expect(resumed.body.hasMore).toBe(false);
  });

  it("a reader exporting while requests store events concurrently sees every event exactly once", async () => {
    const t = await tenant("exc");
    const seen: number[] = [];
    let cursor = "";
    const drain = async () => {
      for (;;) {
        const r = await exp(t, `limit=7${cursor ? `&cursor=${cursor}` : ""}`);
        seen.push(...r.body.data.map((e: any) => e.id));
        cursor = r.body.cursor;
        if (!r.body.hasMore) return;
      }
    };
    let writing = true;
    const writers = Promise.all(Array.from({ length: 8 }, (_, w) => post(t, actions(40, w * 100)))).finally(() => (writing = false));
    while (writing) await drain();
    await writers;
    await drain();
    const all = (await prisma.event.findMany({ where: { accountId: t.accountId }, select: { id: true }, orderBy: { id: "asc" } })).map((e) => e.id);
    expect(all).toHaveLength(320);
    expect(seen).toEqual(all);
  });

  it("type filters (comma-separated or repeated); format=ndjson streams one event a line with the cursor in X-Next-Cursor", async () => {
    const t = await tenant("ext");
    await post(t, [
      { type: "flow_started", time: 1, flowId: "f", widget: "direct" },
      { type: "user_action", time: 2, actionId: "x" },
      { type: "flow_completed", time: 3, flowId: "f", widget: "direct" },
      { type: "flow_started", time: 4, flowId: "g", widget: "direct" },
    ]);
    const one = await exp(t, "type=flow_started");
    expect(one.body.data.map((e: any) => e.time)).toEqual([1, 4]);
    const two = await exp(t, "type=flow_started&type=flow_completed&limit=2");
    expect(two.body.data.map((e: any) => e.time)).toEqual([1, 3]);
    expect(two.body.hasMore).toBe(true);
    const nd = await exp(t, `format=ndjson&type=flow_started,flow_completed&cursor=${two.body.cursor}`);
    expect(nd.status).toBe(200);
    expect(nd.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    expect(nd.headers.get("x-has-more")).toBe("false");
    const lines = nd.text.split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, -1).map((l) => JSON.parse(l).time)).toEqual([4]);
    const next = nd.headers.get("x-next-cursor")!;
    expect((await exp(t, `format=ndjson&cursor=${next}`)).text).toBe("");
  });

  it("400 for a malformed cursor, limit out of range, an unknown type or format; 401/403 first", async () => {
    const t = await tenant("exb");
    expectProblem(await exp(t, "cursor=%%%"), 400, /cursor/);
    expectProblem(await exp(t, `cursor=${Buffer.from('{"after":-1}').toString("base64url")}`), 400, /cursor/);
    // Event ids are 64-bit (past 2^31 PostgreSQL's int4 refused the comparison: a 500); past 2^53 − 1
    // a JavaScript number is not exact, and no cursor of ours points there.
    const big = Buffer.from(JSON.stringify({ after: 2 ** 53 })).toString("base64url");
    expectProblem(await exp(t, `cursor=${big}`), 400, /^cursor is malformed/);
    for (const after of [2 ** 31, Number.MAX_SAFE_INTEGER]) {
      const c = Buffer.from(JSON.stringify({ after })).toString("base64url");
      const r = await exp(t, `cursor=${c}`);
      expect(r.body).toEqual({ data: [], cursor: expect.any(String), hasMore: false });
      expect(JSON.parse(Buffer.from(r.body.cursor, "base64url").toString())).toEqual({ after, account: t.accountId });
    }
    expectProblem(await exp(t, "limit=0"), 400, /limit/);
    expectProblem(await exp(t, "limit=10001"), 400, /limit/);
    expectProblem(await exp(t, "type=flow_started,nope"), 400, /type must be one of/);
    expectProblem(await exp(t, "format=xml"), 400, /format/);
    expectProblem(await req(`/v1/accounts/${t.accountId}/events/export?limit=0`), 401);
    const other = await tenant("exb2");
    expectProblem(await req(`/v1/accounts/${t.accountId}/events/export?limit=0`, { headers: other.headers }), 403);
  });

  it("a type filter that names no type (`type=,`, `type=%20`) is a 400, not every event", async () => {
    const t = await tenant("exn");
    await post(t, [...actions(1), { type: "flow_started", time: Date.UTC(2024, 0, 2), endUserId: "u2", flowId: "f1", widget: "beacon" }]);
    for (const q of ["type=,", "type=,,,", "type=%20", "type=%20,%20", "type=,&type=,", "format=ndjson&type=,"]) {
      const r = await exp(t, q);
      expectProblem(r, 400, /^type must list at least one event type/);
      expect(r.body.errors).toEqual([{ path: "type", message: "names no type" }]);
    }
    // The filter still works as given, and nothing was changed by the refusals.
    expect((await exp(t, "type=flow_started,")).body.data.map((e: any) => e.type)).toEqual(["flow_started"]);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(2);
  });

  it("a cursor of another account is a 400, not a position in this one; cursors issued before they named their account still resume", async () => {
    const a = await tenant("exca");
    const b = await tenant("excb");
    await post(b, actions(3));
    await post(a, actions(2));
    await post(b, actions(2, 10));
    const fromA = await exp(a);
    expect(fromA.body.data.map((e: any) => e.actionId)).toEqual(["a0", "a1"]);
    // A's cursor lies past B's first three events (ids are shared by every account): read as a
    // position in B, it skipped them without a word.
    for (const q of [`cursor=${fromA.body.cursor}`, `format=ndjson&cursor=${fromA.body.cursor}`]) {
      const r = await exp(b, q);
      expectProblem(r, 400, /^cursor belongs to another account/);
      expect(r.body.errors).toEqual([{ path: "cursor", message: "cursor of another account" }]);
    }
    const gq = await req("/graphql", {
      method: "POST",
      headers: b.headers,
      body: {
        query: `query($a: String!, $c: String) { account(id: $a) { eventExport(cursor: $c) { cursor } } }`,
        variables: { a: b.accountId, c: fromA.body.cursor },
      },
    });
    expect(gq.body.errors?.[0]?.message).toMatch(/^cursor belongs to another account/);
    // Its own cursors walk B whole; one without an account (as issued before) is read as before.
    const all = await exp(b);
    expect(all.body.data.map((e: any) => e.actionId)).toEqual(["a0", "a1", "a2", "a10", "a11"]);
    const legacy = Buffer.from(JSON.stringify({ after: all.body.data[2].id })).toString("base64url");
    expect((await exp(b, `cursor=${legacy}`)).body.data.map((e: any) => e.actionId)).toEqual(["a10", "a11"]);
    const odd = Buffer.from(JSON.stringify({ after: 1, account: 5 })).toString("base64url");
    expectProblem(await exp(b, `cursor=${odd}`), 400, /^cursor is malformed/);
    expect(await prisma.event.count({ where: { accountId: b.accountId } })).toBe(5);
  });

  it("a 10,000-event page is read and sent in slices of 1,000 rows", async () => {
    const t = await tenant("exl");
    await post(t, actions(2_500));
    const { result, sql } = await sqlOf(() => exp(t, "limit=10000"));
    expect(result.status).toBe(200);
    expect(result.body.data).toHaveLength(2_500);
    expect(result.body.hasMore).toBe(false);
    const slices = sql.filter((s) => /SELECT "id", "type"/.test(s) && /FROM "Event"/.test(s));
    expect(slices).toHaveLength(3);
    for (const s of slices) expect(s).toMatch(/LIMIT 1000\b/);
    const nd = await exp(t, "limit=10000&format=ndjson");
    expect(nd.text.trimEnd().split("\n")).toHaveLength(2_500);
  });

  it("a long page is streamed as it is read: its first bytes go before its last slice is read, and a client that goes away stops the reads", async () => {
    const t = await tenant("exs");
    await post(t, actions(10_000));
    const slices: string[] = [];
    const stop = onQuery((q) => {
      if (/SELECT "id", "type"/.test(q) && /FROM "Event"/.test(q)) slices.push(q);
    });
    const failures = vi.spyOn(logger, "error");
    let atFirstByte = -1;
    try {
      await new Promise<void>((resolve, reject) => {
        const r = request(`${server.url}/v1/accounts/${t.accountId}/events/export?limit=10000&format=ndjson`, { headers: t.headers }, (res) => {
          expect(res.statusCode).toBe(200);
          expect(res.headers.etag).toMatch(/^W\/"/);
          res.once("data", () => {
            atFirstByte = slices.length;
            // The client goes away after the first bytes.
            r.destroy();
            resolve();
          });
          res.on("error", () => {});
        });
        r.on("error", (err) => (atFirstByte < 0 ? reject(err) : undefined));
        r.end();
      });
      // Give the server time to notice, and to read on if it were going to.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      stop();
    }
    // Ten slices of 1,000 make the page: the first went out before the last was read (with a slice
    // or two read ahead while it travelled: how many depends on timing), and the reads stopped with
    // the client. (Read whole to be tagged, all ten were read before the first byte.)
    expect(atFirstByte).toBeGreaterThanOrEqual(1);
    expect(atFirstByte).toBeLessThan(10);
    expect(slices.length).toBeLessThan(10);
    expect(failures.mock.calls.filter(([, msg]) => msg === "REST route failed")).toEqual([]);
    failures.mockRestore();
    // Read whole, the same page: every event once, and the tag it had.
    const whole = await httpGet(`${server.url}/v1/accounts/${t.accountId}/events/export?limit=10000&format=ndjson`, t.headers);
    expect(whole.text.trimEnd().split("\n")).toHaveLength(10_000);
    expect(whole.headers["x-has-more"]).toBe("false");
  });

  it("conditional GETs: a current tag is a 304 without reading the page's rows; an erasure inside the page, or more events behind it, changes the tag", async () => {
    const t = await tenant("ext");
    await post(t, [...actions(2), { type: "user_action", time: Date.UTC(2024, 0, 2), actionId: "b", endUserId: "u2" }]);
    const rowsRead = (q: string) => /SELECT "id", "type"/.test(q) && /FROM "Event"/.test(q);
    for (const format of ["json", "ndjson"]) {
      const url = `${server.url}/v1/accounts/${t.accountId}/events/export?limit=2&format=${format}`;
      const first = await httpGet(url, t.headers);
      expect(first.status).toBe(200);
      const tag = first.headers.etag as string;
      expect(tag).toMatch(/^W\/"/);
      const again = await sqlOf(() => httpGet(url, { ...t.headers, "if-none-match": tag }));
      expect([again.result.status, again.result.text, again.result.headers.etag]).toEqual([304, "", tag]);
      expect(again.result.headers["x-next-cursor"]).toBe(first.headers["x-next-cursor"]);
      expect(again.sql.filter(rowsRead)).toEqual([]);
      // HEAD: the headers, not the rows.
      const head = await sqlOf(
        () =>
          new Promise<{ status: number; etag: string | undefined }>((resolve, reject) => {
            const r = request(url, { method: "HEAD", headers: t.headers }, (res) => {
              res.resume();
              res.on("end", () => resolve({ status: res.statusCode!, etag: res.headers.etag }));
            });
            r.on("error", reject);
            r.end();
          }),
      );
      expect(head.result).toEqual({ status: 200, etag: tag });
      expect(head.sql.filter(rowsRead)).toEqual([]);
    }
    const url = `${server.url}/v1/accounts/${t.accountId}/events/export?limit=2`;
    const before = await httpGet(url, t.headers);
    // Erasing u1 rewrites the endUserId of the page's two events: the page shows something else now.
    expect((await req(`/api/v1/${t.accountId}/endUsers/u1`, { method: "DELETE", headers: t.headers })).status).toBe(204);
    const erased = await httpGet(url, { ...t.headers, "if-none-match": before.headers.etag as string });
    expect(erased.status).toBe(200);
    expect(erased.headers.etag).not.toBe(before.headers.etag);
    expect(JSON.parse(erased.text).data.map((e: any) => e.endUserId)).toEqual([expect.stringMatching(/^erased_/), expect.stringMatching(/^erased_/)]);
    expect(JSON.parse(erased.text).hasMore).toBe(true);
    // A page of all three, then a fourth event: hasMore is the same (false), the rows are not.
    const all = `${server.url}/v1/accounts/${t.accountId}/events/export?limit=5`;
    const three = await httpGet(all, t.headers);
    await post(t, actions(1, 50));
    const four = await httpGet(all, { ...t.headers, "if-none-match": three.headers.etag as string });
    expect(four.status).toBe(200);
    expect(JSON.parse(four.text).data).toHaveLength(4);
  });

  it("works over GraphQL too", async () => {
    const t = await tenant("exg");
    await post(t, actions(3));
    const r = await req("/graphql", {
      method: "POST",
      headers: t.headers,
      body: { query: `query($a: String!) { account(id: $a) { eventExport(limit: 2) { events cursor hasMore } } }`, variables: { a: t.accountId } },
    });
    expect(r.body.errors).toBeUndefined();
    const page = r.body.data.account.eventExport;
    expect(page.events.map((e: any) => e.actionId)).toEqual(["a0", "a1"]);
    expect(page.hasMore).toBe(true);
  });
});

describe("GET /api/v1/{accountId}/endUsers?updatedSince=", () => {
  it("lists the end users changed at or after the time, by (lastUpdateTime, id), with the usual cursor", async () => {
    const t = await tenant("exu");
    const put = (body: unknown) => req(`/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body });
    expect((await put([{ id: "old-1" }, { id: "old-2" }])).status).toBe(201);
    await new Promise((r) => setTimeout(r, 20));
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    expect((await put([{ id: "new-1" }])).status).toBe(201);
    await new Promise((r) => setTimeout(r, 5));
    expect((await put([{ id: "old-1", custom: { name: "Changed" } }])).status).toBe(200);
    const list = async (query: string) => {
      const r = await req(`/api/v1/${t.accountId}/endUsers?${query}`, { headers: t.headers });
      expect(r.status, r.text).toBe(200);
      return r.body;
    };
    const page = await list(`updatedSince=${since}`);
    expect(page.data.map((u: any) => u.id)).toEqual(["new-1", "old-1"]);
    expect(page.data[1].lastUpdateTime).toBeGreaterThanOrEqual(page.data[0].lastUpdateTime);
    const first = await list(`updatedSince=${since}&limit=1`);
    expect(first.data.map((u: any) => u.id)).toEqual(["new-1"]);
    const second = await list(`updatedSince=${since}&limit=1&cursor=${first.cursor}`);
    expect(second.data.map((u: any) => u.id)).toEqual(["old-1"]);
    expect(second.cursor).toBeNull();
    // At or after: the exact time of a change includes it.
    const exact = (await prisma.endUser.findFirstOrThrow({ where: { accountId: t.accountId, externalId: "new-1" } })).updatedAt.getTime();
    expect((await list(`updatedSince=${exact}`)).data.map((u: any) => u.id)).toEqual(["new-1", "old-1"]);
    expect((await list("")).data.map((u: any) => u.id)).toEqual(["old-1", "old-2", "new-1"]);
    expectProblem(await req(`/api/v1/${t.accountId}/endUsers?updatedSince=yesterday`, { headers: t.headers }), 400, /updatedSince/);
  });

  it("a cursor of one order (creation, or updatedSince's update order) is a 400 in the other, as a malformed one is", async () => {
    const t = await tenant("exo");
    const put = (body: unknown) => req(`/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body });
    const list = (query: string) => req(`/api/v1/${t.accountId}/endUsers?${query}`, { headers: t.headers });
    expect((await put([{ id: "u1" }, { id: "u2" }, { id: "u3" }])).status).toBe(201);
    await new Promise((r) => setTimeout(r, 5));
    expect((await put([{ id: "u1", custom: { name: "Changed" } }])).status).toBe(200);
    const byCreation = await list("limit=1");
    const byUpdate = await list("updatedSince=0&limit=1");
    expect([byCreation.body.data[0].id, byUpdate.body.data[0].id]).toEqual(["u1", "u2"]);
    // Each order's cursor resumes its own walk.
    expect((await list(`limit=5&cursor=${byCreation.body.cursor}`)).body.data.map((u: any) => u.id)).toEqual(["u2", "u3"]);
    expect((await list(`updatedSince=0&limit=5&cursor=${byUpdate.body.cursor}`)).body.data.map((u: any) => u.id)).toEqual(["u3", "u1"]);
    for (const query of [`updatedSince=0&cursor=${byCreation.body.cursor}`, `cursor=${byUpdate.body.cursor}`]) {
      const r = await list(query);
      expectProblem(r, 400, "cursor does not belong to this list");
      expect(r.body.errors, query).toEqual([{ path: "cursor", message: "cursor from another list" }]);
    }
    expectProblem(await list("cursor=!!"), 400, /^cursor is malformed/);
    // Before cursors named their order: read as creation cursors, refused with updatedSince.
    const u1 = await prisma.endUser.findFirstOrThrow({ where: { accountId: t.accountId, externalId: "u1" } });
    const legacy = Buffer.from(JSON.stringify([u1.createdAt.getTime(), u1.id])).toString("base64url");
    expect((await list(`limit=5&cursor=${legacy}`)).body.data.map((u: any) => u.id)).toEqual(["u2", "u3"]);
    expectProblem(await list(`updatedSince=0&cursor=${legacy}`), 400, "cursor does not belong to this list");
  });
});
