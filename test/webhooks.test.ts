// Webhooks: management over REST and GraphQL, Standard Webhooks signatures checked by the real
// `standardwebhooks` verifier on a real local HTTP receiver, retries with backoff, the delivery log,
// disabling after a whole failed schedule, replay, the SSRF guard, and once-only delivery with two
// workers on PostgreSQL. The retry schedule is tiny here (WEBHOOK_RETRY_SCHEDULE).
import { createServer, type Server as HttpServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook as Verifier } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAccount, createUser } from "../src/admin.js";
import { clock } from "../src/clock.js";
import { loadConfig } from "../src/config.js";
import { dbKind } from "../src/db/index.js";
import { closeQueue } from "../src/domains/copyJobs/queue.js";
import { CopyJobWorker } from "../src/domains/copyJobs/worker.js";
import { configureWebhooks } from "../src/domains/webhooks/settings.js";
import { checkWebhookUrl, isPublicAddress } from "../src/domains/webhooks/ssrf.js";
import { DELIVERY_LOG_RETENTION_MS, pruneDeliveries, WebhookWorker } from "../src/domains/webhooks/worker.js";
import { expectProblem, gql, prisma, requester, type Server, startServer, type Tenant, tenant, until } from "./helpers.js";

const ENV = { WEBHOOKS_ALLOW_PRIVATE: "true", WEBHOOK_RETRY_SCHEDULE: "40ms,80ms", WEBHOOK_POLL_MS: "25", WEBHOOK_TIMEOUT_MS: "400" };
let server: Server;
let worker: WebhookWorker;
let a: Tenant;
const req = requester(() => server);

