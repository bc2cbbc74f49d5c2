// Test fixtures: a real server on an ephemeral port, tenants with keys, and SQL capture.
import { request as httpRequest, STATUS_CODES } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { expect } from "vitest";
import { createAccount, createKey, createUser } from "../src/admin.js";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { onQuery, prepareDb, prisma } from "../src/db/index.js";

export { prisma };

export interface Server {
  url: string;
  yoga: ReturnType<typeof createApp>["yoga"];
  close(): Promise<void>;
}

export async function startServer(env: Record<string, string> = {}): Promise<Server> {
  await prepareDb();
  const { app, yoga, close: closeApp } = createApp(loadConfig({ ...process.env, ...env }));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    yoga,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => void closeApp().then(() => r()));
      }),
  };
}

let n = 0;
export interface Tenant {
  accountId: string;
  email: string;
  key: string;
  headers: Record<string, string>;
}

/** A new account with its own user and integration key. */
export async function tenant(prefix = "acct", opts: { idMethod?: string } = {}): Promise<Tenant> {
  const accountId = `${prefix}-${process.pid}-${++n}`;
  await createAccount(accountId, opts);
  const email = `${accountId}@example.com`;
  await createUser(email, [accountId]);
  const { key } = await createKey(email);
  return { accountId, email, key, headers: { "x-service-integration-key": key, "x-service-user": email } };
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** fetch + JSON body, for REST assertions. */
export async function call<T = any>(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; raw?: string } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  let body: string | undefined = init.raw;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(url, { method: init.method ?? "GET", headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** call() on a path of the server; every reply must carry x-request-id and must never be a 5xx. */
export function requester(server: () => Server) {
  return async (path: string, init: NonNullable<Parameters<typeof call>[1]> = {}): Promise<Reply> => {
    const r = await call(server().url + path, init);
    expect(r.status, `${init.method ?? "GET"} ${path} → ${r.status} ${r.text.slice(0, 500)}`).toBeLessThan(500);
    expect(r.headers.get("x-request-id"), "x-request-id").toMatch(/\S/);
    return r;
  };
}

/** The account prefix of the two REST path styles: `/api/v1/:accountId` (A) and `/v1/accounts/:accountId` (B). */
export const pathA = (t: Tenant | string) => `/api/v1/${typeof t === "string" ? t : t.accountId}`;
export const pathB = (t: Tenant | string) => `/v1/accounts/${typeof t === "string" ? t : t.accountId}`;

/** A JSON answer of `status`. */
export function expectJson(r: Reply, status: number) {
  expect(r.status, r.text.slice(0, 500)).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/json(;|$)/);
}

/**
 * An RFC 9457 problem of `status`: problem+json, `type` about:blank, the status's standard `title`,
 * `status`, and a `detail` string (equal to `detail` when it is a string, matching it when a RegExp).
 */
export function expectProblem(r: Reply, status: number, detail?: string | RegExp) {
  expect(r.status, r.text.slice(0, 500)).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json(;|$)/);
  expect(r.body.type).toBe("about:blank");
  expect(r.body.title).toBe(STATUS_CODES[status]);
  expect(r.body.status).toBe(status);
  expect(typeof r.body.detail).toBe("string");
  if (typeof detail === "string") expect(r.body.detail).toBe(detail);
  else if (detail) expect(r.body.detail).toMatch(detail);
}

/** Runs `fn` and returns the SQL statements it issued (transaction control excluded). */
export async function sqlOf<T>(fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  const sql: string[] = [];
  const stop = onQuery((q) => {
    if (!/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(q.trim())) sql.push(q);
  });
  try {
    const result = await fn();
    return { result, sql };
  } finally {
    stop();
  }
}

/** In-process GraphQL through the same Yoga instance (no HTTP). */
export async function gql<T = any>(server: Server, t: Tenant | null, query: string, variables: Record<string, unknown> = {}) {
  const res = await server.yoga.fetch("http://test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", ...(t?.headers ?? {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, ...(await res.json()) } as { status: number; data?: T; errors?: { message: string; extensions?: any }[] };
}

/** Polls `fn` (every 25 ms) until it returns something truthy, which it resolves with; past `ms`, throws naming `what`. */
export async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A GET over node:http, for conditional GETs: fetch() adds `Cache-Control: no-cache` to any request with If-None-Match. */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => void (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * The `extensions` every GraphQL answer carries (src/graphql/budget.ts): Shopify's cost block, in
 * points, with the budget of the account charged (`limit` a minute; what is left differs per
 * request). `limit` null: the request touched no account, so no budget was charged.
 */
export function costExtensions(points = 1, limit: number | null = 600) {
  return {
    cost: {
      requestedQueryCost: points,
      // Nothing is charged where no account was (throttleStatus null).
      actualQueryCost: limit === null ? 0 : points,
      throttleStatus:
        limit === null ? null : { maximumAvailable: limit, currentlyAvailable: expect.any(Number), restoreRate: Math.round((limit / 60) * 1000) / 1000 },
    },
  };
}

/** Whether the Redis at `url` answers a PING within a second (tests of budgets shared by instances skip without one). */
export async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * The seed of a randomized comparison (an oracle test): `base`, moved by TEST_SEED. The suite runs
 * with TEST_SEED unset (the same cases on every run); `TEST_SEED=N npx vitest run <file>` draws other
 * cases, to look for what the fixed ones miss (the same TEST_SEED reproduces a failure).
 */
export function testSeed(base: number): number {
  const offset = Number(process.env.TEST_SEED ?? 0);
  if (!Number.isInteger(offset)) throw new Error(`TEST_SEED must be an integer, not '${process.env.TEST_SEED}'`);
  return base + offset;
}

/**
 * The oracles' order of cells, written from the contract's words, not taken from src: code points
 * (not UTF-16 units), nulls first, false before true, numbers by value.
 */
export function compareCells(x: unknown, y: unknown): number {
  if (x === y) return 0;
  if (x === null) return -1;
  if (y === null) return 1;
  if (typeof x === "boolean") return Number(x) - Number(y);
  if (typeof x === "number") return x - (y as number);
  const [a, b] = [[...(x as string)], [...(y as string)]];
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]!.codePointAt(0)! - b[i]!.codePointAt(0)!;
  return a.length - b.length;
}
