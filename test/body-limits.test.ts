// Body size limits hold however the body is framed (issue #31, item 2). Bodies are sent chunked
// (Transfer-Encoding: chunked, no Content-Length) with node:http, which leaves the framing to us: a
// body is written past its limit and then never ended. A server that reads a body to its end before
// refusing it never answers such a request; one that stops at the limit answers 413 and closes the
// connection. Nothing is written to the database either way.
import { request } from "node:http";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../src/admin.js";
import { CALL_LIMIT_BYTES, REQUEST_LIMIT_BYTES } from "../src/ingest/segment.js";
import { JSON_BODY_LIMIT_BYTES } from "../src/rest/router.js";
import { routes } from "../src/rest/routes.js";
import { costExtensions, expectProblem, prisma, type Reply, type Server, startServer, type Tenant, tenant } from "./helpers.js";

const MiB = 1024 * 1024;
let server: Server;
let a: Tenant;

beforeAll(async () => {
  server = await startServer();
  a = await tenant("limits");
});
afterAll(() => server.close());

interface Sent extends Reply {
  /** Body bytes written before the answer came. */
  written: number;
}

/**
 * POSTs (or PUTs) a chunked body: `head`, then filler chunks until `upTo` bytes are written or the
 * answer comes, whichever is first. The body is never ended before the answer: a server waiting for
 * its end times out the test. `upTo: 0` writes the head alone; `end` ends the body after it (still chunked).
 */
function sendChunked(
  path: string,
  opts: { method?: string; headers: Record<string, string>; head: string | Buffer; upTo: number; chunk?: number; end?: boolean },
) {
  return new Promise<Sent>((resolve, reject) => {
    const url = new URL(server.url + path);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: opts.method ?? "POST", headers: opts.headers });
    let written = 0;
    let answered = false;
    const filler = Buffer.alloc(opts.chunk ?? 256 * 1024, " ");
    const write = (data: string | Buffer) => {
      written += Buffer.byteLength(data);
      return req.write(data);
    };
    const pump = () => {
      while (!answered && written < opts.upTo) if (!write(filler)) return void req.once("drain", pump);
    };
    req.on("response", (res) => {
      answered = true;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => void (text += c));
      res.on("end", () => {
        req.destroy();
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode!, headers, body, text, written });
      });
    });
    // Writing on after the server closed the connection fails; only an error before any answer counts.
    req.on("error", (err) => void (answered || reject(err)));
    // Chunked unless a test declares a length.
    if (!opts.headers["content-length"]) expect(req.getHeader("content-length")).toBeUndefined();
    write(opts.head);
    if (opts.end) return void req.end();
    pump();
  });
}

/** A JSON text opening whose value is never closed: the filler (spaces) goes on inside it. */
const openJson = (prefix: string) => `${prefix}"`;

/** Rows the account has in the tables a write touches. */
async function rowsOf(accountId: string) {
  const where = { accountId };
  const counts = await Promise.all([
    prisma.content.count({ where }),
    prisma.tag.count({ where }),
    prisma.endUser.count({ where }),
    prisma.event.count({ where }),
    prisma.auditLog.count({ where }),
  ]);
  return counts.reduce((x, y) => x + y, 0);
}

function expectRefusedEarly(r: Sent, status: number, detail?: string | RegExp) {
  expectProblem(r, status, detail);
  expect(r.headers.get("connection")).toBe("close");
}

const json = { "content-type": "application/json" };

