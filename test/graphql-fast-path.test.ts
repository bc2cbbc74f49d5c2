// POST /graphql's fast path (src/graphql/fastPath.ts): a query Yoga has accepted before is answered
// without Yoga, exactly as Yoga answers it (status, every header but the per-request ones, body byte
// for byte); everything else still goes to Yoga, and nothing is charged twice or skipped. CORS on
// /graphql is the app's one policy.
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { prepareDb } from "../src/db/index.js";
import { regularMediaType } from "../src/graphql/fastPath.js";
import { seedContents } from "./factories/content.js";
import { seedTags } from "./factories/tags.js";
import { call, type Reply, sqlOf, type Tenant, tenant } from "./helpers.js";
import { shape } from "./sql.js";

let app: ReturnType<typeof createApp>;
let url: string;
let close: () => Promise<void>;
let t: Tenant;

beforeAll(async () => {
  await prepareDb();
  app = createApp(loadConfig({ ...process.env, RATE_LIMIT_PER_MINUTE: "1000", CORS_ORIGINS: "https://dash.example" }));
  const server = app.app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await app.close();
  };
  t = await tenant("fast-path");
  await seedContents(t.accountId, 12, await seedTags(t.accountId, 4), 2);
});
afterAll(() => close());

let n = 0;
/** A query text no earlier test sent (the fast path knows texts, so each test starts unknown). */
const fresh = (body: string) => `query Q${++n}($a: String!, $first: Int) { account(id: $a) { ${body} } }`;
const PAGE = "contents(first: $first) { nodes { id title creationTime tags { id name } } pageInfo { hasNextPage endCursor } }";

function post(body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return call(`${url}/graphql`, { method: "POST", headers: { ...t.headers, ...headers }, raw: JSON.stringify(body) }).then((r) => r);
}
const postJson = (body: unknown, headers: Record<string, string> = {}) => post(body, { "content-type": "application/json", ...headers });

/**
 * What a client can compare: status, headers but the per-request ones, and the body text but the
 * budget left after it (`extensions.cost.throttleStatus.currentlyAvailable`, the body's RateLimit-Remaining).
 */
function answer(r: Reply) {
  const headers = Object.fromEntries([...r.headers].filter(([k]) => !["date", "x-request-id", "ratelimit-remaining", "ratelimit-reset"].includes(k)));
  return { status: r.status, headers, text: r.text.replace(/"currentlyAvailable":\d+/, '"currentlyAvailable":"(per request)"') };
}

/** Sends the same request twice: the first is Yoga's (the text is new), the second the fast path's when it may. */
async function twice(body: unknown, headers: Record<string, string> = {}) {
  const before = app.accepted.served;
  const first = await postJson(body, headers);
  const afterFirst = app.accepted.served;
  const second = await postJson(body, headers);
  return { first, second, firstServed: afterFirst - before, secondServed: app.accepted.served - afterFirst };
}

