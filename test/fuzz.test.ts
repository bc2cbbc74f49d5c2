// Every REST operation of the OpenAPI document, asked with mutated input: its documented example
// with values replaced by hostile ones (other JSON types, NUL, lone surrogates, huge numbers and
// strings, prototype keys), keys removed or added, bodies that are not JSON, repeated or odd query
// values and path segments. Whatever the input, the answer is never a 5xx; an error is a problem
// document whose `status` is the HTTP status; and a 4xx changes nothing: the account's rows, its
// audit log (every change writes one) and its events are as they were.
//
// The cases are drawn from a seeded generator (`TEST_SEED` draws others); a failure names the
// request, so the same seed reproduces it.
import { STATUS_CODES } from "node:http";
import { join, raw, sqltag as sql } from "@prisma/client/runtime/client";
import {
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLScalarType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../src/admin.js";
import { sampleInput } from "../src/openapi/requestDocs.js";
import { routes } from "../src/rest/routes.js";
import { schema } from "../src/schema/index.js";
import { seeded } from "../src/seed/random.js";
import { call, expectProblem, prisma, type Reply, type Server, startServer, type Tenant, tenant, testSeed } from "./helpers.js";

let server: Server;
let t: Tenant;
let other: Tenant;
let writeKey: string;
let doc: any;
let otherBefore: Record<string, number>;

/**
 * Long text that does not compress: PostgreSQL compresses an index entry before its size limit
 * (about 2.7 KB) applies, so a long run of one letter would not find a text column indexed without
 * a length limit.
 */
const NOISE = (() => {
  const r = seeded(99);
  return Array.from({ length: 6_000 }, () => String.fromCharCode(33 + r.int(94))).join("");
})();

/** 256 characters of 4 bytes each (1 KB of UTF-8) that do not compress: past what a PostgreSQL index entry holds, several in one key. */
const WIDE = (() => {
  const r = seeded(7);
  return Array.from({ length: 256 }, () => String.fromCodePoint(0x10000 + r.int(0xf0000))).join("");
})();

/** Values no route expects where they land (each has made some service somewhere answer a 500). */
const HOSTILE: unknown[] = [
  NOISE,
  null,
  true,
  0,
  -1,
  -0,
  1.5,
  2 ** 53 + 1,
  1e308,
  -1e308,
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\uD800",
  "x\uDFFFy",
  "💥",
  "é\u0301",
  "x".repeat(70_000),
  "NaN",
  "Infinity",
  "-1",
  "1e400",
  "99999999999999999999999",
  "2024-02-30",
  "0000-01-01",
  "9999-12-31 23:59",
  "1970-01-01T00:00:00Z",
  "' OR 1=1 --",
  '"; DROP TABLE "Content"; --',
  "%",
  "%00",
  "../../etc/passwd",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "event:constructor",
  "user:__proto__",
  "a,b,,c",
  "x__svc__",
  [],
  [null],
  [[[[[[[[[[[]]]]]]]]]]],
  {},
  { __proto__: null, constructor: { prototype: { polluted: 1 } } },
  JSON.parse('{"__proto__":{"polluted":1}}'),
  Array.from({ length: 300 }, (_, i) => i),
];

/** Strings for path segments and query values (what a URL carries). */
const HOSTILE_TEXT: string[] = [
  NOISE.slice(0, 3_000),
  NOISE.slice(0, 4_000),
  WIDE,
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "💥",
  "x".repeat(5_000),
  "-1",
  "0",
  "1.5",
  "1e400",
  "99999999999999999999999",
  "NaN",
  "true",
  "null",
  "2024-02-30",
  "2024-13-01",
  "9999-12-31 23:59",
  "0000-01-01",
  "1970-01-01T00:00:00Z",
  "' OR 1=1 --",
  "__proto__",
  "constructor",
  "toString",
  "valueOf",
  "a,b,,c",
  ",",
  "x__svc__",
  "__svc__y",
  "%",
  "..",
  "eyJ4IjoxfQ",
  "bm9wZQ==",
];

/** Bodies that are not the JSON a route parses. */
const RAW_BODIES = [
  '{"a":',
  "[1,2",
  "\uFEFF[]",
  "nul",
  '{"a":1,"a":2}',
  "1",
  '"text"',
  `${"[".repeat(5_000)}${"]".repeat(5_000)}`,
  `{"a":${"[".repeat(65)}${"]".repeat(65)}}`,
  "\u0000",
];

/** The rows an account owns, counted: a 4xx must leave every count (and the audit log) as it was. */
const OWNED = [
  "Content",
  "Tag",
  "EndUser",
  "EndUserValue",
  "EndUserField",
  "AuditLog",
  "Event",
  "AttributeField",
  "AttributeRecord",
  "AttributeRecordValue",
  "Segment",
  "StoredFile",
  "CopyJob",
  "Webhook",
  "PersistedDocument",
  "SavedEndpoint",
] as const;
/** The counts of OWNED for one account, in one statement (it runs after every request). */
async function fingerprint(accountId: string): Promise<Record<string, number>> {
  const counts = OWNED.map((table, i) => sql`(SELECT COUNT(*) FROM ${raw(`"${table}"`)} WHERE "accountId" = ${accountId}) AS ${raw(`c${i}`)}`);
  const [row] = await prisma.$queryRaw<Record<string, unknown>[]>`SELECT ${join(counts)}`;
  return Object.fromEntries(OWNED.map((table, i) => [table, Number(row![`c${i}`])]));
}

beforeAll(async () => {
  // A budget no run of this file spends: the limit is not what is under test here.
  server = await startServer({ RATE_LIMIT_PER_MINUTE: "100000000" });
  t = await tenant("fuzz");
  other = await tenant("fuzzo");
  writeKey = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
  doc = await (await fetch(`${server.url}/openapi.json`)).json();
  otherBefore = await fingerprint(other.accountId);
  // Something to find under the ids the examples and mutations name.
  const put = (path: string, body: unknown, method = "PUT") =>
    fetch(`${server.url}/v1/accounts/${t.accountId}${path}`, {
      method,
      headers: { ...t.headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  await put("/endUserSchema", [
    { name: "plan", type: "string" },
    { name: "seats", type: "double" },
  ]);
  await put("/content", [{ title: "Fuzzed", type: "link", url: "https://x.com" }], "POST");
  await put("/tags", [{ name: "t1" }]);
  await put("/endUsers", [{ id: "u1", plan: "gold", seats: 3 }]);
});
afterAll(() => server.close());

interface Case {
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body?: string;
  what: string[];
}

/** Every node of a JSON value, as the path to it and a setter. */
function nodes(root: unknown): { path: string; set(v: unknown): void; remove(): void }[] {
  const out: { path: string; set(v: unknown): void; remove(): void }[] = [];
  const walk = (v: unknown, path: string, parent: any, key: string | number) => {
    if (parent)
      out.push({
        path,
        set: (x) => {
          parent[key] = x;
        },
        remove: () => {
          if (Array.isArray(parent)) parent.splice(key as number, 1);
          else delete parent[key];
        },
      });
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${path}[${i}]`, v, i);
    else if (v && typeof v === "object") for (const k of Object.keys(v)) walk((v as any)[k], `${path}.${k}`, v, k);
  };
  walk(root, "$", null, 0);
  return out;
}

const clone = (v: unknown) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

function operations(): { method: string; path: string; op: any }[] {
  const out: { method: string; path: string; op: any }[] = [];
  for (const [path, ops] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(ops)) out.push({ method: method.toUpperCase(), path, op });
  return out;
}

/** One mutated request of an operation. */
function draw(r: ReturnType<typeof seeded>, o: { method: string; path: string; op: any }, mutations = 1 + r.int(3)): Case {
  const params: any[] = o.op.parameters ?? [];
  const pathValues: Record<string, string> = { accountId: t.accountId };
  for (const p of params.filter((p) => p.in === "path" && p.name !== "accountId")) pathValues[p.name] = String(p.example ?? p.schema?.example ?? `${p.name}-1`);
  const query: [string, string][] = [];
  for (const p of params.filter((p) => p.in === "query"))
    if (p.required || r.chance(0.5)) query.push([p.name, String(p.example ?? p.schema?.example ?? p.schema?.default ?? "1")]);
  const json = o.op.requestBody?.content?.["application/json"];
  const pdf = o.op.requestBody?.content?.["application/pdf"];
  let body: unknown = clone(json?.example);
  let raw: string | undefined;
  const headers: Record<string, string> = o.path.startsWith("/segment/")
    ? { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString("base64")}` }
    : { ...t.headers };
  const what: string[] = [];
  for (let m = 0; m < mutations; m++) {
    const kind = r.int(9);
    if (kind <= 2 && body !== undefined) {
      // A value somewhere in the body replaced.
      const all = nodes(body);
      const v = clone(r.pick(HOSTILE));
      if (all.length && r.chance(0.9)) {
        const n = r.pick(all);
        n.set(v);
        what.push(`body ${n.path} = ${JSON.stringify(v)?.slice(0, 60)}`);
      } else {
        body = v;
        what.push(`body = ${JSON.stringify(v)?.slice(0, 60)}`);
      }
    } else if (kind === 3 && body !== undefined) {
      const all = nodes(body);
      if (all.length) {
        const n = r.pick(all);
        n.remove();
        what.push(`body ${n.path} removed`);
      }
    } else if (kind === 4 && body && typeof body === "object") {
      const target = Array.isArray(body) && body.length && typeof body[0] === "object" && body[0] ? body[0] : body;
      const key = r.pick(["__proto__", "constructor", "zzUnknown", "", "id", "accountId"]);
      const v = clone(r.pick(HOSTILE));
      Object.defineProperty(target, key, { value: v, enumerable: true, configurable: true, writable: true });
      what.push(`body key ${JSON.stringify(key)} = ${JSON.stringify(v)?.slice(0, 60)}`);
    } else if (kind === 5 && (json || pdf)) {
      raw = r.pick(RAW_BODIES);
      what.push(`raw body ${JSON.stringify(raw.slice(0, 40))}`);
    } else if (kind === 6) {
      const names = params.filter((p) => p.in === "query").map((p) => p.name as string);
      const name = names.length && r.chance(0.8) ? r.pick(names) : "zzUnknown";
      const v = r.pick(HOSTILE_TEXT);
      if (r.chance(0.3)) query.push([name, v]);
      else {
        const i = query.findIndex(([n]) => n === name);
        if (i >= 0) query[i] = [name, v];
        else query.push([name, v]);
      }
      what.push(`query ${name} = ${JSON.stringify(v.slice(0, 40))}`);
    } else if (kind === 7) {
      const names = Object.keys(pathValues).filter((n) => n !== "accountId");
      if (names.length) {
        const name = r.pick(names);
        pathValues[name] = r.pick(HOSTILE_TEXT);
        what.push(`path ${name} = ${JSON.stringify(pathValues[name]!.slice(0, 40))}`);
      }
    } else if (kind === 8) {
      const h = r.pick(["if-none-match", "content-type", "accept", "x-service-user"]);
      const v = r.pick(['"x"', "*", "W/", "text/plain", "application/json; charset=latin1", "application/xml", `${t.email}x`, other.email]);
      headers[h] = v;
      what.push(`header ${h}: ${v}`);
    }
  }
  if (raw === undefined && body !== undefined) raw = JSON.stringify(body);
  if (raw !== undefined) headers["content-type"] ??= pdf && !json ? "application/pdf" : "application/json";
  const path = o.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(pathValues[name] ?? name));
  return { method: o.method, path, query, headers, body: raw, what };
}

/** Whether an error answer is the documented one: a problem whose status is the HTTP status, or B15's own shape. */
function documentedError(method: string, path: string, res: Response, text: string): boolean {
  const type = res.headers.get("content-type") ?? "";
  let problem: any;
  try {
    problem = JSON.parse(text);
  } catch {}
  // The contract's one exception, from the spec: a single end-user update (B15) answers
  // its failures as {"errors":[...],"id","statusCode"} (an empty id is no such route: a problem).
  const b15 = method === "PUT" && /\/endUsers\/\{id\}$/.test(path);
  const isProblem =
    /^application\/problem\+json/.test(type) &&
    problem?.status === res.status &&
    problem?.title === STATUS_CODES[res.status] &&
    typeof problem?.detail === "string";
  const isB15 =
    /^application\/json/.test(type) &&
    problem?.statusCode === res.status &&
    Array.isArray(problem?.errors) &&
    problem.errors.length > 0 &&
    problem.errors.every((e: unknown) => typeof e === "string");
  return isProblem || (b15 && isB15);
}

/**
 * The places a problem's `errors` name that are no input of this request: every path must be a REST
 * input the caller could have sent (a query or path parameter, `path.<name>` / `query.<name>`, the
 * body or a field of it, `[i]` an item of a bulk body), never a GraphQL variable or argument the
 * route fills from one (`filter` for B4's `type`, `useridType` for B14's `userid-type`).
 */
function foreignNames(o: { path: string; op: any }, c: Case, text: string): string[] {
  let problem: any;
  try {
    problem = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(problem?.errors)) return [];
  const params: any[] = o.op.parameters ?? [];
  const pathNames = new Set([...o.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!));
  const queryNames = new Set([...params.filter((p) => p.in === "query").map((p) => p.name as string), ...c.query.map(([k]) => k)]);
  const bodyNames = new Set<string>();
  const schema = o.op.requestBody?.content?.["application/json"]?.schema;
  for (const s of [schema, schema?.items]) for (const k of Object.keys(s?.properties ?? {})) bodyNames.add(k);
  let sent: unknown;
  try {
    sent = c.body === undefined ? undefined : JSON.parse(c.body);
  } catch {}
  for (const v of Array.isArray(sent) ? sent : [sent]) if (v && typeof v === "object" && !Array.isArray(v)) for (const k of Object.keys(v)) bodyNames.add(k);
  const head = (p: string) => p.split(/[.[ ]/)[0]!;
  const ok = (p: string) => {
    if (p === "(request)" || p === "body" || /^body[.[ ]/.test(p) || /^\[\d+\]/.test(p)) return true;
    const scoped = /^(path|query)\.(.*)$/.exec(p);
    if (scoped) return (scoped[1] === "path" ? pathNames : queryNames).has(head(scoped[2]!));
    return pathNames.has(head(p)) || queryNames.has(head(p)) || bodyNames.has(head(p));
  };
  // (B15's own shape lists messages alone.)
  return problem.errors
    .filter((e: unknown) => typeof (e as { path?: unknown })?.path === "string")
    .map((e: { path: string }) => e.path)
    .filter((p: string) => !ok(p));
}

/** How many mutated requests each operation gets (FUZZ_CASES moves it for a longer campaign). */
const CASES = Number(process.env.FUZZ_CASES ?? 12);

describe("mutated input on every REST operation", () => {
  it("is never a 5xx; an error is a problem document; a 4xx changes nothing", { timeout: 300_000 }, async () => {
    const r = seeded(testSeed(1));
    const ops = operations();
    expect(ops.length).toBeGreaterThan(60);
    const failures: string[] = [];
    let last = await fingerprint(t.accountId);
    const statuses = new Map<number, number>();
    for (const o of ops) {
      for (let i = 0; i < CASES; i++) {
        const c = draw(r, o);
        const qs = c.query.length ? `?${c.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")}` : "";
        const res = await fetch(server.url + c.path + qs, { method: c.method, headers: c.headers, body: c.body });
        const text = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        // What the account holds after each request; the one before is the previous one's after.
        const before = last;
        const after = await fingerprint(t.accountId);
        last = after;
        const label = `${c.method} ${o.path} [${c.what.join("; ")}] → ${res.status} ${text.slice(0, 300)}`;
        if (res.status >= 500) {
          failures.push(`5xx: ${label}`);
          continue;
        }
        if (res.status >= 400) {
          if (!documentedError(c.method, o.path, res, text)) failures.push(`not the documented error: ${label} (${res.headers.get("content-type")})`);
          const foreign = foreignNames(o, c, text);
          if (foreign.length) failures.push(`names ${foreign.join(", ")}, which the request has no input of: ${label}`);
          const changed = OWNED.filter((m) => after[m] !== before[m]).map((m) => `${m} ${before[m]} → ${after[m]}`);
          if (changed.length) failures.push(`a ${res.status} changed ${changed.join(", ")}: ${label}`);
        }
      }
    }
    // The draws reach the validation of most operations, not only the 401/404 in front of it.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(ops.length * CASES * 0.25);
    expect(failures).toEqual([]);
  });

  it("another tenant's rows stay as they were (its e-mail in x-service-user is a 401/403, not a way in)", async () => {
    expect(await fingerprint(other.accountId)).toEqual(otherBefore);
  });
});

// Races between copies of one request (a script retrying before the first answer, two workers
// sent the same item): every write must be one transaction that either wins, loses cleanly (a 4xx)
// or is retried; a unique key met by a concurrent insert, a deadlock or a serialization failure must
// never reach the client as a 5xx. Real on PostgreSQL; SQLite serializes writers.
/** Copies of each request sent at once (FUZZ_COPIES moves it). */
const COPIES = Number(process.env.FUZZ_COPIES ?? 6);

describe("the same request six times at once, on every REST operation", () => {
  it("is never a 5xx, the example as documented and mutated", { timeout: 300_000 }, async () => {
    const r = seeded(testSeed(3));
    const failures: string[] = [];
    for (const o of operations()) {
      for (const mutations of [0, 0, 1 + r.int(3)]) {
        const c = draw(r, o, mutations);
        const qs = c.query.length ? `?${c.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")}` : "";
        const answers = await Promise.all(
          Array.from({ length: COPIES }, async () => {
            const res = await fetch(server.url + c.path + qs, { method: c.method, headers: c.headers, body: c.body });
            return { res, text: await res.text() };
          }),
        );
        for (const { res, text } of answers) {
          const label = `${c.method} ${o.path} [${c.what.join("; ") || "as documented"}] ×${COPIES} → ${res.status} ${text.slice(0, 300)}`;
          if (res.status >= 500) failures.push(`5xx: ${label}`);
          else if (res.status >= 400 && !documentedError(c.method, o.path, res, text)) failures.push(`not the documented error: ${label}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

/**
 * What is wrong with a GraphQL answer to mutated input: a 5xx, an unexpected (masked) error, or an
 * operation refused whole (errors, no data) that changed the account's rows all the same.
 */
function graphqlFailures(res: Reply, before: Record<string, number>, after: Record<string, number>, what: string): string[] {
  const label = `${what} → ${res.status} ${res.text.slice(0, 300)}`;
  const out: string[] = [];
  if (res.status >= 500) out.push(`5xx: ${label}`);
  const errors: { message: string; extensions?: { code?: string } }[] = res.body?.errors ?? [];
  if (errors.some((e) => e.extensions?.code === "INTERNAL_SERVER_ERROR" || /^Unexpected error/.test(e.message))) out.push(`unexpected error: ${label}`);
  if (errors.length && (res.body?.data == null || Object.values(res.body.data).every((v) => v == null))) {
    const changed = OWNED.filter((m) => after[m] !== before[m]);
    if (changed.length) out.push(`refused, yet changed ${changed.join(", ")}: ${label}`);
  }
  return out;
}

describe("mutated variables on the GraphQL operation of every REST row, over POST /graphql", () => {
  it("is never a 5xx nor an unexpected error; an operation refused whole changes nothing", { timeout: 300_000 }, async () => {
    const r = seeded(testSeed(2));
    const failures: string[] = [];
    let asked = 0;
    let last = await fingerprint(t.accountId);
    for (const route of routes) {
      let base: Record<string, unknown>;
      try {
        base = route.variables(sampleInput(route, schema));
      } catch {
        continue; // a row whose example needs more than its documented input (the PDF upload's stream)
      }
      if ("accountId" in base) base.accountId = t.accountId;
      for (let i = 0; i < CASES; i++) {
        const variables = clone(base) as Record<string, unknown>;
        const what: string[] = [];
        for (let m = 1 + r.int(2); m > 0; m--) {
          const all = nodes(variables).filter((n) => n.path !== "$.accountId");
          if (!all.length) break;
          const n = r.pick(all);
          if (r.chance(0.2)) {
            n.remove();
            what.push(`${n.path} removed`);
          } else {
            const v = clone(r.pick(HOSTILE));
            n.set(v);
            what.push(`${n.path} = ${JSON.stringify(v)?.slice(0, 60)}`);
          }
        }
        asked++;
        const res = await call(`${server.url}/graphql`, { method: "POST", headers: t.headers, body: { query: route.document, variables } });
        const after = await fingerprint(t.accountId);
        const before = last;
        last = after;
        failures.push(...graphqlFailures(res, before, after, `${route.name} [${what.join("; ")}]`));
      }
    }
    expect(asked).toBeGreaterThan(routes.length * CASES * 0.8);
    expect(failures).toEqual([]);
  });
});

describe("mutated GraphQL-over-HTTP requests: the envelope's own fields", () => {
  it("is never a 5xx nor an unexpected error, by POST (JSON or a form) or GET; a refused request changes nothing", { timeout: 300_000 }, async () => {
    // (A `query` that was a number or an object reached a check that called a string method: a 500.)
    const r = seeded(testSeed(4));
    const mutation = `mutation M($a: String!) { upsertTags(accountId: $a, input: [{ name: "envelope" }]) { results { statusCode } } }`;
    const valid: Record<string, unknown> = { query: mutation, variables: { a: t.accountId }, operationName: "M", extensions: {} };
    const fields = ["query", "variables", "operationName", "extensions", "documentId"];
    const failures: string[] = [];
    let last = await fingerprint(t.accountId);
    // Every hostile value in every field, alone (each field also left out), then pairs drawn at random.
    const cases: [string, unknown][][] = fields.flatMap((f) => [[[f, undefined]], ...HOSTILE.map((v) => [[f, v]] as [string, unknown][])]);
    for (let i = 0; i < CASES * 5; i++)
      cases.push([
        [r.pick(fields), r.pick(HOSTILE)],
        [r.pick(fields), r.pick(HOSTILE)],
      ]);
    for (const [n, mutations] of cases.flatMap((c) => [c, c, c]).entries()) {
      const body = clone(valid) as Record<string, unknown>;
      const what: string[] = [];
      for (const [field, value] of mutations) {
        if (value === undefined) delete body[field];
        else body[field] = clone(value);
        what.push(value === undefined ? `${field} removed` : `${field} = ${JSON.stringify(value)?.slice(0, 60)}`);
      }
      // Each case three ways: a JSON body, the same fields as a form, and GET (its mutation refused, so a read).
      const how = n % 3;
      const asText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
      // (URLSearchParams, not encodeURIComponent: it writes a lone surrogate as U+FFFD instead of throwing.)
      const query = new URLSearchParams(Object.entries(body).map(([k, v]) => [k, asText(v) ?? ""])).toString();
      const form = { ...t.headers, "content-type": "application/x-www-form-urlencoded" };
      const res =
        how === 0
          ? await call(`${server.url}/graphql`, { method: "POST", headers: t.headers, body })
          : how === 1
            ? await call(`${server.url}/graphql`, { method: "POST", headers: form, raw: query })
            : await call(`${server.url}/graphql?${query}`, { headers: { ...t.headers, accept: "application/json" } });
      const after = await fingerprint(t.accountId);
      failures.push(...graphqlFailures(res, last, after, `${["POST", "form", "GET"][how]} [${what.join("; ")}]`));
      last = after;
    }
    expect(failures).toEqual([]);
  });
});

describe("mutated arguments on every field of the GraphQL schema that takes any", () => {
  /** A value for an input type: mostly of the type, sometimes not (a hostile value, a missing field). */
  function drawValue(r: ReturnType<typeof seeded>, type: GraphQLInputType, depth = 0): unknown {
    if (r.chance(0.08)) return clone(r.pick(HOSTILE));
    if (isNonNullType(type)) return drawValue(r, type.ofType, depth);
    if (isListType(type)) return depth > 4 ? [] : Array.from({ length: r.int(3) }, () => drawValue(r, type.ofType, depth + 1));
    if (isEnumType(type)) return r.chance(0.9) ? r.pick(type.getValues()).name : "NOT_A_VALUE";
    if (isInputObjectType(type)) {
      const out: Record<string, unknown> = {};
      if (depth > 4) return out;
      for (const f of Object.values(type.getFields())) if (isNonNullType(f.type) || r.chance(0.5)) out[f.name] = drawValue(r, f.type, depth + 1);
      return out;
    }
    switch ((type as GraphQLScalarType).name) {
      case "Int":
        return r.pick([0, 1, -1, 10, 10_000, 10_001, 2 ** 31 - 1]);
      case "Float":
        return r.pick([0, -1.5, 1e300, 3]);
      case "Boolean":
        return r.chance(0.5);
      case "JSON":
        return clone(r.pick(HOSTILE));
      default:
        return r.chance(0.3) ? r.pick(["u1", "t1", "plan", "company", "acme", "ep1"]) : r.pick(HOSTILE_TEXT);
    }
  }
  const selection = (type: GraphQLOutputType) => (isLeafType(getNamedType(type)) ? "" : " { __typename }");

  /** Each field with arguments, as a document: on Query and Mutation, and on the account's fields one and two levels down. */
  function targets(): { name: string; kind: "query" | "mutation"; field: GraphQLField<unknown, unknown>; wrap(inner: string): string; outer: string }[] {
    const out: ReturnType<typeof targets> = [];
    for (const [kind, root] of [
      ["query", schema.getQueryType()!],
      ["mutation", schema.getMutationType()!],
    ] as const)
      for (const field of Object.values(root.getFields()))
        if (field.args.length) out.push({ name: `${kind}.${field.name}`, kind, field, wrap: (x) => x, outer: "" });
    const account = schema.getType("Account") as GraphQLObjectType;
    for (const field of Object.values(account.getFields())) {
      if (field.args.length) out.push({ name: `Account.${field.name}`, kind: "query", field, wrap: (x) => `account(id: $a) { ${x} }`, outer: "$a: String!" });
      const inner = getNamedType(field.type);
      if (!field.args.length && isObjectType(inner))
        for (const sub of Object.values(inner.getFields()))
          if (sub.args.length)
            out.push({
              name: `Account.${field.name}.${sub.name}`,
              kind: "query",
              field: sub,
              wrap: (x) => `account(id: $a) { ${field.name} { ${x} } }`,
              outer: "$a: String!",
            });
    }
    return out;
  }

  it("is never a 5xx nor an unexpected error; an operation refused whole changes nothing", { timeout: 300_000 }, async () => {
    const r = seeded(testSeed(3));
    const failures: string[] = [];
    const all = targets();
    expect(all.length).toBeGreaterThan(40);
    let answered = 0;
    let last = await fingerprint(t.accountId);
    for (const target of all) {
      for (let i = 0; i < CASES; i++) {
        const variables: Record<string, unknown> = { a: t.accountId };
        const defs = target.outer ? [target.outer] : [];
        const args: string[] = [];
        for (const [k, arg] of target.field.args.entries()) {
          if (!isNonNullType(arg.type) && r.chance(0.4)) continue;
          // accountId arguments name the tenant's account most of the time: the point is what comes after.
          variables[`v${k}`] = arg.name === "accountId" && r.chance(0.8) ? t.accountId : drawValue(r, arg.type);
          defs.push(`$v${k}: ${String(arg.type)}`);
          args.push(`${arg.name}: $v${k}`);
        }
        const selected = `${target.field.name}${args.length ? `(${args.join(", ")})` : ""}${selection(target.field.type)}`;
        const query = `${target.kind}${defs.length ? `(${defs.join(", ")})` : ""} { ${target.wrap(selected)} }`;
        const res = await call(`${server.url}/graphql`, { method: "POST", headers: t.headers, body: { query, variables } });
        const after = await fingerprint(t.accountId);
        const before = last;
        last = after;
        if (res.body?.data != null) answered++;
        failures.push(...graphqlFailures(res, before, after, `${target.name} ${JSON.stringify(variables).slice(0, 300)}`));
      }
    }
    // Past validation (data, with or without field errors) often enough that resolvers are reached.
    expect(answered).toBeGreaterThan(all.length * CASES * 0.15);
    expect(failures).toEqual([]);
  });
});

// What the draws above found (each a 500 or a misleading 400 before its fix), pinned as plain cases.
describe("cases the mutated input found", () => {
  const send = async (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> => {
    const r = await call(server.url + path, {
      method: init.method,
      headers: { ...t.headers, "content-type": "application/json", ...init.headers },
      raw: init.body,
    });
    expect(r.headers.get("x-request-id")).toMatch(/\S/);
    return r;
  };
  const B = () => `/v1/accounts/${t.accountId}`;
  const segment = (path: string, body: string) =>
    call(`${server.url}/segment/v1/${path}`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString("base64")}`, "content-type": "application/json" },
      raw: body,
    });

  it("a JSON body that is valid JSON but not an object or array is a 400 that says so (it said '\"null\" is not valid JSON')", async () => {
    for (const body of ["null", " 5 ", '"x"', "true"]) {
      const r = await send(`${B()}/events`, { method: "POST", body });
      expectProblem(r, 400, `The JSON body must be an object or an array (it is ${body.trim()}).`);
    }
    expectProblem(await send(`${B()}/events`, { method: "POST", body: "{bad" }), 400, /^Malformed JSON body: /);
  });

  it("an event type named like an Object.prototype member is an unknown type (400), not a 500; on Segment it is a user action", async () => {
    for (const type of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      const r = await send(`${B()}/events`, { method: "POST", body: JSON.stringify([{ type, time: Date.now(), endUserId: "u1" }]) });
      expectProblem(r, 400, /^type must be one of flow_started/);
    }
    const before = await prisma.event.count({ where: { accountId: t.accountId, type: "user_action", actionId: "constructor" } });
    const r = await segment("track", JSON.stringify({ type: "track", userId: "u1", event: "constructor", messageId: `m-ctor-${Date.now()}` }));
    expect(r.status, r.text).toBe(200);
    expect(await prisma.event.count({ where: { accountId: t.accountId, type: "user_action", actionId: "constructor" } })).toBe(before + 1);
    const exported = await send(`${B()}/events/export?type=constructor`);
    expectProblem(exported, 400, /^type must be one of flow_started/);
    expect(exported.body.errors).toEqual([{ path: "type", message: "unknown: constructor" }]);
  });

  it("lookups of names clients send see only their own tables: id types, media types, dimensions, endpoint fields", async () => {
    expectProblem(await send(`${B()}/endUsers/u1?userid-type=constructor`), 400, "userid-type must be one of svc-app-user-id, svc-cookie-user-id");
    expectProblem(await send(`${B()}/content/upload/cloud/pdf/listS3DirContent?contentType=toString`), 400, "contentType must be one of application/pdf, pdf");
    const q = await send(`${B()}/analytics/query`, { method: "POST", body: JSON.stringify({ metrics: ["events"], dimensions: ["constructor"] }) });
    expectProblem(q, 400, /^body\.dimensions\[0\]: unknown dimension 'constructor'/);
    for (const key of ["__proto__", "constructor"]) {
      const body = `{"document":"query { __typename }",${JSON.stringify(key)}:{"polluted":1}}`;
      expectProblem(
        await send(`${B()}/endpoints/ep1`, { method: "PUT", body }),
        400,
        `${key} is not a field of an endpoint (fields: document, documentId, method, description, maxAgeSeconds)`,
      );
    }
    expect(await prisma.savedEndpoint.count({ where: { accountId: t.accountId, name: "ep1" } })).toBe(0);
  });

  it("JSON nested deeper than 64 levels is a 400 on REST, Segment and GraphQL; 64 levels are read", async () => {
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    const detail = "body nests arrays and objects deeper than 64 levels.";
    expectProblem(await send(`${B()}/content`, { method: "POST", body: deep(5_000) }), 400, detail);
    expectProblem(await send(`${B()}/content`, { method: "POST", body: `[{"title":"x","tags":${deep(64)}}]` }), 400, detail);
    expectProblem(await segment("page", deep(5_000)), 400, detail);
    expectProblem(await segment("batch", `{"batch":[],"context":{"x":${deep(65)}}}`), 400, detail);
    const g = await send("/graphql", { method: "POST", body: `{"query":"{ __typename }","variables":{"v":${deep(20_000)}}}` });
    expectProblem(g, 400, detail);
    // At the limit the body is read: the route answers about its content, not its nesting.
    const atLimit = await send(`${B()}/content`, { method: "POST", body: `[{"title":"x","type":"link","url":"https://x.com","tags":${deep(62)}}]` });
    expect(atLimit.status, atLimit.text).toBe(400);
    expect(atLimit.body.detail).not.toMatch(/nests/);
    // Brackets inside strings are text, not nesting.
    const text = await send(`${B()}/tags`, { method: "PUT", body: JSON.stringify([{ name: "t-brackets", description: "[".repeat(100) }]) });
    expect(text.status, text.text).toBeLessThan(300);
  });

  it("GraphQL over GET or a form: variables or extensions that are not JSON are a 400 (a 500 from Yoga's parser before)", async () => {
    for (const q of ["variables=oops", "extensions=oops", "variables=%7B"]) {
      const r = await call(`${server.url}/graphql?query=%7B__typename%7D&${q}`, { headers: t.headers });
      expect(r.status, r.text).toBe(400);
      expect(r.body.errors[0]).toMatchObject({
        message: expect.stringMatching(/^"variables" and "extensions" must be JSON: /),
        extensions: { code: "BAD_REQUEST" },
      });
    }
    const form = await call(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...t.headers, "content-type": "application/x-www-form-urlencoded" },
      raw: "query=%7B__typename%7D&variables=oops",
    });
    expect(form.status, form.text).toBe(400);
    // Credentials still come first.
    expect((await call(`${server.url}/graphql?query=%7B__typename%7D&variables=oops`)).status).toBe(401);
  });

  it("a saved endpoint's name that no endpoint can have is a 404 (a NUL in it was a 500 on PostgreSQL)", async () => {
    for (const name of ["%00", "a%00b", "x".repeat(65), "%F0%9F%92%A5"]) {
      const r = await send(`${B()}/run/${name}`);
      expectProblem(r, 404, /^No endpoint '/);
    }
  });
});

describe("text values fit their index on PostgreSQL (a 500 there before)", () => {
  // The worst case: random 3-byte characters (UTF-8 that does not compress), the longest field name.
  const r = seeded(testSeed(7));
  const wide = (bytes: number) => Array.from({ length: bytes / 3 }, () => String.fromCodePoint(0x800 + r.int(0xd000))).join("");
  const field = `f${"x".repeat(63)}`;
  const put = (path: string, body: unknown) =>
    call(`${server.url}/v1/accounts/${t.accountId}${path}`, { method: "PUT", headers: { ...t.headers, "content-type": "application/json" }, body });

  it("1,500 bytes of UTF-8 are stored, as a string, an encrypted string and an attribute value; one byte more is a 400 naming the limit", async () => {
    for (const [path, type] of [
      ["/endUserSchema", "string"],
      ["/integrationAttributeSchema", "string"],
    ] as const) {
      const r2 = await put(path, [
        { name: field, type },
        { name: "secretNote", type: "encrypted_string" },
      ]);
      expect(r2.status, r2.text).toBeLessThan(300);
    }
    const atLimit = wide(1_500);
    expect(Buffer.byteLength(atLimit)).toBe(1_500);
    const users = await put("/endUsers", [{ id: "long-values", custom: { [field]: atLimit, secretNote: atLimit } }]);
    expect(users.status, users.text).toBeLessThan(300);
    const attrs = await put("/integrationAttributes", [
      { attributeName: "company", attributeValue: "long-values", additionalAttributes: { [field]: atLimit } },
    ]);
    expect(attrs.status, attrs.text).toBeLessThan(300);
    const stored = await call(`${server.url}/v1/accounts/${t.accountId}/endUsers/long-values?fields=custom`, { headers: t.headers });
    expect(stored.body.custom[field]).toBe(atLimit);
    expect(stored.body.custom.secretNote).toBe(atLimit);

    const past = `${atLimit}a`;
    const before = await fingerprint(t.accountId);
    expectProblem(await put("/endUsers", [{ id: "long-values", custom: { [field]: past } }]), 400, `custom.${field} must be at most 1500 bytes in UTF-8`);
    expectProblem(await put("/endUsers", [{ id: "long-values", custom: { secretNote: past } }]), 400, "custom.secretNote must be at most 1500 bytes in UTF-8");
    // 3,000 bytes: the index entry PostgreSQL refused (a 500 before the limit was in bytes).
    expectProblem(
      await put("/endUsers", [{ id: "long-values", custom: { [field]: wide(3_000) } }]),
      400,
      `custom.${field} must be at most 1500 bytes in UTF-8`,
    );
    const attr = await put("/integrationAttributes", [{ attributeName: "company", attributeValue: "long-values", additionalAttributes: { [field]: past } }]);
    expectProblem(attr, 400, `additionalAttributes.${field} must be at most 1500 bytes in UTF-8`);
    expect(await fingerprint(t.accountId)).toEqual(before);
  });
});

describe("statements within the databases' limits on bound values and expression depth (a 500 before)", () => {
  const values = (prefix: string, n = 1_000) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const post = (path: string, body: unknown) =>
    call(`${server.url}/v1/accounts/${t.accountId}${path}`, { method: "POST", headers: { ...t.headers, "content-type": "application/json" }, body });

  it("Explore: contains with 1,000 values is answered (SQLite nested a flat OR chain 1,000 deep); 40 `is` lists of 1,000 too (one bound value each); past 30,000 bound values, a 400 that says so", async () => {
    const wide = await post("/analytics/query", { metrics: ["events"], filters: [["contains", "event:searchTerm", values("s")]] });
    expect(wide.status, wide.text).toBe(200);
    const lists = Array.from({ length: 40 }, (_, k) => ["isNot", "event:flowId", values(`f${k}-`)]);
    const listed = await post("/analytics/query", { metrics: ["events"], filters: lists });
    expect(listed.status, listed.text).toBe(200);
    const many = Array.from({ length: 40 }, (_, k) => ["contains", "event:flowId", values(`f${k}-`)]);
    const past = await post("/analytics/query", { metrics: ["events"], filters: many });
    expectProblem(past, 400, /^body: the question binds 40005 values where a statement takes 30000/);
    // The whole question is what to narrow: its path is the body's.
    expect(past.body.errors).toEqual([{ path: "body", message: expect.stringMatching(/^the question binds 40005 values/) }]);
    const steps = [{ filters: many.slice(0, 20) }, { filters: [["is", "event:type", ["flow_completed"]]] }];
    expectProblem(await post("/analytics/funnel", { steps }), 400, /^body: the question binds 4000\d values where a statement takes 30000/);
  });

  it("B22: at most 1,000 values in a search, named in the 400", async () => {
    const schema = await call(`${server.url}/v1/accounts/${t.accountId}/integrationAttributeSchema`, {
      method: "PUT",
      headers: t.headers,
      body: [{ name: "company", type: "string" }],
    });
    expect(schema.status, schema.text).toBeLessThan(300);
    const r = await post("/integrationAttributes/search", { company: values("v", 1_001).join(",") });
    expectProblem(r, 400, "a search names at most 1000 values in all");
    expect(r.body.errors).toEqual([{ path: "company", message: "past 1000 values" }]);
    const ok = await post("/integrationAttributes/search", { company: values("v", 1_000).join(",") });
    expect(ok.status, ok.text).toBe(200);
  });
});
