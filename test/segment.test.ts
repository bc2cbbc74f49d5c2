// Segment-format ingestion (POST /segment/v1/batch and the single-call paths): write keys of scope
// `ingest`, the real @segment/analytics-node client over HTTP, track → engagement events, identify
// → end users, limits, and idempotency by messageId (a retried batch is never counted twice, also
// when two instances receive it at once).
import { execFile } from "node:child_process";
import { Analytics } from "@segment/analytics-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, createUser } from "../src/admin.js";
import { dbKind } from "../src/db/index.js";
import { closeQueue } from "../src/domains/copyJobs/queue.js";
import { expectProblem, prisma, requester, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";
import { shape } from "./sql.js";

let server: Server;
let a: Tenant;
let writeKey: string;
const req = requester(() => server);
const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}` });
const batch = (body: unknown, key = writeKey) => req("/segment/v1/batch", { method: "POST", headers: basic(key), body });
const eventsOf = (accountId: string) => prisma.event.findMany({ where: { accountId }, orderBy: { id: "asc" } });
const now = () => new Date().toISOString();
let seq = 0;
const mid = () => `m-${process.pid}-${++seq}`;

beforeAll(async () => {
  server = await startServer();
  a = await tenant("seg");
  writeKey = (await createKey(a.email, { scope: "ingest", accountId: a.accountId })).key;
  await req(`/v1/accounts/${a.accountId}/endUserSchema`, {
    method: "PUT",
    headers: a.headers,
    body: [
      { name: "plan", type: "string" },
      { name: "seats", type: "double" },
    ],
  });
});
afterAll(async () => {
  await server.close();
  // the prune test's pg-boss (PostgreSQL)
  await closeQueue();
});

describe("the official client @segment/analytics-node", () => {
  it("sends identify and track calls that the reports and end users read back", async () => {
    const t = await tenant("segc");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    await req(`/v1/accounts/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] });
    const errors: unknown[] = [];
    const analytics = new Analytics({ writeKey: key, host: server.url, path: "/segment/v1/batch", flushAt: 1, maxRetries: 0 });
    analytics.on("error", (e) => errors.push(e));
    analytics.identify({ userId: "ada", traits: { name: "Ada", email: "ada@x.com", plan: "pro", favouriteColour: "green" } });
    const page = { page: { url: "https://app.example.com/invoices?x=1" }, traits: { name: "Ada L." } };
    analytics.track({ userId: "ada", event: "Flow Started", properties: { flowId: "f1", widget: "self_help" }, context: page });
    analytics.track({ userId: "ada", event: "flowCompleted", properties: { flow_id: "f1", widget: "self_help" }, context: page });
    analytics.track({ anonymousId: "anon-1", event: "Exported Report", properties: { format: "csv" } });
    analytics.page({ userId: "ada", name: "Invoices" });
    await analytics.closeAndFlush({ timeout: 10_000 });
    expect(errors).toEqual([]);

    // flushAt: 1 sends each call in a request of its own, concurrently: arrival order is not call order.
    const rows = (await eventsOf(t.accountId)).sort((x, y) => (x.type === y.type ? 0 : x.type > y.type ? -1 : 1));
    expect(rows.map((e) => [e.type, e.endUserId, e.flowId, e.widget, e.actionId, e.domain, e.userName])).toEqual([
      ["user_action", "anon-1", null, null, "Exported Report", null, null],
      ["flow_started", "ada", "f1", "self_help", null, "app.example.com", "Ada L."],
      ["flow_completed", "ada", "f1", "self_help", null, "app.example.com", "Ada L."],
    ]);
    const day = new Date().toISOString().slice(0, 10);
    const flows = await req(`/v1/accounts/${t.accountId}/reports/flowCompletion?flowId=f1&startDate=${day}&endDate=${day}`, { headers: t.headers });
    expect(flows.status, flows.text).toBe(200);
    expect(flows.body.rows).toEqual([["f1", 1, 1, 0]]);
    const actions = await req(`/v1/accounts/${t.accountId}/reports/userActions?startDate=${day}&endDate=${day}`, { headers: t.headers });
    expect(actions.body.rows).toEqual([["Exported Report", 1, 1]]);
    const user = await req(`/v1/accounts/${t.accountId}/endUsers/ada?fields=custom`, { headers: t.headers });
    expect(user.status, user.text).toBe(200);
    expect(user.body.custom).toEqual(expect.objectContaining({ name: "Ada", email: "ada@x.com", plan: "pro" }));
    expect(user.body.custom).not.toHaveProperty("favouriteColour");
    // The messageIds of the calls that stored something were remembered (identify, 3 tracks; not the page).
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(4);
  });
});