describe("POST /graphql fast path", () => {
  it.each([
    ["no Accept", {}],
    ["application/json", { accept: "application/json" }],
    ["application/graphql-response+json", { accept: "application/graphql-response+json" }],
    ["both, response+json first", { accept: "application/graphql-response+json, application/json;q=0.9" }],
    ["*/*", { accept: "*/*" }],
    ["application/*", { accept: "application/*" }],
  ])("answers a repeated query exactly as Yoga does (%s)", async (_name, headers) => {
    const r = await twice({ query: fresh(PAGE), variables: { a: t.accountId, first: 5 } }, headers);
    expect([r.firstServed, r.secondServed]).toEqual([0, 1]);
    expect(r.first.status).toBe(200);
    expect(r.first.body.data.account.contents.nodes).toHaveLength(5);
    expect(answer(r.second)).toEqual(answer(r.first));
    // Both carry the cost block, after the data: 1 point, the budget left after each request.
    const left = Number(r.first.headers.get("ratelimit-remaining"));
    expect(r.first.body.extensions).toEqual({
      cost: { requestedQueryCost: 1, actualQueryCost: 1, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: left, restoreRate: 16.667 } },
    });
    expect(r.second.body.extensions.cost.throttleStatus.currentlyAvailable).toBe(left - 1);
    expect(
      r.second.text.endsWith(
        `"extensions":{"cost":{"requestedQueryCost":1,"actualQueryCost":1,"throttleStatus":{"maximumAvailable":1000,"currentlyAvailable":${left - 1},"restoreRate":16.667}}}}`,
      ),
    ).toBe(true);
  });

  it("answers with the same SQL as Yoga's execution", async () => {
    const body = { query: fresh(PAGE), variables: { a: t.accountId, first: 10 } };
    const viaYoga = await sqlOf(() => postJson(body));
    const before = app.accepted.served;
    const viaFastPath = await sqlOf(() => postJson(body));
    expect(app.accepted.served - before).toBe(1);
    expect(viaFastPath.sql).toEqual(viaYoga.sql);
  });

  it.each([
    ["Accept: text/html (Yoga's 406)", { query: "PAGE", variables: { first: 1 } }, { accept: "text/html" }],
    ["a variable that does not coerce", { query: "PAGE", variables: { first: "ten" } }, {}],
    // (0, not 10,001: a page of 10,001 is priced over this budget before it runs, see test/graphql-cost.test.ts)
    ["a page size out of range (an error in execution)", { query: "PAGE", variables: { first: 0 } }, {}],
    ["an account the caller has no access to", { query: "PAGE", variables: { a: "someone-else", first: 1 } }, {}],
    ["an unknown operation name", { query: "PAGE", operationName: "Nope", variables: { first: 1 } }, {}],
    ["unstorable text in variables", { query: "PAGE", variables: { first: 1, x: "a\u0000b" } }, {}],
  ])("leaves to Yoga: %s", async (_name, template, headers) => {
    const query = fresh(PAGE);
    // The text is accepted first by a plain successful run, so only the difference under test remains.
    expect((await postJson({ query, variables: { a: t.accountId, first: 1 } })).status).toBe(200);
    const body = { ...template, query, variables: { a: t.accountId, ...template.variables } };
    const r = await twice(body, headers);
    expect([r.firstServed, r.secondServed]).toEqual([0, 0]);
    expect(answer(r.second)).toEqual(answer(r.first));
    expect(r.first.status === 200 && !r.first.body.errors).toBe(false);
  });

  it("leaves to Yoga parameters it reads that the fast path does not (extensions)", async () => {
    const query = fresh(PAGE);
    expect((await postJson({ query, variables: { a: t.accountId, first: 1 } })).status).toBe(200);
    const r = await twice({ query, variables: { a: t.accountId, first: 1 }, extensions: { client: "x" } });
    expect([r.first.status, r.firstServed, r.secondServed]).toEqual([200, 0, 0]);
    expect(answer(r.second)).toEqual(answer(r.first));
  });

  it("leaves to Yoga credentials that do not authenticate, and mutations", async () => {
    const query = fresh(PAGE);
    expect((await postJson({ query, variables: { a: t.accountId, first: 1 } })).status).toBe(200);
    const r = await twice({ query, variables: { a: t.accountId, first: 1 } }, { "x-service-integration-key": "gg_wrong" });
    expect([r.first.status, r.firstServed, r.secondServed]).toEqual([401, 0, 0]);
    expect(answer(r.second)).toEqual(answer(r.first));
    const mutation = `mutation M${++n}($a: String!) { upsertTags(accountId: $a, input: [{ name: "fast-path-${n}" }]) { results { statusCode } } }`;
    const m = await twice({ query: mutation, variables: { a: t.accountId } });
    expect([m.firstServed, m.secondServed]).toEqual([0, 0]);
    expect(m.first.body.data.upsertTags.results[0].statusCode).toBe(201);
    expect(m.second.body.data.upsertTags.results[0].statusCode).toBe(200);
  });

  it("a result with errors handed to Yoga is charged one rate-limit point, not two", async () => {
    const query = fresh(PAGE);
    const ok = await postJson({ query, variables: { a: t.accountId, first: 1 } });
    const remaining = () => Number(ok.headers.get("ratelimit-remaining"));
    expect(remaining()).toBeGreaterThan(10);
    const failed = await postJson({ query, variables: { a: t.accountId, first: 0 } });
    expect(failed.body.errors?.[0]?.message).toMatch(/10000|10,000/);
    expect(failed.body.extensions.cost).toMatchObject({ requestedQueryCost: 1, actualQueryCost: 1 });
    const next = await postJson({ query, variables: { a: t.accountId, first: 1 } });
    expect(Number(failed.headers.get("ratelimit-remaining"))).toBe(remaining() - 1);
    expect(Number(next.headers.get("ratelimit-remaining"))).toBe(remaining() - 2);
  });

  it("compiles a text on its second use, not its first", async () => {
    const body = { query: fresh(PAGE), variables: { a: t.accountId, first: 2 } };
    const compilations = () => app.compiled.compilations;
    const before = compilations();
    const first = await postJson(body);
    expect([first.status, compilations() - before, app.accepted.get(body.query) !== undefined]).toEqual([200, 0, true]);
    const second = await postJson(body);
    expect([second.status, compilations() - before]).toEqual([200, 1]);
    const third = await postJson(body);
    expect([third.status, compilations() - before]).toEqual([200, 1]);
    expect(answer(second)).toEqual(answer(first));
    expect(answer(third)).toEqual(answer(first));
  });

  it.each([
    ["a page size out of range", { first: 0 }, {}],
    ["an account the caller has no access to", { b: "someone-else" }, {}],
    ["a variable that does not coerce (a 400)", { first: "ten" }, {}],
    ["a variable that does not coerce, application/graphql-response+json", { first: "ten" }, { accept: "application/graphql-response+json" }],
  ])("a result with errors runs its resolvers once and is answered as Yoga answers it: %s", async (_name, variables, headers) => {
    // A page read beside the failing part, so the resolvers that did run leave SQL to count.
    const query = `query Q${++n}($a: String!, $b: String!, $first: Int) { ok: account(id: $a) { contents(first: 2) { nodes { id title } } } other: account(id: $b) { ${PAGE} } }`;
    const body = { query, variables: { a: t.accountId, b: t.accountId, first: 1, ...variables } };
    // The first use is Yoga's alone (graphql-js); the next ones run on the fast path and Yoga answers their result.
    const viaYoga = await sqlOf(() => postJson(body, headers));
    const [served, handedOver] = [app.accepted.served, app.accepted.handedOver];
    const handed = await sqlOf(() => postJson(body, headers));
    expect([app.accepted.served - served, app.accepted.handedOver - handedOver]).toEqual([0, 1]);
    expect(viaYoga.result.body.errors?.length).toBeGreaterThan(0);
    expect(answer(handed.result)).toEqual(answer(viaYoga.result));
    expect(shape(handed.sql)).toEqual(shape(viaYoga.sql));
  });

  it("negotiates the media type as Yoga does", () => {
    expect(regularMediaType(undefined)).toBe("application/json");
    expect(regularMediaType("application/graphql-response+json")).toBe("application/graphql-response+json");
    expect(regularMediaType("application/graphql-response+json, application/json")).toBe("application/graphql-response+json");
    expect(regularMediaType("application/json, application/graphql-response+json")).toBe("application/json");
    expect(regularMediaType("application/json; charset=latin1")).toBeNull();
    expect(regularMediaType("text/event-stream")).toBeNull();
  });
});

describe("CORS on /graphql", () => {
  it("is the app's policy (CORS_ORIGINS), not Yoga's echo of any origin", async () => {
    const body = { query: fresh(PAGE), variables: { a: t.accountId, first: 1 } };
    for (const attempt of [1, 2]) {
      const allowed = await postJson(body, { origin: "https://dash.example" });
      expect([attempt, allowed.status, allowed.headers.get("access-control-allow-origin")]).toEqual([attempt, 200, "https://dash.example"]);
      const other = await postJson(body, { origin: "https://evil.example" });
      expect([attempt, other.headers.get("access-control-allow-origin"), other.headers.get("access-control-allow-credentials")]).toEqual([attempt, null, null]);
    }
  });
});
