// The direct reads (src/db/direct.ts) against Prisma's: the same rows whatever the process's time
// zone, every column the schema declares, a bounded set of statements whatever a client sends,
// refused inside a transaction; and the PostgreSQL pool they share with Prisma (a setting, 503
// when no connection comes in time).
//
// The process runs in New York here whatever the runner's TZ: node-postgres used to write Date
// parameters in local time, which a `timestamp` column reads as UTC, five hours off.
process.env.TZ = "America/New_York";
// A small pool, so the test can hold all of it (read when the pool opens, on first use).
process.env.DATABASE_POOL_SIZE = "3";
process.env.DATABASE_POOL_TIMEOUT_MS = "300";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { directRead } from "../src/db/direct.js";
import { dbKind, onQuery, withTransaction } from "../src/db/index.js";
import { contentPage } from "../src/domains/content/page.js";
import { endUsersWith, endUserWith } from "../src/domains/endUsers/read.js";
import { orderedContentFor, segmentRow } from "../src/domains/segments/read.js";
import { newId } from "../src/ids.js";
import { makeContent } from "./factories/content.js";
import { call, expectJson, expectProblem, pathA, pathB, prisma, type Reply, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
const req = (path: string, init: Parameters<typeof call>[1] = {}) => call(`${server.url}${path}`, { headers: t.headers, ...init });

beforeAll(async () => {
  expect(new Date(Date.UTC(2026, 0, 1)).getTimezoneOffset()).toBe(300); // the test really runs at UTC-5
  server = await startServer();
  t = await tenant("direct");
});
afterAll(() => server.close());

describe("times are UTC whatever TZ says", () => {
  it("B4 lists nothing created after an hour from now, and what was created now after an hour ago", async () => {
    const u = await tenant("tz-b4");
    await makeContent(u.accountId, { title: "now" });
    const hour = 3_600_000;
    const ahead = await call(`${server.url}${pathB(u)}/content/createdAfter?fromTime=${Date.now() + hour}`, { headers: u.headers });
    expectJson(ahead, 200);
    expect(ahead.body.data).toEqual([]);
    const before = await call(`${server.url}${pathB(u)}/content/createdAfter?fromTime=${Date.now() - hour}`, { headers: u.headers });
    expect(before.body.data.map((c: { title: string }) => c.title)).toEqual(["now"]);
  });

  it("B5 lists as updated after a time only what was updated after it", async () => {
    const u = await tenant("tz-b5");
    const past = new Date(Date.now() - 10 * 60_000);
    await makeContent(u.accountId, { title: "old", createdAt: past, updatedAt: past });
    const r = await call(`${server.url}${pathB(u)}/content/updatedAfter?fromTime=${past.getTime() + 60_000}`, { headers: u.headers });
    expectJson(r, 200);
    expect(r.body.data).toEqual([]);
  });

  it("walking style A's cursor returns every row once and never the same cursor twice", async () => {
    const u = await tenant("tz-walk");
    const base = Date.now() - 3_600_000;
    for (let i = 0; i < 23; i++) await makeContent(u.accountId, { title: `c${i}`, createdAt: new Date(base + i * 1000) });
    const seen: string[] = [];
    const cursors = new Set<string>();
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const r: Reply = await call(`${server.url}${pathA(u)}/content?limit=7${cursor ? `&cursor=${cursor}` : ""}`, { headers: u.headers });
      expectJson(r, 200);
      seen.push(...r.body.data.map((c: { title: string }) => c.title));
      cursor = r.body.cursor;
      if (!cursor) break;
      expect(cursors.has(cursor)).toBe(false);
      cursors.add(cursor);
    }
    expect(cursor).toBeNull();
    expect(seen).toEqual(Array.from({ length: 23 }, (_, i) => `c${i}`));
  });
});

