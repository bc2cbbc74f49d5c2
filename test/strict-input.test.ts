// Strict reading of what a request names: a query parameter sent without a value is a 400 naming
// it (never read as absent), on every route that reads it, B17's `attributeName=` included.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, expectProblem, gql, pathA, pathB, prisma, type Reply, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
beforeAll(async () => {
  server = await startServer();
  t = await tenant("strict");
  const schema = await call(`${server.url}${pathB(t)}/integrationAttributeSchema`, {
    method: "PUT",
    headers: t.headers,
    body: [{ name: "company", type: "string" }],
  });
  expect(schema.status, schema.text).toBe(200);
});
afterAll(() => server.close());

const get = (path: string) => call(`${server.url}${path}`, { headers: t.headers });
const EMPTY = "must not be empty (leave the parameter out instead)";

/** A 400 problem naming `name` as empty, with x-request-id. */
function expectEmpty(r: Reply, name: string) {
  expectProblem(r, 400, `${name} ${EMPTY}`);
  expect(r.body.errors).toEqual([{ path: name, message: EMPTY }]);
  expect(r.headers.get("x-request-id")).toMatch(/\S/);
}

describe("a query parameter sent without a value is a 400 naming it", () => {
  it.each([
    ["limit", () => `${pathA(t)}/content?limit=`],
    ["cursor", () => `${pathA(t)}/content?cursor=`],
    ["limit", () => `${pathA(t)}/endUsers?limit=&cursor=`],
    ["updatedSince", () => `${pathA(t)}/endUsers?updatedSince=`],
    ["state", () => `${pathB(t)}/content?state=&stage=design`],
    ["type", () => `${pathB(t)}/content/updatedAfter?fromTime=0&type=`],
    ["fromTime", () => `${pathB(t)}/content/upload/cloud/pdf/listS3DirContent?fromTime=`],
    ["startDate", () => `${pathB(t)}/reports/summary?startDate=`],
    ["endDate", () => `${pathB(t)}/reports/summary?startDate=2024-06-01&endDate=`],
    ["includeDomains", () => `${pathB(t)}/reports/summary?includeDomains=`],
    ["format", () => `${pathB(t)}/reports/summary?format=`],
    ["fields", () => `${pathB(t)}/endUsers/u1?fields=`],
    ["fields", () => `${pathB(t)}/endUsers/u1?fields=&fields=custom`],
    ["userid-type", () => `${pathB(t)}/endUsers/u1?userid-type=`],
    ["userIdSrc", () => `${pathB(t)}/segments/s1/contentOrder?id=u1&userIdSrc=`],
    ["type", () => `${pathB(t)}/events/export?type=`],
    ["fieldName", () => `${pathB(t)}/endUserSchema?fieldName=`],
    ["primaryAttrName", () => `${pathB(t)}/integrationAttributes?primaryAttrName=`],
  ])("%s (%#)", async (name, path) => {
    expectEmpty(await get(path()), name);
  });

  it("POST /auditlogs?limit= (a read with a body) is refused the same way", async () => {
    const r = await call(`${server.url}${pathB(t)}/auditlogs?limit=`, { method: "POST", headers: t.headers, body: {} });
    expectEmpty(r, "limit");
  });

  it("a parameter the route does not read is ignored, whatever its value; given values still work", async () => {
    const r = await get(`${pathA(t)}/content?_=&limit=5`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ data: [], cursor: null });
  });

  it("B17: `attributeName=` is a 400 naming attributeName, not the whole schema; left out it is the whole schema", async () => {
    expectEmpty(await get(`${pathB(t)}/integrationAttributeSchema?attributeName=`), "attributeName");
    const whole = await get(`${pathB(t)}/integrationAttributeSchema`);
    expect(whole.status, whole.text).toBe(200);
    expect(whole.body.data.map((f: { name: string }) => f.name)).toContain("company");
    const one = await get(`${pathB(t)}/integrationAttributeSchema?attributeName=company`);
    expect([one.status, one.body.data.map((f: { name: string }) => f.name)]).toEqual([200, ["company"]]);
    // Nothing was written by the refused reads.
    expect(await prisma.attributeField.count({ where: { accountId: t.accountId } })).toBe(1);
  });
});