describe("write keys", () => {
  it("401 without a key or with an unknown one; nothing stored", async () => {
    const body = { batch: [{ type: "track", userId: "u", event: "Flow Started", properties: { flowId: "f", widget: "direct" } }] };
    expectProblem(await req("/segment/v1/batch", { method: "POST", body }), 401);
    expectProblem(await batch(body, "ggk_not-a-key-at-all"), 401);
    // A key in the body counts, a bad one there too.
    expectProblem(await req("/segment/v1/batch", { method: "POST", body: { ...body, writeKey: "nope" } }), 401);
    // A key in the header is checked first: a bad one is a 401 whatever the body; no key and no body at all too.
    expectProblem(await req("/segment/v1/batch", { method: "POST", raw: "{nope", headers: { ...basic("nope"), "content-type": "application/json" } }), 401);
    expectProblem(await req("/segment/v1/batch", { method: "POST", raw: "", headers: { "content-type": "text/plain" } }), 401, /Send the write key/);
  });

  it("without a key in the header, a body that cannot be read is answered as such (413, 400), not as a missing key", async () => {
    const t = await tenant("segbk");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const text = { "content-type": "text/plain" };
    // The browser form: writeKey in a text/plain body, here 523 KiB.
    const call = (i: number) => ({ type: "track", userId: "u", event: "Big", properties: { pad: "x".repeat(20_500) }, messageId: `big-${i}` });
    const big = JSON.stringify({ writeKey: key, batch: Array.from({ length: 26 }, (_, i) => call(i)) });
    expect(Math.round(Buffer.byteLength(big) / 1000)).toBe(535);
    expectProblem(await req("/segment/v1/batch", { method: "POST", raw: big, headers: text }), 413, "Request body larger than 500 KB.");
    expectProblem(await req("/segment/v1/batch", { method: "POST", raw: `{"writeKey":"${key}","batch":[}`, headers: text }), 400, /^Malformed JSON body/);
    expectProblem(await req("/segment/v1/track", { method: "POST", raw: `{"writeKey":"${key}",`, headers: text }), 400, /^Malformed JSON body/);
    // Another Authorization scheme carries no write key: the same.
    expectProblem(
      await req("/segment/v1/batch", { method: "POST", raw: `{"writeKey":"${key}","batch":[}`, headers: { ...text, authorization: "Bearer x" } }),
      400,
      /^Malformed JSON body/,
    );
    // A readable body is authenticated as before: with its key stored, without one a 401.
    const ok = await req("/segment/v1/batch", { method: "POST", raw: JSON.stringify({ writeKey: key, batch: [call(99)] }), headers: text });
    expect([ok.status, ok.body.accepted], ok.text).toEqual([200, 1]);
    expectProblem(await req("/segment/v1/batch", { method: "POST", raw: JSON.stringify({ batch: [call(98)] }), headers: text }), 401, /Send the write key/);
    expect((await eventsOf(t.accountId)).length).toBe(1);
  });

  it("403 for a key of another scope; an ingest key is refused everywhere else (403)", async () => {
    const body = { batch: [{ type: "track", userId: "u", event: "x" }] };
    expectProblem(await batch(body, a.key), 403, /scope 'integration'/);
    const asHeaders = { "x-service-integration-key": writeKey, "x-service-user": a.email };
    expectProblem(await req(`/v1/accounts/${a.accountId}/content`, { headers: asHeaders }), 403);
    expectProblem(await req(`/v1/accounts/${a.accountId}/events`, { method: "POST", headers: asHeaders, body: [] }), 403);
    const g = await req("/graphql", { method: "POST", headers: asHeaders, body: { query: `{ account(id: "${a.accountId}") { id } }` } });
    expect(g.body.errors[0].extensions.code).toBe("FORBIDDEN");
    // GraphQL refuses it whole: a write key ships in web pages, and introspection is not for them.
    for (const query of ["{ __typename }", "{ __schema { queryType { name } } }"]) {
      for (const r of [
        await req("/graphql", { method: "POST", headers: asHeaders, body: { query } }),
        await req(`/graphql?query=${encodeURIComponent(query)}`, { headers: asHeaders }),
      ]) {
        expect([r.status, r.body.data, r.body.errors?.[0]?.extensions?.code], query).toEqual([403, undefined, "FORBIDDEN"]);
      }
    }
    // Also where a query was accepted before (the fast path serves repeated texts).
    expect(
      (await req("/graphql", { method: "POST", headers: { ...a.headers, "content-type": "application/json" }, body: { query: "{ __typename }" } })).status,
    ).toBe(200);
    expect((await req("/graphql", { method: "POST", headers: asHeaders, body: { query: "{ __typename }" } })).status).toBe(403);
  });

  it("writeKey in the body works like Basic auth", async () => {
    const r = await req("/segment/v1/batch", { method: "POST", body: { writeKey, batch: [{ type: "page", userId: "u1", messageId: mid() }] } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ success: true, accepted: 1, duplicates: 0, rejected: [], ignoredTraits: 0 });
  });

  it("key create --scope ingest needs --account, one the user has access to", async () => {
    await expect(createKey(a.email, { scope: "ingest" })).rejects.toThrow(/--account/);
    const other = await tenant("sego");
    await expect(createKey(a.email, { scope: "ingest", accountId: other.accountId })).rejects.toThrow(/no access/);
    await expect(createKey(a.email, { scope: "integration", accountId: a.accountId })).rejects.toThrow(/only for --scope ingest/);
    // Access granted later: the key can be made, and writes to that account only.
    await createUser(a.email, [other.accountId]);
    const k = await createKey(a.email, { scope: "ingest", accountId: other.accountId });
    const r = await batch({ batch: [{ type: "track", userId: "z", event: "Login" }] }, k.key);
    expect(r.status, r.text).toBe(200);
    expect((await eventsOf(other.accountId)).map((e) => e.actionId)).toEqual(["Login"]);
  });

  it("the CLI makes write keys: key create <email> --scope ingest --account <id> prints the key alone on the last line", async () => {
    const t = await tenant("segcli");
    const cli = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile("npx", ["tsx", "src/cli/index.ts", ...args], { env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
        ),
      );
    const made = await cli("key", "create", t.email, "--scope", "ingest", "--account", t.accountId);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain(`scope ingest for account ${t.accountId}`);
    const key = made.stdout.trim().split("\n").at(-1)!;
    expect(key).toMatch(/^ggk_/);
    const r = await batch({ batch: [{ type: "track", userId: "u", event: "Login" }] }, key);
    expect(r.status, r.text).toBe(200);
    const missing = await cli("key", "create", t.email, "--scope", "ingest");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--scope ingest needs --account/);
  }, 60_000);

  it("GET on the paths is a 405 naming POST", async () => {
    const r = await req("/segment/v1/batch", { headers: basic(writeKey) });
    expectProblem(r, 405);
    expect(r.headers.get("allow")).toMatch(/POST/);
  });
});

