// What the audit log tests (test/audit/*.test.ts) share: the server, entries added by a call, B25
// calls, entries seeded at chosen times, and a fixed clock.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, expect, vi } from "vitest";
import { clock } from "../../src/clock.js";
import type { Db } from "../../src/db/index.js";
import { newId } from "../../src/ids.js";
import { call, prisma, type Reply, type Server, startServer, type Tenant } from "../helpers.js";

export let server: Server;

/** Starts a server before the file's tests and closes it after them, and undoes mocks (the clock) after each test. */
export function withServer(): void {
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });
}

/** The client with its write methods: the exported type has none outside withTransaction(); these tests check that run time refuses them as well. */
export const writable = prisma as unknown as Db;

// PostgreSQL deployments must set ENCRYPTION_KEY (src/crypto.ts); SQLite makes its own key file.
if (/^postgres/.test(process.env.DATABASE_URL ?? "")) process.env.ENCRYPTION_KEY ??= Buffer.alloc(32, 7).toString("base64");

export const LOCALHOST = /^(::ffff:)?127\.0\.0\.1$/;
export const DAY = 86_400_000;

export interface Entry {
  id: string;
  accountId: string | null;
  timestamp: Date;
  userId: string | null;
  action: string;
  resourceType: string;
  resourceId: string;
  sourceIp: string | null;
  requestId: string | null;
  details: any;
}

/** Runs `fn` and returns the audit entries it added (oldest first). */
export async function entriesOf<T>(fn: () => Promise<T>): Promise<{ result: T; entries: Entry[] }> {
  const before = new Set((await prisma.auditLog.findMany({ select: { id: true } })).map((r) => r.id));
  const result = await fn();
  const all = await prisma.auditLog.findMany({ orderBy: [{ timestamp: "asc" }, { id: "asc" }] });
  return { result, entries: all.filter((e) => !before.has(e.id)).map((e) => ({ ...e, details: JSON.parse(e.details) })) };
}

/** A REST call with its own x-request-id, with the audit entries it added. */
export async function audited(path: string, t: Tenant | null, init: { method: string; body?: unknown; headers?: Record<string, string> }) {
  const requestId = randomUUID();
  const { result: r, entries } = await entriesOf(() =>
    call(server.url + path, { method: init.method, headers: { ...(t?.headers ?? {}), ...(init.headers ?? {}), "x-request-id": requestId }, body: init.body }),
  );
  for (const e of entries) expect(e.requestId, "entries carry the request's id").toBe(requestId);
  return { r, entries, requestId };
}

/** The fields every entry written by `t`'s request must carry. */
export function expectByRequest(e: Entry, t: Tenant, expected: { action: string; resourceType: string; resourceId: string }) {
  expect(e).toMatchObject({ ...expected, accountId: t.accountId, userId: t.email });
  expect(e.sourceIp).toMatch(LOCALHOST);
  expect(e.timestamp).toBeInstanceOf(Date);
}

export const b25Path = (accountId: string, query = "") => `/v1/accounts/${accountId}/auditlogs${query}`;

/** POST B25; `body` undefined sends no body at all. */
export function b25(t: Tenant, body?: unknown, query = "", headers: Record<string, string> = t.headers) {
  return call(server.url + b25Path(t.accountId, query), { method: "POST", headers, ...(body === undefined ? {} : { body }) });
}

/** B25 that must succeed: 200 JSON with Cache-Control: no-store. */
export async function b25ok(t: Tenant, body?: unknown, query = "") {
  const r = await b25(t, body, query);
  expect(r.status, r.text.slice(0, 500)).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  expect(r.headers.get("cache-control")).toBe("no-store");
  return r;
}

/** An entry seeded directly (AuditLog is append-only; creating is allowed) at an exact time. */
export async function seed(accountId: string, at: string, opts: { userId?: string; label?: string } = {}) {
  return writable.auditLog.create({
    data: {
      id: newId("a"),
      accountId,
      timestamp: new Date(at),
      userId: opts.userId ?? "seed@example.com",
      action: "update",
      resourceType: "probe",
      resourceId: opts.label ?? at,
      sourceIp: "10.0.0.1",
      details: JSON.stringify({ at }),
    },
  });
}

/** The seeded (probe) entries of a B25 page, as their labels, in response order. */
export const probes = (r: Reply) =>
  (r.body.data as { resourceType: string; resourceId: string }[]).filter((e) => e.resourceType === "probe").map((e) => e.resourceId);

/** Fixes the service's "now". */
export const fixNow = (iso: string) => vi.spyOn(clock, "now").mockReturnValue(new Date(iso));

export async function gqlHttp(t: Tenant, query: string, variables: Record<string, unknown> = {}) {
  return call(`${server.url}/graphql`, { method: "POST", headers: t.headers, body: { query, variables } });
}

export const AUDIT_QUERY = `query Q($accountId: String!, $first: Int, $after: String, $filter: AuditLogFilter) {
  auditLogs(accountId: $accountId, first: $first, after: $after, filter: $filter) {
    nodes { id timestamp accountId userId action resourceType resourceId sourceIp details }
    pageInfo { hasNextPage endCursor } } }`;