// ---- a real receiver -------------------------------------------------------------------------------
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
interface Receiver {
  url: string;
  received: Received[];
  /** the status to answer the n-th request (0-based) of a path, the k-th of a webhook-id, with; "hang" never answers */
  answer: (path: string, n: number, k: number) => number | "hang";
  close(): Promise<void>;
}
async function receiver(): Promise<Receiver> {
  const r: Partial<Receiver> & { received: Received[] } = { received: [], answer: () => 200 };
  const counts = new Map<string, number>();
  const srv: HttpServer = createServer((rq, rs) => {
    let body = "";
    rq.on("data", (c) => (body += c));
    rq.on("end", () => {
      const path = rq.url ?? "/";
      const n = counts.get(path) ?? 0;
      counts.set(path, n + 1);
      const id = `id:${rq.headers["webhook-id"]}`;
      const k = counts.get(id) ?? 0;
      counts.set(id, k + 1);
      r.received.push({ path, headers: rq.headers, body });
      const status = r.answer!(path, n, k);
      if (status === "hang") return;
      rs.writeHead(status, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", ok));
  r.url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  r.close = () =>
    new Promise((ok) => {
      srv.closeAllConnections();
      srv.close(() => ok());
    });
  return r as Receiver;
}
let rcv: Receiver;

const hooks = (t: Tenant) => `/v1/accounts/${t.accountId}/webhooks`;
const create = (t: Tenant, body: unknown) => req(hooks(t), { method: "POST", headers: t.headers, body });
const events = (t: Tenant, body: unknown) => req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body });
const deliveries = async (t: Tenant, id: string) => {
  const r = await req(`${hooks(t)}/${id}/deliveries?limit=100`, { headers: t.headers });
  expect(r.status, r.text).toBe(200);
  return r.body.data as any[];
};
const verify = (secret: string, m: Received) =>
  new Verifier(secret).verify(m.body, {
    "webhook-id": String(m.headers["webhook-id"]),
    "webhook-timestamp": String(m.headers["webhook-timestamp"]),
    "webhook-signature": String(m.headers["webhook-signature"]),
  });

beforeAll(async () => {
  server = await startServer(ENV);
  rcv = await receiver();
  worker = new WebhookWorker();
  await worker.start();
  a = await tenant("wh");
});
afterEach(() => {
  rcv.answer = () => 200;
  configureWebhooks(loadConfig({ ...process.env, ...ENV }));
});
afterAll(async () => {
  await worker.stop();
  await closeQueue();
  await rcv.close();
  await server.close();
});

describe("managing webhooks over REST", () => {
  it("create (201 with the secret once), list and get (no secret), update, rotate, delete; tenants see only their own", async () => {
    const c = await create(a, { url: `${rcv.url}/crud`, events: ["engagement.flow_completed", "content.created"], description: "CRM" });
    expect(c.status, c.text).toBe(201);
    expect(c.body).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: `${rcv.url}/crud`,
      events: ["engagement.flow_completed", "content.created"],
      description: "CRM",
      enabled: true,
      disabledReason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]+$/),
      createdTime: expect.any(Number),
      lastUpdateTime: expect.any(Number),
    });
    const id = c.body.id;
    const stored = await prisma.webhook.findUniqueOrThrow({ where: { id } });
    expect(stored.secret).not.toContain(c.body.secret.slice(6)); // encrypted at rest
    const list = await req(hooks(a), { headers: a.headers });
    expect(list.status).toBe(200);
    expect(list.body.data.map((h: any) => h.id)).toContain(id);
    for (const h of list.body.data) expect(h).not.toHaveProperty("secret");
    const one = await req(`${hooks(a)}/${id}`, { headers: a.headers });
    expect(one.body).toEqual({ ...c.body, secret: undefined });
    expect(one.body).not.toHaveProperty("secret");

    expectProblem(
      await req(`${hooks(a)}/${id}`, { method: "PUT", headers: a.headers, body: { events: ["end_user.deleted", "end_user.deleted"] } }),
      400,
      /more than once/,
    );
    expect((await req(`${hooks(a)}/${id}`, { headers: a.headers })).body.events).toEqual(c.body.events);
    const upd = await req(`${hooks(a)}/${id}`, { method: "PUT", headers: a.headers, body: { events: ["*"], enabled: false } });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body).toMatchObject({ id, events: ["*"], enabled: false, description: "CRM" });
    const rot = await req(`${hooks(a)}/${id}/rotateSecret`, { method: "POST", headers: a.headers });
    expect(rot.status, rot.text).toBe(200);
    expect(rot.body.secret).toMatch(/^whsec_/);
    expect(rot.body.secret).not.toBe(c.body.secret);

    const b = await tenant("whb");
    expectProblem(await req(`${hooks(b)}/${id}`, { headers: b.headers }), 404);
    expectProblem(await req(`${hooks(b)}/${id}`, { method: "DELETE", headers: b.headers }), 404);
    expect((await req(hooks(b), { headers: b.headers })).body).toEqual({ data: [], cursor: null });
    expectProblem(await req(`${hooks(a)}/${id}`, { headers: b.headers }), 403);

    const del = await req(`${hooks(a)}/${id}`, { method: "DELETE", headers: a.headers });
    expect(del.status, del.text).toBe(204);
    expectProblem(await req(`${hooks(a)}/${id}`, { headers: a.headers }), 404);
    // Creation, update, rotation and deletion are audited; the secret never appears.
    const audit = await prisma.auditLog.findMany({ where: { accountId: a.accountId, resourceType: "webhook", resourceId: id }, orderBy: { timestamp: "asc" } });
    expect(audit.map((e) => e.action)).toEqual(["create", "update", "update", "delete"]);
    expect(JSON.stringify(audit)).not.toContain(c.body.secret.slice(6));
  });

  it("400 for unknown event types, a missing url or events, bad types and unknown fields; nothing stored", async () => {
    const t = await tenant("whv");
    expectProblem(await create(t, { url: `${rcv.url}/x`, events: ["engagement.nope"] }), 400, /unknown event type/);
    expectProblem(await create(t, { url: `${rcv.url}/x`, events: [] }), 400, /non-empty/);
    expectProblem(await create(t, { url: `${rcv.url}/x`, events: ["*", "content.created"] }), 400, /stands alone/);
    expectProblem(
      await create(t, { url: `${rcv.url}/x`, events: ["content.created", "content.deleted", "content.created"] }),
      400,
      "events lists 'content.created' more than once",
    );
    expectProblem(await create(t, { events: ["*"] }), 400, /url is required/);
    expectProblem(await create(t, { url: "not a url", events: ["*"] }), 400, /not a valid URL/);
    expectProblem(await create(t, { url: `${rcv.url}/x`, events: "*" }), 400);
    expectProblem(await create(t, { url: `${rcv.url}/x`, events: ["*"], colour: "red" }), 400);
    expectProblem(await create(t, [1]), 400);
    // A value of the wrong type is named by its place in the body, not as the whole body.
    const typed = await create(t, { url: 5, events: ["*"] });
    expectProblem(typed, 400, "body.url: String cannot represent a non string value: 5");
    expect(typed.body.errors).toEqual([{ path: "body.url", message: "String cannot represent a non string value: 5" }]);
    expectProblem(await create(t, { url: `${rcv.url}/x`, events: ["*"], enabled: false }), 400);
    expect(await prisma.webhook.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("the cap of 20 endpoints an account holds under concurrent creates: 30 at once leave exactly 20, the rest a 409", async () => {
    const t = await tenant("whcap");
    const made = await Promise.all(Array.from({ length: 30 }, (_, i) => create(t, { url: `${rcv.url}/cap/${i}`, events: ["*"] })));
    const statuses = made.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.filter((s) => s === 409)).toHaveLength(10);
    for (const r of made.filter((x) => x.status === 409)) expectProblem(r, 409, /at most 20 webhooks/);
    expect(await prisma.webhook.count({ where: { accountId: t.accountId } })).toBe(20);
    expectProblem(await create(t, { url: `${rcv.url}/cap/late`, events: ["*"] }), 409, /at most 20 webhooks/);
  });

  it("works over GraphQL too", async () => {
    const t = await tenant("whg");
    const r = await gql(
      server,
      t,
      `mutation($a: String!, $u: String!) { createWebhook(accountId: $a, input: { url: $u, events: ["end_user.deleted"] }) { id secret events } }`,
      {
        a: t.accountId,
        u: `${rcv.url}/gql`,
      },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.createWebhook.secret).toMatch(/^whsec_/);
    const q = await gql(server, t, `query($a: String!) { account(id: $a) { webhooks(first: 5) { nodes { id secret events } } } }`, { a: t.accountId });
    expect(q.data.account.webhooks.nodes).toEqual([{ id: r.data.createWebhook.id, secret: null, events: ["end_user.deleted"] }]);
  });
});