describe("track calls", () => {
  it("an internationalized site is one domain however it arrives: a page URL's punycode host, POST /events' Unicode or punycode, the report filters in either", async () => {
    const t = await tenant("segidn");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const T = "2024-06-01T12:00:00.000Z";
    const track = (url: string) => ({
      type: "track",
      userId: "u1",
      event: "Flow Started",
      properties: { flowId: "f1", widget: "beacon" },
      context: { page: { url } },
      timestamp: T,
    });
    const r = await batch({ batch: [track("https://Bücher.example/a"), track("https://xn--bcher-kva.example/b")] }, key);
    expect([r.status, r.body.accepted], r.text).toEqual([200, 2]);
    const events = (domain: string) => ({ type: "flow_started", time: Date.parse(T), endUserId: "u2", flowId: "f1", widget: "beacon", domain });
    const posted = await req(`/v1/accounts/${t.accountId}/events`, {
      method: "POST",
      headers: t.headers,
      // Unicode, punycode in capitals, and a malformed punycode label (kept as sent).
      body: [events(" bücher.EXAMPLE "), events("XN--BCHER-KVA.example"), events("xn--zz-.example")],
    });
    expect(posted.status, posted.text).toBe(202);
    expect((await eventsOf(t.accountId)).map((e) => e.domain)).toEqual([
      "bücher.example",
      "bücher.example",
      "bücher.example",
      "bücher.example",
      "xn--zz-.example",
    ]);
    const report = (q: string) => req(`/v1/accounts/${t.accountId}/reports/flowViews?startDate=2024-06-01&endDate=2024-06-01&${q}`, { headers: t.headers });
    for (const q of ["includeDomains=xn--bcher-kva.example", `includeDomains=${encodeURIComponent("Bücher.example")}`]) {
      const rep = await report(q);
      expect([rep.status, rep.body.rows], q).toEqual([200, [["f1", 4, 2]]]);
    }
  });

  it("event names normalise to engagement types; other names are user actions; properties in camel or snake case", async () => {
    const t = await tenant("segn");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const T = "2024-06-01T12:00:00.000Z";
    const r = await batch(
      {
        batch: [
          { type: "track", userId: "u1", event: "Flow Completed", properties: { flowId: "f1", widget: "beacon" }, timestamp: T },
          { type: "track", userId: "u1", event: "flow_step", properties: { flow_id: "f1", step: 2 }, timestamp: T },
          { type: "track", userId: "u1", event: "selfhelp-search", properties: { search_term: " Invoice ", result_count: 3, content_id: "c1" }, timestamp: T },
          {
            type: "track",
            userId: "u1",
            event: "flowFeedback",
            properties: { flowId: "f1", useful: false, comment: "meh", userName: "Kim", domain: "d.example" },
            timestamp: T,
          },
          { type: "track", anonymousId: "a9", event: "Clicked Buy", properties: { flowId: 7 }, timestamp: T },
          { type: "track", userId: "u1", event: "Flow Started", properties: { flowId: "f1" }, timestamp: T },
          { type: "track", userId: "u1", event: "Popup Shown", timestamp: "not a date" },
          { type: "track", event: "x" },
          { type: "dance", userId: "u1" },
        ],
      },
      key,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ success: true, accepted: 5, duplicates: 0 });
    expect(r.body.rejected).toEqual([
      { index: 5, errors: ["properties.widget is required for flow_started events"] },
      { index: 6, errors: ["timestamp must be an ISO 8601 date-time"] },
      { index: 7, errors: ["userId or anonymousId is required"] },
      { index: 8, errors: [expect.stringMatching(/^type must be one of/)] },
    ]);
    const rows = await eventsOf(t.accountId);
    expect(rows.map((e) => ({ type: e.type, time: Number(e.time) }))).toEqual(
      ["flow_completed", "flow_step", "selfhelp_search", "flow_feedback", "user_action"].map((type) => ({ type, time: Date.parse(T) })),
    );
    expect(rows[1]).toMatchObject({ flowId: "f1", step: 2 });
    expect(rows[2]).toMatchObject({ searchTerm: "invoice", resultCount: 3, contentId: "c1" });
    expect(rows[3]).toMatchObject({ useful: false, comment: "meh", userName: "Kim", domain: "d.example" });
    expect(rows[4]).toMatchObject({ endUserId: "a9", actionId: "Clicked Buy", flowId: null });
  });

  it("a rejected track call's errors name the fields the call sent (timestamp, originalTimestamp, properties.step), not the event's", async () => {
    const t = await tenant("segf");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const T = "2024-06-01T12:00:00.000Z";
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const track = (call: Record<string, unknown>) => ({ type: "track", userId: "u1", timestamp: T, messageId: mid(), ...call });
    const r = await batch(
      {
        batch: [
          track({ event: "Flow Step", properties: { flow_id: "f1", step: 0 } }),
          track({ event: "Flow Step", properties: { flowId: "f1", step: 1 }, timestamp: later }),
          track({ event: "Flow Step", properties: { flowId: "f1", step: 1 }, timestamp: undefined, originalTimestamp: later }),
          track({ event: "Flow Started", properties: { flow_id: "f1", widget: "nowhere" } }),
          track({ event: "Selfhelp Search", properties: { search_term: "x".repeat(501), result_count: 0, content_id: "c1" } }),
          track({ event: "Flow Feedback", userId: undefined, anonymousId: "a".repeat(250), properties: { flowId: "f1", useful: "yes" } }),
          track({ event: "Flow Step", properties: { flowId: "f1" } }),
        ],
      },
      key,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ success: true, accepted: 0, duplicates: 0 });
    expect(r.body.rejected).toEqual([
      { index: 0, errors: ["properties.step must be an integer from 1 to 2147483647"] },
      { index: 1, errors: ["timestamp is more than 5 minutes in the future"] },
      { index: 2, errors: ["originalTimestamp is more than 5 minutes in the future"] },
      { index: 3, errors: ["properties.widget must be one of self_help, task_list, beacon, guided_popup, smart_tip, popup, direct"] },
      {
        index: 4,
        errors: [
          "properties.search_term must be at most 500 characters",
          "a search with a clicked properties.content_id must have properties.result_count ≥ 1",
        ],
      },
      { index: 5, errors: ["properties.useful must be true or false"] },
      { index: 6, errors: ["properties.step is required for flow_step events"] },
    ]);
    expect(await eventsOf(t.accountId)).toEqual([]);
    // A single call: the 400 problem names them too.
    const one = await req("/segment/v1/track", {
      method: "POST",
      headers: basic(key),
      body: track({ event: "Flow Step", properties: { flowId: "f1", step: 1.5 } }),
    });
    expectProblem(one, 400, /^properties\.step must be an integer from 1 to 2147483647$/);
  });

  it("corrects originalTimestamp for the client's clock skew with sentAt; no time at all is the time of receipt", async () => {
    const t = await tenant("segt");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    // The client's clock is an hour behind: it sent 2 s after the call happened.
    const skew = 3600_000;
    const sentAt = new Date(Date.now() - skew).toISOString();
    const original = new Date(Date.now() - skew - 2_000).toISOString();
    const before = Date.now();
    const r = await batch(
      {
        sentAt,
        batch: [
          { type: "track", userId: "u", event: "Login", originalTimestamp: original },
          { type: "track", userId: "u", event: "Logout" },
        ],
      },
      key,
    );
    expect(r.status, r.text).toBe(200);
    const [login, logout] = await eventsOf(t.accountId);
    expect(Number(login!.time)).toBeGreaterThanOrEqual(before - 2_000 - 50);
    expect(Number(login!.time)).toBeLessThanOrEqual(Date.now() - 2_000 + 50);
    expect(Number(logout!.time)).toBeGreaterThanOrEqual(before);
  });

  it("ISO 8601 times without an offset are UTC, whatever the machine's zone; other text is a rejection, not a guess", async () => {
    const t = await tenant("segz");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const r = await batch(
      {
        batch: [
          { type: "track", userId: "u", event: "Login", timestamp: "2024-06-01T10:00:00", messageId: mid() },
          { type: "track", userId: "u", event: "Login", timestamp: "2024-06-01 10:00:00.250", messageId: mid() },
          { type: "track", userId: "u", event: "Login", timestamp: "2024-06-01T12:00:00+02:00", messageId: mid() },
          { type: "track", userId: "u", event: "Login", timestamp: "June 1, 2024 10:00", messageId: mid() },
          { type: "track", userId: "u", event: "Login", timestamp: "2024-02-30T10:00:00Z", messageId: mid() },
        ],
      },
      key,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.rejected).toEqual([
      { index: 3, errors: ["timestamp must be an ISO 8601 date-time"] },
      { index: 4, errors: ["timestamp must be an ISO 8601 date-time"] },
    ]);
    const ten = Date.UTC(2024, 5, 1, 10);
    expect((await eventsOf(t.accountId)).map((e) => Number(e.time))).toEqual([ten, ten + 250, ten]);
  });

  it("timestamps are instants: a date alone is a rejection, not midnight UTC; one before 1970 is refused naming the field sent", async () => {
    const t = await tenant("segd");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    await req(`/v1/accounts/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "renewal", type: "timestamp" }] });
    const login = (fields: Record<string, unknown>) => ({ type: "track", userId: "u", event: "Login", messageId: mid(), ...fields });
    const r = await batch(
      {
        batch: [
          login({ timestamp: "2024-06-01" }),
          login({ originalTimestamp: "2024-06-01" }),
          login({ originalTimestamp: "2024-06-01T10:00:00Z", sentAt: "2024-06-01" }),
          login({ timestamp: "1969-07-20T20:17:00Z" }),
          login({ originalTimestamp: "1969-12-31T23:59:59.999Z" }),
          // the client's clock 2 years ahead: corrected, the call falls before 1970
          login({ originalTimestamp: "1971-01-01T00:00:00Z", sentAt: new Date(Date.now() + 2 * 365 * 86_400_000).toISOString() }),
          login({ timestamp: "1970-01-01T00:00:00Z" }),
          // a trait of a timestamp field is a date, not an instant: a date alone is fine there
          { type: "identify", userId: "u", traits: { renewal: "2024-06-01" }, messageId: mid() },
        ],
      },
      key,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.rejected).toEqual([
      { index: 0, errors: ["timestamp must be an ISO 8601 date-time with a time of day (e.g. 2024-06-01T00:00:00Z), not a date alone"] },
      { index: 1, errors: ["originalTimestamp must be an ISO 8601 date-time with a time of day (e.g. 2024-06-01T00:00:00Z), not a date alone"] },
      { index: 2, errors: ["sentAt must be an ISO 8601 date-time with a time of day (e.g. 2024-06-01T00:00:00Z), not a date alone"] },
      { index: 3, errors: ["timestamp must not be before 1970-01-01T00:00:00Z"] },
      { index: 4, errors: ["originalTimestamp must not be before 1970-01-01T00:00:00Z"] },
      { index: 5, errors: ["originalTimestamp corrected by the client's clock skew (receipt − sentAt) falls before 1970-01-01T00:00:00Z"] },
    ]);
    expect(r.body.accepted).toBe(2);
    expect((await eventsOf(t.accountId)).map((e) => Number(e.time))).toEqual([0]);
    const user = await req(`/api/v1/${t.accountId}/endUsers/u`, { headers: t.headers });
    expect(user.body.custom, user.text).toEqual({ renewal: Date.UTC(2024, 5, 1) });
  });

  it("a single-call path takes one call; a bad one is a 400 problem", async () => {
    const r = await req("/segment/v1/track", {
      method: "POST",
      headers: basic(writeKey),
      body: { userId: "s1", event: "Smarttip Played", properties: { contentId: "st1" }, messageId: mid() },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ success: true, accepted: 1, duplicates: 0, rejected: [], ignoredTraits: 0 });
    expectProblem(await req("/segment/v1/track", { method: "POST", headers: basic(writeKey), body: { userId: "s1" } }), 400, /event is required/);
    expectProblem(
      await req("/segment/v1/identify", { method: "POST", headers: basic(writeKey), body: { type: "track", userId: "s1" } }),
      400,
      /does not match/,
    );
    for (const path of ["page", "screen", "group", "alias"]) {
      const ok = await req(`/segment/v1/${path}`, { method: "POST", headers: basic(writeKey), body: { userId: "s1", previousId: "p", groupId: "g" } });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body.accepted).toBe(1);
    }
  });
  it("a userId or anonymousId with white space at either end rejects the call, as end-user writes refuse such an id: nothing is stored", async () => {
    const t = await tenant("segws");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const track = (who: Record<string, string>) => ({ type: "track", event: "Export", ...who, messageId: mid() });
    const r = await batch(
      {
        batch: [
          track({ userId: " x " }),
          track({ anonymousId: "anon " }),
          track({ userId: "\tx" }),
          track({ userId: "ok" }),
          track({ userId: "  ", anonymousId: "a " }),
        ],
      },
      key,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      success: true,
      accepted: 1,
      duplicates: 0,
      rejected: [
        { index: 0, errors: ["userId must not begin or end with white space"] },
        { index: 1, errors: ["anonymousId must not begin or end with white space"] },
        { index: 2, errors: ["userId must not begin or end with white space"] },
        { index: 4, errors: ["anonymousId must not begin or end with white space"] },
      ],
      ignoredTraits: 0,
    });
    expect((await eventsOf(t.accountId)).map((e) => e.endUserId)).toEqual(["ok"]);
    expect((await prisma.endUser.findMany({ where: { accountId: t.accountId } })).map((u) => u.externalId)).toEqual(["ok"]);
    // A single call: a 400 problem, as for any invalid call.
    const one = await req("/segment/v1/track", { method: "POST", headers: basic(key), body: track({ userId: "x " }) });
    expectProblem(one, 400, /userId must not begin or end with white space/);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId } })).toBe(1);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(1);
  });
});

// The requests of Segment's browser library (analytics.js 2.0, @segment/analytics-next 1.84), as it
// sends them (packages/browser/src/plugins/segmentio: index.ts, normalize.ts, fetch-dispatcher.ts,
// batched-dispatcher.ts; recorded from the real library): POST <apiHost>/<first letter of the call's
// type>, or <apiHost>/b when batching, text/plain, writeKey in the body (from 1.84 also as Basic
// auth). test/segment-browser.test.ts runs the library itself in headless Chromium.
describe("Segment's browser library (analytics.js 2.0): /t, /i, /p, /g, /a, /s and /b", () => {
  const ajsCall = (writeKey: string, type: string, fields: Record<string, unknown>) => ({
    timestamp: now(),
    integrations: { "Segment.io": true },
    type,
    ...fields,
    context: {
      page: { path: "/invoices", referrer: "", search: "?x=1", title: "Invoices", url: "https://app.example.com/invoices?x=1" },
      userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      locale: "en-US",
      library: { name: "analytics.js", version: "npm:next-1.84.3" },
      campaign: {},
      timezone: "Europe/Paris",
    },
    messageId: `ajs-next-${Date.now()}-${crypto.randomUUID()}`,
    anonymousId: "85594ed6-a327-4e2b-8cf1-74f733dc17c5",
    writeKey,
    sentAt: now(),
    _metadata: { bundled: ["Segment.io"], unbundled: [], bundledIds: [] },
  });
  const calls = (key: string) =>
    [
      ["i", ajsCall(key, "identify", { userId: "ada", traits: { name: "Ada", plan: "pro", favouriteColour: "green" } })],
      ["t", ajsCall(key, "track", { event: "Flow Started", properties: { flowId: "f1", widget: "self_help" }, userId: "ada" })],
      [
        "p",
        ajsCall(key, "page", {
          properties: { path: "/invoices", url: "https://app.example.com/invoices?x=1", name: "Invoices" },
          name: "Invoices",
          userId: "ada",
        }),
      ],
      ["g", ajsCall(key, "group", { traits: { name: "Acme" }, groupId: "g1", userId: "ada" })],
      ["a", ajsCall(key, "alias", { userId: "ada2", previousId: "ada" })],
      ["s", ajsCall(key, "screen", { properties: {}, name: "Home", userId: "ada" })],
      ["t", ajsCall(key, "track", { event: "Exported Report", properties: { format: "csv" }, userId: "ada" })],
    ] as const;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    req(`/segment/v1/${path}`, { method: "POST", raw: JSON.stringify(body), headers: { "content-type": "text/plain", ...headers } });

  async function account() {
    const t = await tenant("segajs");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    await req(`/v1/accounts/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] });
    return { t, key };
  }
  async function expectStored(t: Tenant) {
    expect((await eventsOf(t.accountId)).map((e) => [e.type, e.endUserId, e.flowId, e.actionId, e.domain])).toEqual([
      ["flow_started", "ada", "f1", null, "app.example.com"],
      ["user_action", "ada", null, "Exported Report", "app.example.com"],
    ]);
    const user = await req(`/v1/accounts/${t.accountId}/endUsers/ada?fields=custom`, { headers: t.headers });
    expect([user.status, user.body.custom], user.text).toEqual([200, { name: "Ada", plan: "pro" }]);
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(3);
  }

  it("one call a request at <apiHost>/<letter>, writeKey in the text/plain body (with Basic auth too, as versions from 1.84 send it)", async () => {
    const { t, key } = await account();
    const sent = calls(key);
    for (const [i, [path, body]] of sent.entries()) {
      // The older versions' requests carry the key in the body alone; newer ones add the header.
      const r = await post(path, body, i % 2 ? basic(key) : {});
      expect([path, r.status, r.body], r.text).toEqual([
        path,
        200,
        { success: true, accepted: 1, duplicates: 0, rejected: [], ignoredTraits: path === "i" ? 1 : 0 },
      ]);
    }
    await expectStored(t);
    // A call at another letter's path is refused like one at another call's path.
    const wrong = await post("t", sent[0][1]);
    expectProblem(wrong, 400, "type 'identify' does not match the path /track");
    // Only POST, as on the paths named in full.
    const get = await req("/segment/v1/t", { headers: basic(key) });
    expectProblem(get, 405);
    expect(get.headers.get("allow")).toBe("POST, OPTIONS");
  });

  it("batching: <apiHost>/b with {writeKey, batch (the calls without their sentAt), sentAt}", async () => {
    const { t, key } = await account();
    const batchOf = calls(key).map(([, call]) => {
      const { sentAt: _sentAt, ...rest } = call;
      return rest;
    });
    const r = await post("b", { writeKey: key, batch: batchOf, sentAt: now() }, basic(key));
    expect([r.status, r.body], r.text).toEqual([200, { success: true, accepted: 7, duplicates: 0, rejected: [], ignoredTraits: 1 }]);
    await expectStored(t);
    // The same batch again (a retry after a lost answer): duplicates, nothing stored twice.
    const again = await post("b", { writeKey: key, batch: batchOf, sentAt: now() });
    expect([again.status, again.body], again.text).toEqual([200, { success: true, accepted: 4, duplicates: 3, rejected: [], ignoredTraits: 1 }]);
    await expectStored(t);
  });

  it("the preflight allows what the library sends: Authorization, Content-Type and, on a retry, X-Retry-Count", async () => {
    const r = await req("/segment/v1/t", {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type,x-retry-count",
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    const allowed = (r.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["authorization", "content-type", "x-retry-count"]));
  });

  it("/openapi.json describes each path as an alias of the one named in full, text/plain bodies included", async () => {
    const doc = (await req("/openapi.json")).body;
    for (const [short, full] of Object.entries({ b: "batch", t: "track", i: "identify", p: "page", g: "group", a: "alias", s: "screen" })) {
      const op = doc.paths[`/segment/v1/${short}`]?.post;
      const named = doc.paths[`/segment/v1/${full}`].post;
      expect(op?.operationId, short).toBe(`segmentBrowser${full[0]!.toUpperCase()}${full.slice(1)}`);
      expect(op.description).toContain(`/segment/v1/${full}`);
      expect(Object.keys(op.requestBody.content).sort()).toEqual(["application/json", "text/plain"]);
      expect(op.requestBody.content["text/plain"].schema).toEqual(named.requestBody.content["application/json"].schema);
      expect(op.responses).toEqual(named.responses);
    }
  });
});

