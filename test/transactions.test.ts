// withTransaction under contention (src/db/index.ts): a transaction that conflicts is run again and
// leaves only its last attempt's rows and audit entries; one that keeps conflicting becomes a 503
// with Retry-After through the one error mapper; a real PostgreSQL deadlock is retried away; and
// reads outside a write transaction neither wait for it nor see its uncommitted rows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dbErrorKind } from "../src/db/errors.js";
import { dbKind, TRANSACTION_ATTEMPTS, withTransaction } from "../src/db/index.js";
import { ConcurrentChange } from "../src/db/locks.js";
import { knownError } from "../src/errors.js";
import { newId } from "../src/ids.js";
import { problemFromGraphQL } from "../src/rest/problem.js";
import { prisma, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
beforeAll(async () => {
  server = await startServer();
  t = await tenant("tx");
});
afterAll(() => server.close());

const tagRow = (name: string) => ({ id: newId("t"), accountId: t.accountId, name });

describe("withTransaction", () => {
  it("runs a transaction that hit a concurrent change again: only the last attempt's rows and audit entries remain", async () => {
    let attempts = 0;
    const result = await withTransaction(async (tx) => {
      attempts++;
      await tx.tag.create({ data: tagRow(`retry-${attempts}`) });
      if (attempts < 3) throw new ConcurrentChange("simulated");
      return "done";
    });
    expect([result, attempts]).toEqual(["done", 3]);
    const names = (await prisma.tag.findMany({ where: { accountId: t.accountId, name: { startsWith: "retry-" } } })).map((r) => r.name);
    expect(names).toEqual(["retry-3"]);
    const entries = await prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType: "tag", action: "create" } });
    expect(entries).toHaveLength(1);
  });

  it(`gives up after ${TRANSACTION_ATTEMPTS} attempts; the error maps to 503 with Retry-After, nothing written`, async () => {
    let attempts = 0;
    const err = await withTransaction(async (tx) => {
      attempts++;
      await tx.tag.create({ data: tagRow(`never-${attempts}`) });
      throw new ConcurrentChange("simulated");
    }).catch((e: unknown) => e);
    expect(attempts).toBe(TRANSACTION_ATTEMPTS);
    expect(dbErrorKind(err)).toBe("conflict");
    const mapped = knownError(err)!;
    expect(mapped.status).toBe(503);
    expect(mapped.extensions).toMatchObject({ code: "SERVICE_UNAVAILABLE", http: { status: 503, headers: { "Retry-After": "1" } } });
    expect(await prisma.tag.count({ where: { accountId: t.accountId, name: { startsWith: "never-" } } })).toBe(0);
    // REST says what happened instead of masking it as a 500
    const [p, headers] = problemFromGraphQL([mapped]);
    expect(p).toMatchObject({ status: 503, title: "Service Unavailable" });
    expect(headers).toEqual({ "Retry-After": "1" });
    expect(p.detail).toMatch(/conflicting with concurrent changes.*retry after 1 s/);
  });

  it("does not retry ordinary failures", async () => {
    let attempts = 0;
    await expect(
      withTransaction(async () => {
        attempts++;
        throw new Error("not a conflict");
      }),
    ).rejects.toThrow("not a conflict");
    expect(attempts).toBe(1);
  });

  it.runIf(dbKind() === "postgres")("a real deadlock (40P01) between two transactions is retried: both commit", async () => {
    const [a, b] = [tagRow("dl-a"), tagRow("dl-b")];
    await withTransaction(async (tx) => {
      await tx.tag.create({ data: a });
      await tx.tag.create({ data: b });
    });
    let attempts = 0;
    let arrived = 0;
    const barrier = async () => {
      arrived++;
      while (arrived < 2) await new Promise((r) => setTimeout(r, 10));
    };
    // Opposite lock orders on the first attempt only; PostgreSQL aborts one of them (deadlock_timeout 1 s).
    const run = (first: string, second: string) =>
      withTransaction(async (tx) => {
        attempts++;
        await tx.tag.update({ where: { id: first }, data: { description: `by ${first}` } });
        if (attempts <= 2) await barrier();
        await tx.tag.update({ where: { id: second }, data: { description: `by ${first}` } });
      });
    await Promise.all([run(a.id, b.id), run(b.id, a.id)]);
    expect(attempts).toBe(3);
    const rows = await prisma.tag.findMany({ where: { id: { in: [a.id, b.id] } } });
    expect(new Set(rows.map((r) => r.description)).size).toBe(1); // the later transaction wrote both
  });

  it("reads outside an open write transaction are answered at once and do not see its uncommitted rows", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const wrote = new Promise<void>((r) => (inserted = r));
    const writing = withTransaction(async (tx) => {
      await tx.tag.create({ data: tagRow("uncommitted") });
      inserted();
      await held;
    });
    await wrote;
    // The write transaction stays open until release(): a read that queued behind it would never return.
    const seen = await prisma.tag.findMany({ where: { accountId: t.accountId, name: "uncommitted" } });
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(seen).toEqual([]);
    release();
    await writing;
    expect(await prisma.tag.count({ where: { accountId: t.accountId, name: "uncommitted" } })).toBe(1);
  });
});
