// The audit log: no entry when a change fails, no secrets in entries, entries append-only, no
// unaudited writes.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { createKey, revokeKey } from "../../src/admin.js";
import { clock } from "../../src/clock.js";
import { withTransaction } from "../../src/db/index.js";
import { newId } from "../../src/ids.js";
import { call, pathA, pathB, prisma, type Tenant, tenant } from "../helpers.js";
import { audited, b25ok, b25Path, entriesOf, gqlHttp, seed, server, withServer, writable } from "./shared.js";

withServer();

describe("no entry when a change fails", () => {
  let t: Tenant;
  let other: Tenant;
  beforeAll(async () => {
    t = await tenant("fail");
    other = await tenant("failo");
  });
  const A = () => pathA(t);
  const B = () => pathB(t);

  it.each([
    ["all content items invalid", () => ({ path: `${A()}/content`, method: "POST", body: [{ type: "text" }, { title: "x", type: "folder" }] })],
    ["content update of unknown ids", () => ({ path: `${A()}/content`, method: "PUT", body: [{ id: "nope", title: "x" }] })],
    ["content delete of unknown ids", () => ({ path: `${A()}/content/nope1,nope2`, method: "DELETE" })],
    ["tags all invalid", () => ({ path: `${B()}/tags`, method: "PUT", body: [{ name: "" }, { name: "a,b" }] })],
    ["tag delete unknown", () => ({ path: `${B()}/tags/ghost`, method: "DELETE" })],
    [
      "end users all invalid",
      () => ({
        path: `${A()}/endUsers`,
        method: "PUT",
        body: [
          { id: "", custom: {} },
          { id: "x", custom: { undefinedField: 1 } },
        ],
      }),
    ],
    [
      "schema fields all invalid",
      () => ({
        path: `${A()}/endUserSchema`,
        method: "PUT",
        body: [
          { name: "1bad", type: "string" },
          { name: "ok", type: "integer" },
        ],
      }),
    ],
    ["schema delete of a default field", () => ({ path: `${A()}/endUserSchema/email`, method: "DELETE" })],
    ["malformed body", () => ({ path: `${A()}/content`, method: "POST", body: { title: "not an array" } })],
  ])("%s → 4xx and no entry", async (_name, make) => {
    const { path, method, body } = make() as { path: string; method: string; body?: unknown };
    const { r, entries } = await audited(path, t, { method, body });
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(entries).toEqual([]);
  });

  it("401 and 403 requests change nothing and leave no entry", async () => {
    const write = { method: "POST", body: [{ title: "intruder", type: "text" }] };
    for (const headers of [{}, { ...t.headers, "x-service-integration-key": "ggk_bogus_key_value" }, { ...t.headers, "x-service-user": other.email }]) {
      const { r, entries } = await audited(`${A()}/content`, null, { ...write, headers });
      expect(r.status).toBe(401);
      expect(entries).toEqual([]);
    }
    const forbidden = await audited(`${A()}/content`, other, write);
    expect(forbidden.r.status).toBe(403);
    expect(forbidden.entries).toEqual([]);
    const gql = await entriesOf(() =>
      gqlHttp(other, `mutation($a: String!) { upsertTags(accountId: $a, input: [{ name: "x" }]) { results { id } } }`, { a: t.accountId }),
    );
    expect(gql.result.body.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(gql.entries).toEqual([]);
    expect(await prisma.content.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("the entry is written in the change's transaction: a rolled-back change leaves none, and a failed entry rolls the change back", async () => {
    const name = `rollback-${Date.now()}`;
    const thrown = await entriesOf(() =>
      withTransaction(async (tx) => {
        await tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name } });
        throw new Error("boom");
      }).catch((e: Error) => e),
    );
    expect(thrown.result).toBeInstanceOf(Error);
    expect(thrown.entries).toEqual([]);
    expect(await prisma.tag.count({ where: { name } })).toBe(0);

    // An entry that cannot be written (an invalid time) fails the transaction, change included.
    vi.spyOn(clock, "now").mockReturnValue(new Date(Number.NaN));
    const failed = await entriesOf(() =>
      withTransaction((tx) => tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name } })).catch((e: Error) => e),
    );
    vi.restoreAllMocks();
    expect(failed.result).toBeInstanceOf(Error);
    expect(failed.entries).toEqual([]);
    expect(await prisma.tag.count({ where: { name } })).toBe(0);

    // and the same change, once it can be recorded, leaves its one entry
    const ok = await entriesOf(() => withTransaction((tx) => tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name } })));
    expect(ok.entries).toHaveLength(1);
    expect(ok.entries[0]).toMatchObject({ action: "create", resourceType: "tag", resourceId: ok.result.id, accountId: t.accountId, userId: "system" });
  });
});