describe("identify calls", () => {
  it("upsert the end user with the traits named like fields (typed), counting the others as ignoredTraits", async () => {
    const r = await batch({
      batch: [
        { type: "identify", userId: "idf-1", traits: { plan: "team", seats: 5, name: "Bo", company: { name: "X" }, age: 3 }, messageId: mid() },
        { type: "identify", userId: "idf-1", traits: { seats: 6 }, messageId: mid() },
        { type: "identify", userId: "idf-2", traits: { seats: "many" }, messageId: mid() },
        { type: "identify", userId: "idf-3", traits: { signupTime: "2024-01-02T03:04:05Z" }, messageId: mid() },
        // Without an offset: UTC, not the machine's zone.
        { type: "identify", userId: "idf-4", traits: { signupTime: "2024-01-02T03:04:05" }, messageId: mid() },
      ],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      success: true,
      accepted: 4,
      duplicates: 0,
      rejected: [{ index: 2, errors: ["traits.seats must be a number"] }],
      ignoredTraits: 2,
    });
    const one = await req(`/v1/accounts/${a.accountId}/endUsers/idf-1?fields=custom`, { headers: a.headers });
    expect(one.body.custom).toEqual({ plan: "team", seats: 6, name: "Bo" });
    // Audited as the write key owner's changes.
    const entries = await prisma.auditLog.findMany({
      where: { accountId: a.accountId, resourceType: "endUser", resourceId: "idf-1" },
      orderBy: { timestamp: "asc" },
    });
    expect(entries.map((e) => [e.action, e.userId])).toEqual([
      ["create", a.email],
      ["update", a.email],
    ]);
    const three = await req(`/v1/accounts/${a.accountId}/endUsers/idf-3?fields=custom`, { headers: a.headers });
    expect(three.body.custom).toEqual({ signupTime: Date.parse("2024-01-02T03:04:05Z") });
    const four = await req(`/v1/accounts/${a.accountId}/endUsers/idf-4?fields=custom`, { headers: a.headers });
    expect(four.body.custom).toEqual({ signupTime: Date.UTC(2024, 0, 2, 3, 4, 5) });
    expectProblem(await req(`/v1/accounts/${a.accountId}/endUsers/idf-2`, { headers: a.headers }), 404);
  });
});

