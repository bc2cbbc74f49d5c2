// Persisted documents (issue 33 item 2): a per-account store filled from a client's manifest (REST
// and CLI), POST/GET /graphql with `documentId` in place of `query`, persisted-only keys, and GET's
// ETag / If-None-Match. 304s are checked with node:http (fetch adds Cache-Control: no-cache).

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../src/admin.js";
import { withTransaction } from "../src/db/index.js";
import { call, costExtensions, expectProblem, httpGet, pathB, prisma, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  server = await startServer();
  a = await tenant("pdoc");
  b = await tenant("pdoc");
});
afterAll(() => server.close());

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const TAGS = "query PTags($accountId: String!) { account(id: $accountId) { tags(first: 50) { nodes { name } } } }";
const ACCOUNT = "query PAccount($accountId: String!) { account(id: $accountId) { id } }";

const push = (t: Tenant, body: unknown) => call(`${server.url}${pathB(t)}/graphql/documents`, { method: "POST", headers: t.headers, body });
const post = (headers: Record<string, string>, body: unknown) => call(`${server.url}/graphql`, { method: "POST", headers, body });
const getUrl = (documentId: string, variables: object) =>
  `/graphql?documentId=${encodeURIComponent(documentId)}&variables=${encodeURIComponent(JSON.stringify(variables))}`;

const rawGet = (path: string, headers: Record<string, string>) => httpGet(`${server.url}${path}`, { accept: "application/graphql-response+json", ...headers });

async function persistedOnlyKey(t: Tenant): Promise<Record<string, string>> {
  const { key } = await createKey(t.email, { persistedOnly: true });
  return { "x-service-integration-key": key, "x-service-user": t.email };
}

describe("the manifest: POST /v1/accounts/{accountId}/graphql/documents", () => {
  it("stores documents under sha256:<hex> and bare <hex> ids: 200 {stored}, rows in the account, audited; again is harmless", async () => {
    const r = await push(a, { [`sha256:${sha(TAGS)}`]: TAGS, [sha(ACCOUNT).toUpperCase()]: ACCOUNT });
    expect([r.status, r.body]).toEqual([200, { stored: 2 }]);
    const rows = await prisma.persistedDocument.findMany({ where: { accountId: a.accountId }, orderBy: { hash: "asc" } });
    expect(rows.map((d) => [d.hash, d.text])).toEqual(
      [
        [sha(TAGS), TAGS],
        [sha(ACCOUNT), ACCOUNT],
      ].sort(([x], [y]) => x!.localeCompare(y!)),
    );
    const audit = await prisma.auditLog.findMany({ where: { accountId: a.accountId, resourceType: "persistedDocument" } });
    expect(audit.map((e) => [e.action, e.resourceId]).sort()).toEqual(
      [
        ["create", `sha256:${sha(ACCOUNT)}`],
        ["create", `sha256:${sha(TAGS)}`],
      ].sort(),
    );
    expect(audit.every((e) => e.userId === a.email)).toBe(true);
    const again = await push(a, { [`sha256:${sha(TAGS)}`]: TAGS });
    expect([again.status, again.body]).toEqual([200, { stored: 1 }]);
    expect(await prisma.persistedDocument.count({ where: { accountId: a.accountId } })).toBe(2);
  });

  it("refuses a bad manifest with a 400 naming the entry, and stores none of it", async () => {
    const good = "query Good($accountId: String!) { account(id: $accountId) { name } }";
    const wrong = `sha256:${sha("something else")}`;
    const r1 = await push(b, { [`sha256:${sha(good)}`]: good, [wrong]: "query W { viewer { email } }" });
    expectProblem(r1, 400, new RegExp(`document ${wrong}: is not the SHA-256 of its text`));
    expect(r1.body.errors).toEqual([{ path: wrong, message: expect.stringContaining("is not the SHA-256 of its text") }]);

    const invalid = "query Bad { account(id: 1) { nope } }";
    const r2 = await push(b, { [`sha256:${sha(invalid)}`]: invalid });
    expectProblem(r2, 400, /is not valid for this API: .*nope/);

    const unparsable = "query {";
    expectProblem(await push(b, { [sha(unparsable)]: unparsable }), 400, /is not valid for this API: Syntax Error/);
    expectProblem(await push(b, { "md5:abc": good }), 400, /document md5:abc: is not a document id/);
    expectProblem(await push(b, { [sha(good)]: 42 }), 400, /must be the document's text/);
    expectProblem(await push(b, [good]), 400, /body must be a JSON object mapping document ids to document texts/);
    expectProblem(await push(b, {}), 400, /at least one document/);
    // Past the limits POST /graphql holds every text to (aliases: 15 by default; tokens: 2,000): it is
    // parsed by id outside Yoga, so it is never stored.
    const aliases = `query Many($accountId: String!) { ${Array.from({ length: 40 }, (_, i) => `a${i}: account(id: $accountId) { id }`).join(" ")} }`;
    const r3 = await push(b, { [sha(aliases)]: aliases });
    expectProblem(r3, 400, /is past this API's limits on a GraphQL document: .*alias/i);
    const tokens = `query Long { ${"__typename ".repeat(3_000)}}`;
    expectProblem(await push(b, { [sha(tokens)]: tokens }), 400, /is past this API's limits on a GraphQL document: Token limit of 2000 exceeded/);
    // A string literal holding NUL (a GraphQL escape, storable as text): run by id it would reach the
    // database with it (POST /graphql refuses the same literal in a text), so it is not stored.
    const nul = 'query Nul($accountId: String!) { account(id: $accountId) { tag(name: "a\\u0000") { id } } }';
    const r4 = await push(b, { [sha(nul)]: nul });
    expectProblem(r4, 400, /has a string literal at line 1: text must not contain NUL/);
    expect(r4.body.errors).toEqual([{ path: sha(nul), message: expect.stringContaining("has a string literal at line 1") }]);
    expect(await prisma.persistedDocument.count({ where: { accountId: b.accountId } })).toBe(0);
  });

  it("eight pushes of one manifest at once: all 200 (the same answers on both databases), each document stored and audited once", async () => {
    for (let round = 0; round < 3; round++) {
      const t = await tenant("pdocc");
      const texts = Array.from({ length: 5 }, (_, i) => `query Conc${round}x${i}($accountId: String!) { account(id: $accountId) { id } }`);
      const manifest = Object.fromEntries(texts.map((text) => [`sha256:${sha(text)}`, text]));
      const replies = await Promise.all(Array.from({ length: 8 }, () => push(t, manifest)));
      expect(
        replies.map((r) => [r.status, r.body]),
        replies.map((r) => r.text).join("\n"),
      ).toEqual(Array(8).fill([200, { stored: 5 }]));
      const rows = await prisma.persistedDocument.findMany({ where: { accountId: t.accountId }, select: { hash: true } });
      expect(rows.map((r) => r.hash).sort()).toEqual(texts.map(sha).sort());
      const audit = await prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType: "persistedDocument" } });
      expect(audit.map((e) => [e.action, e.resourceId]).sort()).toEqual(texts.map((text) => ["create", `sha256:${sha(text)}`]).sort());
    }
  });

  it("is an account route: another account's manifest endpoint is a 403", async () => {
    const r = await call(`${server.url}${pathB(b)}/graphql/documents`, { method: "POST", headers: a.headers, body: { [sha(TAGS)]: TAGS } });
    expectProblem(r, 403);
  });
});

