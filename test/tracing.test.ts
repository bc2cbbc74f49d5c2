// OpenTelemetry traces from a real server process (OTEL_* set) to a real OTLP/HTTP receiver started
// here, which decodes the exporter's JSON export requests: the span tree of a REST call (HTTP →
// GraphQL operation → SQL), of a GraphQL call, an incoming traceparent continued, and a webhook
// delivery (a trace of its own, linked to the request whose change queued it; its POST carries a
// traceparent the receiver can continue). Log lines carry the trace's ids. Both databases.

import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { parse } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, createUser } from "../src/admin.js";
import { loadConfig } from "../src/config.js";
import { dbKind, withTransaction } from "../src/db/index.js";
import { operationCost } from "../src/graphql/cost.js";
import { startTracing, tracing } from "../src/observability/tracing.js";
import { schema } from "../src/schema/index.js";
import { type Child, killChildren, startServerProcess } from "./childProcess.js";
import { call, prisma, type Tenant, tenant, until } from "./helpers.js";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  links: { traceId: string; spanId: string }[];
  service: string;
}
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

const spans: Span[] = [];
const exports: { path: string; contentType: string }[] = [];
const hookCalls: { headers: IncomingHttpHeaders; body: string }[] = [];
let collector: Server;
let hookReceiver: Server;
let server: { child: Child; url: string };
let t: Tenant;
const outbox = mkdtempSync(join(tmpdir(), "gg-tracing-outbox-"));

const otlpValue = (v: OtlpValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue));

/** An OTLP/HTTP JSON export request's spans, flattened with their service name. */
function decode(body: any): Span[] {
  const out: Span[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = rs.resource?.attributes?.find((a: any) => a.key === "service.name")?.value?.stringValue;
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          kind: s.kind,
          attributes: Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, otlpValue(a.value)])),
          links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
          service,
        });
  }
  return out;
}

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
  });

