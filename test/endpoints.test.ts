// Saved operations as REST endpoints (issue 35): saving one (PUT 201/200, list, show, delete 204,
// audited, the document checked once), calling it (GET with query-string variables read by type,
// POST with a JSON body, ETag/304, Cache-Control), every bad input a 400 naming what is wrong,
// and tenant isolation. The same over GraphQL. 304s go through node:http (fetch adds no-cache).
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, createUser } from "../src/admin.js";
import { requestScope } from "../src/audit/requestScope.js";
import { loadConfig } from "../src/config.js";
import { withTransaction } from "../src/db/index.js";
import { configureDocumentLimits, limitsOf } from "../src/graphql/armor.js";
import { call, expectJson, expectProblem, gql, httpGet, pathB, prisma, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  server = await startServer();
  a = await tenant("endp");
  b = await tenant("endp");
  for (const t of [a, b]) {
    const r = await call(`${server.url}${pathB(t)}/tags`, {
      method: "PUT",
      headers: t.headers,
      body: ["alpha", "beta", "gamma"].map((name) => ({ name: `${name}-${t.accountId.slice(-2)}`, description: `tag ${name}` })),
    });
    expect(r.status, r.text).toBeLessThan(300);
  }
});
afterAll(() => server.close());

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
/** Rows written as an earlier version of the service could have (audited, as every write is). */
const asSystem = <T>(fn: Parameters<typeof withTransaction<T>>[0]) =>
  requestScope.run({ requestId: null, ip: null, actor: "system:test" }, () => withTransaction(fn));
/** A GET endpoint saved by an earlier version, past the checks a save makes today: its row written directly (its document is the caller's to store). */
const savedEarlier = (tx: Parameters<Parameters<typeof asSystem>[0]>[0], t: Tenant, id: string, name: string, text: string) => {
  const now = new Date();
  return tx.savedEndpoint.create({
    data: {
      id: `${id}_${t.accountId}`,
      accountId: t.accountId,
      name,
      method: "GET",
      documentHash: sha(text),
      maxAgeSeconds: 0,
      variables: "[]",
      createdAt: now,
      updatedAt: now,
    },
  });
};
const TAGS = "query TopTags($accountId: String!, $first: Int = 10) { account(id: $accountId) { tags(first: $first) { nodes { name type } } } }";
const CONTENTS =
  "query Contents($accountId: String!, $states: [ContentState!], $first: Int!, $withTitle: Boolean!) { account(id: $accountId) { contents(first: $first, filter: { state: $states }) { nodes { id ...T @include(if: $withTitle) state } } } } fragment T on Content { title }";
const UPSERT = "mutation AddTag($accountId: String!, $input: [TagInput!]!) { upsertTags(accountId: $accountId, input: $input) { results { statusCode } } }";

const put = (t: Tenant, name: string, body: unknown, headers = t.headers) =>
  call(`${server.url}${pathB(t)}/endpoints/${name}`, { method: "PUT", headers, body });
const run = (t: Tenant, name: string, query = "", headers = t.headers) => call(`${server.url}${pathB(t)}/run/${name}${query}`, { headers });