describe("POST and GET /graphql with documentId", () => {
  beforeAll(async () => {
    expect((await push(a, { [`sha256:${sha(TAGS)}`]: TAGS, [`sha256:${sha(ACCOUNT)}`]: ACCOUNT })).status).toBe(200);
    expect((await call(`${server.url}${pathB(a)}/tags`, { method: "PUT", headers: a.headers, body: [{ name: "alpha" }] })).status).toBe(201);
  });

  it("runs the stored document with the variables, by POST (operationName too) and GET, the same as its text", async () => {
    const expected = { data: { account: { tags: { nodes: [{ name: "alpha" }] } } }, extensions: costExtensions() };
    for (let i = 0; i < 3; i++) {
      const r = await post(a.headers, { documentId: `sha256:${sha(TAGS)}`, variables: { accountId: a.accountId } });
      expect([r.status, r.body]).toEqual([200, expected]);
    }
    const named = await post(a.headers, { documentId: `sha256:${sha(TAGS)}`, variables: { accountId: a.accountId }, operationName: "PTags" });
    expect([named.status, named.body]).toEqual([200, expected]);
    const g = await call(`${server.url}${getUrl(`sha256:${sha(TAGS)}`, { accountId: a.accountId })}`, { headers: a.headers });
    expect([g.status, g.body]).toEqual([200, expected]);
    const text = await post(a.headers, { query: TAGS, variables: { accountId: a.accountId } });
    expect(text.body).toEqual(expected);
  });

  it("an unknown id, a malformed id, or id and text together: a 400 that says so", async () => {
    const unknown = `sha256:${sha("never stored")}`;
    const r = await post(a.headers, { documentId: unknown, variables: {} });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].message).toMatch(new RegExp(`^Unknown documentId '${unknown}'`));
    expect(r.body.data).toBeUndefined();
    const g = await call(`${server.url}${getUrl(unknown, {})}`, { headers: a.headers });
    expect(g.status).toBe(400);
    expect(g.body.errors[0].message).toMatch(/^Unknown documentId/);
    expect((await post(a.headers, { documentId: "nope" })).body.errors[0].message).toMatch(/`documentId` must be `sha256:`/);
    expect((await post(a.headers, { documentId: `sha256:${sha(TAGS)}`, query: TAGS })).body.errors[0].message).toBe(
      "Send either `query` or `documentId`, not both.",
    );
  });

  it("a document stored before the limits applied at storing, past the token limit, is a 400 when run, not parsed whole", async () => {
    const tokens = `query Long { ${"__typename ".repeat(3_000)}}`;
    await withTransaction((tx) => tx.persistedDocument.create({ data: { accountId: a.accountId, hash: sha(tokens), text: tokens } }));
    const r = await post(a.headers, { documentId: sha(tokens) });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].message).toMatch(/^the stored document is past this API's limits on a GraphQL document: Document contains more that 2000 tokens/);
    expect(r.body.data).toBeUndefined();
  });

  it("a stored mutation runs by POST, and by GET is a 405 as any mutation over GET", async () => {
    const mutation = 'mutation PUpsert($a: String!) { upsertTags(accountId: $a, input: [{ name: "via-document" }]) { results { statusCode } } }';
    expect((await push(a, { [sha(mutation)]: mutation })).status).toBe(200);
    const viaGet = await call(`${server.url}${getUrl(`sha256:${sha(mutation)}`, { a: a.accountId })}`, { headers: a.headers });
    expect(viaGet.status).toBe(405);
    expect(await prisma.tag.count({ where: { accountId: a.accountId, name: "via-document" } })).toBe(0);
    const viaPost = await post(a.headers, { documentId: `sha256:${sha(mutation)}`, variables: { a: a.accountId } });
    expect([viaPost.status, viaPost.body]).toEqual([200, { data: { upsertTags: { results: [{ statusCode: 201 }] } }, extensions: costExtensions() }]);
    await call(`${server.url}${pathB(a)}/tags/via-document`, { method: "DELETE", headers: a.headers });
  });

  it("tenant isolation: another account's document id is unknown to the caller", async () => {
    const r = await post(b.headers, { documentId: `sha256:${sha(TAGS)}`, variables: { accountId: b.accountId } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].message).toMatch(/^Unknown documentId/);
  });

  it("a persisted-only key runs documents but is refused any text (POST and GET, before and after the text was seen), 403", async () => {
    const only = await persistedOnlyKey(a);
    const ok = await post(only, { documentId: `sha256:${sha(ACCOUNT)}`, variables: { accountId: a.accountId } });
    expect([ok.status, ok.body]).toEqual([200, { data: { account: { id: a.accountId } }, extensions: costExtensions() }]);
    // The same text sent by an ordinary key first: the fast path knows it, and still refuses it to this key.
    for (let i = 0; i < 2; i++) expect((await post(a.headers, { query: ACCOUNT, variables: { accountId: a.accountId } })).status).toBe(200);
    for (const body of [{ query: ACCOUNT, variables: { accountId: a.accountId } }, { query: "{ __typename }" }]) {
      const r = await post(only, body);
      expect(r.status).toBe(403);
      expect(r.body.errors[0]).toMatchObject({ message: expect.stringMatching(/persisted documents only/), extensions: { code: "FORBIDDEN" } });
    }
    const g = await call(`${server.url}/graphql?query=${encodeURIComponent("{ __typename }")}`, { headers: only });
    expect(g.status).toBe(403);
    const row = await prisma.apiKey.findUnique({ where: { prefix: only["x-service-integration-key"]!.slice(0, 12) } });
    expect(row?.persistedOnly).toBe(true);
  });

  it("GET answers a weak ETag and a 304 with no body for a current If-None-Match; a change changes the tag", async () => {
    const path = getUrl(`sha256:${sha(TAGS)}`, { accountId: a.accountId });
    const first = await rawGet(path, a.headers);
    expect(first.status).toBe(200);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]+"$/);
    const again = await rawGet(path, { ...a.headers, "if-none-match": etag });
    expect([again.status, again.text, again.headers.etag]).toEqual([304, "", etag]);
    expect((await rawGet(path, { ...a.headers, "if-none-match": `"other", ${etag.slice(2)}` })).status).toBe(304);
    expect((await call(`${server.url}${pathB(a)}/tags`, { method: "PUT", headers: a.headers, body: [{ name: "beta" }] })).status).toBe(201);
    const changed = await rawGet(path, { ...a.headers, "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(JSON.parse(changed.text).data.account.tags.nodes.map((n: { name: string }) => n.name)).toEqual(["alpha", "beta"]);
    expect(changed.headers.etag).not.toBe(etag);
  });
});

describe("CLI: documents push", () => {
  const dir = mkdtempSync(join(tmpdir(), "gg-pdoc-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        "npx",
        ["tsx", "src/cli/index.ts", ...args],
        { cwd: process.cwd(), env: { ...process.env, LOG_LEVEL: "silent", NODE_ENV: "test" }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
      );
    });

  it("stores a manifest file for an account, and refuses a bad one naming the entry (exit 2)", async () => {
    const t = await tenant("pdoc-cli");
    const good = join(dir, "good.json");
    writeFileSync(good, JSON.stringify({ [`sha256:${sha(ACCOUNT)}`]: ACCOUNT }));
    const r = await cli("documents", "push", t.accountId, good);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`1 persisted documents stored for account ${t.accountId}`);
    expect(await prisma.persistedDocument.count({ where: { accountId: t.accountId } })).toBe(1);
    const bad = join(dir, "bad.json");
    const wrong = `sha256:${sha("x")}`;
    writeFileSync(bad, JSON.stringify({ [wrong]: ACCOUNT }));
    const refused = await cli("documents", "push", t.accountId, bad);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${wrong}: is not the SHA-256 of its text`);
  }, 90_000);
});