describe("POST /graphql", () => {
  const mutation = (t = a) => `mutation { upsertTags(accountId: "${t.accountId}", input: [{ name: "big" }]) { __typename } }`;

  it("a chunked body past 10 MiB with credentials: 413 problem+json as soon as it passes the limit, nothing executed", async () => {
    const before = await rowsOf(a.accountId);
    const r = await sendChunked("/graphql", {
      headers: { ...json, ...a.headers },
      head: openJson(`{"query":${JSON.stringify(mutation())},"variables":{"pad":`),
      upTo: 12 * MiB,
    });
    expectRefusedEarly(r, 413, "Request body larger than the limit (10 MiB for JSON).");
    expect(r.written).toBeGreaterThan(JSON_BODY_LIMIT_BYTES);
    expect(await rowsOf(a.accountId)).toBe(before);
  });

  it("without credentials: 401 before the body is read (its first bytes only were sent), chunked or declared", async () => {
    const chunked = await sendChunked("/graphql", { headers: json, head: openJson(`{"query":"{ __typename }","pad":`), upTo: 0 });
    expect(chunked.status).toBe(401);
    expect(chunked.body.errors).toEqual([{ message: expect.stringMatching(/x-service-integration-key/), extensions: { code: "UNAUTHENTICATED" } }]);
    expect(chunked.headers.get("connection")).toBe("close");
    expect(chunked.written).toBeLessThan(1024);
    // A declared 12 MiB body: 401 (the contract's order: credentials, then the body's size), none of it sent.
    const declared = await sendChunked("/graphql", {
      headers: { ...json, "content-length": String(12 * MiB), "x-service-integration-key": "ggk_wrong", "x-service-user": a.email },
      head: "",
      upTo: 0,
    });
    expect([declared.status, declared.body.errors[0].extensions.code]).toEqual([401, "UNAUTHENTICATED"]);
  });

  it("a declared Content-Length past 10 MiB with credentials: 413 before any byte of the body", async () => {
    const r = await sendChunked("/graphql", { headers: { ...json, ...a.headers, "content-length": String(12 * MiB) }, head: "", upTo: 0 });
    expectRefusedEarly(r, 413, "Request body larger than the limit (10 MiB for JSON).");
  });

  it("a chunked body within the limit is read and executed as before", async () => {
    const b = await tenant("limits-ok");
    const body = JSON.stringify({ query: mutation(b) });
    const r = await sendChunked("/graphql", { headers: { ...json, accept: "application/json", ...b.headers }, head: body, upTo: 0, end: true });
    expect([r.status, r.body]).toEqual([200, { data: { upsertTags: { __typename: "TagsPayload" } }, extensions: costExtensions() }]);
    expect(await prisma.tag.count({ where: { accountId: b.accountId, name: "big" } })).toBe(1);
  });
});

describe("REST JSON routes", () => {
  const jsonRoutes = routes.filter((r) => r.jsonBody);

  it("every route refuses a chunked body past 10 MiB with a 413 as soon as it passes the limit; nothing written", async () => {
    expect(jsonRoutes.length).toBeGreaterThan(10);
    const keys = new Map<string, Record<string, string>>();
    const before = await rowsOf(a.accountId);
    for (const route of jsonRoutes) {
      const scope = route.scopes?.includes("integration") === false ? route.scopes[0]! : "integration";
      if (!keys.has(scope)) {
        const { key } = await createKey(a.email, scope === "ingest" ? { scope, accountId: a.accountId } : { scope });
        keys.set(scope, { "x-service-integration-key": key, "x-service-user": a.email });
      }
      const path = route.path.replace(":accountId", a.accountId).replace(/:(\w+)/g, "p1");
      const r = await sendChunked(path, {
        method: route.method.toUpperCase(),
        headers: { ...json, ...keys.get(scope)! },
        head: "[",
        upTo: 11 * MiB,
        chunk: MiB,
      });
      const what = `${route.method} ${route.path}`;
      expect(r.status, `${what}: ${r.text.slice(0, 300)}`).toBe(413);
      expect(r.headers.get("connection"), what).toBe("close");
      if (!route.errorBody) expectProblem(r, 413, "Request body larger than the limit (10 MiB for JSON).");
    }
    expect(await rowsOf(a.accountId)).toBe(before);
  });

  it("credentials still come first: no key and a chunked body past the limit is a 401", async () => {
    const route = jsonRoutes[0]!;
    const path = route.path.replace(":accountId", a.accountId).replace(/:(\w+)/g, "p1");
    const r = await sendChunked(path, { method: route.method.toUpperCase(), headers: json, head: "[", upTo: 11 * MiB, chunk: MiB });
    expectRefusedEarly(r, 401);
  });
});

