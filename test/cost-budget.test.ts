// Cost-based budgets (issue 33 item 1): the per-account budget is points a minute, REST and GraphQL
// together, each request charged what its operation costs (src/graphql/cost.ts: units ÷ 100,
// rounded, at least 1) before it runs. Over the remaining points: 429 and nothing runs (the points
// stay for cheaper requests); over RATE_LIMIT_MAX_REQUEST_POINTS: 400 naming the cost, uncharged.
// GraphQL answers carry Shopify's `extensions.cost`; REST answers the RateLimit-* headers in points.
// Explore questions cost what they scan. Two instances sharing Redis share the points.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clock } from "../src/clock.js";
import { REPORTS } from "../src/domains/reports/registry.js";
import { JSON_BODY_LIMIT_BYTES } from "../src/rest/router.js";
import { seedContents } from "./factories/content.js";
import { seedTags } from "./factories/tags.js";
import { call, prisma, type Reply, redisAnswers, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";

const REDIS_URL = "redis://127.0.0.1:6379";
const redisUp = await redisAnswers(REDIS_URL);

/** A tenant whose account id is unique across runs (Redis budgets outlive a run by a minute). */
const fresh = (label: string) => tenant(`cb${label}${randomBytes(3).toString("hex")}`);

/** `n` contents with their tags: 1 + 1 + n × (1 + 10 tags assumed) units; 500 → 5,502 units → 55 points. */
const PAGE = "query($a: String!, $n: Int) { account(id: $a) { contents(first: $n) { nodes { id tags { id } } } } }";
const CHEAP = "query($a: String!) { account(id: $a) { id } }";
const gql = (s: Server, t: Tenant, query: string, variables: Record<string, unknown> = {}) =>
  call(`${s.url}/graphql`, { method: "POST", headers: t.headers, body: { query, variables: { a: t.accountId, ...variables } } });
const list = (s: Server, t: Tenant, limit: number) => call(`${s.url}/api/v1/${t.accountId}/content?limit=${limit}`, { headers: t.headers });
const remaining = (r: Reply) => Number(r.headers.get("ratelimit-remaining"));

const throttle = (limit: number, left: number) => ({ maximumAvailable: limit, currentlyAvailable: left, restoreRate: Math.round((limit / 60) * 1000) / 1000 });

describe("one instance, RATE_LIMIT_PER_MINUTE=100, RATE_LIMIT_MAX_REQUEST_POINTS=80", () => {
  let server: Server;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PER_MINUTE: "100", RATE_LIMIT_MAX_REQUEST_POINTS: "80" });
  });
  afterAll(() => server.close());

  it("GraphQL: charged what the query costs, said in extensions.cost and the RateLimit-* headers", async () => {
    const t = await fresh("gq");
    const cheap = await gql(server, t, CHEAP);
    expect([cheap.status, cheap.body]).toEqual([
      200,
      { data: { account: { id: t.accountId } }, extensions: { cost: { requestedQueryCost: 1, actualQueryCost: 1, throttleStatus: throttle(100, 99) } } },
    ]);
    const page = await gql(server, t, PAGE, { n: 500 });
    expect(page.status).toBe(200);
    expect(page.body.extensions).toEqual({ cost: { requestedQueryCost: 55, actualQueryCost: 55, throttleStatus: throttle(100, 44) } });
    expect([page.headers.get("ratelimit-limit"), remaining(page)]).toEqual(["100", 44]);
    // The variable sizes the list: 5 contents cost 1 point.
    expect((await gql(server, t, PAGE, { n: 5 })).body.extensions.cost).toEqual({
      requestedQueryCost: 1,
      actualQueryCost: 1,
      throttleStatus: throttle(100, 43),
    });
  });

  it("GraphQL: a connection asked without first is charged the page it serves (the audit log's 100 entries, not 10)", async () => {
    const t = await fresh("gdef");
    // Two default pages of the audit log: 2 × (1 + 100) units → 2 points (priced as 10 entries each, 22 units: 1).
    const r = await gql(server, t, "query($a: String!) { one: auditLogs(accountId: $a) { nodes { id } } two: auditLogs(accountId: $a) { nodes { id } } }");
    expect([r.status, r.body.extensions.cost]).toEqual([200, { requestedQueryCost: 2, actualQueryCost: 2, throttleStatus: throttle(100, 98) }]);
  });

  it("GraphQL over the remaining points: a 429 before anything runs, with the cost; the points stay for cheaper requests", async () => {
    const t = await fresh("g429");
    await seedContents(t.accountId, 3, await seedTags(t.accountId, 2), 1);
    expect(remaining(await gql(server, t, PAGE, { n: 500 }))).toBe(45);
    const { result: refused, sql } = await sqlOf(() => gql(server, t, PAGE, { n: 500 }));
    expect(refused.status).toBe(429);
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors).toHaveLength(1);
    expect(refused.body.errors[0].message).toMatch(
      /^Rate limit of 100 points a minute exceeded for account '.*': this request costs 55 points and 45 are left; retry after \d+ s\.$/,
    );
    expect(refused.body.errors[0].extensions).toMatchObject({
      code: "RATE_LIMITED",
      cost: { requestedQueryCost: 55, actualQueryCost: null, throttleStatus: throttle(100, 45) },
    });
    expect(refused.body.extensions).toEqual({ cost: { requestedQueryCost: 55, actualQueryCost: null, throttleStatus: throttle(100, 45) } });
    expect([remaining(refused), Number(refused.headers.get("retry-after"))]).toEqual([45, expect.any(Number)]);
    // Nothing of the operation ran: no content was read.
    expect(sql.filter((q) => /"Content"/.test(q))).toEqual([]);
    // The refused points were given back: a cheaper request still runs.
    const cheaper = await gql(server, t, PAGE, { n: 3 });
    expect([cheaper.status, cheaper.body.data.account.contents.nodes.length, remaining(cheaper)]).toEqual([200, 3, 44]);
  });

  it("a refused mutation changes nothing", async () => {
    const t = await fresh("gmut");
    expect(remaining(await gql(server, t, PAGE, { n: 700 }))).toBe(23); // 7,702 units → 77 points
    expect(remaining(await gql(server, t, PAGE, { n: 200 }))).toBe(1); // 2,202 units → 22 points
    expect(remaining(await gql(server, t, CHEAP))).toBe(0);
    const r = await gql(server, t, `mutation($a: String!) { upsertTags(accountId: $a, input: [{ name: "never" }]) { results { statusCode } } }`);
    expect([r.status, r.body.errors?.[0]?.extensions?.code, r.body.data]).toEqual([429, "RATE_LIMITED", undefined]);
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("GraphQL over RATE_LIMIT_MAX_REQUEST_POINTS: a 400 naming the cost, charged nothing", async () => {
    const t = await fresh("gmax");
    const r = await gql(server, t, PAGE, { n: 900 });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].message).toMatch(
      /^This request costs 99 points \(9902 units: objects and rows it may read\), more than the 80 one request may cost \(RATE_LIMIT_MAX_REQUEST_POINTS\)/,
    );
    expect(r.body.errors[0].extensions).toMatchObject({
      code: "MAX_COST_EXCEEDED",
      cost: { requestedQueryCost: 99, actualQueryCost: null, throttleStatus: null },
    });
    expect(r.body.extensions.cost).toEqual({ requestedQueryCost: 99, actualQueryCost: null, throttleStatus: null });
    expect(remaining(await gql(server, t, CHEAP))).toBe(99);
  });

  it("GraphQL over the maximum about an account the key cannot use: its 403 first, as REST, not the cost's 400", async () => {
    const t = await fresh("gacc");
    const other = await fresh("gaccother");
    const r = await gql(server, t, PAGE, { a: other.accountId, n: 900 });
    expect([r.status, r.body.data, r.body.errors]).toEqual([
      403,
      undefined,
      [
        expect.objectContaining({
          message: `The API key has no access to account '${other.accountId}'.`,
          extensions: expect.objectContaining({ code: "FORBIDDEN" }),
        }),
      ],
    ]);
    // REST answers the same: access before the cost.
    const rest = await call(`${server.url}/api/v1/${other.accountId}/content?limit=900`, { headers: t.headers });
    expect([rest.status, rest.headers.get("content-type")]).toEqual([403, "application/problem+json; charset=utf-8"]);
    // Named beside an account it may use, the foreign one still decides first; neither is charged.
    const both = await gql(
      server,
      t,
      `query($a: String!, $b: String!, $n: Int) { mine: account(id: $a) { id } theirs: account(id: $b) { contents(first: $n) { nodes { id tags { id } } } } }`,
      {
        b: other.accountId,
        n: 900,
      },
    );
    expect([both.status, both.body.errors?.[0]?.extensions?.code]).toEqual([403, "FORBIDDEN"]);
    expect(remaining(await gql(server, t, CHEAP))).toBe(99);
    expect(remaining(await gql(server, other, CHEAP))).toBe(99);
    // Without a valid key both answer 401.
    const anonymous = await call(`${server.url}/graphql`, { method: "POST", body: { query: PAGE, variables: { a: other.accountId, n: 900 } } });
    expect(anonymous.status).toBe(401);
  });

  it("a request that touches no account charges nothing: actualQueryCost 0, throttleStatus null", async () => {
    const t = await fresh("gview");
    const r = await gql(server, t, "{ viewer { email } }");
    expect(r.body).toEqual({ data: { viewer: { email: t.email } }, extensions: { cost: { requestedQueryCost: 1, actualQueryCost: 0, throttleStatus: null } } });
    expect(remaining(await gql(server, t, CHEAP))).toBe(99);
  });

  it("REST: a route costs what its operation costs, RateLimit-* in points; over the rest a 429 problem; over the maximum a 400 problem", async () => {
    const t = await fresh("rest");
    // limit=10: 10 contents with tags (113 units) → 1 point; limit=500 → 5,503 units → 55.
    expect(remaining(await list(server, t, 10))).toBe(99);
    const page = await list(server, t, 500);
    expect([page.status, page.headers.get("ratelimit-limit"), remaining(page)]).toEqual([200, "100", 44]);
    // The body is unchanged: no cost in it.
    expect(Object.keys(page.body)).toEqual(["data", "cursor"]);
    const refused = await list(server, t, 500);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(refused.body.detail).toMatch(/this request costs 55 points and 44 are left/);
    expect([remaining(refused), Number(refused.headers.get("retry-after")) >= 1]).toEqual([44, true]);
    const tooBig = await list(server, t, 1000);
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.detail).toMatch(/^This request costs 110 points .* more than the 80 one request may cost/);
    expect(tooBig.body.errors).toEqual([{ path: "(request)", message: "costs 110 points; at most 80" }]);
    expect(remaining(await list(server, t, 10))).toBe(43);
  });

  it("GraphQL: a page size no list takes is refused for what it sent and costs the minimum point, as on REST (it was priced at its size: 200 points)", async () => {
    const t = await fresh("gbig");
    const r = await gql(server, t, PAGE, { n: 20_000 });
    expect([r.status, r.body.errors?.[0]?.message, r.body.extensions.cost]).toEqual([
      400,
      "first must be between 1 and 10000",
      { requestedQueryCost: 1, actualQueryCost: 1, throttleStatus: throttle(100, 99) },
    ]);
    for (const n of [0, -5]) expect((await gql(server, t, PAGE, { n })).body.extensions.cost.requestedQueryCost).toBe(1);
    expect(remaining(await gql(server, t, CHEAP))).toBe(96);
  });

  it("GraphQL: a page its list refuses (first past the list's own maximum, last) costs the minimum point, and extensions.cost says so", async () => {
    const t = await fresh("grefused");
    // The audit log takes 500 a page at most: 5,000 was priced as 5,001 units (50 points) and refused.
    // (Sizes in variables: written in the text, armor's own cost limit refuses them first.)
    const audit = await gql(server, t, "query($a: String!, $n: Int) { auditLogs(accountId: $a, first: $n) { nodes { id } } }", { n: 5000 });
    expect([audit.status, audit.body.errors?.[0]?.message, audit.body.extensions.cost]).toEqual([
      400,
      "first must be between 1 and 500",
      { requestedQueryCost: 1, actualQueryCost: 1, throttleStatus: throttle(100, 99) },
    ]);
    // Connections page forward only: last: 5000 was priced at its size (50 points with the tags).
    const last = await gql(server, t, "query($a: String!, $n: Int) { account(id: $a) { contents(last: $n) { nodes { id tags { id } } } } }", { n: 5000 });
    expect([last.status, last.body.errors?.[0]?.message, last.body.extensions.cost]).toEqual([
      400,
      "Only forward pagination is supported: use first and after.",
      { requestedQueryCost: 1, actualQueryCost: 1, throttleStatus: throttle(100, 98) },
    ]);
    expect(remaining(await gql(server, t, CHEAP))).toBe(97);
  });

  it("every /graphql answer carries extensions.cost, those refused before anything is priced too (nothing charged)", async () => {
    const t = await fresh("gnone");
    const none = { requestedQueryCost: 0, actualQueryCost: 0, throttleStatus: null };
    const post = (body: unknown, headers: Record<string, string> = t.headers) =>
      call(`${server.url}/graphql`, { method: "POST", headers, ...(typeof body === "string" ? { raw: body } : { body }) });
    const cases: [string, Promise<Reply>, number][] = [
      ["a text that does not parse", post({ query: "{ account(" }), 200],
      ["a document that does not validate", post({ query: "{ nope }" }), 200],
      ["no query", post({}), 400],
      ["a body that is not JSON", post("xx", { ...t.headers, "content-type": "application/json" }), 400],
      ["an unknown documentId", post({ documentId: `sha256:${"0".repeat(64)}` }), 400],
      ["past a limit", post({ query: `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: account(id: "${t.accountId}") { id }`).join(" ")} }` }), 400],
      ["no credentials", post({ query: "{ __typename }" }, { "content-type": "application/json" }), 401],
    ];
    for (const [what, reply, status] of cases) {
      const r = await reply;
      expect([what, r.status, r.body.errors?.length > 0, r.body.extensions?.cost], r.text).toEqual([what, status, true, none]);
    }
    expect(remaining(await gql(server, t, CHEAP))).toBe(99);
  });

  it("/graphql asked for no media type it answers in (Accept: application/xml): a 406 with a body and the cost block, and nothing runs", async () => {
    const t = await fresh("gacc406");
    const none = { requestedQueryCost: 0, actualQueryCost: 0, throttleStatus: null };
    const xml = { "content-type": "application/json", accept: "application/xml" };
    const mutation = `mutation($a: String!) { upsertTags(accountId: $a, input: [{ name: "never" }]) { results { statusCode } } }`;
    const r = await call(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...t.headers, ...xml },
      body: { query: mutation, variables: { a: t.accountId } },
    });
    expect([r.status, r.headers.get("content-type"), r.body]).toEqual([
      406,
      "application/json; charset=utf-8",
      {
        errors: [
          {
            message:
              "GraphQL answers in application/graphql-response+json or application/json (or text/event-stream, multipart/mixed); the Accept header (application/xml) takes none of them. Nothing was run.",
            extensions: { code: "NOT_ACCEPTABLE" },
          },
        ],
        extensions: { cost: none },
      },
    ]);
    // Refused before it ran: no tag, nothing charged.
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(0);
    expect(remaining(await gql(server, t, CHEAP))).toBe(99);
    // GET alike; without a key the 401 comes first, with a body too.
    const get = await call(`${server.url}/graphql?query=${encodeURIComponent("{ __typename }")}`, { headers: { ...t.headers, accept: "application/xml" } });
    expect([get.status, get.body.errors[0].extensions.code, get.body.extensions]).toEqual([406, "NOT_ACCEPTABLE", { cost: none }]);
    const anonymous = await call(`${server.url}/graphql`, { method: "POST", headers: xml, body: { query: "{ __typename }" } });
    expect([anonymous.status, anonymous.body.errors[0].extensions.code]).toEqual([401, "UNAUTHENTICATED"]);
    // A wildcard or a JSON type among others is answered as usual.
    const mixed = await call(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...t.headers, "content-type": "application/json", accept: "application/xml, application/*;q=0.5" },
      body: { query: "{ __typename }" },
    });
    expect([mixed.status, mixed.body.data]).toEqual([200, { __typename: "Query" }]);
  });

  it("/graphql answers refused for their body's form carry extensions.cost too: a media type it does not read (a 415 with a body), too large, too deep, an unknown coding", async () => {
    const t = await fresh("gform");
    const none = { requestedQueryCost: 0, actualQueryCost: 0, throttleStatus: null };
    const post = (raw: string, headers: Record<string, string>) =>
      call(`${server.url}/graphql`, { method: "POST", headers: { ...t.headers, ...headers }, raw });
    const query = JSON.stringify({ query: "{ __typename }" });
    // Text/plain: Yoga has no parser for it (it answered a bare 415, no body): the error says what to send.
    const plain = await post(query, { "content-type": "text/plain" });
    expect([plain.status, plain.body]).toEqual([
      415,
      {
        errors: [{ message: "Send the body as JSON with Content-Type: application/json.", extensions: { code: "UNSUPPORTED_MEDIA_TYPE" } }],
        extensions: { cost: none },
      },
    ]);
    // Refused before Yoga, as REST bodies are (problem+json), with the same cost block.
    const json = { "content-type": "application/json" };
    const cases: [string, Promise<Reply>, number][] = [
      ["past 10 MiB", post(`{"query":"{ __typename }","variables":{"pad":"${"x".repeat(JSON_BODY_LIMIT_BYTES)}"}}`, json), 413],
      ["nested too deep", post(`{"query":"{ __typename }","variables":{"a":${"[".repeat(100)}${"]".repeat(100)}}}`, json), 400],
      ["an unknown coding", post(query, { ...json, "content-encoding": "compress" }), 415],
      ["a coding that does not decode", post(query, { ...json, "content-encoding": "gzip" }), 400],
    ];
    for (const [what, reply, status] of cases) {
      const r = await reply;
      expect([what, r.status, r.headers.get("content-type"), r.body.status, r.body.extensions], r.text.slice(0, 300)).toEqual([
        what,
        status,
        "application/problem+json; charset=utf-8",
        status,
        { cost: none },
      ]);
    }
    expect(remaining(await gql(server, t, CHEAP))).toBe(99);
  });

  it("an event-export page is charged by the events it may hold, REST and GraphQL alike (it cost 1 point for 10,000)", async () => {
    const t = await fresh("exp");
    const rest = await call(`${server.url}/v1/accounts/${t.accountId}/events/export?limit=5000`, { headers: t.headers });
    expect([rest.status, remaining(rest)]).toEqual([200, 50]);
    const q = await gql(server, t, "query($a: String!) { account(id: $a) { eventExport(limit: 2000) { events cursor } } }");
    expect([q.status, q.body.extensions.cost]).toEqual([200, { requestedQueryCost: 20, actualQueryCost: 20, throttleStatus: throttle(100, 30) }]);
    // The default page: 1,000 events, 10 points.
    const page = await call(`${server.url}/v1/accounts/${t.accountId}/events/export`, { headers: t.headers });
    expect([page.status, remaining(page)]).toEqual([200, 20]);
  });

  it("REST input refused before it runs costs the minimum point, and a 429 comes before it as always", async () => {
    const t = await fresh("bad");
    const bad = await list(server, t, 0);
    expect([bad.status, remaining(bad)]).toEqual([400, 99]);
  });

  it("Explore questions cost what they scan: days of events × (1 + dimensions) × 2 with user values", async () => {
    const t = await fresh("ex");
    const ask = (body: unknown) => call(`${server.url}/v1/accounts/${t.accountId}/analytics/query`, { method: "POST", headers: t.headers, body });
    // 30 days, no dimension: 300 units → 3 points.
    const month = await ask({ metrics: ["events"], startDate: "2026-01-01", endDate: "2026-01-30" });
    expect([month.status, remaining(month)]).toEqual([200, 97]);
    // The same window by two event dimensions: 900 units → 9 points.
    const byTwo = await ask({ metrics: ["events"], dimensions: ["event:type", "event:flowId"], startDate: "2026-01-01", endDate: "2026-01-30" });
    expect([byTwo.status, remaining(byTwo)]).toEqual([200, 88]);
    // GraphQL says the same price.
    const q = await gql(
      server,
      t,
      `query($a: String!) { account(id: $a) { analytics { query(input: { metrics: ["events"], startDate: "2026-01-01", endDate: "2026-01-30" }) { totals } } } }`,
    );
    expect(q.body.extensions.cost).toEqual({ requestedQueryCost: 3, actualQueryCost: 3, throttleStatus: throttle(100, 85) });
  });

  it("retention costs what it reads: its return events from startDate up to now, not the window alone", async () => {
    const t = await fresh("ret");
    const realNow = clock.now;
    clock.now = () => new Date("2026-03-31T12:00:00Z");
    try {
      // A week in January, asked at the end of March: the return events of 89.5 days are read → 90 days, 900 units, 9 points (the week alone: 1).
      const body = {
        startEvent: { filters: [["is", "event:type", ["flow_step"]]] },
        period: "day",
        periods: 3,
        startDate: "2026-01-01",
        endDate: "2026-01-07",
      };
      const rest = await call(`${server.url}/v1/accounts/${t.accountId}/analytics/retention`, { method: "POST", headers: t.headers, body });
      expect([rest.status, remaining(rest)]).toEqual([200, 91]);
      const q = await gql(
        server,
        t,
        `query($a: String!) { account(id: $a) { analytics { retention(input: { startEvent: { filters: [{ op: is, dimension: "event:type", values: ["flow_step"] }] }, period: day, periods: 3, startDate: "2026-01-01", endDate: "2026-01-07" }) { period } } } }`,
      );
      expect([q.status, q.body.extensions.cost]).toEqual([200, { requestedQueryCost: 9, actualQueryCost: 9, throttleStatus: throttle(100, 82) }]);
      // A week ending now reads that week: 7 days, 70 units, 1 point.
      clock.now = () => new Date("2026-01-08T00:00:00Z");
      const recent = await call(`${server.url}/v1/accounts/${t.accountId}/analytics/retention`, { method: "POST", headers: t.headers, body });
      expect([recent.status, remaining(recent)]).toEqual([200, 81]);
    } finally {
      clock.now = realNow;
    }
  });
});

describe("reports { … } over GraphQL, RATE_LIMIT_PER_MINUTE=100, RATE_LIMIT_MAX_REQUEST_POINTS=80", () => {
  let server: Server;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PER_MINUTE: "100", RATE_LIMIT_MAX_REQUEST_POINTS: "80" });
  });
  afterAll(() => server.close());

  it("each report selected is charged as its REST route charges one (it runs its own query): 3 of 30 days cost 180 units, 23 of a year 168 points", async () => {
    const t = await fresh("rep");
    const three = await gql(
      server,
      t,
      `query($a: String!) { reports(accountId: $a, startDate: "2026-01-01", endDate: "2026-01-30") { flowViews { flowId } summary { selfHelpQueriesServed } beacons { contentId } } }`,
    );
    expect([three.status, three.body.data.reports.flowViews, three.body.extensions.cost]).toEqual([
      200,
      [],
      { requestedQueryCost: 2, actualQueryCost: 2, throttleStatus: throttle(100, 98) },
    ]);
    expect(remaining(three)).toBe(98);
    // The same three reports over REST: 60 units each, 1 point each.
    for (const name of ["flowViews", "summary", "beacons"]) {
      const r = await call(`${server.url}/v1/accounts/${t.accountId}/reports/${name}?startDate=2026-01-01&endDate=2026-01-30`, { headers: t.headers });
      expect(r.status, r.text).toBe(200);
    }
    // 23 reports of a year: 23 × 730 units, 168 points (23 REST calls: 161), past the 80 one request may cost.
    const fields = REPORTS.filter((r) => !r.flow)
      .slice(0, 23)
      .map((r) => (r.perUser ? `${r.name} { nodes { ${r.columns[0]!.name} } }` : `${r.name} { ${r.columns[0]!.name} }`))
      .join(" ");
    const year = await gql(server, t, `query($a: String!) { reports(accountId: $a, startDate: "2025-01-01", endDate: "2025-12-31") { ${fields} } }`);
    expect(year.status).toBe(400);
    expect(year.body.data).toBeUndefined();
    expect(year.body.errors[0].message).toMatch(
      /^This request costs 168 points \(16790 units: objects and rows it may read\), more than the 80 one request may cost/,
    );
    expect(year.body.extensions.cost).toEqual({ requestedQueryCost: 168, actualQueryCost: null, throttleStatus: null });
    expect(remaining(await gql(server, t, CHEAP))).toBe(94);
  });
});

describe.skipIf(!redisUp)(`two instances sharing Redis (${REDIS_URL}), RATE_LIMIT_PER_MINUTE=100`, () => {
  let a: Server;
  let b: Server;
  beforeAll(async () => {
    a = await startServer({ RATE_LIMIT_PER_MINUTE: "100", REDIS_URL });
    b = await startServer({ RATE_LIMIT_PER_MINUTE: "100", REDIS_URL });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it("costly requests on either spend one budget of points; the 429 is on both", async () => {
    const t = await fresh("redis");
    expect((await gql(a, t, PAGE, { n: 500 })).body.extensions.cost.throttleStatus).toEqual(throttle(100, 45));
    expect(remaining(await list(b, t, 300))).toBe(12); // 3,303 units → 33 points
    const onA = await gql(a, t, PAGE, { n: 200 }); // 22 points
    expect([onA.status, onA.body.extensions.cost.throttleStatus]).toEqual([429, throttle(100, 12)]);
    expect((await list(b, t, 200)).status).toBe(429);
    // 12 points are still there, on both.
    expect(remaining(await list(a, t, 100))).toBe(1); // 1,103 units → 11 points
    expect((await gql(b, t, CHEAP)).body.extensions.cost.throttleStatus).toEqual(throttle(100, 0));
    expect((await gql(a, t, CHEAP)).status).toBe(429);
  });
});
