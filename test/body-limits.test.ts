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
 * The filler is spaces unless given.
 */
function sendChunked(
  path: string,
  opts: { method?: string; headers: Record<string, string>; head: string | Buffer; upTo: number; chunk?: number; end?: boolean; filler?: Buffer },
) {
  return new Promise<Sent>((resolve, reject) => {
    const url = new URL(server.url + path);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: opts.method ?? "POST", headers: opts.headers });
    let written = 0;
    let answered = false;
    const filler = opts.filler ?? Buffer.alloc(opts.chunk ?? 256 * 1024, " ");
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

// A compressed body (Content-Encoding: gzip, deflate, br; identity is the plain body) is decoded as
// it arrives, by one piece of code for every route that takes a body (src/rest/bodyLimit.ts): POST
// /graphql, the REST JSON routes (POST /events among them) and the Segment routes. Each route's
// limit holds for the decoded bytes too, and decoding stops there: a few KB of gzip that inflate
// past it are refused like as many bytes sent plain. Another coding is a 415 naming the supported
// ones, bytes that do not decode a 400. Nothing is written on a refused body.
describe("compressed bodies: every route family", () => {
  const CODINGS = { identity: (b: Buffer) => b, gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync } as const;
  const post = (path: string, headers: Record<string, string>, body: Buffer, method = "POST") =>
    fetch(server.url + path, { method, headers: { ...json, accept: "application/json", ...headers }, body: new Uint8Array(body) }).then(async (res) => {
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, text, body: parsed } as Reply;
    });
  const segmentAuth = async (t: Tenant) => {
    const { key } = await createKey(t.email, { scope: "ingest", accountId: t.accountId });
    return { authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}` };
  };
  const eventsOf = async (t: Tenant) =>
    (await prisma.event.findMany({ where: { accountId: t.accountId }, select: { type: true, endUserId: true } })).map((e) => `${e.type}/${e.endUserId}`).sort();
  const tagsOf = async (t: Tenant) => (await prisma.tag.findMany({ where: { accountId: t.accountId }, select: { name: true } })).map((x) => x.name).sort();
  const time = Date.now() - 60_000;

  /** One route of each family: its request for a tenant, the JSON body (with a prefix opening a string, for bombs) and what it writes. */
  interface Family {
    name: string;
    path: (t: Tenant) => string;
    method?: string;
    headers: (t: Tenant) => Promise<Record<string, string>>;
    body: (t: Tenant) => unknown;
    /** A body opening a JSON string that the filler of a bomb continues. */
    prefix: (t: Tenant) => string;
    limit: number;
    tooLarge: string | RegExp;
    state: (t: Tenant) => Promise<unknown>;
  }
  const families: Family[] = [
    {
      name: "POST /graphql",
      path: () => "/graphql",
      headers: async (t) => t.headers,
      body: (t) => ({
        query: `mutation($a: String!) { upsertTags(accountId: $a, input: [{ name: "zipped" }]) { __typename } }`,
        variables: { a: t.accountId },
      }),
      prefix: (t) =>
        `{"query":${JSON.stringify(`mutation { upsertTags(accountId: "${t.accountId}", input: [{ name: "x" }]) { __typename } }`)},"variables":{"pad":"`,
      limit: JSON_BODY_LIMIT_BYTES,
      tooLarge: "Request body larger than the limit (10 MiB for JSON).",
      state: tagsOf,
    },
    {
      name: "PUT /v1/accounts/:accountId/tags",
      path: (t) => `/v1/accounts/${t.accountId}/tags`,
      method: "PUT",
      headers: async (t) => t.headers,
      body: () => [{ name: "zipped" }, { name: "zipped-2" }],
      prefix: () => `[{"name":"x","description":"`,
      limit: JSON_BODY_LIMIT_BYTES,
      tooLarge: "Request body larger than the limit (10 MiB for JSON).",
      state: tagsOf,
    },
    {
      name: "POST /v1/accounts/:accountId/events",
      path: (t) => `/v1/accounts/${t.accountId}/events`,
      headers: async (t) => t.headers,
      body: () => [
        { type: "flow_started", time, endUserId: "zipped-1", flowId: "f1", widget: "self_help" },
        { type: "selfhelp_search", time, endUserId: "zipped-2", searchTerm: "invoice", resultCount: 3 },
      ],
      prefix: () => `[{"type":"flow_started","time":${time},"endUserId":"u","flowId":"f1","widget":"self_help","userName":"`,
      limit: JSON_BODY_LIMIT_BYTES,
      tooLarge: "Request body larger than the limit (10 MiB for JSON).",
      state: eventsOf,
    },
    {
      name: "POST /segment/v1/batch",
      path: () => "/segment/v1/batch",
      headers: segmentAuth,
      body: () => ({
        batch: [
          { type: "track", event: "zipped", userId: "zipped-1", messageId: "m-1" },
          { type: "track", event: "zipped", userId: "zipped-2", messageId: "m-2" },
        ],
      }),
      prefix: () => `{"batch":[{"type":"track","event":"x","userId":"u","properties":{"pad":"`,
      limit: REQUEST_LIMIT_BYTES,
      tooLarge: "Request body larger than 500 KB.",
      state: eventsOf,
    },
    {
      name: "POST /segment/v1/track",
      path: () => "/segment/v1/track",
      headers: segmentAuth,
      body: () => ({ type: "track", event: "zipped", userId: "zipped-1", messageId: "m-1" }),
      prefix: () => `{"type":"track","event":"x","userId":"u","properties":{"pad":"`,
      limit: REQUEST_LIMIT_BYTES,
      tooLarge: "Request body larger than 500 KB.",
      state: eventsOf,
    },
  ];
  /** A JSON body opened by `prefix` whose string goes on with zeros to `size` bytes decoded: a few KB of gzip. */
  const bomb = (prefix: string, size: number) => gzipSync(Buffer.concat([Buffer.from(prefix), Buffer.alloc(size, "0"), Buffer.from('"}')]));

  it.each(families)("$name: gzip, deflate and br bodies give the answer and the rows the plain body gives", async (f) => {
    const outcomes: Record<string, unknown> = {};
    for (const [coding, encode] of Object.entries(CODINGS)) {
      const t = await tenant("coded");
      const r = await post(f.path(t), { ...(await f.headers(t)), "content-encoding": coding }, encode(Buffer.from(JSON.stringify(f.body(t)))), f.method);
      expect(r.status, `${coding}: ${r.text}`).toBeLessThan(300);
      // (Ids the server made differ from tenant to tenant.)
      const body = JSON.parse(JSON.stringify(r.body).replace(/"id":"[^"]*"/g, '"id":"…"'));
      outcomes[coding] = { status: r.status, body, rows: await f.state(t) };
    }
    expect((outcomes.identity as { rows: unknown[] }).rows.length).toBeGreaterThan(0);
    for (const coding of ["gzip", "deflate", "br"]) expect([coding, outcomes[coding]]).toEqual([coding, outcomes.identity]);
  });

  it.each(families)("$name: another coding is a 415 naming the supported ones; nothing written", async (f) => {
    const t = await tenant("coded-415");
    const headers = await f.headers(t);
    const before = await rowsOf(t.accountId);
    const body = Buffer.from(JSON.stringify(f.body(t)));
    for (const coding of ["compress", "zstd", "gzip, gzip"]) {
      const r = await post(f.path(t), { ...headers, "content-encoding": coding }, body, f.method);
      expectProblem(r, 415, `Content-Encoding "${coding}" is not supported: send the body as gzip, deflate, br or identity (uncompressed).`);
      expect(r.body.errors).toEqual([{ path: "Content-Encoding", message: "not one of gzip, deflate, br or identity" }]);
      expect(r.headers.get("accept-encoding")).toBe("gzip, deflate, br");
    }
    expect(await rowsOf(t.accountId)).toBe(before);
  });

  it.each(families)("$name: a body that does not decode is a 400 saying so; nothing written", async (f) => {
    const t = await tenant("coded-400");
    const headers = await f.headers(t);
    const before = await rowsOf(t.accountId);
    const plain = Buffer.from(JSON.stringify(f.body(t)));
    const cases: [string, Buffer][] = [
      ["gzip", plain], // not gzip at all
      ["gzip", gzipSync(plain).subarray(0, 20)], // cut short
      ["deflate", Buffer.from("not deflate")],
      ["br", Buffer.from([0xff, 0xff, 0xff, 0xff])],
    ];
    for (const [coding, bytes] of cases) {
      const r = await post(f.path(t), { ...headers, "content-encoding": coding }, bytes, f.method);
      expectProblem(r, 400, new RegExp(`^The request body could not be decompressed \\(${coding}\\): `));
      expect(r.body.errors).toEqual([{ path: "body", message: "could not be decompressed" }]);
    }
    expect(await rowsOf(t.accountId)).toBe(before);
  });

  it.each(families)("$name: a small body that inflates past the limit is a 413; nothing written", async (f) => {
    const t = await tenant("coded-413");
    const headers = await f.headers(t);
    const before = await rowsOf(t.accountId);
    const packed = bomb(f.prefix(t), f.limit + 1024);
    expect(packed.length).toBeLessThan(f.limit / 100);
    const r = await post(f.path(t), { ...headers, "content-encoding": "gzip" }, packed, f.method);
    expectProblem(r, 413, f.tooLarge);
    expect(await rowsOf(t.accountId)).toBe(before);
  });

  it("a gzip body of 1 MiB that would inflate to 1 GiB is refused at 10 MiB decoded (decoding stops there); nothing written", async () => {
    const t = await tenant("coded-bomb");
    const before = await rowsOf(t.accountId);
    // gzip members one after another are one gzip body (RFC 1952): 1,024 members of 1 MiB of zeros each.
    const member = gzipSync(Buffer.alloc(MiB, "0"));
    const packed = Buffer.concat([gzipSync(Buffer.from('[{"name":"x","description":"')), ...Array.from({ length: 1024 }, () => member)]);
    expect(packed.length).toBeLessThan(2 * MiB);
    for (const [path, method] of [
      ["/graphql", "POST"],
      [`/v1/accounts/${t.accountId}/tags`, "PUT"],
    ] as const) {
      const r = await post(path, { ...t.headers, "content-encoding": "gzip" }, packed, method);
      expectProblem(r, 413, "Request body larger than the limit (10 MiB for JSON).");
    }
    expect(await rowsOf(t.accountId)).toBe(before);
  });

  it("a chunked gzip body is decoded too, and its received bytes are limited as a plain body's are", async () => {
    const t = await tenant("coded-chunked");
    const body = gzipSync(
      Buffer.from(JSON.stringify({ query: `mutation { upsertTags(accountId: "${t.accountId}", input: [{ name: "chunked" }]) { __typename } }` })),
    );
    const ok = await sendChunked("/graphql", {
      headers: { ...json, accept: "application/json", ...t.headers, "content-encoding": "gzip" },
      head: body,
      upTo: 0,
      end: true,
    });
    expect([ok.status, ok.body]).toEqual([200, { data: { upsertTags: { __typename: "TagsPayload" } }, extensions: costExtensions() }]);
    expect(await tagsOf(t)).toEqual(["chunked"]);
    // 12 MiB received that decode to one byte (gzip members of nothing, one after another), never
    // ended: 413 as soon as the bytes received pass 10 MiB, though the decoded ones never would.
    const empty = gzipSync(Buffer.alloc(0));
    const filler = Buffer.concat(Array.from({ length: 13_000 }, () => empty));
    for (const path of ["/graphql", `/v1/accounts/${t.accountId}/tags`]) {
      const r = await sendChunked(path, {
        method: path === "/graphql" ? "POST" : "PUT",
        headers: { ...json, ...t.headers, "content-encoding": "gzip" },
        head: gzipSync(Buffer.from("[")),
        upTo: 12 * MiB,
        filler,
      });
      expectRefusedEarly(r, 413, "Request body larger than the limit (10 MiB for JSON).");
    }
    expect(await tagsOf(t)).toEqual(["chunked"]);
  });

  it("an empty body with a Content-Encoding is the empty body (REST: no body; GraphQL: no query)", async () => {
    const t = await tenant("coded-empty");
    const before = await rowsOf(t.accountId);
    const r = await post(`/v1/accounts/${t.accountId}/tags`, { ...t.headers, "content-encoding": "gzip" }, Buffer.alloc(0), "PUT");
    expect(r.status, r.text).toBe(400);
    expect(r.body.detail).not.toMatch(/decompress/);
    expect(await rowsOf(t.accountId)).toBe(before);
  });
});
