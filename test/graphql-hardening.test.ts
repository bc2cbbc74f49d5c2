// GraphQL hardening: armor limits answer 400 with errors that name the limit; REST documents are
// trusted (parsed and validated once at start-up, exempt from the limits); GraphiQL, introspection
// and field suggestions follow configuration.
import type { AddressInfo } from "node:net";
import { getIntrospectionQuery } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { prepareDb } from "../src/db/index.js";
import { LIMIT_CODE } from "../src/graphql/armor.js";
import { trustDocuments } from "../src/graphql/trustedDocuments.js";
import { routes } from "../src/rest/routes.js";
import { schema } from "../src/schema/index.js";
import { call, costExtensions, type Tenant, tenant } from "./helpers.js";

interface Running {
  url: string;
  app: ReturnType<typeof createApp>;
  close(): Promise<void>;
}

async function serve(env: Record<string, string>): Promise<Running> {
  await prepareDb();
  const app = createApp(loadConfig({ ...process.env, ...env }));
  const server = app.app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    app,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await app.close();
    },
  };
}

const LIMITS = { GRAPHQL_MAX_DEPTH: "4", GRAPHQL_MAX_ALIASES: "3", GRAPHQL_MAX_DIRECTIVES: "3", GRAPHQL_MAX_TOKENS: "1000", GRAPHQL_MAX_COST: "30" };

let s: Running;
let t: Tenant;
beforeAll(async () => {
  s = await serve(LIMITS);
  t = await tenant("armor");
});
afterAll(() => s.close());

/** POST /graphql as most clients send it (Accept: application/json). */
const gql = (query: string, headers: Record<string, string> = {}, url = s.url) =>
  call(`${url}/graphql`, { method: "POST", headers: { accept: "application/json", ...headers }, body: { query } });

describe("graphql-armor limits", () => {
  it.each([
    ["maxDepth", `{ account(id: "x") { contents { edges { node { tags { name } } } } } }`, /depth/i],
    ["maxAliases", `{ a: viewer { email } b: viewer { email } c: viewer { email } d: viewer { email } }`, /aliases/i],
    ["maxDirectives", `{ viewer @skip(if: false) { email @skip(if: false) scope @include(if: true) accountIds @include(if: true) } }`, /directives/i],
    ["maxTokens", `{ ${"__typename ".repeat(1100)} }`, /token/i],
    ["maxCost", `{ account(id: "x") { contents { nodes { id title type url source description descriptionMd state stage parentId } } } }`, /cost/i],
  ])("%s: rejected with 400 and an error naming the limit", async (limit, query, words) => {
    for (const accept of ["application/json", "application/graphql-response+json"]) {
      const r = await gql(query, { ...t.headers, accept });
      expect(r.status, `${accept}: ${r.text}`).toBe(400);
      expect(r.body.data).toBeUndefined();
      for (const e of r.body.errors) expect(e.extensions.code).toBe(LIMIT_CODE);
      const error = r.body.errors.find((e: any) => e.extensions.limit === limit);
      expect(error?.extensions, JSON.stringify(r.body.errors)).toEqual({ code: LIMIT_CODE, limit });
      expect(error.message).toMatch(words);
      expect(error.message).toMatch(/\d/); // the limit and what was found
    }
  });

  it("lets ordinary documents and GraphiQL's introspection query through", async () => {
    const ok = await gql(`{ viewer { email } }`, t.headers);
    expect(ok.status).toBe(200);
    expect(ok.body.data.viewer.email).toBe(t.email);
    const intro = await gql(getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true }), t.headers);
    expect(intro.status).toBe(200);
    expect(intro.body.data.__schema.queryType.name).toBe("Query");
  });

  it("exempts the REST routes' own documents, which are deeper than this server's depth limit", async () => {
    const r = await call(`${s.url}/api/v1/${t.accountId}/content?limit=5`, { headers: t.headers });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: [], cursor: null });
  });
});