describe("limits and shape", () => {
  it("413 past 500 KB a request or 32 KB a call; 400 past 2,500 calls, for a body that is not JSON or not a batch; nothing stored", async () => {
    const t = await tenant("segl");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const call = (n: number) => ({ type: "track", userId: "u", event: "Big", properties: { pad: "x".repeat(n) } });
    expectProblem(await batch({ batch: Array.from({ length: 20 }, () => call(30_000)) }, key), 413, /500 KB/);
    expectProblem(await batch({ batch: [call(10), call(33_000)] }, key), 413, /32 KB \(batch\[1\]\)/);
    expectProblem(await batch({ batch: Array.from({ length: 2_501 }, () => ({ type: "page", userId: "u" })) }, key), 400, /at most 2500/);
    expectProblem(
      await req("/segment/v1/batch", { method: "POST", headers: { ...basic(key), "content-type": "application/json" }, raw: "{oops" }),
      400,
      /Malformed JSON/,
    );
    expectProblem(await batch({ calls: [] }, key), 400, /batch must be an array/);
    expectProblem(await batch([1, 2], key), 400);
    expect(await eventsOf(t.accountId)).toEqual([]);
    // 2,500 calls and just under 500 KB are fine.
    const r = await batch(
      { batch: Array.from({ length: 2_500 }, (_, i) => ({ type: "track", userId: `u${i % 50}`, event: "Tick", messageId: `tick-${i}` })) },
      key,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.accepted).toBe(2_500);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(2_500);
  });
});