// ---- secrets never appear -------------------------------------------------------------------------------

describe("secrets never appear in entries", () => {
  it("encrypted_string values (clear or ciphertext) and API-key hashes are absent from every entry's details", async () => {
    const t = await tenant("sec");
    const A = server.url + pathA(t);
    const B = server.url + pathB(t);
    expect(
      (
        await call(`${A}/endUserSchema`, {
          method: "PUT",
          headers: t.headers,
          body: [
            { name: "ssn", type: "encrypted_string" },
            { name: "plan", type: "string" },
          ],
        })
      ).status,
    ).toBe(200);
    const secrets = ["secret-ssn-111-22-3333", "secret-ssn-444-55-6666", "secret-ssn-777-88-9999"];
    expect((await call(`${A}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "s1", custom: { ssn: secrets[0], plan: "gold" } }] })).status).toBe(
      201,
    );
    expect((await call(`${B}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "s1", custom: { ssn: secrets[1] } }] })).status).toBe(200);
    expect((await call(`${A}/endUsers/s2`, { method: "PUT", headers: t.headers, body: { ssn: secrets[2] } })).status).toBe(201);
    const stored = await prisma.endUserValue.findMany({ where: { accountId: t.accountId, field: "ssn" } });
    expect(stored).toHaveLength(2);
    for (const v of stored) expect(v.text).toMatch(/^v1:/);

    // the entries say a value changed, never what it is
    const entries = await prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType: "endUser" } });
    expect(entries).toHaveLength(3);
    for (const e of entries) expect(JSON.parse(e.details).custom.ssn).toBe("[encrypted]");
    // delete an end user too: the deleted record's details hold no values
    expect((await call(`${A}/endUsers/s1`, { method: "DELETE", headers: t.headers })).status).toBe(204);

    // rotate keys too, so key creation and revocation entries exist
    const extra = await createKey(t.email);
    await revokeKey(extra.prefix);

    const all = await prisma.auditLog.findMany({ select: { details: true } });
    const hashes = (await prisma.apiKey.findMany({ select: { hash: true } })).map((k) => k.hash);
    expect(hashes.length).toBeGreaterThan(1);
    for (const { details } of all) {
      for (const s of secrets) expect(details).not.toContain(s);
      expect(details).not.toMatch(/v1:[A-Za-z0-9+/=]+:/);
      for (const h of hashes) expect(details).not.toContain(h);
      for (const k of [t.key, extra.key]) expect(details).not.toContain(k);
      expect(JSON.parse(details)).not.toHaveProperty("hash");
    }
    // and B25 returns them the same way
    const page = await b25ok(t, {});
    expect(page.text).not.toMatch(/secret-ssn|v1:/);
  });
});

// ---- append-only; no unaudited writes ---------------------------------------------------------------------

