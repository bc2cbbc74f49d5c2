// Content over in-process GraphQL: auth, tenant isolation and error masking.
import { describe, expect, it, vi } from "vitest";
import { gql, prisma, sqlOf, type Tenant } from "../helpers.js";
import { AUTH, shape } from "../sql.js";
import { a, b, bContents, bTags, codeOf, server, withServer } from "./shared.js";

withServer();

describe("auth over GraphQL", () => {
  const ACCOUNT = `query($id: String!) { account(id: $id) { id name contents(first: 1) { nodes { id } } } }`;

  it("no credentials → UNAUTHENTICATED, HTTP 401", async () => {
    const r = await gql(server, null, ACCOUNT, { id: a.accountId });
    expect(r.status).toBe(401);
    expect(codeOf(r)).toBe("UNAUTHENTICATED");
    expect(r.data).toBeUndefined(); // nothing was executed
  });

  it.each([
    ["an unknown key", (t: Tenant) => ({ ...t.headers, "x-service-integration-key": "gg_nonsense_key_value" })],
    ["a key with another user's e-mail", (t: Tenant) => ({ ...t.headers, "x-service-user": b.email })],
    ["only the key", (t: Tenant) => ({ "x-service-integration-key": t.key })],
  ])("%s → UNAUTHENTICATED, HTTP 401", async (_name, headers) => {
    const r = await gql(server, { ...a, headers: headers(a) }, ACCOUNT, { id: a.accountId });
    expect([r.status, codeOf(r)]).toEqual([401, "UNAUTHENTICATED"]);
  });

  it("another account → FORBIDDEN, HTTP 403, for queries and mutations (nothing written)", async () => {
    const q = await gql(server, a, ACCOUNT, { id: b.accountId });
    expect([q.status, codeOf(q)]).toEqual([403, "FORBIDDEN"]);
    expect(q.data).toBeNull();
    const before = await prisma.content.count({ where: { accountId: b.accountId } });
    const mCreate = await gql(
      server,
      a,
      `mutation($id: String!) { createContents(accountId: $id, input: [{ title: "x", type: text }]) { results { statusCode } } }`,
      { id: b.accountId },
    );
    expect([mCreate.status, codeOf(mCreate)]).toEqual([403, "FORBIDDEN"]);
    const mDelete = await gql(server, a, `mutation($id: String!, $ids: [String!]!) { deleteContents(accountId: $id, ids: $ids) { results { statusCode } } }`, {
      id: b.accountId,
      ids: [bContents[2]!.id],
    });
    expect([mDelete.status, codeOf(mDelete)]).toEqual([403, "FORBIDDEN"]);
    expect(await prisma.content.count({ where: { accountId: b.accountId } })).toBe(before);
  });

  it("mutations without credentials → 401, nothing written", async () => {
    const r = await gql(
      server,
      null,
      `mutation($id: String!) { createContents(accountId: $id, input: [{ title: "anon", type: text }]) { results { statusCode } } }`,
      { id: a.accountId },
    );
    expect([r.status, codeOf(r)]).toEqual([401, "UNAUTHENTICATED"]);
    expect(await prisma.content.count({ where: { title: "anon" } })).toBe(0);
  });

  it("viewer: e-mail, scope and accounts of the key's owner", async () => {
    const { result, sql } = await sqlOf(() => gql(server, a, `{ viewer { email scope accountIds } }`));
    expect(result.data.viewer).toEqual({ email: a.email, scope: "integration", accountIds: [a.accountId] });
    expect(shape(sql)).toEqual([...AUTH]);
    const anon = await gql(server, null, `{ viewer { email } }`);
    expect([anon.status, codeOf(anon)]).toEqual([401, "UNAUTHENTICATED"]);
  });
});

describe("tenant isolation", () => {
  it("content(id:) of another account's id → null", async () => {
    const r = await gql(server, a, `query($id: String!, $c: String!) { account(id: $id) { content(id: $c) { id title } } }`, {
      id: a.accountId,
      c: bContents[0]!.id,
    });
    expect(r.errors).toBeUndefined();
    expect(r.data.account.content).toBeNull();
  });

  it("another account's tag ids in createContents → per-item 400 (unknown tag id)", async () => {
    const r = await gql(
      server,
      a,
      `mutation($id: String!, $in: [ContentInput!]!) { createContents(accountId: $id, input: $in) { results { statusCode errors } } }`,
      {
        id: a.accountId,
        in: [{ title: "iso", type: "text", tagIds: [bTags[1]!.id] }],
      },
    );
    expect(r.data.createContents.results).toEqual([{ statusCode: 400, errors: [`unknown tag id '${bTags[1]!.id}'`] }]);
    expect(await prisma.content.count({ where: { title: "iso" } })).toBe(0);
  });

  it("lists only show the account's own content", async () => {
    const r = await gql(server, b, `query($id: String!, $n: Int) { account(id: $id) { contents(first: $n) { nodes { id tags { id } } } } }`, {
      id: b.accountId,
      n: 10_000,
    });
    const nodes = r.data.account.contents.nodes as { id: string; tags: { id: string }[] }[];
    expect(nodes.every((n) => n.id.startsWith(b.accountId))).toBe(true);
    expect(nodes.flatMap((n) => n.tags).every((t) => bTags.some((x) => x.id === t.id))).toBe(true);
  });
});

/** An unexpected error reaches the caller as "Unexpected error." without internals. */
function expectMasked(r: { errors?: { message: string; extensions?: Record<string, unknown> }[] }) {
  expect(r.errors).toHaveLength(1);
  expect(r.errors![0]!.message).toBe("Unexpected error.");
  expect(r.errors![0]!.extensions).toEqual({ code: "INTERNAL_SERVER_ERROR" });
  expect(JSON.stringify(r.errors)).not.toMatch(/SELECT|INSERT|FOREIGN|constraint|prisma|\.ts:|at \w|stack|secret/i);
}

describe("unexpected errors are masked", () => {
  it("a failing database read: message masked, no SQL or stack", async () => {
    const spy = vi
      .spyOn(prisma.content, "findUnique")
      .mockRejectedValueOnce(
        Object.assign(new Error("SELECT secret FROM Content WHERE 1=1\n    at /work/main/src/schema/content.ts:101:7"), { code: "P1001" }),
      );
    try {
      const r = await gql(server, a, `query($id: String!) { account(id: $id) { content(id: "c_x") { id } } }`, { id: a.accountId });
      expect(spy).toHaveBeenCalledTimes(1);
      expect(r.data).toEqual({ account: { content: null } });
      expectMasked(r);
    } finally {
      spy.mockRestore();
    }
  });
});
