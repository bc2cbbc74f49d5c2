// Concurrent writers against one account, in the shapes integration scripts produce: no update is
// lost, no deadlock or serialization failure reaches a client as a 5xx, concurrent upserts of one new
// name all succeed (one creates, the rest update), and every successful change has exactly one
// audit entry. The same file runs on SQLite and on PostgreSQL (where these races are real).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, prisma, type Reply, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
beforeAll(async () => {
  server = await startServer({ RATE_LIMIT_PER_MINUTE: "1000000" });
});
afterAll(() => server.close());

const send = (t: Tenant, method: string, path: string, body?: unknown): Promise<Reply> => call(server.url + path, { method, headers: t.headers, body });

const statuses = (replies: Reply[]) => {
  const counts: Record<number, number> = {};
  for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
};

async function createContents(t: Tenant, n: number): Promise<string[]> {
  const items = Array.from({ length: n }, (_, i) => ({ title: `c${i}`, type: "link", url: `https://example.com/${i}` }));
  const r = await send(t, "POST", `/api/v1/${t.accountId}/content`, items);
  expect(r.status, r.text).toBe(201);
  return (r.body.data as { id: string }[]).map((d) => d.id);
}

describe("content updates", () => {
  it("concurrent updates of different fields of one content lose neither", async () => {
    const t = await tenant("conc");
    const [id] = await createContents(t, 1);
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all([
        ...Array.from({ length: 4 }, (_, i) => send(t, "PUT", `/api/v1/${t.accountId}/content`, [{ id, title: `title ${round}.${i}` }])),
        ...Array.from({ length: 4 }, (_, i) => send(t, "PUT", `/api/v1/${t.accountId}/content`, [{ id, description: `desc ${round}.${i}` }])),
      ]);
      expect(statuses(replies)).toEqual({ 200: 8 });
      const row = await prisma.content.findUniqueOrThrow({ where: { id } });
      expect(row.title).toMatch(new RegExp(`^title ${round}\\.`));
      expect(row.description).toMatch(new RegExp(`^desc ${round}\\.`));
    }
    // one entry per successful change: the create and 5 × 8 updates
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId, resourceId: id } })).toBe(41);
  });

  it("bulk updates of the same ids in opposite and random orders never answer 5xx", async () => {
    const t = await tenant("conc");
    const ids = await createContents(t, 5);
    const [a, b] = ids as [string, string];
    const pairs = await Promise.all(
      Array.from({ length: 10 }, (_, i) => [
        send(t, "PUT", `/api/v1/${t.accountId}/content`, [
          { id: a, title: `a${i}` },
          { id: b, title: `b${i}` },
        ]),
        send(t, "PUT", `/api/v1/${t.accountId}/content`, [
          { id: b, description: `b${i}` },
          { id: a, description: `a${i}` },
        ]),
      ]).flat(),
    );
    expect(statuses(pairs)).toEqual({ 200: 20 });

    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const clients = Array.from({ length: 8 }, async (_, c) => {
      const out: Reply[] = [];
      for (let k = 0; k < 5; k++) {
        const order = [...ids].sort(() => rand() - 0.5);
        out.push(
          await send(
            t,
            "PUT",
            `/api/v1/${t.accountId}/content`,
            order.map((id) => ({ id, title: `client ${c} put ${k}` })),
          ),
        );
      }
      return out;
    });
    const replies = (await Promise.all(clients)).flat();
    expect(statuses(replies)).toEqual({ 200: 40 });
    const updates = await prisma.auditLog.count({ where: { accountId: t.accountId, action: "update" } });
    expect(updates).toBe(20 * 2 + 40 * 5);
  });
});