describe("entries are append-only", () => {
  it("update, upsert and delete of entries throw, on the shared client and in transactions; nothing changes", async () => {
    const t = await tenant("ro");
    const e = await seed(t.accountId, "2026-03-01T00:00:00Z", { label: "keep-me" });
    const attempts: [string, () => unknown][] = [
      ["update", () => writable.auditLog.update({ where: { id: e.id }, data: { action: "tampered" } })],
      ["updateMany", () => writable.auditLog.updateMany({ where: { id: e.id }, data: { action: "tampered" } })],
      ["upsert", () => writable.auditLog.upsert({ where: { id: e.id }, create: { ...e, action: "tampered" }, update: { action: "tampered" } })],
      ["delete", () => writable.auditLog.delete({ where: { id: e.id } })],
      ["deleteMany", () => writable.auditLog.deleteMany({ where: { id: e.id } })],
      ["deleteMany (all)", () => writable.auditLog.deleteMany()],
      ["tx update", () => withTransaction((tx) => tx.auditLog.update({ where: { id: e.id }, data: { action: "tampered" } }))],
      ["tx delete", () => withTransaction((tx) => tx.auditLog.delete({ where: { id: e.id } }))],
      ["tx deleteMany", () => withTransaction((tx) => tx.auditLog.deleteMany({ where: { accountId: t.accountId } }))],
    ];
    for (const [name, attempt] of attempts) {
      await expect((async () => attempt())(), name).rejects.toThrow(/append-only/);
    }
    expect(await prisma.auditLog.findUnique({ where: { id: e.id } })).toEqual(e);
  });

  it("no GraphQL mutation edits or deletes entries", async () => {
    const t = await tenant("intro");
    const r = await gqlHttp(t, `{ __schema { mutationType { fields { name args { name type { name ofType { name ofType { name ofType { name } } } } } } } } }`);
    expect(r.body.errors, r.text).toBeUndefined();
    const fields = r.body.data.__schema.mutationType.fields as { name: string; args: unknown[] }[];
    const names = fields.map((f) => f.name);
    expect(names).toEqual(expect.arrayContaining(["createContents", "upsertTags", "deleteEndUsers"]));
    expect(names.filter((n) => /audit/i.test(n))).toEqual([]);
    expect(JSON.stringify(fields)).not.toMatch(/AuditLog/);
    // and no REST route other than B25 answers on the audit-log path
    const entry = await seed(t.accountId, "2026-03-01T00:00:00Z");
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const res = await call(`${server.url}${b25Path(t.accountId)}/${entry.id}`, { method, headers: t.headers, body: { action: "x" } });
      expect(res.status).toBe(404);
    }
    expect(await prisma.auditLog.findUnique({ where: { id: entry.id } })).toEqual(entry);
  });
});

describe("writes outside withTransaction", () => {
  it("throw on the shared client, for every audited model, and change nothing", async () => {
    const t = await tenant("guard");
    const name = `unaudited-${Date.now()}`;
    const attempts: [string, () => unknown][] = [
      ["tag.create", () => writable.tag.create({ data: { id: newId("t"), accountId: t.accountId, name } })],
      ["content.createMany", () => writable.content.createMany({ data: [{ id: newId("c"), accountId: t.accountId, title: name, type: "text" }] })],
      ["account.update", () => writable.account.update({ where: { id: t.accountId }, data: { name } })],
      ["account.upsert", () => writable.account.upsert({ where: { id: t.accountId }, create: { id: t.accountId, name }, update: { name } })],
      ["user.deleteMany", () => writable.user.deleteMany({ where: { email: t.email } })],
      ["membership.delete", () => writable.membership.deleteMany({ where: { accountId: t.accountId } })],
      ["apiKey.update", () => writable.apiKey.updateMany({ where: {}, data: { revokedAt: new Date() } })],
      ["endUser.create", () => writable.endUser.create({ data: { id: newId("u"), accountId: t.accountId, externalId: name } })],
      ["endUserField.create", () => writable.endUserField.create({ data: { accountId: t.accountId, name: "f", type: "string" } })],
      ["contentTag.deleteMany", () => writable.contentTag.deleteMany()],
      ["endUserValue.deleteMany", () => writable.endUserValue.deleteMany()],
      ["endUserAction.deleteMany", () => writable.endUserAction.deleteMany()],
      ["$transaction", () => writable.$transaction(async () => 1)],
    ];
    const before = await prisma.auditLog.count();
    for (const [label, attempt] of attempts) {
      await expect((async () => attempt())(), label).rejects.toThrow(/withTransaction/);
    }
    expect(await prisma.auditLog.count()).toBe(before);
    expect(await prisma.tag.count({ where: { name } })).toBe(0);
    expect((await prisma.account.findUnique({ where: { id: t.accountId } }))?.name).toBe(t.accountId);
    expect(await prisma.apiKey.count({ where: { revokedAt: { not: null }, prefix: t.key.slice(0, 12) } })).toBe(0);
    expect(await prisma.user.count({ where: { email: t.email } })).toBe(1);
  });
});
