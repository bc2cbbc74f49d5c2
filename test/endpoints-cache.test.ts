// Saved endpoints' definitions are cached per process as resolved keys are (IDENTITY_CACHE_MS, the
// auth-change signal): a warm call reads nothing before its operation, a change made by this process
// applies to the very next call, and one made outside it (SQL typed by hand, another instance)
// within the signal's delay, not after the cache time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../src/db/index.js";
import { call, pathB, prisma, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";

const CACHE_MS = 60_000;
let server: Server;
let t: Tenant;
beforeAll(async () => {
  server = await startServer({ IDENTITY_CACHE_MS: String(CACHE_MS) });
  t = await tenant("endp-cache");
});
afterAll(() => server.close());

const ME = "query Me($accountId: String!) { account(id: $accountId) { id } }";
const NAME = "query Name($accountId: String!) { account(id: $accountId) { name } }";
const put = (name: string, body: unknown) => call(`${server.url}${pathB(t)}/endpoints/${name}`, { method: "PUT", headers: t.headers, body });
const run = (name: string) => call(`${server.url}${pathB(t)}/run/${name}`, { headers: t.headers });

describe("the definition cache", () => {
  it("a warm call reads neither the endpoint nor its document", async () => {
    expect((await put("warm", { document: ME })).status).toBe(201);
    expect((await run("warm")).status).toBe(200);
    // The save's own signal reaches this process too (SQLite reads its counter every 250 ms) and drops
    // the cache once more: past it, the definition stays.
    await new Promise((r) => setTimeout(r, 300));
    expect((await run("warm")).status).toBe(200);
    const { result, sql } = await sqlOf(() => run("warm"));
    expect([result.status, result.body]).toEqual([200, { account: { id: t.accountId } }]);
    expect(sql.filter((s) => /SavedEndpoint|PersistedDocument/.test(s))).toEqual([]);
  });

  it("a replacement or a delete by this process applies to the very next call", async () => {
    expect((await put("swap", { document: ME })).status).toBe(201);
    expect((await run("swap")).body).toEqual({ account: { id: t.accountId } });
    expect((await put("swap", { document: NAME })).status).toBe(200);
    expect((await run("swap")).body).toEqual({ account: { name: expect.any(String) } });
    expect((await call(`${server.url}${pathB(t)}/endpoints/swap`, { method: "DELETE", headers: t.headers })).status).toBe(204);
    expect((await run("swap")).status).toBe(404);
  });

  it("a change from outside this process (SQL typed by hand) applies within 1 s, not after the cache time", async () => {
    expect((await put("ext", { document: ME, maxAgeSeconds: 5 })).status).toBe(201);
    expect((await run("ext")).headers.get("cache-control")).toBe("private, max-age=5");
    // Unseen by this process's audit recorder: the table's trigger raises the signal.
    await (prisma as unknown as Db).$executeRawUnsafe(`UPDATE "SavedEndpoint" SET "maxAgeSeconds" = 7 WHERE "accountId" = '${t.accountId}' AND "name" = 'ext'`);
    const started = Date.now();
    for (;;) {
      if ((await run("ext")).headers.get("cache-control") === "private, max-age=7") break;
      expect(Date.now() - started).toBeLessThan(1_000);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});