beforeAll(async () => {
  collector = createServer(async (req, res) => {
    let body = await readBody(req);
    if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
    exports.push({ path: req.url ?? "", contentType: String(req.headers["content-type"]) });
    spans.push(...decode(JSON.parse(body.toString("utf8"))));
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  hookReceiver = createServer(async (req, res) => {
    const body = (await readBody(req)).toString("utf8");
    hookCalls.push({ headers: req.headers, body });
    res.end("ok");
  });
  const collectorUrl = await listen(collector);
  const hookUrl = await listen(hookReceiver);
  t = await tenant("otel");
  server = await startServerProcess({
    OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
    OTEL_SERVICE_NAME: "guidegate-test",
    OTEL_BSP_SCHEDULE_DELAY: "50",
    JOB_WORKER: "true",
    WEBHOOKS_ALLOW_PRIVATE: "true",
    WEBHOOK_POLL_MS: "100",
    JOB_POLL_MS: "100",
    OUTBOX_DIR: outbox,
    ROLLUP_POLL_MS: "60000",
  });
  const hook = await call(`${server.url}/v1/accounts/${t.accountId}/webhooks`, {
    method: "POST",
    headers: t.headers,
    body: { url: `${hookUrl}/hook`, events: ["engagement.user_action"] },
  });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
}, 120_000);

afterAll(() => {
  killChildren();
  rmSync(outbox, { recursive: true, force: true });
  collector?.close();
  hookReceiver?.close();
});

/** The spans of the trace whose server span answered x-request-id `requestId`, once it and `enough` of it were exported. */
async function traceOf(requestId: string, enough: (trace: Span[]) => boolean = () => true): Promise<{ root: Span; trace: Span[] }> {
  return until(
    `the trace of request ${requestId}`,
    async () => {
      const root = spans.find((s) => s.kind === SERVER && s.attributes["http.request.id"] === requestId);
      const trace = root ? spans.filter((s) => s.traceId === root.traceId) : [];
      return root && enough(trace) ? { root, trace } : null;
    },
    15_000,
  );
}

const childrenOf = (trace: Span[], parent: Span) => trace.filter((s) => s.parentSpanId === parent.spanId);
/** Every span under `parent`, at any depth. */
function under(trace: Span[], parent: Span): Span[] {
  const out: Span[] = [];
  for (const c of childrenOf(trace, parent)) out.push(c, ...under(trace, c));
  return out;
}
const isSql = (s: Span) => s.kind === CLIENT && (s.name === "prisma:client:db_query" || s.name.startsWith("db_query "));

describe("OpenTelemetry traces over OTLP/HTTP", () => {
  it("a REST call: the HTTP span, the route's GraphQL operation under it, its SQL statements under that; the log line carries the ids", async () => {
    const requestId = `otel-rest-${Date.now()}`;
    const r = await call(`${server.url}/api/v1/${t.accountId}/content?limit=5`, { headers: { ...t.headers, "x-request-id": requestId } });
    expect(r.status).toBe(200);
    const { root, trace } = await traceOf(requestId, (tr) => tr.some((s) => s.attributes["graphql.operation.type"] === "query" && tr.some(isSql)));

    expect(root).toMatchObject({ service: "guidegate-test", parentSpanId: undefined, name: "GET /api/v1/:accountId/content" });
    expect(root.attributes).toMatchObject({ "http.request.method": "GET", "http.response.status_code": 200, "http.route": "/api/v1/:accountId/content" });
    const operation = childrenOf(trace, root).find((s) => s.attributes["graphql.operation.type"] === "query")!;
    expect(operation, JSON.stringify(trace.map((s) => s.name))).toBeDefined();
    expect(operation.name).toMatch(/^query \w+/);
    expect(operation.attributes["guidegate.graphql.cost"]).toEqual(expect.any(Number));
    // The statements the operation ran are under it (Prisma's operation span sits in between).
    const sql = under(trace, operation).filter(isSql);
    expect(sql.length).toBeGreaterThan(0);
    for (const s of sql) {
      expect(String(s.attributes["db.query.text"])).toMatch(/SELECT/i);
      expect(s.attributes["db.system.name"]).toBe(dbKind() === "postgres" ? "postgresql" : "sqlite");
    }
    // The key lookup and the budget check are spans of the request too.
    expect(childrenOf(trace, root).map((s) => s.name)).toEqual(expect.arrayContaining(["identity lookup", "rate limit"]));

    const line = await server.child.waitFor((l) => l.requestId === requestId && l.res?.statusCode === 200);
    expect(line).toMatchObject({ trace_id: root.traceId, span_id: root.spanId });
    expect(exports[0]).toMatchObject({ path: "/v1/traces", contentType: "application/json" });
  });

  it("a GraphQL call: its operation span is named by the operation, with its cost, and its statements are under it", async () => {
    const requestId = `otel-gql-${Date.now()}`;
    const query = "query TracedTags($id: String!) { account(id: $id) { tags(first: 5) { nodes { name } } } }";
    const r = await call(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...t.headers, "x-request-id": requestId },
      body: { query, variables: { id: t.accountId } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const { root, trace } = await traceOf(requestId, (tr) => tr.some((s) => s.name === "query TracedTags") && tr.some(isSql));
    expect([root.name, root.attributes["http.route"]]).toEqual(["POST /graphql", "/graphql"]);
    const operation = trace.find((s) => s.name === "query TracedTags")!;
    expect(operation.parentSpanId).toBe(root.spanId);
    // The cost is the operation's static cost (src/graphql/cost.ts) for these variables.
    expect(operation.attributes).toMatchObject({
      "graphql.operation.name": "TracedTags",
      "graphql.operation.type": "query",
      "guidegate.graphql.cost": operationCost(schema, parse(query), "TracedTags", { id: t.accountId }),
    });
    expect(under(trace, operation).filter(isSql).length).toBeGreaterThan(0);
  });

  it("a persisted document's operation span carries its document id", async () => {
    const text = "query TracedPersisted($id: String!) { account(id: $id) { tags(first: 2) { nodes { name } } } }";
    const documentId = `sha256:${createHash("sha256").update(text).digest("hex")}`;
    const stored = await call(`${server.url}/v1/accounts/${t.accountId}/graphql/documents`, {
      method: "POST",
      headers: t.headers,
      body: { [documentId]: text },
    });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    const requestId = `otel-persisted-${Date.now()}`;
    const r = await call(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...t.headers, "x-request-id": requestId },
      body: { documentId, variables: { id: t.accountId } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const { root, trace } = await traceOf(requestId, (tr) => tr.some((s) => s.name === "query TracedPersisted"));
    const operation = trace.find((s) => s.name === "query TracedPersisted")!;
    expect(operation.parentSpanId).toBe(root.spanId);
    expect(operation.attributes).toMatchObject({ "graphql.document.id": documentId, "graphql.operation.name": "TracedPersisted" });

    // A saved endpoint runs a persisted document too: its span names it the same way.
    const saved = await call(`${server.url}/v1/accounts/${t.accountId}/endpoints/traced`, {
      method: "PUT",
      headers: t.headers,
      body: { document: "query TracedEndpoint($accountId: String!) { account(id: $accountId) { id } }" },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const runId = `otel-endpoint-${Date.now()}`;
    const ran = await call(`${server.url}/v1/accounts/${t.accountId}/run/traced`, { headers: { ...t.headers, "x-request-id": runId } });
    expect(ran.status, JSON.stringify(ran.body)).toBe(200);
    const endpoint = await traceOf(runId, (tr) => tr.some((s) => s.name === "query TracedEndpoint"));
    expect(endpoint.trace.find((s) => s.name === "query TracedEndpoint")!.attributes).toMatchObject({
      "graphql.document.id": saved.body.documentId,
      "graphql.operation.name": "TracedEndpoint",
    });
    expect(endpoint.root.attributes["http.route"]).toBe("/v1/accounts/:accountId/run/:name");
  });

  it("continues an incoming traceparent: the request's span is a child of the caller's", async () => {
    const requestId = `otel-parent-${Date.now()}`;
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentId = "00f067aa0ba902b7";
    const r = await call(`${server.url}/api/v1/${t.accountId}/content?limit=1`, {
      headers: { ...t.headers, "x-request-id": requestId, traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect(r.status).toBe(200);
    const { root, trace } = await traceOf(requestId, (tr) => tr.some(isSql));
    expect(root).toMatchObject({ traceId, parentSpanId: parentId });
    expect(trace.every((s) => s.traceId === traceId)).toBe(true);
  });

  it("a webhook delivery is a trace of its own, linked to the request that queued it; its POST carries the attempt's traceparent", async () => {
    const requestId = `otel-hook-${Date.now()}`;
    const actionId = `traced-${Date.now()}`;
    const r = await call(`${server.url}/v1/accounts/${t.accountId}/events`, {
      method: "POST",
      headers: { ...t.headers, "x-request-id": requestId },
      body: [{ type: "user_action", time: Date.now(), actionId }],
    });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    const { root } = await traceOf(requestId);

    const received = await until("the webhook POST", async () => hookCalls.find((c) => c.body.includes(actionId)), 15_000);
    const header = String(received.headers.traceparent);
    expect(header).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, hookTraceId, hookParentId] = header.split("-");

    const attempt = await until("the attempt's spans", async () => {
      const a = spans.find((s) => s.name === "webhook attempt" && s.traceId === hookTraceId);
      return a && spans.some((s) => s.spanId === hookParentId) ? a : null;
    });
    // Its own trace (a root), linked to the request's.
    expect(attempt.traceId).not.toBe(root.traceId);
    expect(attempt.parentSpanId).toBeUndefined();
    expect(attempt.kind).toBe(CONSUMER);
    expect(attempt.links.map((l) => l.traceId)).toContain(root.traceId);
    expect(attempt.attributes).toMatchObject({ "guidegate.account_id": t.accountId, "guidegate.webhook.type": "engagement.user_action" });
    // The header names the attempt's POST span, a client span under the attempt.
    const post = spans.find((s) => s.spanId === hookParentId)!;
    expect(post).toMatchObject({ name: "POST webhook", kind: CLIENT, parentSpanId: attempt.spanId, traceId: attempt.traceId });
    expect(post.attributes["http.response.status_code"]).toBe(200);
    // Recording the attempt ran in the attempt's trace.
    const attemptTrace = spans.filter((s) => s.traceId === attempt.traceId);
    expect(attemptTrace.some(isSql)).toBe(true);
    // The link is the traceparent stored with the delivery row, in the transaction of the change.
    const row = await prisma.webhookDelivery.findFirstOrThrow({ where: { accountId: t.accountId, payload: { contains: actionId } } });
    expect(row.traceparent).toMatch(new RegExp(`^00-${root.traceId}-[0-9a-f]{16}-01$`));
  });

  it("a copy job is a trace of its own, linked to the request that queued it; its e-mail carries the job's traceparent", async () => {
    const dst = `${t.accountId}-dst`;
    await createAccount(dst);
    await createUser(t.email, [dst]);
    const sourceId = `${t.accountId}-src`;
    await withTransaction((tx) => tx.content.create({ data: { id: sourceId, accountId: t.accountId, title: "traced", type: "link" } }));
    const requestId = `otel-copy-${Date.now()}`;
    const r = await call(`${server.url}/v1/accounts/${t.accountId}/content/copy`, {
      method: "POST",
      headers: { ...t.headers, "x-request-id": requestId },
      body: { destinationAccountId: dst, destinationUserId: t.email, contentIds: [sourceId] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const jobId: string = r.body.id ?? r.body.jobId;
    const { root } = await traceOf(requestId);
    expect((await prisma.copyJob.findUniqueOrThrow({ where: { id: jobId } })).traceparent).toMatch(new RegExp(`^00-${root.traceId}-`));

    // notifiedAt is set once the e-mail was written whole (the file exists a moment before its bytes).
    await until("the job's e-mail", async () => (await prisma.copyJob.findUniqueOrThrow({ where: { id: jobId } })).notifiedAt, 20_000);
    const mail = readdirSync(outbox).find((f) => f.includes(jobId))!;
    const header = /^traceparent: (\S+)$/im.exec(readFileSync(join(outbox, mail), "utf8"))?.[1];
    expect(header).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const job = await until("the job's span", async () => spans.find((s) => s.name === "copy job" && s.attributes["guidegate.job.id"] === jobId));
    expect(job).toMatchObject({ parentSpanId: undefined, kind: CONSUMER });
    expect(job.traceId).not.toBe(root.traceId);
    expect(job.links.map((l) => l.traceId)).toContain(root.traceId);
    expect(header!.split("-")[1]).toBe(job.traceId);
    // The copy's own statements are in the job's trace.
    expect(spans.filter((s) => s.traceId === job.traceId).some(isSql)).toBe(true);
  });

  it("off without an endpoint: startTracing loads nothing and leaves tracing undefined (every call site skips its span)", async () => {
    expect(await startTracing(loadConfig({}))).toBe(false);
    expect(tracing).toBeUndefined();
  });

  it("statements outside any request or job (the workers' polls) make no traces of their own", async () => {
    // The webhook and copy-job workers poll every 100 ms; every trace exported has a request or a job
    // at its root. Health probes are not traced either (/readyz runs a statement).
    for (const probe of ["/healthz", "/readyz"]) expect((await call(`${server.url}${probe}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(spans.filter((s) => s.kind === SERVER && /healthz|readyz/.test(String(s.attributes["url.path"])))).toEqual([]);
    const roots = spans.filter((s) => !s.parentSpanId);
    expect(roots.length).toBeGreaterThan(0);
    for (const root of roots) expect([SERVER, CONSUMER], `${root.name} is a root`).toContain(root.kind);
  });
});