describe("text that cannot be stored (NUL, unpaired surrogates)", () => {
  it("a body whose bytes are not UTF-8 is a 400, not calls stored with U+FFFD in place of what was sent", async () => {
    const t = await tenant("segu");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    // "Café" in Latin-1 (the é a lone 0xE9 byte), as text/plain the way the browser library posts.
    const text = JSON.stringify({ batch: [{ type: "track", userId: "u1", event: "Caf\u00e9 opened", messageId: "latin1-1" }] });
    const r = await fetch(`${server.url}/segment/v1/batch`, {
      method: "POST",
      headers: { ...basic(key), "content-type": "text/plain" },
      body: Buffer.from(text, "latin1"),
    });
    expect(r.status).toBe(400);
    const p = await r.json();
    expect(p.detail).toMatch(/not valid UTF-8/);
    expect(p.errors).toEqual([{ path: "body", message: "is not valid UTF-8" }]);
    expect(await eventsOf(t.accountId)).toEqual([]);
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(0);
    // The same call in UTF-8 is stored as sent.
    const ok = await batch(JSON.parse(text), key);
    expect(ok.status, ok.text).toBe(200);
    expect((await eventsOf(t.accountId)).map((e) => e.actionId)).toEqual(["Café opened"]);
  });

  const nul = "a\u0000b";
  const lone = "x\uD800y";
  const refused = (path: string) => `${path}: text must not contain NUL (\\u0000) or unpaired surrogates (\\uD800–\\uDFFF without their pair)`;

  it("rejects the call that would store it, naming the field; the same text where nothing is stored does not matter; the rest of the batch is stored", async () => {
    const t = await tenant("segnul");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    await req(`/v1/accounts/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] });
    const T = "2024-06-01T12:00:00.000Z";
    const flow = (extra: Record<string, unknown>) => ({
      type: "track",
      userId: "u1",
      event: "Flow Started",
      properties: { flowId: "f1", widget: "direct" },
      timestamp: T,
      messageId: mid(),
      ...extra,
    });
    const r = await batch(
      {
        context: { userAgent: `Mozilla ${nul}` },
        batch: [
          // Not stored: the user agent, the page's title and path, a property no field reads, a key.
          flow({
            context: { page: { url: `https://app.example.com/p${nul}`, title: lone }, userAgent: lone },
            properties: { flowId: "f1", widget: "direct", format: nul, [nul]: 1 },
          }),
          flow({ event: "Flow Feedback", properties: { flowId: "f1", useful: true, comment: nul } }),
          flow({ context: { traits: { name: lone } } }),
          flow({ event: `Clicked ${nul}` }),
          flow({ userId: `u${nul}` }),
          flow({ messageId: `m${lone}` }),
          flow({ properties: { flow_id: lone, widget: "direct" } }),
          { type: "identify", userId: "u2", traits: { plan: nul }, messageId: mid() },
          { type: "identify", userId: "u3", traits: { plan: "pro", company: nul }, context: { userAgent: nul }, messageId: mid() },
          { type: "page", userId: "u1", name: lone, properties: { title: nul, url: lone }, messageId: mid() },
          { type: "group", anonymousId: `anon${nul}`, groupId: lone, traits: { name: nul } },
        ],
      },
      key,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      success: true,
      accepted: 4,
      duplicates: 0,
      rejected: [
        { index: 1, errors: [refused("properties.comment")] },
        { index: 2, errors: [refused("context.traits.name")] },
        { index: 3, errors: [refused("event")] },
        { index: 4, errors: [refused("userId")] },
        { index: 5, errors: [refused("messageId")] },
        { index: 6, errors: [refused("properties.flow_id")] },
        { index: 7, errors: [refused("traits.plan")] },
      ],
      ignoredTraits: 1,
    });
    const rows = await eventsOf(t.accountId);
    expect(rows.map((e) => [e.type, e.endUserId, e.flowId, e.domain, e.userName])).toEqual([["flow_started", "u1", "f1", "app.example.com", null]]);
    expect((await prisma.endUser.findMany({ where: { accountId: t.accountId }, orderBy: { externalId: "asc" } })).map((u) => u.externalId)).toEqual([
      "u1",
      "u3",
    ]);
    const u3 = await req(`/v1/accounts/${t.accountId}/endUsers/u3?fields=custom`, { headers: t.headers });
    expect(u3.body.custom).toEqual({ plan: "pro" });
    // The keys of the two calls stored (the track, the identify of u3), nothing of the others.
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(2);
  });

  it("on a single-call path: a 400 problem when a stored field holds it, 200 when only an unstored one does", async () => {
    const t = await tenant("segnul1");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const bad = await req("/segment/v1/track", {
      method: "POST",
      headers: basic(key),
      body: { userId: "u1", event: "Flow Feedback", properties: { flowId: "f1", useful: false, comment: lone } },
    });
    expectProblem(bad, 400, refused("properties.comment"));
    expect(bad.body.errors).toEqual([{ path: "body", message: refused("properties.comment") }]);
    const ok = await req("/segment/v1/track", {
      method: "POST",
      headers: basic(key),
      body: { userId: "u1", event: "Flow Feedback", properties: { flowId: "f1", useful: false, title: lone }, context: { userAgent: nul } },
    });
    expect([ok.status, ok.body], ok.text).toEqual([200, { success: true, accepted: 1, duplicates: 0, rejected: [], ignoredTraits: 0 }]);
    const page = await req("/segment/v1/page", { method: "POST", headers: basic(key), body: { userId: "u1", name: nul, properties: { title: lone } } });
    expect([page.status, page.body.accepted], page.text).toEqual([200, 1]);
    expect((await eventsOf(t.accountId)).map((e) => [e.type, e.endUserId, e.comment])).toEqual([["flow_feedback", "u1", null]]);
  });
});