describe("upserts of one new name", () => {
  it("16 simultaneous PUT /tags of one new name: one 201, the rest 200, one tag, one create entry", async () => {
    const t = await tenant("conc");
    const replies = await Promise.all(
      Array.from({ length: 16 }, (_, i) => send(t, "PUT", `/v1/accounts/${t.accountId}/tags`, [{ name: "onboarding", description: `d${i}` }])),
    );
    const codes = replies.map((r) => r.status);
    expect(
      codes.filter((s) => s >= 300),
      replies
        .map((r) => r.text)
        .join("\n")
        .slice(0, 2000),
    ).toEqual([]);
    const items = replies.map((r) => (r.body.data as { statusCode?: number }[] | undefined)?.[0]);
    expect(codes.filter((s) => s === 201)).toHaveLength(1);
    expect(codes.filter((s) => s === 200)).toHaveLength(15);
    expect(items.every((i) => i !== undefined)).toBe(true);
    const rows = await prisma.tag.findMany({ where: { accountId: t.accountId } });
    expect(rows).toHaveLength(1);
    const entries = await prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType: "tag" } });
    expect(entries.filter((e) => e.action === "create")).toHaveLength(1);
    expect(entries.filter((e) => e.action === "update")).toHaveLength(15);
  });

  it("simultaneous end-user upserts of one new id: one 201, the rest 200, one user, merged values", async () => {
    const t = await tenant("conc");
    const schema = await send(
      t,
      "PUT",
      `/api/v1/${t.accountId}/endUserSchema`,
      Array.from({ length: 8 }, (_, i) => ({ name: `f${i}`, type: "double" })),
    );
    expect(schema.status, schema.text).toBe(200);
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        send(t, "PUT", `/v1/accounts/${t.accountId}/endUsers`, [{ id: "same-user", custom: { [`f${i}`]: i }, userActionCount: { [`a${i}`]: i + 1 } }]),
      ),
    );
    const codes = replies.map((r) => r.status);
    expect(
      codes.filter((s) => s >= 300),
      replies
        .map((r) => r.text)
        .join("\n")
        .slice(0, 2000),
    ).toEqual([]);
    expect(codes.filter((s) => s === 201)).toHaveLength(1);
    const users = await prisma.endUser.findMany({ where: { accountId: t.accountId }, include: { values: true, actions: true } });
    expect(users).toHaveLength(1);
    expect(users[0]!.values.map((v) => [v.field, v.num]).sort()).toEqual(Array.from({ length: 8 }, (_, i) => [`f${i}`, i]));
    expect(users[0]!.actions.map((a) => [a.actionId, a.count]).sort()).toEqual(Array.from({ length: 8 }, (_, i) => [`a${i}`, i + 1]));
    const entries = await prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType: "endUser" } });
    expect(entries.map((e) => e.action).sort()).toEqual(["create", ...Array(7).fill("update")]);
  });

  it("concurrent action counts on one end user merge per action, none lost", async () => {
    const t = await tenant("conc");
    await send(t, "PUT", `/api/v1/${t.accountId}/endUsers`, [{ id: "u1" }]);
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => send(t, "PUT", `/v1/accounts/${t.accountId}/endUsers`, [{ id: "u1", userActionCount: { [`a${i}`]: 1 } }])),
    );
    expect(statuses(replies)).toEqual({ 200: 8 });
    expect(await prisma.endUserAction.count({ where: { endUser: { accountId: t.accountId } } })).toBe(8);
  });

  it("simultaneous schema-field adds of one new name and past the 50-field cap stay exact", async () => {
    const t = await tenant("conc");
    const same = await Promise.all(Array.from({ length: 8 }, () => send(t, "PUT", `/api/v1/${t.accountId}/endUserSchema`, [{ name: "plan", type: "string" }])));
    expect(same.map((r) => r.status).sort()).toEqual(Array(8).fill(200));
    expect(same.map((r) => r.body.data?.[0]?.statusCode ?? r.body.success?.[0]?.statusCode).filter((s) => s === 201).length).toBeLessThanOrEqual(1);
    expect(await prisma.endUserField.count({ where: { accountId: t.accountId } })).toBe(1);
    // 48 more fields, then 6 writers race for the last slot
    const fill = await send(
      t,
      "PUT",
      `/api/v1/${t.accountId}/endUserSchema`,
      Array.from({ length: 48 }, (_, i) => ({ name: `x${i}`, type: "string" })),
    );
    expect(fill.status, fill.text).toBe(200);
    const race = await Promise.all(
      Array.from({ length: 6 }, (_, i) => send(t, "PUT", `/api/v1/${t.accountId}/endUserSchema`, [{ name: `last${i}`, type: "string" }])),
    );
    expect(race.every((r) => r.status < 500)).toBe(true);
    expect(await prisma.endUserField.count({ where: { accountId: t.accountId } })).toBe(50);
  });
});