describe("segment names are stored trimmed, as tag names are", () => {
  const CREATE = `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id name } }`;
  const UPDATE = `mutation($a: String!, $id: String!, $input: SegmentInput!) { updateSegment(accountId: $a, id: $id, input: $input) { id name } }`;
  const RULE = { field: "custom.plan", op: "exists" };

  it("creates ` Gold ` as `Gold`, refuses `Gold\\t` as taken (409) and white space alone (400), renames trimmed; nothing else written", async () => {
    const u = await tenant("strict-seg");
    const field = await call(`${server.url}${pathB(u)}/endUserSchema`, { method: "PUT", headers: u.headers, body: [{ name: "plan", type: "string" }] });
    expect(field.status, field.text).toBe(200);
    const made = await gql(server, u, CREATE, { a: u.accountId, input: { name: "  Gold ", rule: RULE } });
    expect(made.errors).toBeUndefined();
    expect(made.data.createSegment.name).toBe("Gold");
    const id = made.data.createSegment.id as string;

    const taken = await gql(server, u, CREATE, { a: u.accountId, input: { name: "Gold\t", rule: RULE } });
    expect(taken.errors?.[0]?.message).toBe(`a segment named 'Gold' already exists (${id})`);
    expect(taken.errors?.[0]?.extensions?.code).toBe("CONFLICT");
    const blank = await gql(server, u, CREATE, { a: u.accountId, input: { name: " \u00a0\t", rule: RULE } });
    expect(blank.errors?.[0]?.message).toBe("name must be 1 to 200 characters");
    expect(blank.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");

    const renamed = await gql(server, u, UPDATE, { a: u.accountId, id, input: { name: " Platinum  " } });
    expect(renamed.errors).toBeUndefined();
    expect(renamed.data.updateSegment).toEqual({ id, name: "Platinum" });

    const rows = await prisma.segment.findMany({ where: { accountId: u.accountId }, select: { id: true, name: true } });
    expect(rows).toEqual([{ id, name: "Platinum" }]);
  });
});

describe("B21: a record named by two pairs of one request is deleted once; the later pair is a 400", () => {
  it("`acme,acme` → 207 (204 and a 400 naming both), `seats 10 and 10.0` the same, unknown twice → 400; only the first pairs' records go", async () => {
    const u = await tenant("strict-b21");
    const B = `${server.url}${pathB(u)}`;
    const schema = await call(`${B}/integrationAttributeSchema`, {
      method: "PUT",
      headers: u.headers,
      body: [
        { name: "company", type: "string" },
        { name: "seats", type: "double" },
      ],
    });
    expect(schema.status, schema.text).toBe(200);
    const records = [
      { attributeName: "company", attributeValue: "acme" },
      { attributeName: "company", attributeValue: "globex" },
      { attributeName: "seats", attributeValue: 10 },
    ];
    const put = await call(`${B}/integrationAttributes`, { method: "PUT", headers: u.headers, body: records });
    expect(put.status, put.text).toBe(201);
    const left = async () =>
      (await prisma.attributeRecord.findMany({ where: { accountId: u.accountId }, select: { attributeName: true, attributeValue: true } }))
        .map((r) => `${r.attributeName}=${r.attributeValue}`)
        .sort();
    const del = (pairs: string) => call(`${B}/integrationAttributes/${pairs}`, { method: "DELETE", headers: u.headers });

    // Nothing found and a repeat: statuses differ (404, 400), so a 400 listing both; nothing deleted.
    const none = await del("company__svc__nobody,company__svc__nobody");
    expectProblem(none, 400);
    expect(none.body.failure).toEqual([
      { index: 0, id: "company__svc__nobody", statusCode: 404, errors: ["no integration attribute record 'company__svc__nobody'"] },
      {
        index: 1,
        id: "company__svc__nobody",
        statusCode: 400,
        errors: ["company__svc__nobody appears more than once in this request (index 0: company__svc__nobody)"],
      },
    ]);
    expect(await left()).toEqual(["company=acme", "company=globex", "seats=10"]);

    const twice = await del("company__svc__acme,company__svc__acme");
    expect(twice.status, twice.text).toBe(207);
    expect(twice.body).toEqual({
      success: [{ index: 0, id: "company__svc__acme", statusCode: 204 }],
      failure: [
        {
          index: 1,
          id: "company__svc__acme",
          statusCode: 400,
          errors: ["company__svc__acme appears more than once in this request (index 0: company__svc__acme)"],
        },
      ],
    });
    expect(await left()).toEqual(["company=globex", "seats=10"]);

    // Two spellings of one double value name one record.
    const spelled = await del("seats__svc__10.0,company__svc__globex,seats__svc__1e1");
    expect(spelled.status, spelled.text).toBe(207);
    expect(spelled.body.success).toEqual([
      { index: 0, id: "seats__svc__10.0", statusCode: 204 },
      { index: 1, id: "company__svc__globex", statusCode: 204 },
    ]);
    expect(spelled.body.failure).toEqual([
      { index: 2, id: "seats__svc__1e1", statusCode: 400, errors: ["seats__svc__1e1 appears more than once in this request (index 0: seats__svc__10.0)"] },
    ]);
    expect(await left()).toEqual([]);
    const audit = await prisma.auditLog.findMany({ where: { accountId: u.accountId, resourceType: "integrationAttribute", action: "delete" } });
    expect(audit.map((e) => e.resourceId).sort()).toEqual(["company__svc__acme", "company__svc__globex", "seats__svc__10"]);
  });
});

describe("an out-of-range page size is named as the caller sent it: `first` over GraphQL, `limit` over REST", () => {
  it.each([
    ["tags", "query($a: String!, $n: Int) { account(id: $a) { tags(first: $n) { nodes { name } } } }", 0, 10_000],
    ["contents", "query($a: String!, $n: Int) { account(id: $a) { contents(first: $n) { nodes { id } } } }", 10_001, 10_000],
    ["auditLogs", "query($a: String!, $n: Int) { auditLogs(accountId: $a, first: $n) { nodes { id } } }", 501, 500],
  ])("GraphQL %s, first out of range (%#)", async (_list, query, n, max) => {
    const r = await gql(server, t, query, { a: t.accountId, n });
    expect(r.status).toBe(400);
    expect(r.errors).toEqual([
      expect.objectContaining({
        message: `first must be between 1 and ${max}`,
        extensions: expect.objectContaining({ code: "BAD_REQUEST", errors: [{ path: "first", message: `must be between 1 and ${max}` }] }),
      }),
    ]);
  });

  it("REST keeps naming limit", async () => {
    const r = await get(`${pathB(t)}/tags?limit=10001`);
    expectProblem(r, 400, "limit must be between 1 and 10000");
    expect(r.body.errors).toEqual([{ path: "limit", message: "must be between 1 and 10000" }]);
    const audit = await call(`${server.url}${pathB(t)}/auditlogs?limit=501`, { method: "POST", headers: t.headers, body: {} });
    expectProblem(audit, 400, "limit must be between 1 and 500");
    expect(audit.body.errors).toEqual([{ path: "limit", message: "must be between 1 and 500" }]);
  });
});

describe("the other comma-list deletes: an entry repeating an earlier one is a 400 naming it, as in B21", () => {
  const del = (u: Tenant, path: string) => call(`${server.url}${path}`, { method: "DELETE", headers: u.headers });
  const deletions = async (u: Tenant, resourceType: string) =>
    (await prisma.auditLog.findMany({ where: { accountId: u.accountId, resourceType, action: "delete" }, select: { resourceId: true } })).map(
      (e) => e.resourceId,
    );
  const repeat = (entry: string, index: number, earlier: number) => ({
    index,
    id: entry,
    statusCode: 400,
    errors: [`${entry} appears more than once in this request (index ${earlier}: ${entry})`],
  });

  it("DELETE /tags/t1,t1,t2,t1 → 207: t1 and t2 deleted once each, audited once each, the repeats 400s", async () => {
    const u = await tenant("strict-tags");
    const put = await call(`${server.url}${pathB(u)}/tags`, { method: "PUT", headers: u.headers, body: [{ name: "t1" }, { name: "t2" }, { name: "t3" }] });
    expect(put.status, put.text).toBe(201);
    const ids = new Map((await prisma.tag.findMany({ where: { accountId: u.accountId } })).map((r) => [r.name, r.id]));
    const r = await del(u, `${pathB(u)}/tags/t1,t1,t2,t1`);
    expect(r.status, r.text).toBe(207);
    expect(r.body).toEqual({
      success: [
        { index: 0, id: ids.get("t1"), statusCode: 204 },
        { index: 2, id: ids.get("t2"), statusCode: 204 },
      ],
      failure: [repeat("t1", 1, 0), repeat("t1", 3, 0)],
    });
    expect((await prisma.tag.findMany({ where: { accountId: u.accountId } })).map((x) => x.name)).toEqual(["t3"]);
    expect((await deletions(u, "tag")).sort()).toEqual([ids.get("t1"), ids.get("t2")].sort());

    // Nothing found and a repeat: statuses differ (404, 400), so a 400 problem listing both; nothing deleted.
    const none = await del(u, `${pathB(u)}/tags/nope,nope`);
    expectProblem(none, 400);
    expect(none.body.failure).toEqual([{ index: 0, id: "nope", statusCode: 404, errors: ["no tag named 'nope'"] }, repeat("nope", 1, 0)]);
    expect((await prisma.tag.findMany({ where: { accountId: u.accountId } })).map((x) => x.name)).toEqual(["t3"]);
    expect(await deletions(u, "tag")).toHaveLength(2);
  });

  it("DELETE /content/X,X → 207: the content deleted once, audited once", async () => {
    const u = await tenant("strict-content");
    const made = await call(`${server.url}${pathB(u)}/content`, {
      method: "POST",
      headers: u.headers,
      body: [
        { title: "One", type: "link", url: "https://x.com/1" },
        { title: "Two", type: "link", url: "https://x.com/2" },
      ],
    });
    expect(made.status, made.text).toBe(201);
    const [x, y] = made.body.data.map((c: { id: string }) => c.id);
    const r = await del(u, `${pathA(u)}/content/${x},${x}`);
    expect(r.status, r.text).toBe(207);
    expect(r.body).toEqual({ success: [{ index: 0, id: x, statusCode: 204 }], failure: [repeat(x, 1, 0)] });
    expect((await prisma.content.findMany({ where: { accountId: u.accountId } })).map((c) => c.id)).toEqual([y]);
    expect(await deletions(u, "content")).toEqual([x]);
  });

  it("DELETE /endUsers/u1,u1 → 207: the end user erased once, audited once", async () => {
    const u = await tenant("strict-users");
    const put = await call(`${server.url}${pathA(u)}/endUsers`, { method: "PUT", headers: u.headers, body: [{ id: "u1" }, { id: "u2" }] });
    expect(put.status, put.text).toBe(201);
    const r = await del(u, `${pathA(u)}/endUsers/u1,u1`);
    expect(r.status, r.text).toBe(207);
    expect(r.body).toEqual({ success: [{ index: 0, id: "u1", statusCode: 204 }], failure: [repeat("u1", 1, 0)] });
    expect((await prisma.endUser.findMany({ where: { accountId: u.accountId } })).map((e) => e.externalId)).toEqual(["u2"]);
    // The deletion's entry names a pseudonym (erasure): one of them.
    expect(await deletions(u, "endUser")).toEqual([expect.stringMatching(/^erased_/)]);
  });

  it("DELETE /endUserSchema/plan,plan (both path styles' route) → 207: the field deleted once, audited once", async () => {
    const u = await tenant("strict-fields");
    const put = await call(`${server.url}${pathA(u)}/endUserSchema`, {
      method: "PUT",
      headers: u.headers,
      body: [
        { name: "plan", type: "string" },
        { name: "seats", type: "double" },
      ],
    });
    expect(put.status, put.text).toBe(200);
    const r = await del(u, `${pathA(u)}/endUserSchema/plan,plan`);
    expect(r.status, r.text).toBe(207);
    expect(r.body).toEqual({ success: [{ index: 0, id: "plan", statusCode: 204 }], failure: [repeat("plan", 1, 0)] });
    expect((await prisma.endUserField.findMany({ where: { accountId: u.accountId } })).map((f) => f.name)).toEqual(["seats"]);
    expect(await deletions(u, "endUserField")).toEqual(["plan"]);
    // A default field named twice: its own 400, and the repeat's.
    const defaults = await del(u, `${pathB(u)}/endUserSchema/email,email`);
    expectProblem(defaults, 400);
    expect(defaults.body.failure).toEqual([
      { index: 0, id: "email", statusCode: 400, errors: ["'email' is a default field and cannot be deleted"] },
      repeat("email", 1, 0),
    ]);
  });

  it("GraphQL deleteSegments: a repeated id is a 400 item; the segment deleted once", async () => {
    const u = await tenant("strict-segments");
    const made = await gql(server, u, `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }`, {
      a: u.accountId,
      input: { name: "S", rule: { field: "custom.email", op: "exists" }, contentIds: [] },
    });
    expect(made.errors, JSON.stringify(made.errors)).toBeUndefined();
    const id = made.data.createSegment.id;
    const r = await gql(
      server,
      u,
      `mutation($a: String!, $ids: [String!]!) { deleteSegments(accountId: $a, ids: $ids) { results { index statusCode id errors } } }`,
      {
        a: u.accountId,
        ids: [id, id],
      },
    );
    expect(r.data.deleteSegments.results).toEqual([{ index: 0, statusCode: 204, id, errors: [] }, repeat(id, 1, 0)]);
    expect(await prisma.segment.count({ where: { accountId: u.accountId } })).toBe(0);
    expect(await deletions(u, "segment")).toEqual([id]);
  });
});
