// The audit log: every change leaves exactly one entry, written in the same transaction as the change.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createAccount, createKey, createUser, revokeKey, setAccount } from "../../src/admin.js";
import { requestScope } from "../../src/audit/requestScope.js";
import { call, pathA, pathB, type Tenant, tenant } from "../helpers.js";
import { audited, b25ok, type Entry, entriesOf, expectByRequest, fixNow, server, withServer } from "./shared.js";

withServer();

// ---- one entry per change, in the same transaction -------------------------------------------------------

describe("every change leaves exactly one entry", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant("chg");
  });
  const A = () => pathA(t);
  const B = () => pathB(t);

  it("tags: create, describe, rename, delete", async () => {
    const created = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "alpha", description: "first" }] });
    expect(created.r.status, created.r.text).toBe(201);
    const id = created.r.body.data[0].id as string;
    expect(created.entries).toHaveLength(1);
    expectByRequest(created.entries[0]!, t, { action: "create", resourceType: "tag", resourceId: id });
    expect(created.entries[0]!.details).toMatchObject({ name: "alpha", description: "first", type: "USER" });

    const described = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "alpha", description: "second" }] });
    expect(described.r.status).toBe(200);
    expect(described.entries).toHaveLength(1);
    expectByRequest(described.entries[0]!, t, { action: "update", resourceType: "tag", resourceId: id });
    expect(described.entries[0]!.details).toMatchObject({ description: "second" });

    const renamed = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "alpha", newName: "beta" }] });
    expect(renamed.r.status).toBe(200);
    expect(renamed.entries).toHaveLength(1);
    expectByRequest(renamed.entries[0]!, t, { action: "update", resourceType: "tag", resourceId: id });
    expect(renamed.entries[0]!.details).toMatchObject({ name: "beta" });

    const deleted = await audited(`${B()}/tags/beta`, t, { method: "DELETE" });
    expect(deleted.r.status).toBe(204);
    expect(deleted.entries).toHaveLength(1);
    expectByRequest(deleted.entries[0]!, t, { action: "delete", resourceType: "tag", resourceId: id });
    expect(deleted.entries[0]!.details).toMatchObject({ deleted: { id, name: "beta" } });
  });

  it("content: create, update (changed fields and tagIds), delete", async () => {
    const tags = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "c-one" }, { name: "c-two" }] });
    expect(tags.entries).toHaveLength(2);
    const [one, two] = tags.r.body.data as { id: string }[];

    const created = await audited(`${A()}/content`, t, {
      method: "POST",
      body: [{ title: "Guide", type: "link", url: "https://example.com/g", tags: [one!.id] }],
    });
    expect(created.r.status, created.r.text).toBe(201);
    const id = created.r.body.data[0].id as string;
    expect(created.entries).toHaveLength(1);
    expectByRequest(created.entries[0]!, t, { action: "create", resourceType: "content", resourceId: id });
    expect(created.entries[0]!.details).toMatchObject({ title: "Guide", type: "link", url: "https://example.com/g", tagIds: [one!.id] });

    const updated = await audited(`${A()}/content`, t, { method: "PUT", body: [{ id, title: "Guide v2", tags: [two!.id] }] });
    expect(updated.r.status, updated.r.text).toBe(200);
    expect(updated.entries).toHaveLength(1);
    expectByRequest(updated.entries[0]!, t, { action: "update", resourceType: "content", resourceId: id });
    expect(updated.entries[0]!.details).toMatchObject({ title: "Guide v2", tagIds: [two!.id] });

    const styleB = await audited(`${B()}/content`, t, { method: "PUT", body: [{ id, title: "Guide v3", tags: ["c-one", "c-two"] }] });
    expect(styleB.r.status, styleB.r.text).toBe(200);
    expect(styleB.entries).toHaveLength(1);
    expect(styleB.entries[0]!.details.title).toBe("Guide v3");
    expect([...styleB.entries[0]!.details.tagIds].sort()).toEqual([one!.id, two!.id].sort());

    const untagged = await audited(`${A()}/content`, t, { method: "PUT", body: [{ id, tags: [] }] });
    expect(untagged.r.status).toBe(200);
    expect(untagged.entries).toHaveLength(1);
    expect(untagged.entries[0]!.details.tagIds).toEqual([]);

    const deleted = await audited(`${A()}/content/${id}`, t, { method: "DELETE" });
    expect(deleted.r.status).toBe(204);
    expect(deleted.entries).toHaveLength(1);
    expectByRequest(deleted.entries[0]!, t, { action: "delete", resourceType: "content", resourceId: id });
    expect(deleted.entries[0]!.details).toMatchObject({ deleted: { id, title: "Guide v3" } });
  });

  it("a bulk request of N valid items leaves exactly N entries; a mixed one only the valid items'", async () => {
    const N = 7;
    const bulk = await audited(`${A()}/content`, t, {
      method: "POST",
      body: Array.from({ length: N }, (_, i) => ({ title: `Bulk ${i}`, type: "text", description: `d${i}` })),
    });
    expect(bulk.r.status, bulk.r.text).toBe(201);
    const ids = (bulk.r.body.data as { id: string }[]).map((c) => c.id);
    expect(bulk.entries).toHaveLength(N);
    expect(bulk.entries.map((e) => e.resourceId).sort()).toEqual([...ids].sort());
    for (const e of bulk.entries) expectByRequest(e, t, { action: "create", resourceType: "content", resourceId: e.resourceId });

    const updates = await audited(`${A()}/content`, t, { method: "PUT", body: ids.map((id, i) => ({ id, title: `Bulk ${i} v2` })) });
    expect(updates.r.status).toBe(200);
    expect(updates.entries.map((e) => e.resourceId).sort()).toEqual([...ids].sort());
    expect(updates.entries.every((e) => e.action === "update")).toBe(true);

    const mixed = await audited(`${A()}/content`, t, {
      method: "POST",
      body: [{ title: "ok 1", type: "text" }, { type: "text" }, { title: "ok 2", type: "video", url: "https://example.com/v" }],
    });
    expect(mixed.r.status, mixed.r.text).toBe(207);
    const okIds = (mixed.r.body.success as { id: string }[]).map((s) => s.id);
    expect(okIds).toHaveLength(2);
    expect(mixed.entries.map((e) => e.resourceId).sort()).toEqual([...okIds].sort());

    const dels = await audited(`${A()}/content/${ids.join(",")},missing-id`, t, { method: "DELETE" });
    expect(dels.r.status).toBe(207);
    expect(dels.entries.map((e) => e.resourceId).sort()).toEqual([...ids].sort());
    expect(dels.entries.every((e) => e.action === "delete")).toBe(true);
  });

  it("end users: upsert (create, update with values and actions) and delete", async () => {
    expect(
      (
        await call(`${server.url}${A()}/endUserSchema`, {
          method: "PUT",
          headers: t.headers,
          body: [
            { name: "plan", type: "string" },
            { name: "score", type: "double" },
          ],
        })
      ).status,
    ).toBe(200);
    const created = await audited(`${A()}/endUsers`, t, { method: "PUT", body: [{ id: "eu-1", custom: { plan: "gold", score: 3 } }] });
    expect(created.r.status, created.r.text).toBe(201);
    expect(created.entries).toHaveLength(1);
    expectByRequest(created.entries[0]!, t, { action: "create", resourceType: "endUser", resourceId: "eu-1" });
    expect(created.entries[0]!.details.custom).toEqual({ plan: "gold", score: 3 });

    const updated = await audited(`${B()}/endUsers`, t, { method: "PUT", body: [{ id: "eu-1", custom: { plan: "silver" }, userActionCount: { clicked: 2 } }] });
    expect(updated.r.status, updated.r.text).toBe(200);
    expect(updated.entries).toHaveLength(1);
    expectByRequest(updated.entries[0]!, t, { action: "update", resourceType: "endUser", resourceId: "eu-1" });
    expect(updated.entries[0]!.details.custom).toEqual({ plan: "silver" });
    expect(updated.entries[0]!.details.userActions).toMatchObject({ clicked: { count: 2 } });

    const single = await audited(`${A()}/endUsers/eu-1`, t, { method: "PUT", body: { score: 9.5 } });
    expect(single.r.status, single.r.text).toBe(200);
    expect(single.entries).toHaveLength(1);
    expect(single.entries[0]!.details.custom).toEqual({ score: 9.5 });

    const two = await audited(`${A()}/endUsers`, t, {
      method: "PUT",
      body: [
        { id: "eu-2", custom: {} },
        { id: "eu-3", custom: { plan: "p" } },
      ],
    });
    expect(two.r.status).toBe(201);
    expect(two.entries.map((e) => e.resourceId).sort()).toEqual(["eu-2", "eu-3"]);

    const deleted = await audited(`${A()}/endUsers/eu-1,eu-2`, t, { method: "DELETE" });
    expect(deleted.r.status).toBe(204);
    // Deleting an end user erases them: the entries name a pseudonym and carry no values
    // (test/erasure.test.ts follows the user through the reports and the earlier entries).
    expect(deleted.entries).toHaveLength(2);
    for (const e of deleted.entries) {
      expectByRequest(e, t, { action: "delete", resourceType: "endUser", resourceId: expect.stringMatching(/^erased_/) });
      expect(e.details).toEqual({ erased: true });
    }
    expect(new Set(deleted.entries.map((e) => e.resourceId)).size).toBe(2);
  });

  it("end-user schema: field add, description update, delete (values removed with it: still one entry)", async () => {
    const added = await audited(`${B()}/endUserSchema`, t, { method: "PUT", body: [{ name: "tier", type: "string", description: "d1" }] });
    expect(added.r.status, added.r.text).toBe(200);
    expect(added.entries).toHaveLength(1);
    expectByRequest(added.entries[0]!, t, { action: "create", resourceType: "endUserField", resourceId: "tier" });
    expect(added.entries[0]!.details).toMatchObject({ name: "tier", type: "string", description: "d1" });

    const described = await audited(`${B()}/endUserSchema`, t, { method: "PUT", body: [{ name: "tier", description: "d2" }] });
    expect(described.r.status).toBe(200);
    expect(described.entries).toHaveLength(1);
    expectByRequest(described.entries[0]!, t, { action: "update", resourceType: "endUserField", resourceId: "tier" });
    expect(described.entries[0]!.details).toEqual({ description: "d2" });

    expect((await call(`${server.url}${A()}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "has-tier", custom: { tier: "x" } }] })).status).toBe(
      201,
    );
    const deleted = await audited(`${A()}/endUserSchema/tier`, t, { method: "DELETE" });
    expect(deleted.r.status).toBe(204);
    expect(deleted.entries).toHaveLength(1);
    expectByRequest(deleted.entries[0]!, t, { action: "delete", resourceType: "endUserField", resourceId: "tier" });
  });

  it("GraphQL mutations are audited the same way", async () => {
    const requestId = randomUUID();
    const { result: r, entries } = await entriesOf(() =>
      call(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...t.headers, "x-request-id": requestId },
        body: {
          query: `mutation($a: String!) { upsertTags(accountId: $a, input: [{ name: "via-graphql" }]) { results { id statusCode } } }`,
          variables: { a: t.accountId },
        },
      }),
    );
    expect(r.body.errors, r.text).toBeUndefined();
    expect(entries).toHaveLength(1);
    expectByRequest(entries[0]!, t, { action: "create", resourceType: "tag", resourceId: r.body.data.upsertTags.results[0].id });
    expect(entries[0]!.requestId).toBe(requestId);
  });

  it("admin operations (CLI): account create/set, user create + membership, key create/revoke", async () => {
    const cli = <T>(fn: () => Promise<T>) => entriesOf(() => requestScope.run({ requestId: null, ip: null, actor: "cli:test" }, fn));
    const id = `cli-${process.pid}-${Date.now().toString(36)}`;
    const email = `${id}@example.com`;

    const acct = await cli(() => createAccount(id, { name: "CLI account" }));
    expect(acct.entries).toHaveLength(1);
    expect(acct.entries[0]).toMatchObject({ action: "create", resourceType: "account", resourceId: id, accountId: id, userId: "cli:test", sourceIp: null });
    expect(acct.entries[0]!.details).toMatchObject({ id, name: "CLI account", idMethod: "cookie" });

    const set = await cli(() => setAccount(id, { auditTokenTtl: 3600, rateLimitPerMinute: 50 }));
    expect(set.entries).toHaveLength(1);
    expect(set.entries[0]).toMatchObject({ action: "update", resourceType: "account", resourceId: id, accountId: id, userId: "cli:test" });
    expect(set.entries[0]!.details).toEqual({ auditTokenTtlSeconds: 3600, rateLimitPerMinute: 50 });

    const user = await cli(() => createUser(email, [id]));
    const byType = (es: Entry[], type: string) => es.filter((e) => e.resourceType === type);
    expect(byType(user.entries, "user")).toHaveLength(1);
    expect(byType(user.entries, "user")[0]).toMatchObject({ action: "create", resourceId: email, userId: "cli:test" });
    expect(byType(user.entries, "membership")).toHaveLength(1);
    expect(byType(user.entries, "membership")[0]).toMatchObject({ action: "create", accountId: id, resourceId: `${user.result.id}:${id}`, userId: "cli:test" });
    expect(user.entries).toHaveLength(2);

    // granting a second account: one membership entry; granting again: nothing changed, no entry
    const id2 = `${id}-b`;
    await createAccount(id2);
    const grant = await cli(() => createUser(email, [id2]));
    expect(grant.entries.map((e) => [e.action, e.resourceType, e.accountId])).toEqual([["create", "membership", id2]]);
    const again = await cli(() => createUser(email, [id, id2]));
    expect(again.entries).toEqual([]);

    const key = await cli(() => createKey(email, { scope: "auditlogs", ttlSeconds: 600 }));
    expect(key.entries).toHaveLength(1);
    expect(key.entries[0]).toMatchObject({ action: "create", resourceType: "apiKey", resourceId: key.result.prefix, userId: "cli:test" });
    expect(key.entries[0]!.details).toMatchObject({ prefix: key.result.prefix, scope: "auditlogs" });
    expect(key.entries[0]!.details).not.toHaveProperty("hash");

    const revoked = await cli(() => revokeKey(key.result.prefix));
    expect(revoked.entries).toHaveLength(1);
    expect(revoked.entries[0]).toMatchObject({ action: "update", resourceType: "apiKey", resourceId: key.result.prefix, userId: "cli:test" });
    expect(revoked.entries[0]!.details).toEqual({ revokedAt: expect.any(String) });
    // revoking again changes nothing
    expect((await cli(() => revokeKey(key.result.prefix))).entries).toEqual([]);

    // account-level admin entries are readable through B25
    const reader = { accountId: id, email, key: "", headers: {} } as Tenant;
    const { key: k2 } = await createKey(email);
    reader.headers = { "x-service-integration-key": k2, "x-service-user": email };
    const page = await b25ok(reader, { userId: "cli:test" });
    expect(page.body.data.map((e: any) => `${e.action} ${e.resourceType}`).sort()).toEqual(["create account", "create membership", "update account"]);
  });

  it("an entry's time is the service clock's", async () => {
    fixNow("2026-03-15T12:00:00Z");
    const { entries } = await audited(`${B()}/tags`, t, { method: "PUT", body: [{ name: "clocked" }] });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.timestamp.toISOString()).toBe("2026-03-15T12:00:00.000Z");
  });
});