describe("the PDF upload (25 MiB)", () => {
  it("a chunked PDF past 25 MiB is a 413 as soon as it passes the limit; nothing stored", async () => {
    const files = await prisma.storedFile.count();
    const r = await sendChunked(`/v1/accounts/${a.accountId}/content/upload/cloud/pdf/flow-1/3/1718000000000/big.pdf`, {
      headers: { "content-type": "application/pdf", ...a.headers },
      head: "%PDF-1.7\n",
      upTo: 27 * MiB,
      chunk: MiB,
    });
    expectRefusedEarly(r, 413, /25 MiB/);
    expect(await prisma.storedFile.count()).toBe(files);
  });
});

describe("/segment/v1/*", () => {
  let basic: Record<string, string>;
  beforeAll(async () => {
    const { key } = await createKey(a.email, { scope: "ingest", accountId: a.accountId });
    basic = { authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}` };
  });

  it.each(["batch", "track"])("/segment/v1/%s: a chunked body past 500 KB is a 413 as soon as it passes the limit; nothing stored", async (path) => {
    const events = await prisma.event.count({ where: { accountId: a.accountId } });
    const r = await sendChunked(`/segment/v1/${path}`, {
      headers: { ...json, ...basic },
      head: openJson(
        path === "batch" ? `{"batch":[{"type":"track","event":"x","userId":"u","properties":{"pad":` : `{"type":"track","event":"x","userId":"u","pad":`,
      ),
      upTo: 2 * REQUEST_LIMIT_BYTES,
      chunk: 16 * 1024,
    });
    expectRefusedEarly(r, 413, /500 KB/);
    expect(await prisma.event.count({ where: { accountId: a.accountId } })).toBe(events);
  });

  it("without a write key in the header: the body's 413 (the key could only be in that body), not a 401", async () => {
    const r = await sendChunked("/segment/v1/batch", { headers: json, head: openJson(`{"batch":[],"pad":`), upTo: 2 * REQUEST_LIMIT_BYTES, chunk: 16 * 1024 });
    expectRefusedEarly(r, 413, /500 KB/);
  });

  it("with an unknown write key in the header: 401 first", async () => {
    const r = await sendChunked("/segment/v1/batch", {
      headers: { ...json, authorization: `Basic ${Buffer.from("ggk_unknown:").toString("base64")}` },
      head: openJson(`{"batch":[],"pad":`),
      upTo: 2 * REQUEST_LIMIT_BYTES,
      chunk: 16 * 1024,
    });
    expectRefusedEarly(r, 401);
  });

  it("a call past 32 KB sent chunked within 500 KB: 413 naming the call; nothing stored", async () => {
    expect(CALL_LIMIT_BYTES).toBe(32 * 1024);
    const events = await prisma.event.count({ where: { accountId: a.accountId } });
    const call = { type: "track", event: "x", userId: "u", messageId: `m-${process.pid}`, properties: { pad: "p".repeat(33 * 1024) } };
    const r = await sendChunked("/segment/v1/batch", { headers: { ...json, ...basic }, head: JSON.stringify({ batch: [call] }), upTo: 0, end: true });
    expectProblem(r, 413, /32 KB \(batch\[0\]\)/);
    expect(await prisma.event.count({ where: { accountId: a.accountId } })).toBe(events);
  });
});

// A compressed body (Content-Encoding) is decoded on POST /graphql as body-parser decodes the REST
// routes' (gzip, deflate, br), and the 10 MiB limit holds for the decoded bytes: a few KB of gzip
// that inflate past it are refused like 11 MiB sent plain.
describe("compressed bodies: POST /graphql as the REST routes", () => {
  const CODINGS = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync } as const;
  const post = (path: string, method: string, headers: Record<string, string>, body: Buffer) =>
    fetch(server.url + path, { method, headers: { ...json, accept: "application/json", ...headers }, body: new Uint8Array(body) }).then(async (res) => {
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined } as Reply;
    });
  const tagsOf = async (t: Tenant) => (await prisma.tag.findMany({ where: { accountId: t.accountId }, select: { name: true } })).map((x) => x.name).sort();
  // Zeros inside a JSON string: about 10 KB of gzip, 11 MiB decoded.
  const bomb = (prefix: string) => gzipSync(Buffer.concat([Buffer.from(`${prefix}"`), Buffer.alloc(11 * MiB, "0"), Buffer.from('"}')]));

  it("gzip, deflate and br bodies are decoded and executed, over GraphQL and REST alike (twice each: the accepted-query path too)", async () => {
    const t = await tenant("limits-coded");
    for (const [coding, encode] of Object.entries(CODINGS)) {
      for (const round of [1, 2]) {
        const name = `${coding}-${round}`;
        const gql = JSON.stringify({
          query: `mutation($a: String!, $n: String!) { upsertTags(accountId: $a, input: [{ name: $n }]) { __typename } }`,
          variables: { a: t.accountId, n: `g-${name}` },
        });
        const r = await post("/graphql", "POST", { ...t.headers, "content-encoding": coding }, encode(Buffer.from(gql)));
        expect([coding, r.status, r.body]).toEqual([coding, 200, { data: { upsertTags: { __typename: "TagsPayload" } }, extensions: costExtensions() }]);
        const rest = await post(
          `/v1/accounts/${t.accountId}/tags`,
          "PUT",
          { ...t.headers, "content-encoding": coding },
          encode(Buffer.from(JSON.stringify([{ name: `r-${name}` }]))),
        );
        expect([coding, rest.status]).toEqual([coding, 201]);
      }
    }
    const names = Object.keys(CODINGS).flatMap((c) => [1, 2].map((r) => `${c}-${r}`));
    expect(await tagsOf(t)).toEqual([...names.map((n) => `g-${n}`), ...names.map((n) => `r-${n}`)].sort());
  });

  it("another coding is a 415, bytes that do not decode a 400, and past 10 MiB decoded a 413: problem+json, nothing written, on both", async () => {
    const t = await tenant("limits-coded-bad");
    const before = await rowsOf(t.accountId);
    const gql = Buffer.from(JSON.stringify({ query: `mutation { upsertTags(accountId: "${t.accountId}", input: [{ name: "x" }]) { __typename } }` }));
    const rest = Buffer.from(JSON.stringify([{ name: "x" }]));
    for (const [path, method, body, prefix] of [
      [
        "/graphql",
        "POST",
        gql,
        `{"query":${JSON.stringify(`mutation { upsertTags(accountId: "${t.accountId}", input: [{ name: "x" }]) { __typename } }`)},"variables":{"pad":`,
      ],
      [`/v1/accounts/${t.accountId}/tags`, "PUT", rest, `[{"name":"x","description":`],
    ] as const) {
      expectProblem(await post(path, method, { ...t.headers, "content-encoding": "compress" }, body), 415, /unsupported content encoding "compress"/);
      expectProblem(await post(path, method, { ...t.headers, "content-encoding": "gzip" }, body), 400);
      const packed = bomb(prefix);
      expect(packed.length).toBeLessThan(64 * 1024);
      expectProblem(
        await post(path, method, { ...t.headers, "content-encoding": "gzip" }, packed),
        413,
        "Request body larger than the limit (10 MiB for JSON).",
      );
    }
    expect(await rowsOf(t.accountId)).toBe(before);
  });
});