describe("direct rows are Prisma's rows", () => {
  it("a content page: every column of the schema, converted as findMany converts it", async () => {
    const u = await tenant("parity");
    await withTransaction((tx) =>
      tx.content.createMany({
        data: [0, 1, 2].map((i) => ({
          id: `${u.accountId}-p${i}`,
          accountId: u.accountId,
          title: `p${i}`,
          type: "link",
          url: `https://example.com/${i}`,
          source: "knowledgebase",
          description: `d${i}`,
          descriptionMd: `*d${i}*`,
          state: "ready",
          stage: "production",
          ownerId: "someone",
          createdAt: new Date(Date.UTC(2026, 0, 1, 23, 30, 0, 123 + i)),
          updatedAt: new Date(Date.UTC(2026, 5, 1, 4, 0, 0, 7 * i)),
        })),
      }),
    );
    const direct = await contentPage(u.accountId, {}, "createdAt", null, 10, null);
    const viaPrisma = await prisma.content.findMany({ where: { accountId: u.accountId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    expect(direct).toEqual(viaPrisma);
    expect(Object.keys(direct[0]!).sort()).toEqual(Object.keys(viaPrisma[0]!).sort());
  });

  it("an end user with values and actions, a segment and its content", async () => {
    const u = await tenant("parity-eu");
    const endUserId = newId("eu");
    const segmentId = newId("sg");
    await withTransaction(async (tx) => {
      await tx.endUser.create({ data: { id: endUserId, accountId: u.accountId, externalId: "ext-1", createdAt: new Date(Date.UTC(2026, 2, 3, 1, 2, 3, 4)) } });
      await tx.endUserValue.createMany({
        data: [
          { endUserId, accountId: u.accountId, field: "plan", type: "string", text: "gold" },
          { endUserId, accountId: u.accountId, field: "score", type: "double", num: 1.5 },
          { endUserId, accountId: u.accountId, field: "vip", type: "boolean", bool: true },
          { endUserId, accountId: u.accountId, field: "since", type: "timestamp", time: new Date(Date.UTC(2025, 11, 31, 23, 59, 59, 999)) },
        ],
      });
      await tx.endUserAction.createMany({ data: [{ endUserId, actionId: "a1", count: 3, value: 1_700_000_000_000n }] });
      await tx.segment.create({
        data: {
          id: segmentId,
          accountId: u.accountId,
          name: "s",
          rule: "{}",
          createdAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
          updatedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 7)),
        },
      });
    });
    const content = await makeContent(u.accountId, { title: "in segment" });
    await withTransaction((tx) => tx.segmentContent.create({ data: { segmentId, contentId: content.id, position: 0 } }));

    const direct = await endUserWith(u.accountId, "ext-1", { values: true, actions: true });
    const viaPrisma = await prisma.endUser.findUnique({
      where: { accountId_externalId: { accountId: u.accountId, externalId: "ext-1" } },
      include: { values: { orderBy: { field: "asc" } }, actions: { orderBy: { actionId: "asc" } } },
    });
    expect(direct).toEqual(viaPrisma);
    // The bulk form: the same row, unknown ids left out.
    expect(await endUsersWith(u.accountId, ["nobody", "ext-1"], { values: true, actions: true })).toEqual([viaPrisma]);
    expect(await segmentRow(u.accountId, segmentId)).toEqual(await prisma.segment.findUnique({ where: { id: segmentId } }));
    const ordered = await orderedContentFor(segmentId, u.accountId, "ext-1", null);
    expect(ordered).toEqual(await prisma.content.findMany({ where: { id: content.id } }));
  });

  it("refuses to run inside a transaction, where it would not see the transaction's own writes", async () => {
    await expect(withTransaction(async () => contentPage(t.accountId, {}, "createdAt", null, 1, null))).rejects.toThrow(/inside a transaction/);
    expect(() => directRead({ name: "outside", sqlite: "SELECT 1 AS x", postgres: "SELECT 1 AS x" }, [])).not.toThrow();
  });
});

describe("a bulk update's reply", () => {
  it("reads the updated end users back in one statement per 1,000 (not Prisma's findMany with includes), as GET shows them", async () => {
    const u = await tenant("bulk-readback");
    const schema = await call(`${server.url}${pathA(u)}/endUserSchema`, {
      method: "PUT",
      headers: u.headers,
      body: [
        { name: "plan", type: "string" },
        { name: "score", type: "double" },
      ],
    });
    expect(schema.status, schema.text).toBe(200);
    const ids = Array.from({ length: 1_200 }, (_, i) => `bulk-${i}`);
    const put = (body: unknown) => call(`${server.url}${pathA(u)}/endUsers`, { method: "PUT", headers: u.headers, body });
    expectJson(await put(ids.map((id, i) => ({ id, custom: { plan: i % 2 ? "pro" : "free", score: i } }))), 201);
    const reads: string[] = [];
    const stop = onQuery((sql) => {
      if (/FROM "EndUser"/.test(sql) && !/^\s*(INSERT|UPDATE|DELETE)/i.test(sql)) reads.push(sql);
    });
    let updated: Reply;
    try {
      // Only `score` changes: the reply shows `plan` too, as stored.
      updated = await put(ids.map((id, i) => ({ id, custom: { score: i + 0.5 } })));
    } finally {
      stop();
    }
    expectJson(updated, 200);
    // The reply's reads (read.ts: the users as `u`), not the write's own look-up of which ids exist.
    const readBack = reads.filter((sql) => sql.includes('u."externalId" = ANY') || sql.includes('u."externalId" IN (SELECT value FROM json_each'));
    expect(readBack).toHaveLength(2);
    expect(reads.filter((sql) => /LEFT JOIN|"EndUserValue"/.test(sql) && !readBack.includes(sql))).toEqual([]);
    expect(updated.body.data).toHaveLength(1_200);
    expect(updated.body.data[7]).toEqual((await call(`${server.url}${pathA(u)}/endUsers/bulk-7`, { headers: u.headers })).body);
    expect(updated.body.data[7].custom).toEqual({ plan: "pro", score: 7.5 });
    expect(updated.body.data.map((r: { id: string }) => r.id)).toEqual(ids);
  });
});

describe("what a client sends does not shape the SQL text", () => {
  it("a state list of any length (and repeats) is one statement", async () => {
    await makeContent(t.accountId, { title: "d", state: "draft" });
    await makeContent(t.accountId, { title: "r", state: "ready" });
    const texts = new Set<string>();
    const stop = onQuery((sql) => {
      if (sql.includes('FROM "Content" c')) texts.add(sql);
    });
    try {
      for (let n = 1; n <= 12; n++) {
        const state = Array.from({ length: n }, (_, i) => (i % 2 ? "draft" : "ready"));
        const r = await req(`/graphql`, {
          method: "POST",
          body: {
            query: `query($a: String!, $s: [ContentState!]) { account(id: $a) { contents(first: 10, filter: { state: $s }) { edges { node { title } } } } }`,
            variables: { a: t.accountId, s: state },
          },
        });
        expectJson(r, 200);
        const titles = r.body.data.account.contents.edges.map((e: any) => e.node.title).sort();
        expect(titles).toEqual(n === 1 ? ["r"] : ["d", "r"]);
      }
    } finally {
      stop();
    }
    expect(texts.size).toBe(1);
  });
});

describe.runIf(dbKind() === "postgres")("PostgreSQL connections", () => {
  it("Prisma and the direct reads share one pool of DATABASE_POOL_SIZE; none free in time is a 503 with Retry-After", async () => {
    const { sharedPool } = await import("../src/db/postgres.js");
    const pool = sharedPool(process.env.DATABASE_URL!);
    expect(pool.options.max).toBe(Number(process.env.DATABASE_POOL_SIZE));
    // Hold every connection of the pool: the next request waits DATABASE_POOL_TIMEOUT_MS, then 503.
    const held = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
    try {
      const direct = await req(`${pathA(t)}/content?limit=5`);
      expectProblem(direct, 503, /database is busy/);
      expect(direct.headers.get("retry-after")).toBe("1");
      const viaPrisma = await req(`${pathB(t)}/tags`);
      expectProblem(viaPrisma, 503, /database is busy/);
    } finally {
      for (const c of held) c.release();
    }
    expectJson(await req(`${pathA(t)}/content?limit=5`), 200);
  });
});