describe("saving an endpoint: PUT/GET/DELETE /v1/accounts/{accountId}/endpoints/{name}", () => {
  it("creates (201), replaces (200), shows, lists and deletes (204), each change audited in its transaction", async () => {
    const created = await put(a, "topTags", { document: TAGS, description: "First tags", maxAgeSeconds: 60 });
    expectJson(created, 201);
    expect(created.body).toEqual({
      name: "topTags",
      method: "GET",
      documentId: `sha256:${sha(TAGS)}`,
      description: "First tags",
      maxAgeSeconds: 60,
      variables: [{ name: "first", type: "Int", required: false }],
      createdTime: expect.any(Number),
      lastUpdateTime: created.body.createdTime,
    });
    // The text became a persisted document of the account: it also runs by documentId over /graphql.
    expect(await prisma.persistedDocument.count({ where: { accountId: a.accountId, hash: sha(TAGS) } })).toBe(1);

    const replaced = await put(a, "topTags", { documentId: `sha256:${sha(TAGS)}`, maxAgeSeconds: 0 });
    expectJson(replaced, 200);
    expect(replaced.body).toMatchObject({ name: "topTags", description: null, maxAgeSeconds: 0, createdTime: created.body.createdTime });

    const shown = await call(`${server.url}${pathB(a)}/endpoints/topTags`, { headers: a.headers });
    expect([shown.status, shown.body]).toEqual([200, replaced.body]);
    await put(a, "other-1", { document: TAGS });
    const page1 = await call(`${server.url}${pathB(a)}/endpoints?limit=1`, { headers: a.headers });
    expect(page1.body.data.map((e: { name: string }) => e.name)).toEqual(["topTags"]);
    const page2 = await call(`${server.url}${pathB(a)}/endpoints?limit=1&cursor=${page1.body.cursor}`, { headers: a.headers });
    expect([page2.body.data.map((e: { name: string }) => e.name), page2.body.cursor]).toEqual([["other-1"], null]);

    const deleted = await call(`${server.url}${pathB(a)}/endpoints/other-1`, { method: "DELETE", headers: a.headers });
    expect([deleted.status, deleted.text]).toEqual([204, ""]);
    expect(await prisma.savedEndpoint.count({ where: { accountId: a.accountId, name: "other-1" } })).toBe(0);
    expectProblem(await call(`${server.url}${pathB(a)}/endpoints/other-1`, { method: "DELETE", headers: a.headers }), 404, /No endpoint 'other-1'/);
    // A name no endpoint can have: 404 on DELETE as on GET (it was a 400 on DELETE alone).
    for (const method of ["GET", "DELETE"])
      expectProblem(await call(`${server.url}${pathB(a)}/endpoints/bad.name`, { method, headers: a.headers }), 404, /No endpoint 'bad\.name'/);
    expectProblem(await call(`${server.url}${pathB(a)}/endpoints/other-1`, { headers: a.headers }), 404);

    const audit = await prisma.auditLog.findMany({ where: { accountId: a.accountId, resourceType: "endpoint" }, orderBy: { timestamp: "asc" } });
    expect(audit.map((e) => [e.action, e.resourceId, e.userId])).toEqual([
      ["create", "topTags", a.email],
      ["update", "topTags", a.email],
      ["create", "other-1", a.email],
      ["delete", "other-1", a.email],
    ]);
  });

  it("an endpoint over the audit log answers Cache-Control: no-store whatever its max age (as B25)", async () => {
    const AUDIT = "query Audit($accountId: String!) { auditLogs(accountId: $accountId, first: 1) { nodes { id } } }";
    expectJson(await put(a, "auditTail", { document: AUDIT, maxAgeSeconds: 300 }), 201);
    const r = await run(a, "auditTail");
    expect([r.status, r.headers.get("cache-control")]).toEqual([200, "no-store"]);
  });

  it("refuses every bad save with a 400 naming the problem, and changes nothing", async () => {
    const before = await prisma.savedEndpoint.count({ where: { accountId: a.accountId } });
    const cases: [unknown, RegExp, string?][] = [
      [{ document: "query {" }, /^document does not parse: Syntax Error/],
      [{ document: "query Q($accountId: String!) { account(id: $accountId) { nope } }" }, /^document is not valid for this API: Cannot query field "nope"/],
      [{ document: `${TAGS} query Two { viewer { email } }` }, /^document must hold exactly one operation \(it holds 2\)/],
      [{ document: UPSERT }, /^method must be POST: the document is a mutation/],
      [{ document: UPSERT, method: "GET" }, /^method must be POST/],
      [{ document: "query Q($accountId: Int!) { viewer { email } }" }, /declares \$accountId as Int!/],
      [{}, /^body must give exactly one of `document`/],
      [{ document: TAGS, documentId: `sha256:${sha(TAGS)}` }, /^body must give exactly one/],
      [{ documentId: "md5:x" }, /^documentId must be `sha256:`/],
      [{ documentId: `sha256:${sha("nothing stored")}` }, /^documentId names no persisted document of this account/],
      [{ document: TAGS, method: "PATCH" }, /^method must be GET or POST/],
      [{ document: TAGS, maxAgeSeconds: -1 }, /^maxAgeSeconds must be an integer between 0 and 31536000/],
      [{ document: TAGS, maxAgeSeconds: "60" }, /^maxAgeSeconds must be an integer/],
      [{ document: 42 }, /^document must be a string/],
      [{ document: TAGS, colour: "red" }, /^colour is not a field of an endpoint/],
      [[TAGS], /^body must be a JSON object/],
    ];
    for (const [body, detail] of cases) {
      const r = await put(a, "bad", body);
      expectProblem(r, 400, detail);
      expect(r.body.errors?.[0]?.path, JSON.stringify(body)).toEqual(expect.any(String));
    }
    expectProblem(await put(a, "bad.name", { document: TAGS }), 400, /^name must be 1 to 64 of letters, digits/);
    expectProblem(await put(a, "x".repeat(65), { document: TAGS }), 400, /^name must be 1 to 64/);
    // "Letters" are ASCII's (the name is a path segment and an OpenAPI operationId as it is): the problem says so.
    for (const name of ["caf%C3%A9", "%C3%9F", "%D0%B8%D0%BC%D1%8F"])
      expectProblem(await put(a, name, { document: TAGS }), 400, /^name must be 1 to 64 of letters, digits, `-` and `_` \(ASCII: A–Z, a–z, 0–9\)$/);
    expectJson(await put(a, "x".repeat(64), { document: TAGS }), 201);
    expect((await call(`${server.url}${pathB(a)}/endpoints/${"x".repeat(64)}`, { method: "DELETE", headers: a.headers })).status).toBe(204);
    expectProblem(
      await call(`${server.url}${pathB(a)}/endpoints/bad`, { method: "PUT", headers: { ...a.headers, "content-type": "application/json" }, raw: "{" }),
      400,
    );
    expect(await prisma.savedEndpoint.count({ where: { accountId: a.accountId } })).toBe(before);
    expect(await prisma.persistedDocument.count({ where: { accountId: a.accountId, hash: sha(UPSERT) } })).toBe(0);
  });

  it("a document past the GraphQL limits (aliases, directives, tokens) is a 400 naming the limit, by text or by documentId, as POST /graphql refuses it; nothing saved", async () => {
    const aliases = `query Many($accountId: String!) { ${Array.from({ length: 40 }, (_, i) => `a${i}: account(id: $accountId) { id }`).join(" ")} }`;
    const directives = `query Marked($accountId: String!) { account(id: $accountId) { ${"id @include(if: true) ".repeat(60)}} }`;
    const tokens = `query Long($accountId: String!) { account(id: $accountId) { ${"id ".repeat(2_100)}} }`;
    const before = await prisma.savedEndpoint.count({ where: { accountId: a.accountId } });
    for (const [text, limit] of [
      [aliases, /Aliases limit of 15 exceeded, found 40/],
      [directives, /Directives limit of 50 exceeded, found 60/],
      [tokens, /Token limit of 2000 exceeded/],
    ] as const) {
      expectProblem(await put(a, "past", { document: text }), 400, new RegExp(`^document is past this API's limits on a GraphQL document: .*${limit.source}`));
      // The same text over POST /graphql: refused by the same limit.
      const direct = await call(`${server.url}/graphql`, { method: "POST", headers: a.headers, body: { query: text, variables: { accountId: a.accountId } } });
      expect([direct.status, direct.body.errors?.[0]?.message], direct.text).toEqual([400, expect.stringMatching(limit)]);
      // Registered as a persisted document by another route of the past, then named: the same 400.
      await asSystem((tx) => tx.persistedDocument.create({ data: { accountId: a.accountId, hash: sha(text), text } }));
      expectProblem(await put(a, "past", { documentId: `sha256:${sha(text)}` }), 400, limit);
    }
    expect(await prisma.savedEndpoint.count({ where: { accountId: a.accountId } })).toBe(before);
  });

  it("an endpoint saved past the limits (before they applied here) is refused when called: 400, nothing runs", async () => {
    const aliases = `query Old($accountId: String!) { ${Array.from({ length: 20 }, (_, i) => `a${i}: account(id: $accountId) { id }`).join(" ")} }`;
    await asSystem(async (tx) => {
      await tx.persistedDocument.create({ data: { accountId: a.accountId, hash: sha(aliases), text: aliases } });
      await savedEarlier(tx, a, "ep_old", "old-past", aliases);
    });
    expectProblem(
      await run(a, "old-past"),
      400,
      /^This endpoint's document is past this API's limits on a GraphQL document \(Aliases limit of 15 exceeded, found 20\.\): save it again within them\./,
    );
    // The account's OpenAPI document still answers: the others documented, this one listed apart.
    const doc = await call(`${server.url}${pathB(a)}/endpoints/openapi.json`, { headers: a.headers });
    expect(doc.status, doc.text).toBe(200);
    const paths = Object.keys(doc.body.paths);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths).not.toContain(`${pathB(a)}/run/old-past`);
    expect(doc.body["x-refused-endpoints"]).toEqual([{ name: "old-past", reason: expect.stringMatching(/past this API's limits .*Aliases limit of 15/) }]);
    expect(doc.body.info.description).toMatch(/Left out: old-past, saved before the checks/);
  });

  it("a document with a NUL in a string literal is a 400 on save, by text or documentId; one saved before that is a 400 when called, not the database's 500", async () => {
    // `\u0000` is a GraphQL escape in the text (storable); its value is what PostgreSQL's text cannot hold.
    const text = 'query Nul($accountId: String!) { account(id: $accountId) { tag(name: "a\\u0000") { id } } }';
    const before = await prisma.savedEndpoint.count({ where: { accountId: a.accountId } });
    expectProblem(await put(a, "nul", { document: text }), 400, /^document has a string literal at line 1: text must not contain NUL/);
    expect(await prisma.persistedDocument.count({ where: { accountId: a.accountId, hash: sha(text) } })).toBe(0);
    // Stored by an earlier version (the manifest refuses it now too), then named by id: the same 400.
    await asSystem((tx) => tx.persistedDocument.create({ data: { accountId: a.accountId, hash: sha(text), text } }));
    expectProblem(await put(a, "nul", { documentId: `sha256:${sha(text)}` }), 400, /^document has a string literal at line 1/);
    expect(await prisma.savedEndpoint.count({ where: { accountId: a.accountId } })).toBe(before);
    await asSystem((tx) => savedEarlier(tx, a, "ep_nul", "old-nul", text));
    expectProblem(await run(a, "old-nul"), 400, /^This endpoint's document has a string literal at line 1: text must not contain NUL/);
    const doc = await call(`${server.url}${pathB(a)}/endpoints/openapi.json`, { headers: a.headers });
    expect(doc.status, doc.text).toBe(200);
    expect(Object.keys(doc.body.paths)).not.toContain(`${pathB(a)}/run/old-nul`);
    expect(doc.body["x-refused-endpoints"]).toContainEqual({ name: "old-nul", reason: expect.stringMatching(/string literal at line 1/) });
    await asSystem((tx) => tx.savedEndpoint.delete({ where: { id: `ep_nul_${a.accountId}` } }));
  });

  it("another account's endpoints: 403 through its path, 404 under one's own; nothing of it listed", async () => {
    await put(b, "secret", { document: TAGS });
    expectProblem(await call(`${server.url}${pathB(b)}/endpoints/secret`, { headers: a.headers }), 403);
    expectProblem(await put(b, "secret", { document: TAGS }, a.headers), 403);
    expectProblem(await call(`${server.url}${pathB(b)}/endpoints/secret`, { method: "DELETE", headers: a.headers }), 403);
    expectProblem(await run(b, "secret", "", a.headers), 403);
    expectProblem(await call(`${server.url}${pathB(b)}/endpoints/openapi.json`, { headers: a.headers }), 403);
    expectProblem(await run(a, "secret"), 404, "No endpoint 'secret' in this account.");
    expectProblem(await call(`${server.url}${pathB(a)}/endpoints/secret`, { headers: a.headers }), 404);
    const list = await call(`${server.url}${pathB(a)}/endpoints?limit=100`, { headers: a.headers });
    expect(list.body.data.map((e: { name: string }) => e.name)).not.toContain("secret");
    expectProblem(await run(b, "secret", "", {}), 401);
  });

  it("a persisted-only key saves by documentId but brings no new text (403), nor registers one (403)", async () => {
    const { key } = await createKey(a.email, { persistedOnly: true });
    const headers = { "x-service-integration-key": key, "x-service-user": a.email };
    const text = "query PO($accountId: String!) { account(id: $accountId) { id } }";
    expectProblem(await put(a, "po", { document: text }, headers), 403, /persisted documents only/);
    // Nor register the text by itself and save from its id: the lock would be one request away.
    const own = await call(`${server.url}${pathB(a)}/graphql/documents`, { method: "POST", headers, body: { [sha(text)]: text } });
    expectProblem(own, 403, /cannot register them/);
    expect(await prisma.persistedDocument.count({ where: { accountId: a.accountId, hash: sha(text) } })).toBe(0);
    const pushed = await call(`${server.url}${pathB(a)}/graphql/documents`, { method: "POST", headers: a.headers, body: { [sha(text)]: text } });
    expect(pushed.status).toBe(200);
    expectJson(await put(a, "po", { documentId: sha(text) }, headers), 201);
    const r = await run(a, "po", "", headers);
    expect([r.status, r.body]).toEqual([200, { account: { id: a.accountId } }]);
  });
});

describe("calling an endpoint: GET/POST /v1/accounts/{accountId}/run/{name}", () => {
  it("answers the operation's data with an ETag, a 304 on If-None-Match and the endpoint's Cache-Control", async () => {
    expectJson(await put(a, "tags2", { document: TAGS, maxAgeSeconds: 300 }), 201);
    const r = await run(a, "tags2", "?first=2");
    expectJson(r, 200);
    expect(r.body).toEqual({ account: { tags: { nodes: [expect.objectContaining({ type: "USER" }), expect.objectContaining({ type: "USER" })] } } });
    expect(r.headers.get("cache-control")).toBe("private, max-age=300");
    expect(r.headers.get("ratelimit-remaining")).toMatch(/^\d+$/);
    const etag = r.headers.get("etag")!;
    expect(etag).toMatch(/^W\//);
    const again = await httpGet(`${server.url}${pathB(a)}/run/tags2?first=2`, { ...a.headers, "if-none-match": etag });
    expect([again.status, again.text, again.headers.etag]).toEqual([304, "", etag]);
    const other = await httpGet(`${server.url}${pathB(a)}/run/tags2?first=1`, { ...a.headers, "if-none-match": etag });
    expect(other.status).toBe(200);
    // The default applies when the variable is left out; POST takes the variables as a JSON body.
    expect((await run(a, "tags2")).body.account.tags.nodes).toHaveLength(3);
    const posted = await call(`${server.url}${pathB(a)}/run/tags2`, { method: "POST", headers: a.headers, body: { first: 1 } });
    expect([posted.status, posted.body.account.tags.nodes.length, posted.headers.get("cache-control")]).toEqual([200, 1, null]);
    const bare = await call(`${server.url}${pathB(a)}/run/tags2`, { method: "POST", headers: a.headers });
    expect([bare.status, bare.body.account.tags.nodes.length]).toEqual([200, 3]);
  });

  it("reads query-string variables by type: lists repeated or comma-separated, booleans, enums; a fragment under @include", async () => {
    const r0 = await call(`${server.url}${pathB(a)}/content`, {
      method: "POST",
      headers: a.headers,
      body: [
        { title: "One", type: "link", url: "https://help.example.com/1" },
        { title: "Two", type: "link", url: "https://help.example.com/2" },
      ],
    });
    expect(r0.status, r0.text).toBe(201);
    expectJson(await put(a, "contents", { document: CONTENTS }), 201);
    const repeated = await run(a, "contents", "?states=draft&states=ready&first=5&withTitle=true");
    expectJson(repeated, 200);
    expect(repeated.body.account.contents.nodes.map((n: { title: string }) => n.title).sort()).toEqual(["One", "Two"]);
    const comma = await run(a, "contents", "?states=draft,ready&first=5&withTitle=false");
    expect(comma.body.account.contents.nodes).toEqual([
      { id: expect.any(String), state: "draft" },
      { id: expect.any(String), state: "draft" },
    ]);
    expect((await run(a, "contents", "?states=ready&first=5&withTitle=false")).body.account.contents.nodes).toEqual([]);
  });

  it("splits one list value at its literal commas only: an encoded comma stays in its item; a JSON list value is read whole", async () => {
    const t = await tenant("commas");
    const time = Date.now() - 60_000;
    const terms = ["a, b", "a", " b", "c", '{"x":1,"y":2}'];
    const events = terms.map((searchTerm) => ({ type: "selfhelp_search", time, searchTerm, resultCount: 1 }));
    expect((await call(`${server.url}/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events })).status).toBe(202);
    // The search terms an `is` filter of these values matches (terms are trimmed and lower-cased).
    const document =
      'query Terms($accountId: String!, $terms: [JSON], $dims: [String!]) { account(id: $accountId) { analytics { query(input: {metrics: ["events"], dimensions: $dims, filters: [{op: is, dimension: "event:searchTerm", values: $terms}]}) { rows } } } }';
    expectJson(await put(t, "terms", { document }), 201);
    const matched = async (query: string) => {
      const r = await run(t, "terms", `?dims=event:searchTerm&${query}`);
      expect(r.status, r.text).toBe(200);
      return (r.body.account.analytics.query.rows as [string, number][]).map(([term]) => term).sort();
    };
    expect(await matched("terms=a,b")).toEqual(["a", "b"]);
    expect(await matched("terms=a%2C%20b")).toEqual(["a, b"]);
    expect(await matched("terms=a%2C%20b,c")).toEqual(["a, b", "c"]);
    expect(await matched("terms=a%2C%20b&terms=c")).toEqual(["a, b", "c"]);
    // JSON: one array is the list; one other JSON value (an object's commas included) is one item.
    expect(await matched(`terms=${encodeURIComponent('["a, b","c"]')}`)).toEqual(["a, b", "c"]);
    expect(await matched('terms="a,%20b"')).toEqual(["a, b"]);
    // An object is one item, refused as a term (split, `{"x":1` and `"y":2}` would be two strings).
    const object = await run(t, "terms", '?dims=event:searchTerm&terms={"x":1,"y":2}');
    expectProblem(object, 400, /values\[0\]: must be a string or null/);
    expect(object.body.errors).toEqual([{ path: "input.filters[0].values[0]", message: "must be a string or null" }]);
  });

  it("reads a Float written as a decimal number only", async () => {
    const document =
      'query Steps($accountId: String!, $min: Float!) { account(id: $accountId) { analytics { query(input: {metrics: ["events"], filters: [{op: gte, dimension: "event:step", value: $min}]}) { totals } } } }';
    expectJson(await put(a, "steps", { document }), 201);
    for (const min of ["2", "-2.5", "1e1", "0.5E-3"]) expect((await run(a, "steps", `?min=${min}`)).status, min).toBe(200);
    for (const min of ["0x10", "%205%20", "1_000", "Infinity", "", ".5", "1.", "1e400"]) {
      const r = await run(a, "steps", `?min=${min}`);
      expectProblem(r, 400, /^min must be a number/);
      expect(r.body.errors).toEqual([{ path: "min", message: "must be a number" }]);
    }
  });

  it("answers a 400 naming the variable for every bad call, and 405 for GET on a POST endpoint", async () => {
    const cases: [string, RegExp, string][] = [
      ["?first=abc&withTitle=true", /^first must be an integer/, "first"],
      ["?first=5&withTitle=yes", /^withTitle must be true or false/, "withTitle"],
      ["?first=5&withTitle=true&states=gone", /^states\[0\]: Value "gone" does not exist in "ContentState" enum/, "states[0]"],
      ["?withTitle=true", /^first is required \(Int!\)/, "first"],
      ["?first=5&withTitle=true&colour=red", /^colour is not a variable of this endpoint \(its variables: states, first, withTitle\)/, "colour"],
      [`?first=5&withTitle=true&accountId=${b.accountId}`, /^accountId is the path's account/, "accountId"],
      ["?first=5&first=6&withTitle=true", /^first must be given once/, "first"],
      // (Once written to the object's prototype, out of every check's sight: it ran.)
      ["?first=5&withTitle=true&__proto__=1", /^__proto__ is not a variable of this endpoint/, "__proto__"],
    ];
    for (const [query, detail, path] of cases) {
      const r = await run(a, "contents", query);
      expectProblem(r, 400, detail);
      if (path) expect(r.body.errors).toEqual([{ path, message: expect.any(String) }]);
    }
    const wrongType = await call(`${server.url}${pathB(a)}/run/contents`, { method: "POST", headers: a.headers, body: { first: "five", withTitle: true } });
    expectProblem(wrongType, 400, /^first: Int cannot represent non-integer value: "five"/);
    expect(wrongType.body.errors).toEqual([{ path: "first", message: 'Int cannot represent non-integer value: "five"' }]);
    expectProblem(await call(`${server.url}${pathB(a)}/run/contents`, { method: "POST", headers: a.headers, body: [1] }), 400, /^body must be a JSON object/);
    expectProblem(
      await call(`${server.url}${pathB(a)}/run/contents`, { method: "POST", headers: { ...a.headers, "content-type": "text/plain" }, raw: "first=1" }),
      415,
    );

    expectJson(await put(a, "addTag", { document: UPSERT, method: "POST" }), 201);
    const get = await run(a, "addTag", `?input=${encodeURIComponent('[{"name":"x"}]')}`);
    expectProblem(get, 405, /called with POST/);
    expect(get.headers.get("allow")).toBe("POST, OPTIONS");
    expect(await prisma.tag.count({ where: { accountId: a.accountId, name: "via-endpoint" } })).toBe(0);
    const posted = await call(`${server.url}${pathB(a)}/run/addTag`, { method: "POST", headers: a.headers, body: { input: [{ name: "via-endpoint" }] } });
    expect([posted.status, posted.body]).toEqual([200, { upsertTags: { results: [{ statusCode: 201 }] } }]);
    expect(await prisma.tag.count({ where: { accountId: a.accountId, name: "via-endpoint" } })).toBe(1);
    expectProblem(await call(`${server.url}${pathB(a)}/run/addTag`, { method: "DELETE", headers: a.headers }), 405);
  });

  it("applies a replacement at once; with the definition cache off (IDENTITY_CACHE_MS=0, as in the tests) a call costs one indexed statement besides the operation's own", async () => {
    expectJson(await put(a, "swap", { document: TAGS }), 201);
    expect(Object.keys((await run(a, "swap")).body.account)).toEqual(["tags"]);
    expectJson(await put(a, "swap", { document: "query Me($accountId: String!) { account(id: $accountId) { id } }" }), 200);
    expect((await run(a, "swap")).body).toEqual({ account: { id: a.accountId } });
    const { sql } = await sqlOf(() => run(a, "swap"));
    expect(sql.filter((s) => /SavedEndpoint/.test(s))).toHaveLength(1);
    expect(sql.filter((s) => /PersistedDocument/.test(s))).toHaveLength(0);
  });

  it("charges the account's rate budget once per call, as every route does (the operation's own account check reuses the charge)", async () => {
    const first = await run(a, "swap");
    const second = await run(a, "swap");
    expect(Number(first.headers.get("ratelimit-remaining")) - Number(second.headers.get("ratelimit-remaining"))).toBe(1);
  });

  it("a call costs what its operation costs over POST /graphql (points by the variables: first=1000 is dearer than first=1)", async () => {
    expect((await put(a, "priced", { document: TAGS })).status).toBeLessThan(300);
    const remaining = (r: { headers: Headers }) => Number(r.headers.get("ratelimit-remaining"));
    const overGraphql = await call(`${server.url}/graphql`, {
      method: "POST",
      headers: a.headers,
      body: { query: TAGS, variables: { accountId: a.accountId, first: 1000 } },
    });
    const points = overGraphql.body.extensions.cost.requestedQueryCost;
    expect(points).toBeGreaterThan(1);
    const before = await run(a, "priced", "?first=1");
    const big = await run(a, "priced", "?first=1000");
    expect(big.status, big.text).toBe(200);
    expect(remaining(before) - remaining(big)).toBe(points);
    // An unknown name runs nothing and costs the minimum.
    const unknown = await run(a, "nope");
    expect(unknown.status).toBe(404);
    expect(remaining(big) - remaining(unknown)).toBe(1);
    // So does a page size no list takes: refused before anything is read (it was priced at 200 points).
    const refused = await run(a, "priced", "?first=20000");
    expectProblem(refused, 400, /^first must be between 1 and 10000/);
    expect(remaining(unknown) - remaining(refused)).toBe(1);
  });

  it("a call is charged to the accounts its operation names, as over POST /graphql: another account's, not the path's as well", async () => {
    const email = `charge-${b.accountId}@example.com`;
    await createUser(email, [a.accountId, b.accountId]);
    const { key } = await createKey(email);
    const headers = { "x-service-integration-key": key, "x-service-user": email };
    const text = `query Other { account(id: "${b.accountId}") { id } }`;
    expectJson(await put(a, "names-b", { document: text }, headers), 201);
    const remaining = async (t: Tenant) =>
      Number(
        (await call(`${server.url}/graphql`, { method: "POST", headers, body: { query: `{ account(id: "${t.accountId}") { id } }` } })).body.extensions.cost
          .throttleStatus.currentlyAvailable,
      );
    const [a0, b0] = [await remaining(a), await remaining(b)];
    const r = await run(a, "names-b", "", headers);
    expect([r.status, r.body]).toEqual([200, { account: { id: b.accountId } }]);
    // Each probe costs its own account one point; the call cost b one and a nothing.
    expect([a0 - (await remaining(a)), b0 - (await remaining(b))]).toEqual([1, 2]);
  });
});

// The same answers on both databases; on PostgreSQL the transactions run at once, so these were
// real races there: a lost create race was a 409, and the 500-endpoint cap counted past itself.
describe("concurrent saves", () => {
  const statuses = (replies: { status: number }[]) => {
    const counts: Record<number, number> = {};
    for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
    return counts;
  };
  const entries = (t: Tenant, resourceType: string) =>
    prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType }, select: { action: true, resourceId: true } });

  it("eight PUTs of one new endpoint at once: one 201, seven 200; one row, one persisted document, each save audited once", async () => {
    for (let round = 0; round < 3; round++) {
      const t = await tenant("endpc");
      const name = `same${round}`;
      const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => put(t, name, { document: TAGS, description: `save ${i}` })));
      expect(statuses(replies), replies.map((r) => r.text).join("\n")).toEqual({ 201: 1, 200: 7 });
      for (const r of replies) expect(r.body).toMatchObject({ name, documentId: `sha256:${sha(TAGS)}`, description: expect.stringMatching(/^save \d$/) });
      const rows = await prisma.savedEndpoint.findMany({ where: { accountId: t.accountId } });
      expect(rows.map((r) => r.name)).toEqual([name]);
      expect(await prisma.persistedDocument.count({ where: { accountId: t.accountId } })).toBe(1);
      const saves = await entries(t, "endpoint");
      expect(saves.map((e) => e.action).sort()).toEqual(["create", ...Array(7).fill("update")]);
      expect(await entries(t, "persistedDocument")).toEqual([{ action: "create", resourceId: `sha256:${sha(TAGS)}` }]);
    }
  });

  it("eight PUTs under different names with one new document text at once: eight 201; the text stored once", async () => {
    for (let round = 0; round < 3; round++) {
      const t = await tenant("endpc");
      const text = `query Shared${round}($accountId: String!) { account(id: $accountId) { id } }`;
      const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => put(t, `n${i}`, { document: text })));
      expect(statuses(replies), replies.map((r) => r.text).join("\n")).toEqual({ 201: 8 });
      expect(await prisma.savedEndpoint.count({ where: { accountId: t.accountId, documentHash: sha(text) } })).toBe(8);
      expect(await prisma.persistedDocument.findMany({ where: { accountId: t.accountId }, select: { hash: true } })).toEqual([{ hash: sha(text) }]);
      expect(await entries(t, "persistedDocument")).toEqual([{ action: "create", resourceId: `sha256:${sha(text)}` }]);
      expect(await entries(t, "endpoint")).toHaveLength(8);
    }
  });

  it("the 500-endpoint cap holds under concurrent creates: from 494, 40 new names at once → 6 created, 34 refused 409; 500 rows", async () => {
    const t = await tenant("endpc");
    await asSystem(async (tx) => {
      await tx.persistedDocument.create({ data: { accountId: t.accountId, hash: sha(TAGS), text: TAGS } });
      const now = new Date();
      await tx.savedEndpoint.createMany({
        data: Array.from({ length: 494 }, (_, i) => ({
          id: `ep_cap_${t.accountId}_${i}`,
          accountId: t.accountId,
          name: `old${i}`,
          method: "GET",
          documentHash: sha(TAGS),
          variables: "[]",
          createdAt: now,
          updatedAt: now,
        })),
      });
    });
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => put(t, `new${i}`, { document: TAGS })));
    expect(statuses(replies)).toEqual({ 201: 6, 409: 34 });
    for (const r of replies.filter((x) => x.status === 409)) expectProblem(r, 409, "An account has at most 500 endpoints; delete one first.");
    expect(await prisma.savedEndpoint.count({ where: { accountId: t.accountId } })).toBe(500);
    // Replacing one is not a new one: still allowed at the cap.
    expectJson(await put(t, "old0", { document: TAGS, description: "replaced" }), 200);
    expect(await prisma.savedEndpoint.count({ where: { accountId: t.accountId } })).toBe(500);
  });
});

describe("over GraphQL", () => {
  it("putEndpoint, account.endpoint(s) and deleteEndpoint do what the REST rows do", async () => {
    const saved = await gql(
      server,
      b,
      `mutation($a: String!, $doc: String!) { putEndpoint(accountId: $a, name: "gq", input: { document: $doc, maxAgeSeconds: 5 }) { created endpoint { name method documentId document maxAgeSeconds variables { name type required } } } }`,
      { a: b.accountId, doc: TAGS },
    );
    expect(saved.data.putEndpoint).toEqual({
      created: true,
      endpoint: {
        name: "gq",
        method: "GET",
        documentId: `sha256:${sha(TAGS)}`,
        document: TAGS,
        maxAgeSeconds: 5,
        variables: [{ name: "first", type: "Int", required: false }],
      },
    });
    const listed = await gql(server, b, 'query($a: String!) { account(id: $a) { endpoint(name: "gq") { name } endpoints(first: 50) { nodes { name } } } }', {
      a: b.accountId,
    });
    expect(listed.data.account.endpoint).toEqual({ name: "gq" });
    expect(listed.data.account.endpoints.nodes.map((n: { name: string }) => n.name)).toContain("gq");
    // A page of endpoints with their documents: one statement for the texts, however many endpoints.
    for (const n of ["gq2", "gq3"]) expect((await put(b, n, { document: TAGS })).status).toBe(201);
    const { result: page, sql } = await sqlOf(() =>
      gql(server, b, "query($a: String!) { account(id: $a) { endpoints(first: 50) { nodes { name document } } } }", { a: b.accountId }),
    );
    expect(page.data.account.endpoints.nodes.filter((n: { document: string }) => n.document === TAGS).length).toBeGreaterThanOrEqual(3);
    expect(sql.filter((q) => /PersistedDocument/.test(q))).toHaveLength(1);
    const invalid = await gql(server, b, 'mutation($a: String!) { putEndpoint(accountId: $a, name: "m", input: { document: "mutation { x }" }) { created } }', {
      a: b.accountId,
    });
    expect(invalid.errors?.[0]?.message).toMatch(/^document is not valid for this API/);
    expect(invalid.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
    const foreign = await gql(server, a, 'mutation($a: String!) { deleteEndpoint(accountId: $a, name: "gq") }', { a: b.accountId });
    expect(foreign.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const deleted = await gql(server, b, 'mutation($a: String!) { deleteEndpoint(accountId: $a, name: "gq") }', { a: b.accountId });
    expect(deleted.data).toEqual({ deleteEndpoint: true });
    expect(await prisma.savedEndpoint.count({ where: { accountId: b.accountId, name: "gq" } })).toBe(0);
  });

  it("a user granted both accounts reaches each account's endpoints only under its own path", async () => {
    const email = `both-${b.accountId}@example.com`;
    await createUser(email, [a.accountId, b.accountId]);
    const { key } = await createKey(email);
    const headers = { "x-service-integration-key": key, "x-service-user": email };
    expectJson(await run(b, "secret", "", headers), 200);
    expectProblem(await run(a, "secret", "", headers), 404);
  });
});

describe("with INTROSPECTION=false", () => {
  let off: Server;
  beforeAll(async () => {
    off = await startServer({ INTROSPECTION: "false" });
  });
  afterAll(async () => {
    await off.close();
    // The limits stored documents are held to are the last app's: back to this file's server's.
    configureDocumentLimits(limitsOf(loadConfig()));
  });

  it("an endpoint or a manifest asking __schema or __type is a 400, as POST /graphql refuses it, and no hint names a field; one saved before is a 400 when called", async () => {
    const putOff = (name: string, body: unknown) => call(`${off.url}${pathB(a)}/endpoints/${name}`, { method: "PUT", headers: a.headers, body });
    const before = await prisma.savedEndpoint.count({ where: { accountId: a.accountId } });
    const schemaText = "query Types { __schema { types { name } } }";
    const typeText = 'query T { __type(name: "Account") { fields { name } } }';
    for (const text of [schemaText, typeText])
      expectProblem(await putOff("intro", { document: text }), 400, /^document is not valid for this API: GraphQL introspection has been disabled/);
    const typo = await putOff("typo", { document: "query Me { viewer { emal } }" });
    expectProblem(typo, 400, /^document is not valid for this API: Cannot query field "emal" on type "Viewer"\. \[Suggestion hidden\]$/);
    const pushed = await call(`${off.url}${pathB(a)}/graphql/documents`, { method: "POST", headers: a.headers, body: { [sha(typeText)]: typeText } });
    expectProblem(pushed, 400, /introspection has been disabled/);
    expect(await prisma.savedEndpoint.count({ where: { accountId: a.accountId } })).toBe(before);
    expect(await prisma.persistedDocument.count({ where: { accountId: a.accountId, hash: { in: [sha(schemaText), sha(typeText)] } } })).toBe(0);

    // Saved while introspection was on, then called with it off: refused, nothing runs.
    await asSystem(async (tx) => {
      await tx.persistedDocument.create({ data: { accountId: a.accountId, hash: sha(typeText), text: typeText } });
      await savedEarlier(tx, a, "ep_intro", "intro-old", typeText);
    });
    expectProblem(await call(`${off.url}${pathB(a)}/run/intro-old`, { headers: a.headers }), 400, /introspection is disabled/);
  });
});
