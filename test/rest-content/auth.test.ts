// REST content routes over real HTTP: auth, tenant isolation and CORS, and the GraphQL lookups
// behind GET /content/{id}.
import { beforeAll, describe, expect, it } from "vitest";
import { createKey, createUser, revokeKey } from "../../src/admin.js";
import { makeContent } from "../factories/content.js";
import { makeTag } from "../factories/tags.js";
import { expectJson, expectProblem, gql, pathA, pathB, prisma, type Tenant, tenant } from "../helpers.js";
import { createA, dbState, req, server, withServer, write } from "./shared.js";

withServer();

// ---- auth and tenant isolation --------------------------------------------------------------------------

describe("auth on the content routes", () => {
  /** Every content route, as [name, method, path, body] for a given account and a content id. */
  const routesFor = (acc: string, id: string): [string, string, string, unknown][] => [
    ["A list", "GET", `${pathA(acc)}/content`, undefined],
    ["A create", "POST", `${pathA(acc)}/content`, [{ title: "intruder", type: "text" }]],
    ["A update", "PUT", `${pathA(acc)}/content`, [{ id, title: "intruder" }]],
    ["A delete", "DELETE", `${pathA(acc)}/content/${id}`, undefined],
    ["A get", "GET", `${pathA(acc)}/content/${id}`, undefined],
    ["B1 list", "GET", `${pathB(acc)}/content?state=draft&stage=design`, undefined],
    ["B2 update", "PUT", `${pathB(acc)}/content`, [{ id, title: "intruder" }]],
    ["B3 create", "POST", `${pathB(acc)}/content`, [{ title: "intruder", type: "text" }]],
    ["B4 createdAfter", "GET", `${pathB(acc)}/content/createdAfter?fromTime=0`, undefined],
    ["B5 updatedAfter", "GET", `${pathB(acc)}/content/updatedAfter?fromTime=0`, undefined],
  ];

  let owner: Tenant;
  let other: Tenant;
  let victimId: string;
  beforeAll(async () => {
    owner = await tenant("own");
    other = await tenant("oth");
    const tag = await makeTag(owner.accountId, "secret");
    victimId = (await createA(owner, [{ title: "victim", type: "text", tags: [tag.id] }]))[0].id;
  });

  async function expectAllRoutes(headers: Record<string, string>, status: number, acc = owner.accountId) {
    const before = await dbState(owner.accountId);
    for (const [name, method, path, body] of routesFor(acc, victimId)) {
      const r = await req(path, { method, headers, body });
      expect(r.status, `${name}: ${r.text}`).toBe(status);
      expectProblem(r, status);
    }
    expect(await dbState(owner.accountId)).toEqual(before);
  }

  it("401 without headers", async () => {
    await expectAllRoutes({}, 401);
  });

  it("401 with only one of the two headers", async () => {
    await expectAllRoutes({ "x-service-integration-key": owner.key }, 401);
    await expectAllRoutes({ "x-service-user": owner.email }, 401);
  });

  it("401 with a wrong key (unknown, or a known prefix with a wrong secret)", async () => {
    await expectAllRoutes({ "x-service-integration-key": "ggk_not-a-real-key-at-all-xxxxxxxxxxxxxxxxxx", "x-service-user": owner.email }, 401);
    await expectAllRoutes(
      { "x-service-integration-key": owner.key.slice(0, -2) + (owner.key.endsWith("AA") ? "BB" : "AA"), "x-service-user": owner.email },
      401,
    );
  });

  it("401 when x-service-user is not the key's owner", async () => {
    await expectAllRoutes({ "x-service-integration-key": owner.key, "x-service-user": other.email }, 401);
  });

  it("the owner's e-mail matches case-insensitively", async () => {
    const r = await req(`${pathA(owner)}/content/${victimId}`, {
      headers: { "x-service-integration-key": owner.key, "x-service-user": owner.email.toUpperCase() },
    });
    expectJson(r, 200);
  });

  it("401 with a revoked key", async () => {
    const { key } = await createKey(owner.email);
    const headers = { "x-service-integration-key": key, "x-service-user": owner.email };
    expectJson(await req(`${pathA(owner)}/content/${victimId}`, { headers }), 200);
    await revokeKey(key.slice(0, 12));
    await expectAllRoutes(headers, 401);
    expect((await req(`${pathA(owner)}/content/${victimId}`, { headers })).body.detail).toBe("The API key has been revoked.");
  });

  it("401 with an expired key", async () => {
    const { key } = await createKey(owner.email, { ttlSeconds: 3600 });
    const headers = { "x-service-integration-key": key, "x-service-user": owner.email };
    expectJson(await req(`${pathA(owner)}/content/${victimId}`, { headers }), 200);
    await write((tx) => tx.apiKey.update({ where: { prefix: key.slice(0, 12) }, data: { expiresAt: new Date(Date.now() - 1000) } }));
    await expectAllRoutes(headers, 401);
    expect((await req(`${pathA(owner)}/content/${victimId}`, { headers })).body.detail).toBe("The API key has expired.");
  });

  it("403 for a valid key on another account; that account is unchanged", async () => {
    await expectAllRoutes(other.headers, 403);
    const r = await req(`${pathA(owner)}/content`, { headers: other.headers });
    expect(r.body.detail).toBe(`The API key has no access to account '${owner.accountId}'.`);
  });

  it("403 for an account that does not exist (no existence leak)", async () => {
    await expectAllRoutes(other.headers, 403, "no-such-account");
  });

  it("403 for an auditlogs-scoped key on content routes", async () => {
    const { key } = await createKey(owner.email, { scope: "auditlogs" });
    await expectAllRoutes({ "x-service-integration-key": key, "x-service-user": owner.email }, 403);
  });

  it("a user with access to two accounts reaches both", async () => {
    const both = await tenant("both");
    await createUser(both.email, [owner.accountId]);
    const r = await req(`${pathA(owner)}/content/${victimId}`, { headers: both.headers });
    expectJson(r, 200);
    expect(r.body.title).toBe("victim");
  });

  it("A cannot read or write B's content or tags through A's own path", async () => {
    const a = await tenant("ia");
    const b = await tenant("ib");
    const bTag = await makeTag(b.accountId, "b-tag");
    const [bContent] = await createA(b, [{ title: "b content", type: "text", tags: [bTag.id] }]);
    const bFolder = await makeContent(b.accountId, { type: "folder", title: "b folder" });
    const [aContent] = await createA(a, [{ title: "a content", type: "text" }]);
    const before = await dbState(b.accountId);

    expectProblem(await req(`${pathA(a)}/content/${bContent.id}`, { headers: a.headers }), 404);
    expectProblem(await req(`${pathA(a)}/content`, { method: "PUT", headers: a.headers, body: [{ id: bContent.id, title: "pwned" }] }), 404);
    expectProblem(await req(`${pathB(a)}/content`, { method: "PUT", headers: a.headers, body: [{ id: bContent.id, title: "pwned" }] }), 404);
    expectProblem(await req(`${pathA(a)}/content/${bContent.id}`, { method: "DELETE", headers: a.headers }), 404);
    const mixedDelete = await req(`${pathA(a)}/content/${bContent.id},${aContent.id}`, { method: "DELETE", headers: a.headers });
    expectJson(mixedDelete, 207);
    expect(mixedDelete.body.failure).toEqual([{ index: 0, id: bContent.id, statusCode: 404, errors: [`no content with id '${bContent.id}'`] }]);
    expectProblem(
      await req(`${pathA(a)}/content`, { method: "POST", headers: a.headers, body: [{ title: "x", type: "text", tags: [bTag.id] }] }),
      400,
      `unknown tag id '${bTag.id}'`,
    );
    expectProblem(
      await req(`${pathB(a)}/content`, { method: "POST", headers: a.headers, body: [{ title: "x", type: "text", tags: ["b-tag"] }] }),
      400,
      "unknown tag 'b-tag' (create it with PUT /tags first)",
    );
    expectProblem(
      await req(`${pathA(a)}/content`, { method: "POST", headers: a.headers, body: [{ title: "x", type: "text", parentId: bFolder.id }] }),
      400,
      `unknown parent '${bFolder.id}'`,
    );
    const [a2] = await createA(a, [{ title: "a2", type: "text" }]);
    expectProblem(
      await req(`${pathA(a)}/content`, { method: "PUT", headers: a.headers, body: [{ id: a2.id, tags: [bTag.id] }] }),
      400,
      `unknown tag id '${bTag.id}'`,
    );
    expectProblem(
      await req(`${pathA(a)}/content`, { method: "PUT", headers: a.headers, body: [{ id: a2.id, parentId: bFolder.id }] }),
      400,
      `unknown parent '${bFolder.id}'`,
    );
    const list = await req(`${pathB(a)}/content/createdAfter?fromTime=0`, { headers: a.headers });
    expect(list.body.data.map((c: any) => c.id)).toEqual([a2.id]);

    expect(await dbState(b.accountId)).toEqual(before);
    expect(await prisma.content.count({ where: { accountId: a.accountId } })).toBe(1);
  });
});

