// Text the databases cannot store as sent: NUL (PostgreSQL's text cannot hold it; it was a 500) and
// unpaired surrogates (both drivers would store U+FFFD instead). Refused with a 400 naming the place,
// in REST bodies, paths and query strings and in GraphQL variables and literals, with nothing
// written; surrogate pairs (emoji) and an escaped backslash before `u0000` are ordinary text.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareCodePoints, longerThan } from "../src/text.js";
import { call, prisma, type Reply, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
beforeAll(async () => {
  server = await startServer();
  t = await tenant("text");
  const r = await call(`${server.url}/api/v1/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] });
  expect(r.status, r.text).toBe(200);
});
afterAll(() => server.close());

const rest = (method: string, path: string, body?: unknown, raw?: string) =>
  call(`${server.url}${path}`, { method, headers: { ...t.headers, ...(raw ? { "content-type": "application/json" } : {}) }, body, raw });
const graphql = (query: string, variables: Record<string, unknown> = {}) =>
  call(`${server.url}/graphql`, { method: "POST", headers: t.headers, body: { query, variables } });
const expect400 = (r: Reply, place: string) => {
  expect(r.status, r.text).toBe(400);
  expect(r.text).toContain(place);
  expect(r.text).toMatch(/NUL .* unpaired surrogate/);
};

describe("REST", () => {
  it("a NUL or an unpaired surrogate anywhere in a body is a 400 naming its place; nothing is written", async () => {
    expect400(await rest("PUT", `/api/v1/${t.accountId}/endUsers`, [{ id: "ok" }, { id: "u1", custom: { plan: "a\u0000b" } }]), "body[1].custom.plan");
    expect400(await rest("POST", `/api/v1/${t.accountId}/content`, [{ title: "x\ud800y", type: "link", url: "https://e.com" }]), "body[0].title");
    expect400(await rest("PUT", `/v1/accounts/${t.accountId}/tags`, [{ name: "t", description: "\udc00" }]), "body[0].description");
    expect400(await rest("PUT", `/api/v1/${t.accountId}/endUsers`, [{ id: "u2", custom: { "pl\u0000an": "x" } }]), "body[0].custom (a key)");
    expect(await prisma.endUser.count({ where: { accountId: t.accountId } })).toBe(0);
    expect(await prisma.content.count({ where: { accountId: t.accountId } })).toBe(0);
    expect(await prisma.tag.count({ where: { accountId: t.accountId, name: "t" } })).toBe(0);
  });

  it("the same in a path segment or a query parameter", async () => {
    expect400(await rest("GET", `/api/v1/${t.accountId}/endUsers/a%00b`), "path.id");
    expect400(await rest("GET", `/api/v1/${t.accountId}/content?cursor=%00`), "query.cursor");
  });

  it("a body whose bytes are not UTF-8 is a 400, not text with U+FFFD in place of what was sent; nothing is written", async () => {
    // "café" in Latin-1: the é is the lone byte 0xE9.
    const latin1 = Buffer.from(`[{"title":"caf\u00e9","type":"link","url":"https://e.com/latin1"}]`, "latin1");
    const r = await fetch(`${server.url}/api/v1/${t.accountId}/content`, {
      method: "POST",
      headers: { ...t.headers, "content-type": "application/json" },
      body: latin1,
    });
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const p = await r.json();
    expect(p.detail).toMatch(/not valid UTF-8/);
    expect(p.errors).toEqual([{ path: "body", message: "is not valid UTF-8" }]);
    expect(await prisma.content.count({ where: { accountId: t.accountId } })).toBe(0);
    // The same bytes as UTF-8 are stored as sent.
    const ok = await fetch(`${server.url}/api/v1/${t.accountId}/content`, {
      method: "POST",
      headers: { ...t.headers, "content-type": "application/json; charset=utf-8" },
      body: Buffer.from(latin1.toString("latin1"), "utf8"),
    });
    expect(ok.status).toBe(201);
    expect((await ok.json()).data[0].title).toBe("café");
    expect((await prisma.content.findMany({ where: { accountId: t.accountId }, select: { title: true } })).map((c) => c.title)).toEqual(["café"]);
  });

  it("surrogate pairs, escaped or not, and a literal backslash-u0000 are stored exactly", async () => {
    const raw = `[{"id":"emoji","custom":{"plan":"\\ud83d\\ude00 😀 \\\\u0000"}}]`;
    const r = await rest("PUT", `/api/v1/${t.accountId}/endUsers`, undefined, raw);
    expect(r.status, r.text).toBe(201);
    const back = await rest("GET", `/api/v1/${t.accountId}/endUsers/emoji`);
    expect(back.body.custom.plan).toBe("😀 😀 \\u0000");
  });
});

describe("GraphQL over HTTP", () => {
  const UPSERT = `mutation($a: String!, $input: [TagInput!]!) { upsertTags(accountId: $a, input: $input) { results { statusCode } } }`;

  it("a NUL or an unpaired surrogate in the variables is a 400 naming its place; nothing is written", async () => {
    const r = await graphql(UPSERT, { a: t.accountId, input: [{ name: "g1" }, { name: "g\u00002" }] });
    expect400(r, "variables.input[1].name");
    expect(r.body.errors[0].extensions.code).toBe("BAD_REQUEST");
    expect(await prisma.tag.count({ where: { accountId: t.accountId, name: "g1" } })).toBe(0);
  });

  it("a body whose bytes are not UTF-8 is a 400; nothing is written", async () => {
    const text = JSON.stringify({ query: UPSERT, variables: { a: t.accountId, input: [{ name: "caf\u00e9" }] } });
    const r = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...t.headers, "content-type": "application/json" },
      body: Buffer.from(text, "latin1"),
    });
    expect(r.status).toBe(400);
    expect((await r.json()).errors).toEqual([{ path: "body", message: "is not valid UTF-8" }]);
    expect(await prisma.tag.count({ where: { accountId: t.accountId, name: { startsWith: "caf" } } })).toBe(0);
    // Declaring another charset does not make Latin-1 bytes readable: the body is read as UTF-8 or not at all.
    for (const charset of ["iso-8859-1", '"windows-1252"']) {
      const declared = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...t.headers, "content-type": `application/json; charset=${charset}` },
        body: Buffer.from(text, "latin1"),
      });
      expect(declared.status).toBe(415);
      expect((await declared.json()).detail).toMatch(/unsupported charset .*: send the JSON body in UTF-8/);
    }
    expect(await prisma.tag.count({ where: { accountId: t.accountId, name: { startsWith: "caf" } } })).toBe(0);
    // UTF-8 declared in any spelling is read as usual.
    const utf8 = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...t.headers, "content-type": "application/json; charset=UTF8" },
      body: Buffer.from(text, "utf8"),
    });
    expect(utf8.status).toBe(200);
    expect(await prisma.tag.count({ where: { accountId: t.accountId, name: "caf\u00e9" } })).toBe(1);
  });

  it("a NUL in a string literal is a 400 (graphql-js refuses unpaired surrogates itself); an escaped surrogate pair is ordinary text", async () => {
    const bad = await graphql(`mutation {\n upsertTags(accountId: "${t.accountId}", input: [{ name: "g\\u0000" }]) { results { statusCode } } }`);
    expect400(bad, "string literal at line 2");
    const lone = await graphql(`mutation { upsertTags(accountId: "${t.accountId}", input: [{ name: "g\\ud800" }]) { results { statusCode } } }`);
    expect(lone.body.errors[0].message).toMatch(/Invalid Unicode escape sequence/);
    const ok = await graphql(`mutation { upsertTags(accountId: "${t.accountId}", input: [{ name: "g\\ud83d\\ude00" }]) { results { statusCode } } }`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.upsertTags.results[0].statusCode).toBe(201);
    expect(await prisma.tag.findFirst({ where: { accountId: t.accountId, name: "g😀" } })).not.toBeNull();
  });

  it("a NUL written raw in a string literal (JSON's \\u0000 decoded into the query text) is a 400 too, not the database's error (a 500 on PostgreSQL)", async () => {
    // The query text itself holds U+0000 (GraphQL allows it in a string as sent): the escape check alone did not see it.
    const read = await graphql(`{ account(id: "${t.accountId}") { tag(name: "g\u0000") { id } content(id: "c\u0000") { id } } }`);
    expect400(read, "string literal at line 1");
    const write = await graphql(
      `mutation {\n upsertTags(accountId: "${t.accountId}", input: [{ name: "raw", description: "d\u0000" }]) { results { statusCode } } }`,
    );
    expect400(write, "string literal at line 2");
    expect(await prisma.tag.count({ where: { accountId: t.accountId, name: "raw" } })).toBe(0);
  });
});

describe("GraphQL over HTTP: the request's own fields", () => {
  it("a query that is not a string (a number, an object, a boolean, an array) is a 400 saying so, in either media type", async () => {
    for (const query of [5, { a: 1 }, true, ["{ __typename }"]])
      for (const accept of ["application/json", "application/graphql-response+json"]) {
        const r = await call(`${server.url}/graphql`, { method: "POST", headers: { ...t.headers, accept }, body: { query } });
        expect(r.status, `${JSON.stringify(query)} ${accept}: ${r.text}`).toBe(400);
        expect(r.body.errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/"query" param to be a string/) })]);
      }
  });

  it("a request without a query is a 400 in either media type; a document that does not parse keeps GraphQL over HTTP's 200 for application/json", async () => {
    for (const body of [{}, { query: null }, { variables: {} }])
      for (const accept of ["application/json", "application/graphql-response+json", "*/*"]) {
        const r = await call(`${server.url}/graphql`, { method: "POST", headers: { ...t.headers, accept }, body });
        expect(r.status, `${JSON.stringify(body)} ${accept}: ${r.text}`).toBe(400);
        expect(r.body.errors).toEqual([expect.objectContaining({ message: "Must provide query string." })]);
        expect(r.body.extensions.cost).toBeDefined();
      }
    const get = await call(`${server.url}/graphql?variables=%7B%7D`, { headers: { ...t.headers, accept: "application/json" } });
    expect([get.status, get.body.errors?.[0]?.message]).toEqual([400, "Must provide query string."]);
    const unparsable = await call(`${server.url}/graphql`, { method: "POST", headers: { ...t.headers, accept: "application/json" }, body: { query: "{" } });
    expect(unparsable.status).toBe(200);
    expect(unparsable.body.errors[0].extensions.code).toBe("GRAPHQL_PARSE_FAILED");
  });
});

describe("compareCodePoints", () => {
  it('orders by code point, as COLLATE "C" and SQLite\'s BINARY do: past U+FFFF after U+E000-U+FFFF', () => {
    const words = ["b", "a", "\u{1F600}", "\uFFFD", "\uE000", "ab", "", "\u00E9", "Z"];
    const expected = ["", "Z", "a", "ab", "b", "\u00E9", "\uE000", "\uFFFD", "\u{1F600}"];
    expect([...words].sort(compareCodePoints)).toEqual(expected);
    // What `<` on UTF-16 code units gets wrong: the emoji's high surrogate 0xD83D sorts before 0xE000.
    expect([...words].sort()).not.toEqual(expected);
    expect(Buffer.compare(Buffer.from("\u{1F600}"), Buffer.from("\uFFFD"))).toBe(1);
  });
});

describe("limits in characters count code points (longerThan)", () => {
  it("an emoji is one character, though two UTF-16 units", () => {
    const emoji = "\u{1F600}";
    expect(longerThan(emoji.repeat(100), 100)).toBe(false);
    expect(longerThan(emoji.repeat(101), 100)).toBe(true);
    expect(longerThan(`${"x".repeat(99)}${emoji}`, 100)).toBe(false);
    expect(longerThan("x".repeat(101), 100)).toBe(true);
    expect(longerThan("", 0)).toBe(false);
  });

  it("over REST: a tag name of 100 emoji is stored, 101 is a 400; an end-user field description alike", async () => {
    const emoji = "\u{1F680}";
    const ok = await rest("PUT", `/v1/accounts/${t.accountId}/tags`, [{ name: emoji.repeat(100), description: emoji.repeat(2_000) }]);
    expect(ok.status, ok.text).toBe(201);
    const long = await rest("PUT", `/v1/accounts/${t.accountId}/tags`, [{ name: emoji.repeat(101) }]);
    expect(long.status).toBe(400);
    expect(long.body.detail).toMatch(/name must be at most 100 characters/);
    expect(await prisma.tag.findMany({ where: { accountId: t.accountId, name: { startsWith: emoji } }, select: { name: true } })).toEqual([
      { name: emoji.repeat(100) },
    ]);
    // An end-user field's description (2,000 characters) alike.
    const field = await rest("PUT", `/api/v1/${t.accountId}/endUserSchema`, [{ name: "note", type: "string", description: emoji.repeat(2_000) }]);
    expect(field.status, field.text).toBe(200);
    const tooLong = await rest("PUT", `/api/v1/${t.accountId}/endUserSchema`, [{ name: "note2", type: "string", description: emoji.repeat(2_001) }]);
    expect(tooLong.status).toBe(400);
    expect(await prisma.endUserField.count({ where: { accountId: t.accountId, name: { in: ["note", "note2"] } } })).toBe(1);
  });
});