describe("the SSRF guard", () => {
  it("only public addresses count as public", () => {
    for (const ip of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "100.100.100.200",
      "0.0.0.0",
      "::1",
      "fd00:ec2::254",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "224.0.0.1",
      // IPv4-compatible (::/96, deprecated): refused whatever the IPv4 address inside.
      "::a00:1",
      "::7f00:1",
      "::8.8.8.8",
      "::808:808",
    ])
      expect(isPublicAddress(ip), ip).toBe(false);
    for (const ip of ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) expect(isPublicAddress(ip), ip).toBe(true);
  });

  it("refuses at creation http, loopback, private, link-local, CGNAT and metadata hosts (400), unless WEBHOOKS_ALLOW_PRIVATE", async () => {
    for (const url of [
      "http://93.184.215.14/",
      "https://127.0.0.1/",
      "https://localhost:8443/",
      "https://10.0.0.8/",
      "https://169.254.169.254/latest",
      "https://100.64.1.1/",
      "https://[::1]/",
      "https://[fd00:ec2::254]/",
      "https://[::a00:1]/",
      "https://[::7f00:1]/",
      "https://[::127.0.0.1]/",
      "https://user:pw@93.184.215.14/",
    ]) {
      await expect(checkWebhookUrl(url, false), url).rejects.toMatchObject({ status: 400 });
    }
    await expect(checkWebhookUrl("https://93.184.215.14/hook", false)).resolves.toBe("https://93.184.215.14/hook");
    await expect(checkWebhookUrl("http://127.0.0.1:9/x", true)).resolves.toBe("http://127.0.0.1:9/x");
    // Over REST, on a server without WEBHOOKS_ALLOW_PRIVATE.
    const strict = await startServer({ ...ENV, WEBHOOKS_ALLOW_PRIVATE: "false" });
    try {
      const t = await tenant("whs");
      const r = await fetch(`${strict.url}${hooks(t)}`, {
        method: "POST",
        headers: { ...t.headers, "content-type": "application/json" },
        body: JSON.stringify({ url: "https://localhost/hook", events: ["*"] }),
      });
      expect(r.status).toBe(400);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const problem = (await r.json()) as { detail: string; errors: { path: string; message: string }[] };
      // The name is refused without saying what it resolved to (that would map the internal DNS).
      expect(problem.detail).toBe("url host 'localhost' resolves to an address that is not public: webhooks are sent to public addresses only");
      expect(JSON.stringify(problem)).not.toMatch(/127\.0\.0\.1|::1/);
      expect(await prisma.webhook.count({ where: { accountId: t.accountId } })).toBe(0);
    } finally {
      await strict.close();
    }
  });

  it("refuses again at delivery: an endpoint saved while private addresses were allowed is not called once they are not", async () => {
    const t = await tenant("whd");
    const c = await create(t, { url: `${rcv.url}/ssrf`, events: ["*"] });
    configureWebhooks(loadConfig({ ...process.env, ...ENV, WEBHOOKS_ALLOW_PRIVATE: "false" }));
    await events(t, [{ type: "user_action", time: Date.now(), actionId: "x" }]);
    const [d] = await until("a refused attempt", async () => {
      const list = await deliveries(t, c.body.id);
      return list[0]?.log.length ? list : null;
    });
    expect(d.log[0]).toMatchObject({ attempt: 1, status: "failed", responseCode: null, error: expect.stringMatching(/^refused/) });
    expect(rcv.received.filter((m) => m.path === "/ssrf")).toEqual([]);
  });

  it("a refused delivery to a name says the address is not public without the address it resolved to", async () => {
    const t = await tenant("whdns");
    // https to a name of the loopback: saved while private addresses were allowed, refused after DNS at delivery.
    const c = await create(t, { url: `https://localhost:${new URL(rcv.url).port}/ssrf-dns`, events: ["*"] });
    expect(c.status, c.text).toBe(201);
    configureWebhooks(loadConfig({ ...process.env, ...ENV, WEBHOOKS_ALLOW_PRIVATE: "false" }));
    await events(t, [{ type: "user_action", time: Date.now(), actionId: "x" }]);
    const [d] = await until("a refused attempt", async () => {
      const list = await deliveries(t, c.body.id);
      return list[0]?.log.length ? list : null;
    });
    expect(d.log[0]).toMatchObject({ attempt: 1, status: "failed", responseCode: null, error: "refused: localhost resolves to an address that is not public" });
    const stored = await prisma.webhookAttempt.findMany({ where: { deliveryId: d.id } });
    expect(JSON.stringify(stored)).not.toMatch(/127\.0\.0\.1|::1/);
    expect(rcv.received.filter((m) => m.path === "/ssrf-dns")).toEqual([]);
  });
});