describe("bulk writes of the same records", () => {
  it("two 2,000-user upserts of the same ids in opposite orders, each naming other fields: every user keeps both, no 5xx", async () => {
    const t = await tenant("conc");
    const schema = await send(t, "PUT", `/api/v1/${t.accountId}/endUserSchema`, [
      { name: "plan", type: "string" },
      { name: "seats", type: "double" },
    ]);
    expect(schema.status, schema.text).toBe(200);
    const ids = Array.from({ length: 2_000 }, (_, i) => `bulk-${i}`);
    // Half the users exist first, so each request both creates and updates.
    const seeded = await send(
      t,
      "PUT",
      `/v1/accounts/${t.accountId}/endUsers`,
      ids.filter((_, i) => i % 2 === 0).map((id) => ({ id, userActionCount: { seeded: 1 } })),
    );
    expect(seeded.status, seeded.text.slice(0, 300)).toBe(201);
    for (let round = 0; round < 2; round++) {
      const [a, b] = await Promise.all([
        send(
          t,
          "PUT",
          `/v1/accounts/${t.accountId}/endUsers`,
          ids.map((id) => ({ id, custom: { plan: `p${round}` }, userActionCount: { a: round + 1 } })),
        ),
        send(
          t,
          "PUT",
          `/v1/accounts/${t.accountId}/endUsers`,
          [...ids].reverse().map((id) => ({ id, custom: { seats: round + 10 }, userActions: { b: round } })),
        ),
      ]);
      expect(
        [a.status, b.status].every((s) => s === 200 || s === 201),
        `${a.text.slice(0, 300)} ${b.text.slice(0, 300)}`,
      ).toBe(true);
      const users = await prisma.endUser.findMany({ where: { accountId: t.accountId }, include: { values: true, actions: true } });
      expect(users).toHaveLength(2_000);
      for (const u of users) {
        const values = Object.fromEntries(u.values.map((v) => [v.field, v.text ?? v.num]));
        expect(values, u.externalId).toEqual({ plan: `p${round}`, seats: round + 10 });
        const actions = Object.fromEntries(u.actions.map((x) => [x.actionId, [x.count, x.value == null ? null : Number(x.value)]]));
        expect(actions.a, u.externalId).toEqual([round + 1, null]);
        expect(actions.b, u.externalId).toEqual([0, round]);
      }
    }
    // One entry per change: 1,000 seeded creates; round 0: 1,000 creates and 1,000 updates by the
    // request that ran first, 2,000 updates by the other; round 1: 2 × 2,000 updates.
    const entries = await prisma.auditLog.groupBy({ by: ["action"], where: { accountId: t.accountId, resourceType: "endUser" }, _count: true });
    expect(Object.fromEntries(entries.map((e) => [e.action, e._count]))).toEqual({ create: 2_000, update: 3_000 + 4_000 });
  });

  it("two 2,000-tag upserts of the same names in opposite orders: one create per tag, the last description wins whole, no 5xx", async () => {
    const t = await tenant("conc");
    const names = Array.from({ length: 2_000 }, (_, i) => `tag-${i}`);
    const [a, b] = await Promise.all([
      send(
        t,
        "PUT",
        `/v1/accounts/${t.accountId}/tags`,
        names.map((name) => ({ name, description: "from a" })),
      ),
      send(
        t,
        "PUT",
        `/v1/accounts/${t.accountId}/tags`,
        [...names].reverse().map((name) => ({ name, description: "from b" })),
      ),
    ]);
    expect(
      [a.status, b.status].every((s) => s === 200 || s === 201),
      `${a.text.slice(0, 300)} ${b.text.slice(0, 300)}`,
    ).toBe(true);
    const tags = await prisma.tag.findMany({ where: { accountId: t.accountId } });
    expect(tags).toHaveLength(2_000);
    // The requests serialise: one ran after the other, so every tag carries the later one's text.
    expect(new Set(tags.map((x) => x.description)).size).toBe(1);
    const creates = await prisma.auditLog.count({ where: { accountId: t.accountId, resourceType: "tag", action: "create" } });
    expect(creates).toBe(2_000);
  });
});

describe("integration attributes", () => {
  it("simultaneous upserts of the same records in opposite orders: one create each, merged secondary attributes, no 5xx", async () => {
    const t = await tenant("concia");
    const base = `/v1/accounts/${t.accountId}`;
    const schema = await send(t, "PUT", `${base}/integrationAttributeSchema`, [
      { name: "company", type: "string" },
      ...Array.from({ length: 8 }, (_, i) => ({ name: `a${i}`, type: "double" })),
    ]);
    expect(schema.status).toBe(200);
    const keys = Array.from({ length: 30 }, (_, i) => `co-${i}`);
    // Writer i sets only its own secondary attribute a<i>, over all keys, half of them in reverse.
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        send(
          t,
          "PUT",
          `${base}/integrationAttributes`,
          (w % 2 ? [...keys].reverse() : keys).map((k) => ({ attributeName: "company", attributeValue: k, additionalAttributes: { [`a${w}`]: w } })),
        ),
      ),
    );
    for (const r of replies) expect([200, 201], r.text).toContain(r.status);
    expect(await prisma.attributeRecord.count({ where: { accountId: t.accountId } })).toBe(30);
    // No writer's attribute was lost on any record.
    expect(await prisma.attributeRecordValue.count({ where: { accountId: t.accountId } })).toBe(30 * 8);
    const creates = await prisma.auditLog.count({ where: { accountId: t.accountId, resourceType: "integrationAttribute", action: "create" } });
    expect(creates).toBe(30);
  });
});

describe("deletes racing updates", () => {
  it("concurrent deletes and updates of the same contents answer 2xx/404, never 5xx", async () => {
    const t = await tenant("conc");
    const ids = await createContents(t, 6);
    const replies = await Promise.all([
      send(t, "DELETE", `/api/v1/${t.accountId}/content/${ids.join(",")}`),
      send(t, "DELETE", `/api/v1/${t.accountId}/content/${[...ids].reverse().join(",")}`),
      send(
        t,
        "PUT",
        `/api/v1/${t.accountId}/content`,
        ids.map((id) => ({ id, title: "x" })),
      ),
      send(
        t,
        "PUT",
        `/api/v1/${t.accountId}/content`,
        [...ids].reverse().map((id) => ({ id, title: "y" })),
      ),
    ]);
    for (const r of replies) expect([200, 204, 207, 404], r.text).toContain(r.status);
    expect(await prisma.content.count({ where: { accountId: t.accountId } })).toBe(0);
    const deletes = await prisma.auditLog.count({ where: { accountId: t.accountId, action: "delete" } });
    expect(deletes).toBe(6);
  });
});