describe("idempotency", () => {
  it("a batch sent twice is stored once: the repeat's calls are duplicates", async () => {
    const t = await tenant("segi");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const body = {
      batch: [
        { type: "track", userId: "u1", event: "Flow Started", properties: { flowId: "f", widget: "direct" }, messageId: "dup-1" },
        { type: "track", userId: "u1", event: "Flow Started", properties: { flowId: "f", widget: "direct" }, messageId: "dup-1" },
        { type: "identify", userId: "u1", traits: {}, messageId: "dup-2" },
        { type: "page", userId: "u1", messageId: "dup-3" },
        { type: "track", userId: "u1", event: "No Id" },
      ],
    };
    const first = await batch(body, key);
    expect(first.body).toMatchObject({ accepted: 4, duplicates: 1, rejected: [] });
    const second = await batch(body, key);
    // The page call stores nothing, so it keeps no key: its repeat is accepted again.
    expect(second.body).toMatchObject({ accepted: 2, duplicates: 3, rejected: [] });
    // Only the call without a messageId is stored again.
    expect((await eventsOf(t.accountId)).map((e) => e.type)).toEqual(["flow_started", "user_action", "user_action"]);
    // Another account may use the same messageIds.
    const r = await batch({ batch: [{ type: "page", userId: "u1", messageId: "dup-3" }] });
    expect(r.body).toMatchObject({ accepted: 1, duplicates: 0 });
  });

  it("POST /events items may carry an id with the same meaning", async () => {
    const t = await tenant("segp");
    const post = (body: unknown) => req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body });
    const items = [
      { id: "e-1", type: "user_action", time: Date.now(), actionId: "a" },
      { id: "e-2", type: "user_action", time: Date.now(), actionId: "b" },
    ];
    const first = await post(items);
    expect(first.status, first.text).toBe(202);
    expect(first.body).toEqual({ accepted: 2, duplicates: 0 });
    const again = await post([...items, { id: "e-3", type: "user_action", time: Date.now(), actionId: "c" }]);
    expect(again.body).toEqual({ accepted: 1, duplicates: 2 });
    expect((await eventsOf(t.accountId)).map((e) => e.actionId)).toEqual(["a", "b", "c"]);
    const bad = await post([{ id: "", type: "user_action", time: Date.now(), actionId: "d" }]);
    expectProblem(bad, 400);
    expect(bad.body.errors).toEqual([{ path: "[0]", message: "id must be a non-empty string" }]);
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(3);
  });

  it("a repeat after the end user was erased changes nothing: no end user, name or audit entry comes back (Segment batch and POST /events)", async () => {
    const t = await tenant("seggdpr");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const segment = {
      batch: [
        {
          type: "track",
          userId: "gdpr1",
          event: "Flow Started",
          properties: { flowId: "f1", widget: "direct" },
          context: { traits: { name: "Gina Private" } },
          messageId: "gdpr-m1",
        },
      ],
    };
    const events = [{ id: "gdpr-e1", type: "flow_started", time: Date.now(), endUserId: "gdpr2", flowId: "f1", widget: "direct", userName: "Gus Private" }];
    const post = () => req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events });
    const first = await batch(segment, key);
    expect([first.status, first.body], first.text).toEqual([200, { success: true, accepted: 1, duplicates: 0, rejected: [], ignoredTraits: 0 }]);
    const firstPost = await post();
    expect([firstPost.status, firstPost.body], firstPost.text).toEqual([202, { accepted: 1, duplicates: 0 }]);
    expect((await prisma.eventUserName.findMany({ where: { accountId: t.accountId }, orderBy: { endUserId: "asc" } })).map((n) => n.userName)).toEqual([
      "Gina Private",
      "Gus Private",
    ]);
    for (const id of ["gdpr1", "gdpr2"]) {
      const del = await req(`/api/v1/${t.accountId}/endUsers/${id}`, { method: "DELETE", headers: t.headers });
      expect(del.status, del.text).toBe(204);
    }
    const snapshot = async () => ({
      endUsers: await prisma.endUser.count({ where: { accountId: t.accountId } }),
      names: await prisma.eventUserName.count({ where: { accountId: t.accountId } }),
      audit: (await prisma.auditLog.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" }, select: { id: true } })).map((e) => e.id),
      events: (await eventsOf(t.accountId)).map((e) => [e.id, e.endUserId, e.userName]),
      keys: await prisma.ingestMessage.count({ where: { accountId: t.accountId } }),
    });
    const erased = await snapshot();
    expect(erased).toMatchObject({ endUsers: 0, names: 0, keys: 2 });
    expect(erased.events.flat()).not.toContain("gdpr1");

    // The same deliveries again: duplicates, and nothing at all changes.
    const again = await batch(segment, key);
    expect([again.status, again.body], again.text).toEqual([200, { success: true, accepted: 0, duplicates: 1, rejected: [], ignoredTraits: 0 }]);
    const againPost = await post();
    expect([againPost.status, againPost.body], againPost.text).toEqual([202, { accepted: 0, duplicates: 1 }]);
    for (const id of ["gdpr1", "gdpr2"]) expectProblem(await req(`/api/v1/${t.accountId}/endUsers/${id}`, { headers: t.headers }), 404);
    expect(await snapshot()).toEqual(erased);
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId, resourceId: { in: ["gdpr1", "gdpr2"] } } })).toBe(0);
  });

  it("page, screen, group and alias calls keep no key: nothing is stored and a repeat is accepted again, not a duplicate", async () => {
    const t = await tenant("segn");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const body = {
      batch: [
        { type: "page", userId: "u1", name: "Home", messageId: "n-page" },
        { type: "screen", userId: "u1", name: "Home", messageId: "n-screen" },
        { type: "group", userId: "u1", groupId: "g1", messageId: "n-group" },
        { type: "alias", userId: "u1", previousId: "anon-1", messageId: "n-alias" },
      ],
    };
    for (let i = 0; i < 2; i++) {
      const r = await batch(body, key);
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({ success: true, accepted: 4, duplicates: 0, rejected: [], ignoredTraits: 0 });
    }
    const single = await req("/segment/v1/page", { method: "POST", headers: basic(key), body: { userId: "u1", messageId: "n-page" } });
    expect(single.body).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(0);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(0);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("a messageId longer than 100 characters is a per-call rejection (the batch's other calls are stored); 100 is fine", async () => {
    const t = await tenant("segl");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const long = "x".repeat(101);
    const fits = `ajs-next-${"a".repeat(91)}`;
    const track = (messageId: string) => ({ type: "track", userId: "u1", event: "Signed Up", messageId });
    const r = await batch(
      { batch: [track(long), { type: "page", userId: "u1", messageId: long }, track(fits), { type: "identify", userId: "u1", messageId: long }] },
      key,
    );
    expect(r.status, r.text).toBe(200);
    const error = ["messageId must be at most 100 characters"];
    expect(r.body).toEqual({
      success: true,
      accepted: 1,
      duplicates: 0,
      rejected: [
        { index: 0, errors: error },
        { index: 1, errors: error },
        { index: 3, errors: error },
      ],
      ignoredTraits: 0,
    });
    expect((await prisma.ingestMessage.findMany({ where: { accountId: t.accountId } })).map((m) => m.messageId)).toEqual([fits]);
    expect((await eventsOf(t.accountId)).map((e) => e.actionId)).toEqual(["Signed Up"]);
    // 1: u1, created on first sight by the stored track event (the identify was rejected)
    expect(await prisma.endUser.count({ where: { accountId: t.accountId } })).toBe(1);
    // A single call: a 400 problem naming it; POST /events ids have the same bound.
    expectProblem(await req("/segment/v1/track", { method: "POST", headers: basic(key), body: track(long) }), 400, "messageId must be at most 100 characters");
    const ev = await req(`/v1/accounts/${t.accountId}/events`, {
      method: "POST",
      headers: t.headers,
      body: [{ id: long, type: "user_action", time: Date.now(), actionId: "a" }],
    });
    expectProblem(ev, 400);
    expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(1);
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(1);
  });

  it("the prune deletes expired keys in bounded batches (DELETE … LIMIT n, until fewer are left) and keeps fresh ones", async () => {
    const { pruneMessages, MESSAGE_RETENTION_MS, PRUNE_BATCH } = await import("../src/ingest/idempotency.js");
    const t = await tenant("segb");
    const old = new Date(Date.now() - MESSAGE_RETENTION_MS - 3_600_000);
    const rows = (n: number, prefix: string, receivedAt: Date) =>
      Array.from({ length: n }, (_, i) => ({ accountId: t.accountId, messageId: `${prefix}-${i}`, receivedAt }));
    await prisma.ingestMessage.createMany({ data: [...rows(12, "old", old), ...rows(3, "new", new Date())] });
    const { result, sql } = await sqlOf(() => pruneMessages(new Date(), { batchSize: 5 }));
    expect(result).toBe(12);
    // 5 + 5 + 2: three bounded statements, the last one short
    expect(shape(sql)).toEqual(["DELETE IngestMessage", "DELETE IngestMessage", "DELETE IngestMessage"]);
    for (const q of sql) expect(q).toMatch(/\bLIMIT 5\)$/);
    expect((await prisma.ingestMessage.findMany({ where: { accountId: t.accountId }, orderBy: { messageId: "asc" } })).map((m) => m.messageId)).toEqual([
      "new-0",
      "new-1",
      "new-2",
    ]);
    // The default bound: 5,000 rows a statement.
    expect(PRUNE_BATCH).toBe(5_000);
    const dflt = await sqlOf(() => pruneMessages(new Date()));
    expect(dflt.result).toBe(0);
    expect(shape(dflt.sql)).toEqual(["DELETE IngestMessage"]);
    expect(dflt.sql[0]).toMatch(/\bLIMIT 5000\)$/);
  });

  it("two instances' schedulers offer the hourly prune: it runs once", async () => {
    const { MessagePruner } = await import("../src/ingest/prune.js");
    const { MESSAGE_RETENTION_MS } = await import("../src/ingest/idempotency.js");
    const t = await tenant("segs");
    const old = new Date(Date.now() - MESSAGE_RETENTION_MS - 3_600_000);
    await prisma.ingestMessage.createMany({
      data: [
        ...Array.from({ length: 7 }, (_, i) => ({ accountId: t.accountId, messageId: `old-${i}`, receivedAt: old })),
        { accountId: t.accountId, messageId: "fresh", receivedAt: new Date() },
      ],
    });
    // A schedule of this test's own (its hour slot is not taken by another test's).
    const opts = { key: `prune-test-${process.pid}-${Date.now()}`, offerEveryMs: 3_600_000, pollSeconds: 0.5, batchSize: 3 };
    const a = new MessagePruner(opts);
    const b = new MessagePruner(opts);
    const { result: taken, sql } = await sqlOf(async () => {
      // each start makes an offer: one is taken; more offers of the same hour slot are refused
      const first = await Promise.all([a.start(), b.start()]);
      const again = await Promise.all([a.offer(), b.offer()]);
      const deadline = Date.now() + 15_000;
      while ((await prisma.ingestMessage.count({ where: { accountId: t.accountId } })) > 1 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      // time for a second run, were there one
      await new Promise((r) => setTimeout(r, 1_500));
      return { first, again };
    });
    await Promise.all([a.stop(), b.stop()]);
    expect(taken.first.sort()).toEqual([false, true]);
    expect(taken.again).toEqual([false, false]);
    // one run: 3 + 3 + 1 rows (batches of 3), not two runs' worth of statements
    expect(shape(sql).filter((s) => s === "DELETE IngestMessage")).toHaveLength(3);
    expect((await prisma.ingestMessage.findMany({ where: { accountId: t.accountId } })).map((m) => m.messageId)).toEqual(["fresh"]);
  });

  it("ids older than the retention are pruned; younger ones stay", async () => {
    const { pruneMessages, MESSAGE_RETENTION_MS } = await import("../src/ingest/idempotency.js");
    const t = await tenant("segr");
    const post = (body: unknown) => req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body });
    await post([{ id: "old", type: "user_action", time: Date.now(), actionId: "a" }]);
    expect(MESSAGE_RETENTION_MS).toBeGreaterThanOrEqual(7 * 24 * 3600_000);
    await pruneMessages(new Date(Date.now() + 6 * 24 * 3600_000));
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(1);
    await pruneMessages(new Date(Date.now() + MESSAGE_RETENTION_MS + 60_000));
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it.runIf(dbKind() === "postgres")("two instances receiving the same batch at once store it once (PostgreSQL)", async () => {
    const t = await tenant("segpg");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const other = await startServer();
    try {
      const body = {
        batch: Array.from({ length: 200 }, (_, i) => ({
          type: "track",
          userId: `u${i % 7}`,
          event: "Flow Started",
          properties: { flowId: `f${i % 3}`, widget: "direct" },
          messageId: `race-${i}`,
          timestamp: now(),
        })),
      };
      const send = (url: string) =>
        fetch(`${url}/segment/v1/batch`, { method: "POST", headers: { ...basic(key), "content-type": "application/json" }, body: JSON.stringify(body) }).then(
          async (r) => ({ status: r.status, body: await r.json() }),
        );
      const replies = await Promise.all([send(server.url), send(other.url), send(server.url), send(other.url)]);
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(replies.reduce((n, r) => n + r.body.accepted, 0)).toBe(200);
      expect(replies.reduce((n, r) => n + r.body.duplicates, 0)).toBe(600);
      expect(await prisma.event.count({ where: { accountId: t.accountId } })).toBe(200);
    } finally {
      await other.close();
    }
  });
});