describe("delivery", () => {
  it("POSTs subscribed events with Standard Webhooks headers that the standardwebhooks library verifies; logs the attempt", async () => {
    const t = await tenant("whe");
    const c = await create(t, { url: `${rcv.url}/sig`, events: ["engagement.flow_completed"] });
    const T = Date.now() - 1_000;
    const r = await events(t, [
      { type: "flow_started", time: T, endUserId: "u1", flowId: "f1", widget: "direct" },
      { type: "flow_completed", time: T + 1, endUserId: "u1", flowId: "f1", widget: "direct", domain: "app.x.com" },
    ]);
    expect(r.status, r.text).toBe(202);
    const m = await until("the delivery", async () => rcv.received.find((x) => x.path === "/sig"));
    expect(m.headers["content-type"]).toBe("application/json");
    const payload = verify(c.body.secret, m) as any;
    expect(payload).toEqual({
      type: "engagement.flow_completed",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { type: "flow_completed", time: T + 1, endUserId: "u1", flowId: "f1", widget: "direct", domain: "app.x.com" },
    });
    // A wrong secret does not verify.
    expect(() => verify(`whsec_${Buffer.alloc(24, 1).toString("base64")}`, m)).toThrow();
    const [d] = await until("the delivered log", async () => {
      const list = await deliveries(t, c.body.id);
      return list[0]?.status === "delivered" ? list : null;
    });
    expect(d).toMatchObject({
      id: m.headers["webhook-id"],
      type: "engagement.flow_completed",
      status: "delivered",
      attempts: 1,
      nextAttemptTime: null,
      payload,
    });
    expect(d.log).toEqual([
      { attempt: 1, time: expect.any(Number), status: "delivered", responseCode: 200, latencyMs: expect.any(Number), error: null, nextAttemptTime: null },
    ]);
    await new Promise((res) => setTimeout(res, 200));
    expect(rcv.received.filter((x) => x.path === "/sig")).toHaveLength(1); // flow_started was not subscribed
  });

  it("a delivery log's cursor resumes its own endpoint's log; another endpoint's cursor is a 400, not a position in this log", async () => {
    const t = await tenant("whc");
    const one = await create(t, { url: `${rcv.url}/c1`, events: ["*"] });
    const two = await create(t, { url: `${rcv.url}/c2`, events: ["*"] });
    await events(
      t,
      [1, 2, 3].map((i) => ({ type: "user_action", time: Date.now() - i, actionId: `c${i}` })),
    );
    await until("three deliveries each", async () => (await deliveries(t, one.body.id)).length === 3 && (await deliveries(t, two.body.id)).length === 3);
    const page = (id: string, query: string) => req(`${hooks(t)}/${id}/deliveries?limit=1${query}`, { headers: t.headers });
    const first = await page(one.body.id, "");
    const next = await page(one.body.id, `&cursor=${first.body.cursor}`);
    expect([next.status, next.body.data.length]).toEqual([200, 1]);
    expect(next.body.data[0].id).not.toBe(first.body.data[0].id);
    const other = await page(two.body.id, `&cursor=${first.body.cursor}`);
    expect(other.status, other.text).toBe(400);
    expect(other.body.errors).toEqual([{ path: "cursor", message: "cursor from another list" }]);
  });

  it("retries failures on the schedule with the same webhook-id, each attempt in the log", async () => {
    const t = await tenant("whr");
    const c = await create(t, { url: `${rcv.url}/retry`, events: ["*"] });
    rcv.answer = (path, n) => (path === "/retry" && n < 2 ? 500 : 200);
    await events(t, [{ type: "user_action", time: Date.now(), actionId: "x" }]);
    const [d] = await until("a delivered retry", async () => {
      const list = await deliveries(t, c.body.id);
      return list[0]?.status === "delivered" ? list : null;
    });
    const got = rcv.received.filter((x) => x.path === "/retry");
    expect(got).toHaveLength(3);
    expect(new Set(got.map((x) => x.headers["webhook-id"]))).toEqual(new Set([d.id]));
    for (const x of got) expect(verify(c.body.secret, x)).toMatchObject({ type: "engagement.user_action" });
    expect(d.log.map((l: any) => [l.attempt, l.status, l.responseCode])).toEqual([
      [1, "failed", 500],
      [2, "failed", 500],
      [3, "delivered", 200],
    ]);
    expect(d.log[0].nextAttemptTime).toBeGreaterThan(d.log[0].time);
    expect(d.log[2].nextAttemptTime).toBeNull();
  });

  it("every attempt of a delivery sends the same bytes, signed, under one webhook-id; after an erasure, the same bytes but for the erased fields", async () => {
    // One retry, an hour after a failure: each test below makes it due when it has looked.
    configureWebhooks(loadConfig({ ...process.env, ...ENV, WEBHOOK_RETRY_SCHEDULE: "1h" }));
    const t = await tenant("whb");
    const c = await create(t, { url: `${rcv.url}/bytes`, events: ["engagement.flow_started", "engagement.flow_feedback"] });
    rcv.answer = (path, _n, k) => (path === "/bytes" && k === 0 ? 500 : 200);
    expect((await req(`/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "alice" }, { id: "bob" }] })).status).toBe(201);
    const T = Date.now() - 1_000;
    // Keys in an order neither sorted nor by length (PostgreSQL's jsonb would reorder them), and text
    // beyond ASCII.
    const sent = [
      { type: "flow_started", time: T, endUserId: "bob", flowId: "f1", widget: "self_help", userName: "Bob Ünal", domain: "app.x.com" },
      { type: "flow_feedback", time: T + 1, endUserId: "alice", flowId: "f1", useful: false, comment: "too long — «non»", domain: "app.x.com" },
    ];
    expect((await events(t, sent)).status).toBe(202);
    const firsts = await until("both first attempts", async () => {
      const got = rcv.received.filter((x) => x.path === "/bytes");
      return got.length === 2 ? got : null;
    });
    await until("both failures logged", async () => ((await deliveries(t, c.body.id)).every((d) => d.attempts === 1) ? true : null));
    const first = new Map(firsts.map((x) => [x.headers["webhook-id"], x.body]));
    const idOf = (userId: string) => [...first].find(([, body]) => JSON.parse(body).data.endUserId === userId)![0] as string;
    const [bob, alice] = [idOf("bob"), idOf("alice")];
    // Alice is erased between her message's first attempt and its retry.
    expect((await req(`/api/v1/${t.accountId}/endUsers/alice`, { method: "DELETE", headers: t.headers })).status).toBe(204);
    await prisma.webhookDelivery.updateMany({ where: { webhookId: c.body.id }, data: { nextAttemptAt: new Date() } });
    const seconds = await until("both retries", async () => {
      const got = rcv.received.filter((x) => x.path === "/bytes");
      return got.length === 4 ? got.slice(2) : null;
    });
    const second = new Map(seconds.map((x) => [x.headers["webhook-id"], x]));
    expect(new Set(second.keys())).toEqual(new Set([bob, alice]));
    for (const x of [...firsts, ...seconds]) verify(c.body.secret, x);
    // Bob's retry: byte for byte his first attempt.
    expect(second.get(bob)!.body).toBe(first.get(bob));
    // Alice's: her first attempt's bytes with the pseudonym for her id and no comment, nothing else
    // changed (key order, spacing, the other values' text), on both databases.
    const erased = JSON.parse(second.get(alice)!.body);
    expect(erased.data.endUserId).toMatch(/^erased_/);
    const { comment: _comment, ...kept } = JSON.parse(first.get(alice)!).data;
    expect(second.get(alice)!.body).toBe(JSON.stringify({ ...JSON.parse(first.get(alice)!), data: { ...kept, endUserId: erased.data.endUserId } }));
    const stored = await until("both delivered", async () => {
      const rows = await prisma.webhookDelivery.findMany({ where: { webhookId: c.body.id }, orderBy: { id: "asc" } });
      return rows.every((d) => d.status !== "pending") ? rows : null;
    });
    expect(new Map(stored.map((d) => [d.id, d.payload]))).toEqual(new Map(seconds.map((x) => [x.headers["webhook-id"], x.body])));
    expect(stored.map((d) => [d.status, d.attempts])).toEqual([
      ["delivered", 2],
      ["delivered", 2],
    ]);
  });

  it("an endpoint that fails for the whole schedule is disabled; replay needs it enabled, then sends the same message again", async () => {
    const t = await tenant("whx");
    const c = await create(t, { url: `${rcv.url}/down`, events: ["*"] });
    rcv.answer = (path) => (path === "/down" ? 503 : 200);
    await events(t, [{ type: "user_action", time: Date.now(), actionId: "x" }]);
    const hook = await until("the endpoint disabled", async () => {
      const r = await req(`${hooks(t)}/${c.body.id}`, { headers: t.headers });
      return r.body.enabled === false ? r.body : null;
    });
    expect(hook.disabledReason).toMatch(/whole retry schedule/);
    const [d] = await deliveries(t, c.body.id);
    expect(d.status).toBe("failed");
    expect(d.log.map((l: any) => l.responseCode)).toEqual([503, 503, 503]);
    // Disabled: nothing more is queued for it.
    await events(t, [{ type: "user_action", time: Date.now(), actionId: "y" }]);
    expect(await deliveries(t, c.body.id)).toHaveLength(1);
    const replay = () => req(`${hooks(t)}/${c.body.id}/deliveries/${d.id}/replay`, { method: "POST", headers: t.headers });
    expectProblem(await replay(), 409, /disabled/);
    expectProblem(await req(`${hooks(t)}/${c.body.id}/deliveries/msg_nope/replay`, { method: "POST", headers: t.headers }), 409);
    rcv.answer = () => 200;
    const on = await req(`${hooks(t)}/${c.body.id}`, { method: "PUT", headers: t.headers, body: { enabled: true } });
    expect(on.body).toMatchObject({ enabled: true, disabledReason: null });
    expectProblem(await req(`${hooks(t)}/${c.body.id}/deliveries/msg_nope/replay`, { method: "POST", headers: t.headers }), 404);
    const r = await replay();
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({ id: d.id, status: "pending" });
    const [again] = await until("the replay delivered", async () => {
      const list = await deliveries(t, c.body.id);
      return list[0]?.status === "delivered" ? list : null;
    });
    expect(again.log.map((l: any) => [l.attempt, l.responseCode])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
      [4, 200],
    ]);
    const got = rcv.received.filter((x) => x.path === "/down");
    expect(got.at(-1)!.headers["webhook-id"]).toBe(d.id);
  });

  describe("disabling counts from the delivery's first attempt as made, on the default schedule (5s … 10h, jittered)", () => {
    const DEFAULT_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h";
    const TOTAL = (5 + 5 * 60 + 30 * 60 + 2 * 3600 + 5 * 3600 + 10 * 3600 + 10 * 3600) * 1000;
    const realNow = clock.now;
    let now = 0;
    const setClock = (ms: number) => {
      now = ms;
    };
    beforeEach(() => {
      configureWebhooks(loadConfig({ ...process.env, ...ENV, WEBHOOK_RETRY_SCHEDULE: DEFAULT_SCHEDULE }));
      clock.now = () => new Date(now);
    });
    afterEach(() => {
      clock.now = realNow;
    });

    const userAction = (t: Tenant) => events(t, [{ type: "user_action", time: Date.now(), actionId: "x" }]);
    /** The delivery of `webhookId` other than `not`, once queued. */
    const queued = (webhookId: string, not?: string) =>
      until("the delivery queued", () => prisma.webhookDelivery.findFirst({ where: { webhookId, ...(not ? { id: { not } } : {}) } }));
    /** Moves the clock to each retry's due time (plus `late(k)` for the k-th retry) until the delivery has failed its schedule. */
    async function runSchedule(id: string, late: (k: number) => number = () => 0) {
      const pauses: number[] = [];
      for (let attempts = 1; ; attempts++) {
        const d = await until(`attempt ${attempts} recorded`, () =>
          prisma.webhookDelivery.findFirst({ where: { id, attempts: { gte: attempts }, lockedBy: null } }),
        );
        if (d.status !== "pending") return { status: d.status, pauses };
        pauses.push(d.nextAttemptAt!.getTime() - now);
        setClock(d.nextAttemptAt!.getTime() + late(pauses.length));
      }
    }
    const endpoint = (id: string) => prisma.webhook.findUniqueOrThrow({ where: { id }, select: { enabled: true, disabledReason: true } });

    it("a success a second before the first attempt does not keep it enabled, whatever the jitter made of the schedule", async () => {
      // Each round: the endpoint's last success 1 s before the failing delivery's first attempt,
      // every retry made when due. The nominal start (last attempt − the schedule) falls after that
      // success whenever the jitter shortened the pauses overall, about every other round: rounds
      // run until one did, and in every round the endpoint ends disabled.
      let shortened = 0;
      for (let round = 0; round < 12 && !shortened; round++) {
        const t = await tenant("whjit");
        const path = `/jit/${round}`;
        const c = await create(t, { url: `${rcv.url}${path}`, events: ["*"] });
        rcv.answer = (p, n) => (p === path && n === 0 ? 200 : 503);
        const T0 = Date.now();
        setClock(T0 - 1_000);
        await userAction(t);
        const ok = await queued(c.body.id);
        await until("the success", () => prisma.webhookDelivery.findFirst({ where: { id: ok.id, status: "delivered" } }));
        setClock(T0);
        await userAction(t);
        const failing = await queued(c.body.id, ok.id);
        const { status, pauses } = await runSchedule(failing.id);
        expect(status).toBe("failed");
        expect(pauses).toHaveLength(7);
        pauses.forEach((p, i) => {
          const nominal = [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6][i]!;
          expect(p).toBeGreaterThanOrEqual(nominal * 0.8);
          expect(p).toBeLessThanOrEqual(nominal * 1.2);
        });
        const log = await prisma.webhookAttempt.findMany({ where: { deliveryId: failing.id }, orderBy: { attempt: "asc" } });
        expect(log.map((a) => [a.attempt, a.responseCode])).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((k) => [k, 503]));
        if (log.at(-1)!.at.getTime() - T0 < TOTAL - 1_000) shortened++;
        expect(await endpoint(c.body.id)).toEqual({ enabled: false, disabledReason: expect.stringMatching(/whole retry schedule/) });
      }
      expect(shortened).toBe(1);
    });

    it("a success after the first attempt keeps it enabled, also when the retries ran hours late", async () => {
      const t = await tenant("whlate");
      const c = await create(t, { url: `${rcv.url}/late`, events: ["*"] });
      // The first request (the failing delivery's first attempt) fails, the second (another
      // delivery, a second later) succeeds, every retry after fails.
      rcv.answer = (p, n) => (p === "/late" && n === 1 ? 200 : 503);
      const T0 = Date.now();
      setClock(T0);
      await userAction(t);
      const failing = await queued(c.body.id);
      await until("the first attempt", () => prisma.webhookDelivery.findFirst({ where: { id: failing.id, attempts: 1, lockedBy: null } }));
      setClock(T0 + 1_000);
      await userAction(t);
      const ok = await queued(c.body.id, failing.id);
      await until("the success", () => prisma.webhookDelivery.findFirst({ where: { id: ok.id, status: "delivered" } }));
      // The worker was down for 6 hours before the last retry: it ran more than the schedule after
      // the success, yet the endpoint had a success since the failing delivery's first attempt.
      const { status } = await runSchedule(failing.id, (k) => (k === 7 ? 6 * 3_600_000 : 0));
      expect(status).toBe("failed");
      const last = await prisma.webhookAttempt.findFirstOrThrow({ where: { deliveryId: failing.id }, orderBy: { attempt: "desc" } });
      expect(last.attempt).toBe(8);
      expect(last.at.getTime() - (T0 + 1_000)).toBeGreaterThan(TOTAL);
      expect(await endpoint(c.body.id)).toEqual({ enabled: true, disabledReason: null });
    });
  });

  it("finished deliveries leave the log after its retention; pending ones stay", async () => {
    const t = await tenant("whp");
    const c = await create(t, { url: `${rcv.url}/prune`, events: ["*"] });
    await events(t, [{ type: "user_action", time: Date.now(), actionId: "x" }]);
    await until("delivered", async () => (await deliveries(t, c.body.id))[0]?.status === "delivered");
    expect(await pruneDeliveries(new Date(Date.now() + DELIVERY_LOG_RETENTION_MS - 60_000))).toBe(0);
    await pruneDeliveries(new Date(Date.now() + DELIVERY_LOG_RETENTION_MS + 60_000));
    expect(await deliveries(t, c.body.id)).toEqual([]);
    expect(await prisma.webhookAttempt.count({ where: { delivery: { webhookId: c.body.id } } })).toBe(0);
  });

  it("a delivery replayed near the end of the retention stays a whole retention after its new attempt", async () => {
    const t = await tenant("whpr");
    const c = await create(t, { url: `${rcv.url}/prune-replayed`, events: ["*"] });
    await events(t, [{ type: "user_action", time: Date.now(), actionId: "x" }]);
    const [d] = await until("delivered", async () => {
      const list = await deliveries(t, c.body.id);
      return list[0]?.status === "delivered" ? list : null;
    });
    // Its last attempt a day before the retention ends (as a replay 29 days after the delivery leaves it).
    const day = 86_400_000;
    await prisma.webhookAttempt.updateMany({ where: { deliveryId: d.id }, data: { at: new Date(Date.now() + DELIVERY_LOG_RETENTION_MS - day) } });
    expect(await pruneDeliveries(new Date(Date.now() + DELIVERY_LOG_RETENTION_MS + 60_000))).toBe(0);
    expect(await deliveries(t, c.body.id)).toHaveLength(1);
    await pruneDeliveries(new Date(Date.now() + 2 * DELIVERY_LOG_RETENTION_MS));
    expect(await deliveries(t, c.body.id)).toEqual([]);
  });

  it("gives an endpoint that does not answer the timeout, then retries", async () => {
    const t = await tenant("whto");
    const c = await create(t, { url: `${rcv.url}/hang`, events: ["*"] });
    rcv.answer = (path, n) => (path === "/hang" && n === 0 ? "hang" : 200);
    await events(t, [{ type: "user_action", time: Date.now(), actionId: "x" }]);
    const [d] = await until("delivered after a timeout", async () => {
      const list = await deliveries(t, c.body.id);
      return list[0]?.status === "delivered" ? list : null;
    });
    expect(d.log[0]).toMatchObject({ status: "failed", responseCode: null, error: "timed out after 400 ms" });
    expect(d.log[0].latencyMs).toBeGreaterThanOrEqual(390);
    expect(d.log[1]).toMatchObject({ status: "delivered", responseCode: 200 });
  });

  it("a tenant's slow endpoints hold a bounded number of attempts; another tenant's delivery goes out at once beside them", async () => {
    // Each endpoint at most 2 attempts at once, each account 5; a 5-s timeout, so A's 3-s answers succeed.
    configureWebhooks(
      loadConfig({ ...process.env, ...ENV, WEBHOOK_TIMEOUT_MS: "5000", WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: "2", WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: "5" }),
    );
    // A real receiver that answers after 3 s, counting the requests it holds, per path and in all.
    const open = new Map<string, number>();
    let openAll = 0;
    const peak = { all: 0, path: 0 };
    const slow: HttpServer = createServer((rq, rs) => {
      const path = rq.url ?? "/";
      open.set(path, (open.get(path) ?? 0) + 1);
      openAll++;
      peak.all = Math.max(peak.all, openAll);
      peak.path = Math.max(peak.path, open.get(path)!);
      rq.resume();
      const t = setTimeout(() => rs.writeHead(200).end("ok"), 3_000);
      rs.on("close", () => {
        clearTimeout(t);
        open.set(path, open.get(path)! - 1);
        openAll--;
      });
    });
    await new Promise<void>((ok) => slow.listen(0, "127.0.0.1", ok));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    const ta = await tenant("whslowa");
    const tb = await tenant("whfastb");
    const aHooks: string[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const c = await create(ta, { url: `${slowUrl}/a${i}`, events: ["*"] });
        expect(c.status, c.text).toBe(201);
        aHooks.push(c.body.id);
      }
      const b = await create(tb, { url: `${rcv.url}/fair-b`, events: ["*"] });
      // A: 4 endpoints x 50 events = 200 deliveries, every one older than B's.
      const r = await events(
        ta,
        Array.from({ length: 50 }, (_, i) => ({ type: "user_action", time: Date.now(), actionId: `a${i}` })),
      );
      expect(r.status, r.text).toBe(202);
      await until("A's endpoints saturated", async () => openAll >= 5);
      const sent = Date.now();
      expect((await events(tb, [{ type: "user_action", time: Date.now(), actionId: "b" }])).status).toBe(202);
      const m = await until("B's delivery", async () => rcv.received.find((x) => x.path === "/fair-b"), 5_000);
      expect(Date.now() - sent).toBeLessThan(2_000);
      expect(verify(b.body.secret, m)).toMatchObject({ type: "engagement.user_action", data: { actionId: "b" } });
      const [bd] = await until("B's delivery logged", async () => {
        const list = await deliveries(tb, b.body.id);
        return list[0]?.status === "delivered" ? list : null;
      });
      expect(bd).toMatchObject({ status: "delivered", attempts: 1, error: null });
      // A keeps to its bounds: at most 2 requests open per endpoint, 5 in all, and as many leases in the table.
      expect(peak.path).toBeLessThanOrEqual(2);
      expect(peak.all).toBeLessThanOrEqual(5);
      const leased = await prisma.webhookDelivery.count({ where: { accountId: ta.accountId, status: "pending", lockedBy: { not: null } } });
      expect(leased).toBeGreaterThan(0);
      expect(leased).toBeLessThanOrEqual(5);
      expect(await prisma.webhookDelivery.count({ where: { accountId: ta.accountId, status: "pending" } })).toBeGreaterThan(150);
    } finally {
      // Deleting A's endpoints deletes its backlog; the attempts in flight find nothing to record.
      for (const id of aHooks) await req(`${hooks(ta)}/${id}`, { method: "DELETE", headers: ta.headers });
      await new Promise<void>((ok) => {
        slow.closeAllConnections();
        slow.close(() => ok());
      });
    }
  });

  it("an endpoint's pending deliveries are capped: the overflow is stored as dropped with the reason, counted, and can be replayed", async () => {
    configureWebhooks(loadConfig({ ...process.env, ...ENV, WEBHOOK_MAX_PENDING_PER_ENDPOINT: "3" }));
    const t = await tenant("whcap");
    const c = await create(t, { url: `${rcv.url}/cap`, events: ["*"] });
    const metric = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return Number(new RegExp(`^webhook_deliveries_dropped_total\\{account="${t.accountId}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    };
    const r = await events(
      t,
      Array.from({ length: 5 }, (_, i) => ({ type: "user_action", time: Date.now(), actionId: `c${i}` })),
    );
    expect(r.status, r.text).toBe(202);
    const stored = await prisma.webhookDelivery.findMany({ where: { webhookId: c.body.id }, orderBy: { id: "asc" } });
    expect(stored).toHaveLength(5);
    const dropped = stored.filter((d) => d.status === "dropped");
    expect(dropped).toHaveLength(2);
    for (const d of dropped) expect(d).toMatchObject({ nextAttemptAt: null, attempts: 0 });
    expect(await metric()).toBe(2);
    const list = await until("three delivered", async () => {
      const l = await deliveries(t, c.body.id);
      return l.filter((d) => d.status === "delivered").length === 3 ? l : null;
    });
    const shown = list.filter((d) => d.status === "dropped");
    expect(shown.map((d) => d.id).sort()).toEqual(dropped.map((d) => d.id).sort());
    for (const d of shown)
      expect(d).toMatchObject({
        status: "dropped",
        error: expect.stringMatching(/^not queued: the endpoint already had 3 pending deliveries \(WEBHOOK_MAX_PENDING_PER_ENDPOINT\)/),
        attempts: 0,
        nextAttemptTime: null,
        log: [],
        payload: { type: "engagement.user_action" },
      });
    for (const d of list.filter((x) => x.status === "delivered")) expect(d.error).toBeNull();
    // Over GraphQL too.
    const g = await gql(
      server,
      t,
      `query($a: String!, $w: String!) { account(id: $a) { webhookDeliveries(webhookId: $w, first: 10) { nodes { id status error } } } }`,
      {
        a: t.accountId,
        w: c.body.id,
      },
    );
    expect(g.data.account.webhookDeliveries.nodes.filter((n: any) => n.status === "dropped")).toEqual(
      shown.map((d) => ({ id: d.id, status: "dropped", error: d.error })),
    );
    // The backlog drained: new messages are queued again; a dropped one is sent by a replay.
    await events(t, [{ type: "user_action", time: Date.now(), actionId: "later" }]);
    expect(await prisma.webhookDelivery.count({ where: { webhookId: c.body.id, status: "dropped" } })).toBe(2);
    const replay = await req(`${hooks(t)}/${c.body.id}/deliveries/${shown[0].id}/replay`, { method: "POST", headers: t.headers });
    expect(replay.status, replay.text).toBe(202);
    expect(replay.body).toMatchObject({ id: shown[0].id, status: "pending", error: null });
    await until("the replayed one delivered", async () => (await prisma.webhookDelivery.findUnique({ where: { id: shown[0].id } }))?.status === "delivered");
    await until("five sent", async () => rcv.received.filter((m) => m.path === "/cap").length >= 5);
    expect(new Set(rcv.received.filter((m) => m.path === "/cap").map((m) => m.headers["webhook-id"])).has(shown[1].id)).toBe(false);
    expect(await metric()).toBe(2);
  });

  it.runIf(dbKind() === "postgres")("two workers (instances) on PostgreSQL send each delivery once, retries included", async () => {
    const t = await tenant("whpg");
    const second = new WebhookWorker();
    await second.start();
    try {
      const c = await create(t, { url: `${rcv.url}/once`, events: ["*"] });
      // Every delivery's first attempt fails: each is retried once.
      rcv.answer = (path, _n, k) => (path === "/once" && k === 0 ? 500 : 200);
      const N = 40;
      await events(
        t,
        Array.from({ length: N }, (_, i) => ({ type: "user_action", time: Date.now(), actionId: `a${i}` })),
      );
      await until(
        "every delivery delivered",
        async () => (await prisma.webhookDelivery.count({ where: { webhookId: c.body.id, status: "delivered" } })) === N,
        20_000,
      );
      await new Promise((res) => setTimeout(res, 300));
      const got = rcv.received.filter((x) => x.path === "/once");
      const attempts = await prisma.webhookAttempt.count({ where: { delivery: { webhookId: c.body.id } } });
      // Each attempt reached the receiver exactly once: as many requests as logged attempts, every id delivered.
      expect(got.length).toBe(attempts);
      expect(attempts).toBe(2 * N);
      expect(new Set(got.map((x) => x.headers["webhook-id"])).size).toBe(N);
    } finally {
      await second.stop();
    }
  });

  it("content.created|updated|deleted, end_user.deleted and copy_job.completed carry their records", async () => {
    const t = await tenant("whk");
    const c = await create(t, {
      url: `${rcv.url}/kinds`,
      events: ["content.created", "content.updated", "content.deleted", "end_user.deleted", "copy_job.completed"],
    });
    const tag = await req(`/v1/accounts/${t.accountId}/tags`, { method: "PUT", headers: t.headers, body: [{ name: "billing" }] });
    expect(tag.status, tag.text).toBe(201);
    const made = await req(`/v1/accounts/${t.accountId}/content`, {
      method: "POST",
      headers: t.headers,
      body: [{ title: "Invoices", type: "link", url: "https://x.com/i", tags: ["billing"] }],
    });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data[0].id;
    expect((await req(`/v1/accounts/${t.accountId}/content`, { method: "PUT", headers: t.headers, body: [{ id, title: "Bills" }] })).status).toBe(200);
    await req(`/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "gone-1" }] });
    expect((await req(`/api/v1/${t.accountId}/endUsers/gone-1`, { method: "DELETE", headers: t.headers })).status).toBe(204);
    // A copy to another account the same user may write to.
    const dst = `${t.accountId}-dst`;
    await createAccount(dst);
    await createUser(t.email, [dst]);
    // The destination's subscriber hears of the copies as of any new content.
    const dstHook = await req(`/v1/accounts/${dst}/webhooks`, {
      method: "POST",
      headers: t.headers,
      body: { url: `${rcv.url}/dst`, events: ["content.created"] },
    });
    expect(dstHook.status, dstHook.text).toBe(201);
    const jobs = new CopyJobWorker({ leaseMs: 2_000, pollMs: 50, itemAttempts: 1 });
    await jobs.start();
    try {
      const copy = await req(`/v1/accounts/${t.accountId}/content/copy`, {
        method: "POST",
        headers: t.headers,
        body: { destinationAccountId: dst, destinationUserId: t.email, contentIds: [id] },
      });
      expect(copy.status, copy.text).toBe(202);
      await until("the copy_job message", async () => rcv.received.filter((m) => m.path === "/kinds").length >= 4);
    } finally {
      await jobs.stop();
    }
    expect((await req(`/api/v1/${t.accountId}/content/${id}`, { method: "DELETE", headers: t.headers })).status).toBe(204);
    const got = await until("five messages", async () => {
      const list = rcv.received.filter((m) => m.path === "/kinds");
      return list.length >= 5 ? list : null;
    });
    const payloads = got.map((m) => verify(c.body.secret, m) as { type: string; data: any });
    const byType = Object.fromEntries(payloads.map((p) => [p.type, p.data]));
    expect(Object.keys(byType).sort()).toEqual(["content.created", "content.deleted", "content.updated", "copy_job.completed", "end_user.deleted"]);
    expect(byType["content.created"]).toMatchObject({
      id,
      title: "Invoices",
      type: "link",
      url: "https://x.com/i",
      tags: ["billing"],
      state: "draft",
      creationTime: expect.any(Number),
    });
    expect(byType["content.updated"]).toMatchObject({ id, title: "Bills", tags: ["billing"] });
    expect(byType["content.deleted"]).toMatchObject({ id, title: "Bills" });
    expect(byType["end_user.deleted"]).toEqual({ id: "gone-1" });
    expect(byType["copy_job.completed"]).toMatchObject({
      status: "completed",
      sourceAccountId: t.accountId,
      destinationAccountId: dst,
      counts: { total: 1, copied: 1, failed: 0 },
    });
    const [copied] = await until("the copy's content.created", async () => {
      const list = rcv.received.filter((m) => m.path === "/dst");
      return list.length ? list : null;
    });
    const created = verify(dstHook.body.secret, copied!) as { type: string; data: any };
    const copiedRow = await prisma.content.findFirstOrThrow({ where: { accountId: dst } });
    expect(created).toMatchObject({ type: "content.created", data: { id: copiedRow.id, title: "Bills", type: "link", tags: [] } });
  });
});
