// API keys (issue 4): `auditlogs`-scoped keys work on B25 alone (403 elsewhere) and expire after the
// account's audit-token TTL (a shorter --ttl wins); revocation takes effect on the next request; key
// use updates lastUsedAt in batches, not with a write per request; keys are never listed or logged in
// clear; and the admin CLI end to end in a child process.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createAccount, createKey, createUser, keyStatus, listKeys, revokeKey, revokeKeys, setAccount } from "../src/admin.js";
import { flushKeyUsage } from "../src/auth/keyUsage.js";
import { clock } from "../src/clock.js";
import { call, expectProblem, pathA, pathB, prisma, type Reply, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => {
  vi.restoreAllMocks();
});

// ---- helpers ---------------------------------------------------------------------------------------

const headersOf = (key: string, email: string) => ({ "x-service-integration-key": key, "x-service-user": email });

const b25 = (accountId: string, headers: Record<string, string>, body: unknown = {}) =>
  call(`${server.url}/v1/accounts/${accountId}/auditlogs`, { method: "POST", headers, body });

const graphql = (headers: Record<string, string>, query: string, variables: Record<string, unknown> = {}) =>
  call(`${server.url}/graphql`, { method: "POST", headers, body: { query, variables } });

const errorCode = (r: Reply) => r.body?.errors?.[0]?.extensions?.code as string | undefined;

/** Fixes the service's "now" (key expiry is decided against it). */
const fixNow = (at: Date | number) => vi.spyOn(clock, "now").mockReturnValue(new Date(at));

/** An account with a user and, besides the tenant's integration key, an auditlogs key. */
async function withAuditKey(prefix: string, opts: { ttlSeconds?: number } = {}) {
  const t = await tenant(prefix);
  const k = await createKey(t.email, { scope: "auditlogs", ...opts });
  return { t, k, h: headersOf(k.key, t.email) };
}

// ---- auditlogs scope ---------------------------------------------------------------------------------

