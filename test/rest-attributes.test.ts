// Integration attributes over REST (B17–B23): the attribute schema (50 entries, only descriptions
// change), records keyed by primary name and value with typed secondary attributes, deletes by
// `name__svc__value`, the search's AND/OR, keyset pages, audit entries, tenant isolation, bad input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decrypt } from "../src/crypto.js";
import { call, expectProblem, gql, pathB, prisma, type Reply, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";
import { AUTH, shape } from "./sql.js";

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const B = (t: Tenant) => server.url + pathB(t);
const put = (path: string, t: Tenant, body: unknown) => call(`${B(t)}${path}`, { method: "PUT", headers: t.headers, body });
const post = (path: string, t: Tenant, body: unknown) => call(`${B(t)}${path}`, { method: "POST", headers: t.headers, body });
const del = (path: string, t: Tenant) => call(`${B(t)}${path}`, { method: "DELETE", headers: t.headers });
const get = (path: string, t: Tenant) => call(`${B(t)}${path}`, { headers: t.headers });

const SCHEMA = [
  { name: "company", type: "string", description: "Customer company" },
  { name: "region", type: "string" },
  { name: "seats", type: "double" },
  { name: "enterprise", type: "boolean" },
  { name: "renewal", type: "timestamp" },
  { name: "secret", type: "encrypted_string" },
];
async function withSchema(prefix: string) {
  const t = await tenant(prefix);
  const r = await put("/integrationAttributeSchema", t, SCHEMA);
  expect(r.status, r.text).toBe(200);
  return t;
}

describe("the integration-attribute schema (B17–B19)", () => {
  it("adds entries, changes only descriptions, lists and gets them", async () => {
    const t = await tenant("ias");
    const added = await put("/integrationAttributeSchema", t, SCHEMA.slice(0, 2));
    expect(added.status).toBe(200);
    expect(added.body.data).toEqual([
      { name: "company", type: "string", description: "Customer company", default: false },
      { name: "region", type: "string", description: null, default: false },
    ]);
    // A description change is fine; a type change fails alone (207).
    const mixed = await put("/integrationAttributeSchema", t, [
      { name: "company", description: "The company" },
      { name: "region", type: "double" },
    ]);
    expect(mixed.status).toBe(207);
    expect(mixed.body.success).toEqual([{ index: 0, id: "company", statusCode: 200 }]);
    expect(mixed.body.failure[0]).toMatchObject({ index: 1, id: "region", statusCode: 400, errors: [expect.stringMatching(/type of 'region' is string/)] });
    const rows = await prisma.attributeField.findMany({ where: { accountId: t.accountId }, orderBy: { name: "asc" } });
    expect(rows.map((r) => [r.name, r.type, r.description])).toEqual([
      ["company", "string", "The company"],
      ["region", "string", null],
    ]);

    const all = await get("/integrationAttributeSchema", t);
    expect(all.status).toBe(200);
    expect(all.body.data.map((f: { name: string }) => f.name)).toEqual(["company", "region"]);
    const one = await get("/integrationAttributeSchema?attributeName=region", t);
    expect(one.body.data).toEqual([{ name: "region", type: "string", description: null, default: false }]);
    expectProblem(await get("/integrationAttributeSchema?attributeName=nope", t), 404, /nope/);
    expect((await get("/integrationAttributeSchema/company", t)).body).toEqual({ name: "company", type: "string", description: "The company", default: false });
    expectProblem(await get("/integrationAttributeSchema/nope", t), 404);

    // Each change is audited.
    const entries = await prisma.auditLog.findMany({ where: { accountId: t.accountId, resourceType: "integrationAttributeField" } });
    expect(entries.map((e) => `${e.action} ${e.resourceId}`).sort()).toEqual(["create company", "create region", "update company"]);
  });

  it("keeps at most 50 entries and checks names and types", async () => {
    const t = await tenant("iascap");
    const fifty = Array.from({ length: 50 }, (_, i) => ({ name: `a${i}`, type: "string" }));
    expect((await put("/integrationAttributeSchema", t, fifty)).status).toBe(200);
    const over = await put("/integrationAttributeSchema", t, [{ name: "a51", type: "string" }]);
    expectProblem(over, 400, /50/);
    const bad = await put("/integrationAttributeSchema", t, [{ name: "1st", type: "string" }, { name: "x,y", type: "string" }, { name: "ok" }]);
    expectProblem(bad, 400);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(["[0]", "[1]", "[2]"]);
    expectProblem(await put("/integrationAttributeSchema", t, [{ name: "z", type: "uuid" }]), 400);
    expect(await prisma.attributeField.count({ where: { accountId: t.accountId } })).toBe(50);
  });
});

describe("records (B20, B21, B23)", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await withSchema("iar");
  });

  it("creates (201) and updates (200) by name and value, merging secondary attributes", async () => {
    const created = await put("/integrationAttributes", t, [
      { attributeName: "company", attributeValue: "acme", additionalAttributes: { region: "emea", seats: 250, enterprise: true, secret: "s3" } },
      { attributeName: "company", attributeValue: "globex", additionalAttributes: { region: "amer" } },
    ]);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data[0]).toEqual({
      attributeName: "company",
      attributeValue: "acme",
      additionalAttributes: { region: "emea", seats: 250, enterprise: true, secret: "s3" },
      lastUpdateTime: expect.any(Number),
      lastUpdatedBy: t.email,
    });
    // The encrypted attribute is ciphertext at rest.
    const secret = await prisma.attributeRecordValue.findFirst({ where: { accountId: t.accountId, name: "secret" } });
    // (Not "does not contain 's3'": a random base64 ciphertext holds any two characters now and then.)
    expect(secret?.text).toMatch(/^v1:/);
    expect(decrypt(secret!.text!)).toBe("s3");

    const updated = await put("/integrationAttributes", t, [
      { attributeName: "company", attributeValue: "acme", additionalAttributes: { seats: 300, region: null } },
    ]);
    expect(updated.status).toBe(200);
    expect(updated.body.data[0].additionalAttributes).toEqual({ seats: 300, enterprise: true, secret: "s3" });
    expect(await prisma.attributeRecord.count({ where: { accountId: t.accountId } })).toBe(2);
    // A record sent back as it was answered: its read-only fields are dropped, not refused.
    const roundTrip = await put("/integrationAttributes", t, [{ ...updated.body.data[0], additionalAttributes: { seats: 301 } }]);
    expect([roundTrip.status, roundTrip.body.data?.[0]?.additionalAttributes], roundTrip.text).toEqual([200, { seats: 301, enterprise: true, secret: "s3" }]);

    // Audit: the create and the two updates, secondary attributes as details, the secret never in clear.
    const entries = await prisma.auditLog.findMany({
      where: { accountId: t.accountId, resourceType: "integrationAttribute", resourceId: "company__svc__acme" },
    });
    expect(entries.map((e) => e.action).sort()).toEqual(["create", "update", "update"]);
    const create = JSON.parse(entries.find((e) => e.action === "create")!.details);
    expect(create.additionalAttributes).toMatchObject({ region: "emea", seats: 250, secret: "[encrypted]" });
  });

  it("a create answers exactly what a read gives, byte for byte, without reading its records back", async () => {
    const t = await withSchema("iacreate");
    const body = [
      // Secondary attributes in an order other than the code point order of their names.
      {
        attributeName: "company",
        attributeValue: "initech",
        additionalAttributes: { secret: "s", seats: 2.5, renewal: -86_400_000, region: "apac", enterprise: false },
      },
      { attributeName: "company", attributeValue: "hooli" },
    ];
    const { result: created, sql } = await sqlOf(() => put("/integrationAttributes", t, body));
    expect(created.status, created.text).toBe(201);
    // No read of AttributeRecord after the write (the read-back was a findMany per 500 records).
    expect(sql.filter((q) => /^SELECT/i.test(q) && /AttributeRecord[`"]\.[`"]updatedBy/.test(q))).toEqual([]);
    const listed = await get("/integrationAttributes?primaryAttrName=company&limit=10", t);
    expect(listed.status, listed.text).toBe(200);
    const byValue = new Map(listed.body.data.map((r: { attributeValue: string }) => [r.attributeValue, r]));
    expect(JSON.stringify(created.body.data)).toBe(JSON.stringify([byValue.get("initech"), byValue.get("hooli")]));
    expect(Object.keys(created.body.data[0].additionalAttributes)).toEqual(["enterprise", "region", "renewal", "seats", "secret"]);
  });

  it("checks every item alone: 207 with the valid ones written, 400 when all fail", async () => {
    const r = await put("/integrationAttributes", t, [
      { attributeName: "company", attributeValue: "initech" },
      { attributeName: "nope", attributeValue: "x" },
      { attributeName: "company" },
      { attributeName: "company", attributeValue: "a,b" },
      { attributeName: "seats", attributeValue: "many" },
      { attributeName: "company", attributeValue: "hooli", additionalAttributes: { seats: "ten", unknown: 1 } },
      { attributeName: "secret", attributeValue: "k" },
      { attributeName: "company", attributeValue: "initech" },
    ]);
    expect(r.status, r.text).toBe(207);
    expect(r.body.success).toEqual([{ index: 0, id: "company__svc__initech", statusCode: 201 }]);
    const errors = Object.fromEntries(r.body.failure.map((f: { index: number; errors: string[] }) => [f.index, f.errors.join("; ")]));
    expect(errors[1]).toMatch(/unknown integration attribute 'nope'/);
    expect(errors[2]).toMatch(/attributeValue is required/);
    expect(errors[3]).toMatch(/comma/);
    expect(errors[4]).toMatch(/not a number/);
    expect(errors[5]).toMatch(/additionalAttributes.seats must be a number.*unknown integration attribute 'unknown'/);
    expect(errors[6]).toMatch(/encrypted/);
    expect(errors[7]).toMatch(/more than once/);
    expect(await prisma.attributeRecord.findMany({ where: { accountId: t.accountId, attributeValue: { in: ["hooli", "initech"] } } })).toHaveLength(1);

    expectProblem(await put("/integrationAttributes", t, [{ attributeName: "nope", attributeValue: "x" }]), 400, /nope/);
    expectProblem(await put("/integrationAttributes", t, { attributeName: "company" }), 400, /array/);
  });

  it("keeps numbers, booleans and times of typed primary attributes in canonical text", async () => {
    const r = await put("/integrationAttributes", t, [
      { attributeName: "seats", attributeValue: 10 },
      { attributeName: "enterprise", attributeValue: "true" },
      { attributeName: "renewal", attributeValue: 1_718_000_000_000 },
    ]);
    expect(r.status, r.text).toBe(201);
    expect(r.body.data.map((d: { attributeValue: string }) => d.attributeValue)).toEqual(["10", "true", "1718000000000"]);
    expect((await put("/integrationAttributes", t, [{ attributeName: "seats", attributeValue: "10.0" }])).status).toBe(200);
    // A number or boolean only for an attribute of that type (a string's value is a string).
    for (const [item, message] of [
      [{ attributeName: "company", attributeValue: 42 }, "attributeValue must be a string (the type of attribute 'company' is string)"],
      [{ attributeName: "company", attributeValue: true }, "attributeValue must be a string (the type of attribute 'company' is string)"],
      [{ attributeName: "seats", attributeValue: false }, "attributeValue must be a string or a number (the type of attribute 'seats' is double)"],
    ] as const)
      expect((await put("/integrationAttributes", t, [item])).body.errors).toEqual([{ path: "[0]", message }]);
    expect(
      await prisma.attributeRecord.count({
        where: { accountId: t.accountId, attributeValue: { in: ["42", "true", "false"] }, attributeName: { in: ["company", "seats"] } },
      }),
    ).toBe(0);
  });

  it("timestamps before 1970, down to 0001-01-01, are primary and secondary values like any other (the end-user fields' range); outside it a 400 says the range", async () => {
    const u = await withSchema("iants");
    const MIN = -62_135_596_800_000;
    const RULE = "an integer of epoch milliseconds from -62135596800000 (0001-01-01T00:00:00.000Z) to 253402300799999 (9999-12-31T23:59:59.999Z)";
    const r = await put("/integrationAttributes", u, [
      { attributeName: "company", attributeValue: "acme", additionalAttributes: { renewal: -86_400_000 } },
      { attributeName: "renewal", attributeValue: MIN },
      { attributeName: "company", attributeValue: "early", additionalAttributes: { renewal: MIN - 1 } },
      { attributeName: "renewal", attributeValue: String(MIN - 1) },
    ]);
    expect(r.status, r.text).toBe(207);
    expect(r.body.success.map((s: { index: number }) => s.index)).toEqual([0, 1]);
    expect(r.body.failure).toEqual([
      { index: 2, id: "company__svc__early", statusCode: 400, errors: [`additionalAttributes.renewal must be ${RULE}`] },
      { index: 3, id: "renewal", statusCode: 400, errors: [`'${MIN - 1}' is not ${RULE} (the type of attribute 'renewal' is timestamp)`] },
    ]);
    const rows = await prisma.attributeRecord.findMany({ where: { accountId: u.accountId }, include: { values: true }, orderBy: { attributeName: "asc" } });
    expect(rows.map((x) => [x.attributeName, x.attributeValue, x.values.map((v) => v.time?.getTime())])).toEqual([
      ["company", "acme", [-86_400_000]],
      ["renewal", String(MIN), []],
    ]);
    // B23 reads them back; B22 finds them by value, B21 deletes by it.
    const found = (x: Reply) => x.body.data.map((d: { attributeName: string; attributeValue: string }) => `${d.attributeName}=${d.attributeValue}`);
    expect((await get("/integrationAttributes?primaryAttrName=company", u)).body.data[0].additionalAttributes).toEqual({ renewal: -86_400_000 });
    expect((await get("/integrationAttributes?primaryAttrName=renewal", u)).body.data.map((d: any) => d.attributeValue)).toEqual([String(MIN)]);
    expect(found(await post("/integrationAttributes/search", u, { renewal: "-86400000" }))).toEqual(["company=acme"]);
    expect(found(await post("/integrationAttributes/search", u, { renewal: String(MIN) }))).toEqual([`renewal=${MIN}`]);
    expect((await del(`/integrationAttributes/renewal__svc__${MIN}`, u)).status).toBe(204);
    expect(await prisma.attributeRecord.count({ where: { accountId: u.accountId, attributeName: "renewal" } })).toBe(0);
  });

  it("B21 reads a pair's value in its attribute's type, as writes do: 10.0 and 1e1 name the record of 10; a value not of the type is a 400", async () => {
    const u = await withSchema("iadeltype");
    expect(
      (
        await put("/integrationAttributes", u, [
          { attributeName: "seats", attributeValue: 10 },
          { attributeName: "seats", attributeValue: 20 },
        ])
      ).status,
    ).toBe(201);
    expect((await del("/integrationAttributes/seats__svc__10.0", u)).status).toBe(204);
    expect((await del("/integrationAttributes/seats__svc__2e1", u)).status).toBe(204);
    expect(await prisma.attributeRecord.count({ where: { accountId: u.accountId } })).toBe(0);
    expectProblem(await del("/integrationAttributes/seats__svc__abc", u), 400, /'abc' is not a number \(the type of attribute 'seats' is double\)/);
  });

  it("a double's value as text is a decimal number: hex, binary and octal literals (0x10, 0b11, 0o7) are a 400 in writes, B21 and B22, and nothing is stored", async () => {
    const u = await withSchema("iadecimal");
    expect((await put("/integrationAttributes", u, [{ attributeName: "seats", attributeValue: 16, additionalAttributes: { region: "emea" } }])).status).toBe(
      201,
    );
    for (const text of ["0x10", "0b11", "0o7"]) {
      const message = `'${text}' is not a number (the type of attribute 'seats' is double)`;
      const written = await put("/integrationAttributes", u, [{ attributeName: "seats", attributeValue: text, additionalAttributes: { region: "amer" } }]);
      expectProblem(written, 400, message);
      expect(written.body.errors).toEqual([{ path: "[0]", message }]);
      expectProblem(await del(`/integrationAttributes/seats__svc__${text}`, u), 400, message);
      const searched = await post("/integrationAttributes/search", u, { seats: text });
      expectProblem(searched, 400, message);
      expect(searched.body.errors).toEqual([{ path: "seats", message }]);
    }
    // The record of 16 is as it was: not renamed, not given region amer, not deleted.
    const rows = await prisma.attributeRecord.findMany({ where: { accountId: u.accountId }, include: { values: true } });
    expect(rows.map((r) => [r.attributeName, r.attributeValue, r.values.map((v) => [v.name, v.text])])).toEqual([["seats", "16", [["region", "emea"]]]]);
    // Decimal notations still name it.
    for (const text of ["16", "16.0", "1.6e1", "+16"]) expect((await post("/integrationAttributes/search", u, { seats: text })).body.data).toHaveLength(1);
  });

  it("lengths count characters, not UTF-16 units: a 256-emoji value and a 2,000-emoji description are taken, one more is a 400", async () => {
    const u = await withSchema("iachars");
    const emoji = "\u{1F680}";
    const described = await put("/integrationAttributeSchema", u, [{ name: "company", description: emoji.repeat(2000) }]);
    expect(described.status, described.text.slice(0, 300)).toBe(200);
    expect((await get("/integrationAttributeSchema/company", u)).body.description).toBe(emoji.repeat(2000));
    expectProblem(
      await put("/integrationAttributeSchema", u, [{ name: "company", description: emoji.repeat(2001) }]),
      400,
      "description must be at most 2000 characters",
    );
    const written = await put("/integrationAttributes", u, [{ attributeName: "company", attributeValue: emoji.repeat(256) }]);
    expect(written.status, written.text.slice(0, 300)).toBe(201);
    expect(written.body.data[0].attributeValue).toBe(emoji.repeat(256));
    expectProblem(
      await put("/integrationAttributes", u, [{ attributeName: "company", attributeValue: emoji.repeat(257) }]),
      400,
      "attributeValue must be at most 256 characters",
    );
    expect(await prisma.attributeRecord.count({ where: { accountId: u.accountId } })).toBe(1);
  });

  it("lists one primary attribute's records by value, in keyset pages (B23)", async () => {
    const u = await withSchema("iapage");
    const values = Array.from({ length: 25 }, (_, i) => `c${String(i).padStart(2, "0")}`);
    expect(
      (
        await put(
          "/integrationAttributes",
          u,
          values.map((v) => ({ attributeName: "company", attributeValue: v })),
        )
      ).status,
    ).toBe(201);
    await put("/integrationAttributes", u, [{ attributeName: "region", attributeValue: "emea" }]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Reply = await get(`/integrationAttributes?primaryAttrName=company&limit=10${cursor ? `&cursor=${cursor}` : ""}`, u);
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.data.map((d: { attributeValue: string }) => d.attributeValue));
      cursor = page.body.cursor;
    } while (cursor);
    expect(seen).toEqual(values);
    expect((await get("/integrationAttributes?primaryAttrName=company", u)).body.data).toHaveLength(10);
    expectProblem(await get("/integrationAttributes", u), 400, /primaryAttrName is required/);
    expectProblem(await get("/integrationAttributes?primaryAttrName=nope", u), 400, /nope/);
    expectProblem(await get("/integrationAttributes?primaryAttrName=company&limit=10001", u), 400);
    expectProblem(await get("/integrationAttributes?primaryAttrName=company&cursor=%%%", u), 400);
  });

  it("lists double and timestamp primaries in numeric order (9 before 10, negatives first), across keyset pages; a text list's cursor is a 400 there", async () => {
    const u = await withSchema("ianum");
    const seats = [10, 9, -2.5, 100, 1e21, 0.5, -10, 2];
    const times = [1_000_000_000_000, 200_000_000_000, -86_400_000, 99_999];
    const written = await put("/integrationAttributes", u, [
      ...seats.map((n) => ({ attributeName: "seats", attributeValue: n })),
      ...times.map((n) => ({ attributeName: "renewal", attributeValue: String(n) })),
      { attributeName: "company", attributeValue: "acme" },
    ]);
    expect(written.status, written.text).toBe(201);
    const all = async (name: string, limit: number) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Reply = await get(`/integrationAttributes?primaryAttrName=${name}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, u);
        expect(page.status, page.text).toBe(200);
        seen.push(...page.body.data.map((d: { attributeValue: string }) => d.attributeValue));
        cursor = page.body.cursor;
      } while (cursor);
      return seen;
    };
    const numeric = (list: number[]) => [...list].sort((x, y) => x - y).map(String);
    expect(await all("seats", 3)).toEqual(numeric(seats));
    expect(await all("seats", 100)).toEqual(numeric(seats));
    expect(await all("renewal", 3)).toEqual(numeric(times));
    // The column holds the number (the index the list reads), not only the order of this page.
    expect(
      (await prisma.attributeRecord.findMany({ where: { accountId: u.accountId, attributeName: "seats" } })).map((r) => r.attributeNum).sort((x, y) => x! - y!),
    ).toEqual([...seats].sort((x, y) => x - y));
    expect((await prisma.attributeRecord.findFirstOrThrow({ where: { accountId: u.accountId, attributeName: "company" } })).attributeNum).toBeNull();
    // A cursor of a text-ordered list does not belong to a numeric one, nor the other way round.
    await put("/integrationAttributes", u, [{ attributeName: "company", attributeValue: "globex" }]);
    const textCursor = (await get("/integrationAttributes?primaryAttrName=company&limit=1", u)).body.cursor;
    expectProblem(await get(`/integrationAttributes?primaryAttrName=seats&cursor=${textCursor}`, u), 400, /cursor/);
    const numCursor = (await get("/integrationAttributes?primaryAttrName=seats&limit=1", u)).body.cursor;
    expectProblem(await get(`/integrationAttributes?primaryAttrName=company&cursor=${numCursor}`, u), 400, /cursor/);
  });

  it("deletes by name__svc__value pairs: 204, 207 with malformed and unknown pairs, 404", async () => {
    const u = await withSchema("iadel");
    await put("/integrationAttributes", u, [
      { attributeName: "company", attributeValue: "acme", additionalAttributes: { region: "emea" } },
      { attributeName: "company", attributeValue: "globex" },
      { attributeName: "region", attributeValue: "acme" },
    ]);
    expect((await del("/integrationAttributes/company__svc__acme", u)).status).toBe(204);
    const left = await prisma.attributeRecord.findMany({ where: { accountId: u.accountId }, orderBy: { attributeName: "asc" } });
    expect(left.map((r) => `${r.attributeName}=${r.attributeValue}`)).toEqual(["company=globex", "region=acme"]);
    expect(await prisma.attributeRecordValue.count({ where: { accountId: u.accountId } })).toBe(0);

    const mixed = await del("/integrationAttributes/company__svc__globex,broken,company__svc__nobody", u);
    expect(mixed.status).toBe(207);
    expect(mixed.body.success).toEqual([{ index: 0, id: "company__svc__globex", statusCode: 204 }]);
    expect(mixed.body.failure).toEqual([
      { index: 1, id: "broken", statusCode: 400, errors: [expect.stringMatching(/__svc__/)] },
      { index: 2, id: "company__svc__nobody", statusCode: 404, errors: [expect.stringMatching(/no integration attribute record/)] },
    ]);
    expectProblem(await del("/integrationAttributes/company__svc__nobody", u), 404);
    expectProblem(await del("/integrationAttributes/__svc__x", u), 400);
    const entries = await prisma.auditLog.findMany({ where: { accountId: u.accountId, resourceType: "integrationAttribute", action: "delete" } });
    expect(entries.map((e) => e.resourceId).sort()).toEqual(["company__svc__acme", "company__svc__globex"]);
  });
});

describe("search (B22)", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await withSchema("iasearch");
    const r = await put("/integrationAttributes", t, [
      { attributeName: "company", attributeValue: "acme", additionalAttributes: { region: "emea", seats: 250, enterprise: true } },
      { attributeName: "company", attributeValue: "globex", additionalAttributes: { region: "amer", seats: 40 } },
      { attributeName: "company", attributeValue: "initech", additionalAttributes: { region: "emea", seats: 40 } },
      { attributeName: "region", attributeValue: "emea", additionalAttributes: { seats: 1 } },
    ]);
    expect(r.status).toBe(201);
  });
  const names = (r: Reply) => r.body.data.map((d: { attributeName: string; attributeValue: string }) => `${d.attributeName}=${d.attributeValue}`).sort();

  it("ORs the values of a name and ANDs the names, on primary and secondary attributes", async () => {
    expect(names(await post("/integrationAttributes/search", t, { company: "acme,globex" }))).toEqual(["company=acme", "company=globex"]);
    expect(names(await post("/integrationAttributes/search", t, { company: "acme,globex", region: "emea" }))).toEqual(["company=acme"]);
    // region=emea matches the record whose primary is region and those with a secondary region.
    expect(names(await post("/integrationAttributes/search", t, { region: "emea" }))).toEqual(["company=acme", "company=initech", "region=emea"]);
    expect(names(await post("/integrationAttributes/search", t, { seats: "40", region: "emea" }))).toEqual(["company=initech"]);
    expect(names(await post("/integrationAttributes/search", t, { enterprise: "true" }))).toEqual(["company=acme"]);
    expect(names(await post("/integrationAttributes/search", t, { company: "nobody" }))).toEqual([]);
  });

  it("pages its results", async () => {
    const first = await post("/integrationAttributes/search?limit=2", t, { region: "emea" });
    expect(first.body.data).toHaveLength(2);
    const second = await post(`/integrationAttributes/search?limit=2&cursor=${first.body.cursor}`, t, { region: "emea" });
    expect(second.body.data).toHaveLength(1);
    expect(second.body.cursor).toBeNull();
    expect([...names(first), ...names(second)].sort()).toEqual(["company=acme", "company=initech", "region=emea"]);
  });

  it("refuses what it cannot search with a 400 naming the body, or the attribute whose values are wrong", async () => {
    const refused = async (body: unknown, detail: RegExp, path: string) => {
      const r = await post("/integrationAttributes/search", t, body);
      expectProblem(r, 400, detail);
      expect(r.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
    };
    await refused(["company"], /object/, "body");
    await refused({}, /at least one/, "body");
    await refused({ nope: "x" }, /nope/, "nope");
    await refused({ secret: "x" }, /encrypted/, "secret");
    await refused({ seats: "lots" }, /not a number/, "seats");
    await refused({ company: " , " }, /names no value/, "company");
    await refused({ company: { a: 1 } }, /comma-separated string/, "company");
  });

  it("reads the page in a constant number of statements", async () => {
    // The schema, the matching ids (one statement whatever the names and values), the records and their attributes.
    const { sql } = await sqlOf(() => post("/integrationAttributes/search?limit=100", t, { company: "acme,globex,initech", region: "emea" }));
    expect(shape(sql)).toEqual([...AUTH, "SELECT AttributeField", "SELECT AttributeRecord", "SELECT AttributeRecord", "SELECT AttributeRecordValue"]);
  });
});

describe("tenants and GraphQL", () => {
  it("never shows one account's records to another", async () => {
    const a = await withSchema("iaiso1");
    const b = await withSchema("iaiso2");
    await put("/integrationAttributes", a, [{ attributeName: "company", attributeValue: "acme" }]);
    expect((await get("/integrationAttributes?primaryAttrName=company", b)).body.data).toEqual([]);
    expect((await post("/integrationAttributes/search", b, { company: "acme" })).body.data).toEqual([]);
    expectProblem(await del("/integrationAttributes/company__svc__acme", b), 404);
    expect(await prisma.attributeRecord.count({ where: { accountId: a.accountId } })).toBe(1);
    expectProblem(await get("/integrationAttributes?primaryAttrName=company", { ...b, accountId: a.accountId }), 403);
  });

  it("serves the same data to GraphQL, reading only what is selected", async () => {
    const t = await withSchema("iagql");
    await put("/integrationAttributes", t, [{ attributeName: "company", attributeValue: "acme", additionalAttributes: { region: "emea" } }]);
    const { result, sql } = await sqlOf(() =>
      gql(
        server,
        t,
        `query($a: String!) { account(id: $a) { integrationAttribute(attributeName: "company", attributeValue: "acme") { attributeValue lastUpdatedBy } } }`,
        {
          a: t.accountId,
        },
      ),
    );
    expect(result.data).toEqual({ account: { integrationAttribute: { attributeValue: "acme", lastUpdatedBy: t.email } } });
    expect(shape(sql)).toEqual([...AUTH, "SELECT AttributeRecord"]); // no secondary attributes read
  });
});