// ---- CORS ------------------------------------------------------------------------------------------------

describe("CORS", () => {
  it.each([
    ["POST", "/api/v1/x/content"],
    ["PUT", "/v1/accounts/x/content"],
    ["DELETE", "/api/v1/x/content/c_1,c_2"],
    ["GET", "/v1/accounts/x/content/createdAfter"],
  ])("preflight for %s %s", async (method, path) => {
    const res = await fetch(server.url + path, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": method,
        "access-control-request-headers": "x-service-integration-key,x-service-user,content-type",
      },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["x-service-integration-key", "x-service-user", "content-type"]));
    expect((res.headers.get("access-control-allow-methods") ?? "").split(",")).toContain(method);
  });

  it("a page on another origin may send back an ETag, a compressed body and its trace, and read the NDJSON export's cursor and a CSV's file name", async () => {
    const t = await tenant();
    const preflight = await fetch(`${server.url}${pathB(t)}/events/export`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "x-service-integration-key,x-service-user,if-none-match,content-encoding,traceparent,tracestate",
      },
    });
    expect(preflight.status).toBeLessThan(300);
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["if-none-match", "content-encoding", "traceparent", "tracestate"]));
    const ndjson = await req(`${pathB(t)}/events/export?format=ndjson`, { headers: { ...t.headers, origin: "https://app.example" } });
    expect(ndjson.status, ndjson.text).toBe(200);
    expect(ndjson.headers.get("x-next-cursor")).toMatch(/\S/);
    const exposed = (ndjson.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(",");
    expect(exposed).toEqual(expect.arrayContaining(["x-next-cursor", "x-has-more", "content-disposition", "etag"]));
  });

  it("actual responses carry the CORS headers and expose x-request-id", async () => {
    const t = await tenant();
    const r = await req(`${pathA(t)}/content`, { headers: { ...t.headers, origin: "https://app.example", "x-request-id": "req-123" } });
    expectJson(r, 200);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("x-request-id")).toBe("req-123");
    expect((r.headers.get("access-control-expose-headers") ?? "").toLowerCase()).toContain("x-request-id");
    const err = await req(`${pathA(t)}/content?limit=0`, { headers: { origin: "https://app.example" } });
    expect(err.headers.get("access-control-allow-origin")).toBe("*");
  });
});

// ---- GraphQL lookups behind GET /content/{id} ---------------------------------------------------------------

describe("content(id:) lookups", () => {
  it("resolve per account when one document reads two accounts", async () => {
    const a = await tenant("ga");
    const b = await tenant("gb");
    await createUser(a.email, [b.accountId]);
    const [ac] = await createA(a, [{ title: "in a", type: "text" }]);
    const [bc] = await createA(b, [{ title: "in b", type: "text" }]);
    const r = await gql(
      server,
      a,
      `query($a: String!, $b: String!, $ac: String!, $bc: String!) {
      x: account(id: $a) { mine: content(id: $ac) { title } theirs: content(id: $bc) { title } }
      y: account(id: $b) { mine: content(id: $bc) { title } theirs: content(id: $ac) { title } } }`,
      { a: a.accountId, b: b.accountId, ac: ac.id, bc: bc.id },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({ x: { mine: { title: "in a" }, theirs: null }, y: { mine: { title: "in b" }, theirs: null } });
  });
});