describe("auditlogs-scoped keys", () => {
  it("work on B25 (REST and the GraphQL auditLogs query)", async () => {
    const { t, k, h } = await withAuditKey("scope");
    expect(k.scope).toBe("auditlogs");
    const r = await b25(t.accountId, h);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.length).toBeGreaterThan(0);
    const g = await graphql(h, `query($a: String!) { auditLogs(accountId: $a) { nodes { id } } }`, { a: t.accountId });
    expect(g.body.errors, g.text).toBeUndefined();
    // the integration key reads them too
    expect((await b25(t.accountId, t.headers)).status).toBe(200);
  });

  it("are a 403 everywhere else: content, tags, end users, schema routes, GraphQL account queries and mutations", async () => {
    const { t, h } = await withAuditKey("scope403");
    const A = server.url + pathA(t);
    const B = server.url + pathB(t);
    const before = await prisma.auditLog.count();
    for (const [method, url, body] of [
      ["GET", `${A}/content`],
      ["GET", `${B}/content`],
      ["GET", `${A}/content/x`],
      ["POST", `${A}/content`, [{ title: "t", type: "text" }]],
      ["PUT", `${B}/content`, [{ id: "x", title: "t" }]],
      ["DELETE", `${A}/content/x`],
      ["GET", `${B}/tags`],
      ["PUT", `${B}/tags`, [{ name: "n" }]],
      ["DELETE", `${B}/tags/n`],
      ["GET", `${A}/endUsers`],
      ["PUT", `${B}/endUsers`, [{ id: "u", custom: {} }]],
      ["PUT", `${A}/endUsers/u`, { plan: "x" }],
      ["GET", `${B}/endUserSchema`],
      ["PUT", `${A}/endUserSchema`, [{ name: "f", type: "string" }]],
    ] as [string, string, unknown?][]) {
      const r = await call(url, { method, headers: h, body });
      if (url.endsWith("/endUsers/u") && method === "PUT") {
        // the spec's own failure body for single end-user updates
        expect(r.status, `${method} ${url}: ${r.text}`).toBe(403);
        expect(r.body).toMatchObject({ statusCode: 403, id: "u" });
      } else {
        expectProblem(r, 403, /scope/);
      }
    }
    expect(errorCode(await graphql(h, `query($a: String!) { account(id: $a) { id name } }`, { a: t.accountId }))).toBe("FORBIDDEN");
    expect(errorCode(await graphql(h, `query($a: String!) { account(id: $a) { contents(first: 1) { nodes { id } } } }`, { a: t.accountId }))).toBe("FORBIDDEN");
    expect(
      errorCode(await graphql(h, `mutation($a: String!) { upsertTags(accountId: $a, input: [{ name: "x" }]) { results { id } } }`, { a: t.accountId })),
    ).toBe("FORBIDDEN");
    expect(await prisma.auditLog.count()).toBe(before); // nothing was changed
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("are a 403 on B25 of an account their owner has no access to", async () => {
    const { h } = await withAuditKey("scopeOwn");
    const other = await tenant("scopeOther");
    expectProblem(await b25(other.accountId, h), 403);
  });
});

// ---- TTL ----------------------------------------------------------------------------------------------

describe("audit-token TTL", () => {
  it("defaults to 30 days; integration keys do not expire unless given --ttl", async () => {
    const t0 = Date.now();
    fixNow(t0);
    const { t, k } = await withAuditKey("ttl30");
    expect(k.expiresAt?.getTime()).toBe(t0 + 30 * 86_400_000);
    const integration = await prisma.apiKey.findUnique({ where: { prefix: t.key.slice(0, 12) } });
    expect(integration?.expiresAt).toBeNull();
    fixNow(t0 + 30 * 86_400_000 - 1000);
    expect((await b25(t.accountId, headersOf(k.key, t.email))).status).toBe(200);
    fixNow(t0 + 30 * 86_400_000 + 1000);
    expectProblem(await b25(t.accountId, headersOf(k.key, t.email)), 401, /expired/);
    expect((await b25(t.accountId, t.headers)).status).toBe(200); // the integration key still works
  });

  it("follows the account's audit-token TTL: a 401 on B25 once it has passed", async () => {
    const t = await tenant("ttl60");
    await setAccount(t.accountId, { auditTokenTtl: 60 });
    const t0 = Date.now();
    fixNow(t0);
    const k = await createKey(t.email, { scope: "auditlogs" });
    expect(k.expiresAt?.getTime()).toBe(t0 + 60_000);
    const h = headersOf(k.key, t.email);
    expect((await b25(t.accountId, h)).status).toBe(200);
    fixNow(t0 + 59_000);
    expect((await b25(t.accountId, h)).status).toBe(200);
    fixNow(t0 + 61_000);
    expectProblem(await b25(t.accountId, h), 401, /expired/);
    expect(errorCode(await graphql(h, `query($a: String!) { auditLogs(accountId: $a) { nodes { id } } }`, { a: t.accountId }))).toBe("UNAUTHENTICATED");
    // a new key gets a new TTL
    const fresh = await createKey(t.email, { scope: "auditlogs" });
    expect((await b25(t.accountId, headersOf(fresh.key, t.email))).status).toBe(200);
  });

  it("a shorter --ttl wins; a longer one is capped at the account's TTL", async () => {
    const t = await tenant("ttlmin");
    await setAccount(t.accountId, { auditTokenTtl: 60 });
    const t0 = Date.now();
    fixNow(t0);
    const short = await createKey(t.email, { scope: "auditlogs", ttlSeconds: 10 });
    const long = await createKey(t.email, { scope: "auditlogs", ttlSeconds: 3600 });
    expect(short.expiresAt?.getTime()).toBe(t0 + 10_000);
    expect(long.expiresAt?.getTime()).toBe(t0 + 60_000);
    fixNow(t0 + 11_000);
    expectProblem(await b25(t.accountId, headersOf(short.key, t.email)), 401);
    expect((await b25(t.accountId, headersOf(long.key, t.email))).status).toBe(200);
    fixNow(t0 + 61_000);
    expectProblem(await b25(t.accountId, headersOf(long.key, t.email)), 401);
  });

  it("an account TTL longer than 30 days is the key's TTL (the 30-day default is no cap); a shorter --ttl still wins", async () => {
    const t = await tenant("ttl90");
    await setAccount(t.accountId, { auditTokenTtl: 90 * 86_400 });
    const t0 = Date.now();
    fixNow(t0);
    expect((await createKey(t.email, { scope: "auditlogs" })).expiresAt?.getTime()).toBe(t0 + 90 * 86_400_000);
    expect((await createKey(t.email, { scope: "auditlogs", ttlSeconds: 3600 })).expiresAt?.getTime()).toBe(t0 + 3_600_000);
    expect((await createKey(t.email, { scope: "auditlogs", ttlSeconds: 200 * 86_400 })).expiresAt?.getTime()).toBe(t0 + 90 * 86_400_000);
  });

  it("for a user of several accounts, the shortest of their TTLs applies", async () => {
    const t = await tenant("ttlmulti");
    const second = `${t.accountId}-2`;
    await createAccount(second);
    await createUser(t.email, [second]);
    await setAccount(t.accountId, { auditTokenTtl: 300 });
    await setAccount(second, { auditTokenTtl: 120 });
    const t0 = Date.now();
    fixNow(t0);
    const k = await createKey(t.email, { scope: "auditlogs" });
    expect(k.expiresAt?.getTime()).toBe(t0 + 120_000);
  });

  it("integration keys with --ttl expire too (401 on every route)", async () => {
    const t = await tenant("ttlint");
    const t0 = Date.now();
    fixNow(t0);
    const k = await createKey(t.email, { ttlSeconds: 30 });
    const h = headersOf(k.key, t.email);
    expect((await call(`${server.url}/api/v1/${t.accountId}/content`, { headers: h })).status).toBe(200);
    fixNow(t0 + 31_000);
    expectProblem(await call(`${server.url}/api/v1/${t.accountId}/content`, { headers: h }), 401, /expired/);
  });

  it("rejects a TTL that is not a positive whole number", async () => {
    const t = await tenant("ttlbad");
    for (const v of [0, -5, 1.5]) {
      await expect(setAccount(t.accountId, { auditTokenTtl: v })).rejects.toThrow(/audit-token-ttl/);
      await expect(createKey(t.email, { scope: "auditlogs", ttlSeconds: v })).rejects.toThrow(/--ttl/);
    }
    await expect(createKey(t.email, { scope: "admin" })).rejects.toThrow(/--scope/);
  });

  it("refuses TTLs past 10 years and rate limits outside 1..2,147,483,647 (the column's range), with a message", async () => {
    const t = await tenant("ttlmax");
    for (const v of [1e20, 999_999_999_999, 315_360_001]) await expect(createKey(t.email, { ttlSeconds: v })).rejects.toThrow(/--ttl must be .*\(10 years\)/);
    expect((await createKey(t.email, { ttlSeconds: 315_360_000 })).expiresAt).toBeInstanceOf(Date);
    for (const v of [3_000_000_000, 315_360_001]) await expect(setAccount(t.accountId, { auditTokenTtl: v })).rejects.toThrow(/--audit-token-ttl must be/);
    for (const v of [0, -1, 1.5, 2_147_483_648, 99_999_999_999])
      await expect(setAccount(t.accountId, { rateLimitPerMinute: v }), String(v)).rejects.toThrow(/--rate-limit must be .*'default'/);
    expect((await setAccount(t.accountId, { rateLimitPerMinute: 2_147_483_647 })).rateLimitPerMinute).toBe(2_147_483_647);
    // null: back to the global default (`--rate-limit default`)
    expect((await setAccount(t.accountId, { rateLimitPerMinute: null })).rateLimitPerMinute).toBeNull();
  });
});

// ---- revocation ---------------------------------------------------------------------------------------

describe("revocation", () => {
  it("takes effect on the very next request, REST and GraphQL, for both scopes", async () => {
    const { t, k, h } = await withAuditKey("rev");
    const content = `${server.url}/api/v1/${t.accountId}/content`;
    const viewer = `{ viewer { email scope } }`;
    expect((await call(content, { headers: t.headers })).status).toBe(200);
    expect((await graphql(t.headers, viewer)).body.data.viewer).toEqual({ email: t.email, scope: "integration" });
    expect((await b25(t.accountId, h)).status).toBe(200);

    await revokeKey(t.key.slice(0, 12));
    expectProblem(await call(content, { headers: t.headers }), 401, /revoked/);
    expect(errorCode(await graphql(t.headers, viewer))).toBe("UNAUTHENTICATED");
    expect((await b25(t.accountId, h)).status).toBe(200); // the other key is unaffected

    await revokeKey(k.prefix);
    expectProblem(await b25(t.accountId, h), 401, /revoked/);
    const row = await prisma.apiKey.findUnique({ where: { prefix: k.prefix } });
    expect(row?.revokedAt).toBeInstanceOf(Date);
    await expect(revokeKey("ggk_unknown0")).rejects.toThrow(/no key/);
  });

  it("several keys at once, all or none; a key revoked before is reported as such and keeps its time", async () => {
    const t = await tenant("revmany");
    const a = await createKey(t.email);
    const b = await createKey(t.email);
    await expect(revokeKeys([a.prefix, "ggk_unknown1"])).rejects.toThrow(/no key with prefix 'ggk_unknown1'.*nothing revoked/);
    expect((await prisma.apiKey.findUnique({ where: { prefix: a.prefix } }))?.revokedAt).toBeNull();
    const first = await revokeKeys([a.prefix]);
    expect(first).toEqual([{ prefix: a.prefix, revokedAt: expect.any(Date), alreadyRevoked: false }]);
    const both = await revokeKeys([a.prefix, b.prefix]);
    expect(both).toEqual([
      { prefix: a.prefix, revokedAt: first[0]!.revokedAt, alreadyRevoked: true },
      { prefix: b.prefix, revokedAt: expect.any(Date), alreadyRevoked: false },
    ]);
  });
});

// ---- authentication rules ---------------------------------------------------------------------------------

describe("authentication (spec, Authentication 1–6)", () => {
  let t: Tenant;
  let other: Tenant;
  beforeAll(async () => {
    t = await tenant("auth");
    other = await tenant("autho");
  });
  const content = () => `${server.url}/api/v1/${t.accountId}/content`;

  it("401: missing either header, unknown key, a key with its last character changed, another user's e-mail", async () => {
    const changed = t.key.slice(0, -1) + (t.key.endsWith("A") ? "B" : "A");
    for (const headers of <Record<string, string>[]>[
      {},
      { "x-service-integration-key": t.key },
      { "x-service-user": t.email },
      headersOf("ggk_doesnotexist", t.email),
      headersOf(changed, t.email),
      headersOf(t.key, other.email),
      headersOf(t.key, "nobody@example.com"),
    ]) {
      expectProblem(await call(content(), { headers }), 401);
    }
  });

  it("the e-mail matches regardless of case; 403 for an account the key's owner cannot access", async () => {
    expect((await call(content(), { headers: headersOf(t.key, t.email.toUpperCase()) })).status).toBe(200);
    expectProblem(await call(`${server.url}/api/v1/${other.accountId}/content`, { headers: t.headers }), 403);
  });

  it("the unauthenticated endpoints need no headers", async () => {
    for (const path of ["/healthz", "/readyz", "/openapi.json"]) expect((await call(server.url + path)).status, path).toBe(200);
  });
});

// ---- last use, batched ----------------------------------------------------------------------------------

describe("key use", () => {
  it("updates lastUsedAt only when flushed: no write per request, one write per key per flush, no audit entry", async () => {
    const t = await tenant("use");
    const prefix = t.key.slice(0, 12);
    await flushKeyUsage(); // start from an empty batch (and no pending timer)
    const t0 = new Date(Math.floor(Date.now() / 1000) * 1000);
    fixNow(t0);
    const { sql } = await sqlOf(async () => {
      for (let i = 0; i < 3; i++) expect((await call(`${server.url}/api/v1/${t.accountId}/content`, { headers: t.headers })).status).toBe(200);
    });
    expect(sql.filter((q) => /^\s*UPDATE/i.test(q) && /ApiKey/.test(q))).toEqual([]);
    expect((await prisma.apiKey.findUnique({ where: { prefix } }))?.lastUsedAt).toBeNull();

    const before = await prisma.auditLog.count();
    const flushed = await sqlOf(() => flushKeyUsage());
    expect(flushed.result).toBe(1);
    expect(flushed.sql.filter((q) => /^\s*UPDATE/i.test(q) && /ApiKey/.test(q))).toHaveLength(1);
    expect((await prisma.apiKey.findUnique({ where: { prefix } }))?.lastUsedAt?.toISOString()).toBe(t0.toISOString());
    expect(await prisma.auditLog.count()).toBe(before); // bookkeeping, not a change

    // an empty batch writes nothing
    expect((await sqlOf(() => flushKeyUsage())).sql.filter((q) => /UPDATE/i.test(q))).toEqual([]);
    // a later use moves it on, again at the next flush
    fixNow(t0.getTime() + 5000);
    expect((await call(`${server.url}/api/v1/${t.accountId}/content`, { headers: t.headers })).status).toBe(200);
    expect((await prisma.apiKey.findUnique({ where: { prefix } }))?.lastUsedAt?.toISOString()).toBe(t0.toISOString());
    await flushKeyUsage();
    expect((await prisma.apiKey.findUnique({ where: { prefix } }))?.lastUsedAt?.getTime()).toBe(t0.getTime() + 5000);
    // shown by listKeys
    const listed = (await listKeys(t.email)).find((k) => k.prefix === prefix);
    expect(listed?.lastUsedAt?.getTime()).toBe(t0.getTime() + 5000);
  });

  it("failed authentications record no use", async () => {
    const t = await tenant("nouse");
    await flushKeyUsage();
    await revokeKey(t.key.slice(0, 12));
    expect((await call(`${server.url}/api/v1/${t.accountId}/content`, { headers: t.headers })).status).toBe(401);
    expect(await flushKeyUsage()).toBe(0);
  });
});

// ---- never in clear ---------------------------------------------------------------------------------------

describe("keys are never shown again", () => {
  it("listKeys returns prefix, owner, scope, expiry and use, never the key or its hash; the row holds only the hash", async () => {
    const { t, k } = await withAuditKey("list");
    const rows = await listKeys(t.email);
    expect(rows.map((r) => r.prefix).sort()).toEqual([t.key.slice(0, 12), k.prefix].sort());
    const hashes = (await prisma.apiKey.findMany({ where: { prefix: { in: rows.map((r) => r.prefix) } }, select: { hash: true } })).map((r) => r.hash);
    expect(hashes).toHaveLength(2);
    for (const r of rows) {
      expect(Object.keys(r).sort()).toEqual(["accountId", "createdAt", "expiresAt", "lastUsedAt", "persistedOnly", "prefix", "revokedAt", "scope", "user"]);
      expect(r.user).toEqual({ email: t.email });
    }
    const text = JSON.stringify(rows);
    for (const secret of [t.key, k.key, ...hashes]) expect(text).not.toContain(secret);
    // all keys, without an e-mail filter, likewise
    const all = JSON.stringify(await listKeys());
    for (const secret of [t.key, k.key, ...hashes]) expect(all).not.toContain(secret);

    const row = await prisma.apiKey.findUnique({ where: { prefix: k.prefix } });
    expect(row?.hash).toBe(createHash("sha256").update(k.key).digest("hex"));
    // the state `key list` shows: past its expiry a key is expired, not active
    const now = new Date();
    expect(keyStatus({ revokedAt: null, expiresAt: null }, now)).toBe("active");
    expect(keyStatus({ revokedAt: null, expiresAt: new Date(now.getTime() + 1000) }, now)).toBe("active");
    expect(keyStatus({ revokedAt: null, expiresAt: now }, now)).toBe("expired");
    expect(keyStatus({ revokedAt: now, expiresAt: new Date(0) }, now)).toBe(`revoked ${now.toISOString()}`);
    expect(JSON.stringify(row)).not.toContain(k.key);
    expect(k.prefix).toBe(k.key.slice(0, 12));
  });
});

// ---- the CLI, end to end -----------------------------------------------------------------------------------

describe("admin CLI in a child process", () => {
  const dir = mkdtempSync(join(tmpdir(), "gg-cli-"));
  const file = join(dir, "cli.db");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        "npx",
        ["tsx", "src/cli/index.ts", ...args],
        { cwd: process.cwd(), env: { ...process.env, DATABASE_URL: `file:${file}`, LOG_LEVEL: "silent", NODE_ENV: "test" }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
      );
    });
  }
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    expect(r.code, `cli ${args.join(" ")}\n${r.stderr}\n${r.stdout}`).toBe(0);
    return r;
  };

  it("account create/set, user create, key create (alone on the last stdout line), key list, key revoke", async () => {
    const email = "cli-user@example.com";
    await ok("account", "create", "cli-acct", "--name", "CLI account");
    const set = await ok("account", "set", "cli-acct", "--audit-token-ttl", "120");
    expect(set.stdout).toMatch(/audit-token TTL 120s/);
    await ok("user", "create", email, "--account", "cli-acct");

    const created = await ok("key", "create", email);
    const lines = created.stdout.split("\n").filter((l) => l !== "");
    const key = lines.at(-1)!;
    expect(key).toMatch(/^ggk_[A-Za-z0-9_-]{43}$/); // the key alone on the line
    expect(created.stdout.trimEnd().endsWith(key)).toBe(true);
    const prefix = key.slice(0, 12);
    expect(created.stderr).toContain(prefix);
    expect(created.stderr).not.toContain(key);

    const t0 = Date.now();
    const audit = await ok("key", "create", email, "--scope", "auditlogs", "--ttl", "600");
    const auditKey = audit.stdout.trim().split("\n").at(-1)!;
    expect(auditKey).toMatch(/^ggk_/);

    const list = await ok("key", "list");
    const listed = list.stdout
      .trim()
      .split("\n")
      .map((l) => l.split("\t"));
    expect(listed.map((l) => l[0])).toEqual([prefix, auditKey.slice(0, 12)]);
    expect(listed[0]).toEqual([prefix, email, "integration", "never", "active", "last used never"]);
    expect(listed[1]!.slice(1, 3)).toEqual([email, "auditlogs"]);
    const expiry = Date.parse(listed[1]![3]!);
    expect(expiry).toBeGreaterThanOrEqual(t0 + 119_000); // the account's 120 s beat --ttl 600
    expect(expiry).toBeLessThanOrEqual(Date.now() + 121_000);
    for (const secret of [key, auditKey]) expect(list.stdout + list.stderr).not.toContain(secret);
    expect((await ok("key", "list", "--email", email)).stdout.trim().split("\n")).toHaveLength(2);

    const revoked = await ok("key", "revoke", prefix);
    expect(revoked.stdout).toContain(`key ${prefix} revoked`);
    const after = (await ok("key", "list")).stdout
      .trim()
      .split("\n")
      .map((l) => l.split("\t"));
    expect(after[0]![4]).toMatch(/^revoked \d{4}-/);
    expect(after[1]![4]).toBe("active");

    const unknown = await cli("key", "revoke", "ggk_nothing0");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/error: no key/);

    // the database behind it: the hash only, and one audit entry per change, by cli:<user>
    const db = new Database(file, { readonly: true });
    try {
      const rows = db.prepare(`SELECT prefix, hash FROM "ApiKey" ORDER BY "createdAt"`).all() as { prefix: string; hash: string }[];
      expect(rows.map((r) => r.hash)).toEqual([key, auditKey].map((k) => createHash("sha256").update(k).digest("hex")));
      const entries = db.prepare(`SELECT "userId", action, "resourceType", "resourceId", details FROM "AuditLog" ORDER BY timestamp, id`).all() as {
        userId: string;
        action: string;
        resourceType: string;
        resourceId: string;
        details: string;
      }[];
      expect(entries.map((e) => `${e.action} ${e.resourceType} ${e.resourceId}`)).toEqual([
        "create account cli-acct",
        "update account cli-acct",
        `create user ${email}`,
        expect.stringMatching(/^create membership .+:cli-acct$/),
        `create apiKey ${prefix}`,
        `create apiKey ${auditKey.slice(0, 12)}`,
        `update apiKey ${prefix}`,
      ]);
      for (const e of entries) {
        expect(e.userId).toBe(`cli:${userInfo().username}`);
        for (const secret of [key, auditKey, ...rows.map((r) => r.hash)]) expect(e.details).not.toContain(secret);
      }
    } finally {
      db.close();
    }
  }, 240_000);

  /** The CLI from source under node itself (faster than npx), on a database file of its own. */
  function node(env: Record<string, string | undefined>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ["--import", "tsx", "src/cli/index.ts", ...args],
        { cwd: process.cwd(), env: { ...process.env, LOG_LEVEL: "silent", NODE_ENV: "test", ...env }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
      );
    });
  }
  const STACK = /^\s+at /m;

  it("checks the command line before the database: an unknown command, options of other commands, extra arguments (exit 2, nothing created)", async () => {
    const fresh = join(dir, "never.db");
    const env = { DATABASE_URL: `file:${fresh}` };
    const refused: [string[], RegExp][] = [
      [["foo", "bar"], /^error: unknown command 'foo bar'\n\nusage: npm run cli -- <command>\n/],
      [["account", "create", "x", "--audit-token-ttl", "5"], /^error: 'account create' takes no option --audit-token-ttl \(its options: --name, --id-method\)/],
      [["key", "list", "--account", "acme"], /^error: 'key list' takes no option --account/],
      [["account", "set", "acme", "--ttl", "5"], /^error: 'account set' takes no option --ttl/],
      [["seed", "--demo", "--ttl", "5", "extra"], /^error: 'seed' takes no option --ttl/],
      [["seed", "--demo", "extra"], /^error: 'seed' takes no arguments; unexpected 'extra'/],
      [["seed"], /^error: 'seed' needs --demo/],
      [["account", "create", "x", "y"], /^error: 'account create' takes only <accountId>; unexpected 'y'/],
      [["key", "revoke"], /^error: 'key revoke' needs <keyPrefix>/],
      [["key", "create", "a@b.c", "--ttl"], /^error: 'key create': Option '--ttl <value>' argument missing/],
    ];
    const results = await Promise.all(refused.map(([args]) => node(env, ...args)));
    for (const [i, r] of results.entries()) {
      const [args, message] = refused[i]!;
      expect([args.join(" "), r.code], r.stderr).toEqual([args.join(" "), 2]);
      expect(r.stderr, args.join(" ")).toMatch(message);
      expect(r.stderr).not.toMatch(STACK);
    }
    expect(existsSync(fresh)).toBe(false); // neither created nor migrated
  }, 120_000);

  it("an invalid configuration or database: its message alone, naming the variable, no stack", async () => {
    const cases: [Record<string, string>, RegExp, number][] = [
      [{ PORT: "abc", DATABASE_URL: `file:${join(dir, "never.db")}` }, /^Invalid configuration:\n {2}PORT: [^\n]+\n$/, 2],
      [{ LOG_LEVEL: "verbose", DATABASE_URL: `file:${join(dir, "never.db")}` }, /^Invalid configuration:\n {2}LOG_LEVEL: [^\n]+\n$/, 2],
      [{ DATABASE_URL: "file:" }, /^Invalid configuration:\n {2}DATABASE_URL: file: needs the path/, 2],
      [{ DATABASE_URL: `file:${dir}` }, /^DATABASE_URL: cannot open the SQLite database [^\n]+\n$/, 1], // a directory
    ];
    const results = await Promise.all(cases.map(([env]) => node(env, "key", "list")));
    for (const [i, r] of results.entries()) {
      expect([r.code, r.stderr]).toEqual([cases[i]![2], expect.stringMatching(cases[i]![1])]);
      expect(r.stderr).not.toMatch(STACK);
    }
  }, 120_000);

  it("refuses out-of-range numbers and unknown accounts with a message; key list says expired; revoke takes several prefixes, all or none", async () => {
    const env = { DATABASE_URL: `file:${join(dir, "checks.db")}` };
    const run = (...args: string[]) => node(env, ...args);
    const ok = async (...args: string[]) => {
      const r = await run(...args);
      expect(r.code, `cli ${args.join(" ")}\n${r.stderr}`).toBe(0);
      return r;
    };
    const refused = async (args: string[], message: RegExp) => {
      const r = await run(...args);
      expect([args.join(" "), r.code], r.stderr).toEqual([args.join(" "), 2]);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(STACK);
    };
    const email = "checks@example.com";
    await ok("account", "create", "acme");
    await ok("user", "create", email, "--account", "acme");
    // Read-only refusals, side by side.
    await Promise.all([
      refused(["key", "create", email, "--ttl", "99999999999999999999"], /^error: --ttl must be a whole number of seconds from 1 to 315360000 \(10 years\)$/m),
      refused(["key", "create", email, "--ttl", "999999999999"], /^error: --ttl must be/m),
      refused(["account", "set", "acme", "--rate-limit", "0"], /^error: --rate-limit must be a whole number from 1 to 2147483647/m),
      refused(["account", "set", "acme", "--rate-limit", "99999999999"], /^error: --rate-limit must be/m),
      refused(["account", "set", "acme", "--audit-token-ttl", "3000000000"], /^error: --audit-token-ttl must be/m),
      refused(["rollups", "rebuild", "--account", "nope"], /^error: no account 'nope'$/m),
      refused(["rollups", "status", "--account", "nope"], /^error: no account 'nope'$/m),
    ]);
    expect((await ok("account", "set", "acme", "--rate-limit", "1200")).stdout).toMatch(/rate limit 1200\/min/);
    expect((await ok("account", "set", "acme", "--rate-limit", "default")).stdout).toMatch(/rate limit default\/min/);

    const keyOf = async (...extra: string[]) => (await ok("key", "create", email, ...extra)).stdout.trim().split("\n").at(-1)!.slice(0, 12);
    const [short, second, third] = [await keyOf("--ttl", "1"), await keyOf(), await keyOf()];
    await refused(["key", "revoke", second, "ggk_nothing0"], /^error: no key with prefix 'ggk_nothing0' .*nothing revoked$/m);
    expect((await ok("key", "revoke", second)).stdout).toBe(`key ${second} revoked\n`);
    const again = await ok("key", "revoke", second, third);
    expect(again.stdout).toMatch(new RegExp(`^key ${second} was already revoked \\(\\d{4}-[^)]+\\)\\nkey ${third} revoked\\n$`));
    await new Promise((r) => setTimeout(r, 1100)); // past the short key's expiry
    const states = (await ok("key", "list")).stdout
      .trim()
      .split("\n")
      .map((l) => l.split("\t"));
    expect(states.map((l) => [l[0], l[4]!.replace(/ .*/, "")])).toEqual([
      [short, "expired"],
      [second, "revoked"],
      [third, "revoked"],
    ]);

    // seed --demo: once only (its content would be doubled)
    await ok("account", "create", "demo");
    await refused(["seed", "--demo"], /^error: the demo account 'demo' exists/m);
  }, 240_000);
});