describe("trusted REST documents", () => {
  it("are parsed once, at start-up, and executed in process by every request (no parse, no validation)", async () => {
    const trusted = s.app.trusted;
    expect(trusted.parsedAtStartup).toBe(new Set(routes.map((r) => r.document)).size);
    const listContent = routes.find((r) => r.name === "listContentA")!;
    const node = trusted.documents.get(listContent.document);
    expect(node).toBeDefined();
    const before = { hits: trusted.hits, executions: trusted.trustedExecutions };
    for (let i = 0; i < 3; i++) {
      const r = await call(`${s.url}/api/v1/${t.accountId}/content`, { headers: t.headers });
      expect(r.status).toBe(200);
    }
    expect(trusted.hits - before.hits).toBe(0); // REST never parses: it executes the node
    expect(trusted.trustedExecutions - before.executions).toBe(3);
    expect(trusted.documents.get(listContent.document)).toBe(node); // the same node, not a re-parse
    // A client sending a route's document text to /graphql gets the pre-parsed node too.
    const viaGraphql = await call(`${s.url}/graphql`, {
      method: "POST",
      headers: { accept: "application/json", ...t.headers },
      body: { query: listContent.document, variables: { accountId: t.accountId, first: 1 } },
    });
    expect([viaGraphql.status, viaGraphql.body.errors]).toEqual([200, undefined]);
    expect(trusted.hits - before.hits).toBe(1);
    // A client's own document is parsed as usual and does not count.
    await gql(`{ __typename }`);
    expect(trusted.hits - before.hits).toBe(1);
  });

  it("a route document that does not validate stops start-up, naming the route", () => {
    expect(() => trustDocuments([{ name: "brokenRoute", document: "query Broken { nope }" }], schema)).toThrow(/brokenRoute.*nope/);
    expect(() => trustDocuments([{ name: "unparsable", document: "query {" }], schema)).toThrow(/unparsable/);
  });
});

describe("credentials before anything else", () => {
  it.each([
    ["introspection", getIntrospectionQuery()],
    ["{ __typename }", "{ __typename }"],
    ["a document that does not parse", "{ nope"],
    ["a document that does not validate", "{ noSuchField }"],
    ["a query past the depth limit", `{ account(id: "x") { contents { edges { node { tags { name } } } } } }`],
  ])("POST /graphql with %s and no key → 401, nothing parsed or executed", async (_name, query) => {
    const none = await gql(query);
    expect(none.status).toBe(401);
    expect(none.body.errors).toEqual([{ message: expect.stringMatching(/x-service-integration-key/), extensions: { code: "UNAUTHENTICATED" } }]);
    expect(none.body.data).toBeUndefined();
    const wrong = await gql(query, { "x-service-integration-key": "ggk_wrong_key_for_sure", "x-service-user": t.email });
    expect([wrong.status, wrong.body.errors[0].extensions.code]).toEqual([401, "UNAUTHENTICATED"]);
  });

  it("GET /graphql?query= needs the key too; the GraphiQL page itself is public", async () => {
    const anon = await call(`${s.url}/graphql?query=${encodeURIComponent("{ __typename }")}`, { headers: { accept: "application/json" } });
    expect(anon.status).toBe(401);
    const known = await call(`${s.url}/graphql?query=${encodeURIComponent("{ __typename }")}`, { headers: { accept: "application/json", ...t.headers } });
    expect([known.status, known.body]).toEqual([200, { data: { __typename: "Query" }, extensions: costExtensions(1, null) }]);
    const page = await fetch(`${s.url}/graphql`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
  });
});

describe("switches", () => {
  it("GraphiQL is served from the app itself (no CDN) and can be switched off", async () => {
    const page = await fetch(`${s.url}/graphql`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("guidegate GraphiQL");
    expect(html).not.toMatch(/<script[^>]+src=["']?https?:/);
    expect(html).not.toMatch(/<link[^>]+href=["']?https?:\/\/unpkg/);

    const off = await serve({ GRAPHIQL: "false" });
    try {
      const r = await fetch(`${off.url}/graphql`, { headers: { accept: "text/html" } });
      expect(await r.text()).not.toContain("guidegate GraphiQL");
    } finally {
      await off.close();
    }
  });

  it("introspection off also hides field suggestions", async () => {
    const on = await gql(`{ viewr { email } }`, t.headers);
    expect(on.body.errors[0].message).toMatch(/Did you mean/);
    const off = await serve({ INTROSPECTION: "false" });
    try {
      const intro = await gql(`{ __schema { types { name } } }`, t.headers, off.url);
      expect(intro.body.data?.__schema).toBeUndefined();
      expect(intro.body.errors[0].message).toMatch(/introspection/i);
      const typo = await gql(`{ viewr { email } }`, t.headers, off.url);
      expect(typo.body.errors[0].message).not.toMatch(/Did you mean/);
    } finally {
      await off.close();
    }
  });
});
