// The identity cache (src/auth/identity.ts) on: a warm content page with its tags costs one SQL
// statement, auth included; a change made in this process (revocation, a new membership) applies
// to the next request; a change made elsewhere (the CLI in a child process, SQL typed by hand) reaches
// every instance within 1 s through the database's change signal; a key's own expiry is checked on
// every request. The service's clock is moved instead of waiting.
import { execFile } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createAccount, createKey, createUser, revokeKey } from "../src/admin.js";
import { clock } from "../src/clock.js";
import { type Db, withTransaction } from "../src/db/index.js";
import { newId } from "../src/ids.js";
import { type Child, killChildren, startServerProcess } from "./childProcess.js";
import { call, prisma, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";
import { AUTH, shape } from "./sql.js";

const CACHE_MS = 5_000;
let server: Server;
let t: Tenant;
beforeAll(async () => {
  server = await startServer({ IDENTITY_CACHE_MS: String(CACHE_MS) });
  t = await tenant("cache");
  await withTransaction(async (tx) => {
    const tag = await tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name: "warm" } });
    for (let i = 0; i < 5; i++) {
      const c = await tx.content.create({ data: { id: newId("c"), accountId: t.accountId, title: `c${i}`, type: "text" } });
      await tx.contentTag.create({ data: { contentId: c.id, tagId: tag.id } });
    }
  });
});
afterAll(() => server.close());
afterEach(() => vi.restoreAllMocks());

const page = (who: Tenant = t) => call(`${server.url}/api/v1/${t.accountId}/content?limit=5`, { headers: who.headers });
const later = (ms: number) => {
  const at = new Date(Date.now() + ms);
  vi.spyOn(clock, "now").mockReturnValue(at);
};

/** Polls `path` until it answers `status`; the milliseconds that took (fails after 5 s). */
async function msUntil(path: string, headers: Record<string, string>, status: number): Promise<number> {
  const start = Date.now();
  for (;;) {
    const r = await call(path, { headers });
    if (r.status === status) return Date.now() - start;
    if (Date.now() - start > 5_000) throw new Error(`still ${r.status} after 5 s: ${r.text}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("identity cache", () => {
  it("a warm content page with tags is 1 SQL statement, auth included; a cold one adds the key lookup", async () => {
    const cold = await sqlOf(() => page());
    expect(cold.result.status).toBe(200);
    expect(cold.result.body.data).toHaveLength(5);
    expect(shape(cold.sql)).toEqual([...AUTH, "SELECT Content"]);
    const warm = await sqlOf(() => page());
    expect(warm.result.body).toEqual(cold.result.body);
    expect(shape(warm.sql)).toEqual(["SELECT Content"]);
  });

  it("a revocation in this process applies to the very next request", async () => {
    const u = await tenant("cache-rv");
    expect((await call(`${server.url}/v1/accounts/${u.accountId}/tags`, { headers: u.headers })).status).toBe(200);
    await revokeKey(u.key.slice(0, 12));
    const r = await call(`${server.url}/v1/accounts/${u.accountId}/tags`, { headers: u.headers });
    expect([r.status, r.body.detail]).toEqual([401, "The API key has been revoked."]);
  });

  it("access granted in this process applies at once", async () => {
    const u = await tenant("cache-gr");
    const other = `cache-other-${process.pid}`;
    await createAccount(other);
    const path = `${server.url}/v1/accounts/${other}/tags`;
    expect((await call(path, { headers: u.headers })).status).toBe(403);
    await createUser(u.email, [other]);
    expect((await call(path, { headers: u.headers })).status).toBe(200);
  });

  it("a change from outside this process (SQL typed by hand) applies within 1 s, not after the cache time", async () => {
    const u = await tenant("cache-ext");
    const path = `${server.url}/v1/accounts/${u.accountId}/tags`;
    expect((await call(path, { headers: u.headers })).status).toBe(200);
    // What another process does to the row, unseen by this one's audit recorder: the database's
    // trigger raises the signal (NOTIFY on PostgreSQL, the AuthVersion counter on SQLite).
    await (prisma as unknown as Db).$executeRawUnsafe(`UPDATE "ApiKey" SET "revokedAt" = "createdAt" WHERE "prefix" = '${u.key.slice(0, 12)}'`);
    expect(await msUntil(path, u.headers, 401)).toBeLessThan(1_000);
  });

  it("a key's own expiry is checked on every request, cached or not", async () => {
    const u = await tenant("cache-exp");
    const { key } = await createKey(u.email, { ttlSeconds: 2 });
    const headers = { "x-service-integration-key": key, "x-service-user": u.email };
    const path = `${server.url}/v1/accounts/${u.accountId}/tags`;
    expect((await call(path, { headers })).status).toBe(200);
    later(2_500); // within the cache time, past the key's
    const r = await call(path, { headers });
    expect([r.status, r.body.detail]).toEqual([401, "The API key has expired."]);
  });
});

describe("revocation and grants through the CLI reach every running instance within 1 s", () => {
  let other: { child: Child; url: string };
  beforeAll(async () => {
    // A second instance in its own process (in-process servers would share this one's cache).
    other = await startServerProcess({ DATABASE_URL: process.env.DATABASE_URL!, IDENTITY_CACHE_MS: "60000" });
  }, 90_000);
  afterAll(() => killChildren());

  function cli(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile("npx", ["tsx", "src/cli/index.ts", ...args], { env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`cli ${args.join(" ")}: ${stderr}`)) : resolve(stdout),
      );
    });
  }

  it("key revoke: 401 on both instances within 1 s of the CLI's exit", async () => {
    const u = await tenant("cache-cli");
    const paths = [server.url, other.url].map((base) => `${base}/v1/accounts/${u.accountId}/tags`);
    for (const path of paths) expect((await call(path, { headers: u.headers })).status).toBe(200); // both caches warm
    await cli("key", "revoke", u.key.slice(0, 12));
    for (const path of paths) expect(await msUntil(path, u.headers, 401)).toBeLessThan(1_000);
    const r = await call(paths[1]!, { headers: u.headers });
    expect(r.body.detail).toBe("The API key has been revoked.");
  }, 60_000);

  it("user create --account (a grant): 200 on both instances within 1 s", async () => {
    const u = await tenant("cache-cli-gr");
    const granted = `cache-cli-other-${process.pid}`;
    await createAccount(granted);
    const paths = [server.url, other.url].map((base) => `${base}/v1/accounts/${granted}/tags`);
    for (const path of paths) expect((await call(path, { headers: u.headers })).status).toBe(403);
    await cli("user", "create", u.email, "--account", granted);
    for (const path of paths) expect(await msUntil(path, u.headers, 200)).toBeLessThan(1_000);
  }, 60_000);
});
