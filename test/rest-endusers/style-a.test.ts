// End users over REST: style A (/api/v1/{accountId}), and typed custom fields (encrypted at rest).
import { beforeAll, describe, expect, it } from "vitest";
import { expectProblem, gql, prisma, type Reply, type Tenant, tenant } from "../helpers.js";
import { A, B, del, fresh, get, post, put, server, withServer } from "./shared.js";

withServer();

// ---- end users, style A ---------------------------------------------------------------------------

describe("end users, style A", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await fresh("usera");
  });

  it("PUT /endUsers: 201 when at least one is created, 200 when all existed; records have no user-action maps", async () => {
    const created = await put(`${A(t)}/endUsers`, t, [{ id: "alice", custom: { plan: "pro", score: 1.5 } }, { id: "bob" }]);
    expect(created.status).toBe(201);
    expect(created.body.data).toHaveLength(2);
    const [alice, bob] = created.body.data;
    expect(alice).toEqual({ id: "alice", creationTime: expect.any(Number), lastUpdateTime: expect.any(Number), custom: { plan: "pro", score: 1.5 } });
    expect(bob).toEqual({ id: "bob", creationTime: expect.any(Number), lastUpdateTime: expect.any(Number), custom: {} });
    expect(Math.abs(alice.creationTime - Date.now())).toBeLessThan(60_000);

    const updated = await put(`${A(t)}/endUsers`, t, [
      { id: "alice", custom: { score: 2 } },
      { id: "bob", custom: { active: true } },
    ]);
    expect(updated.status).toBe(200);
    expect(updated.body.data[0].custom).toEqual({ plan: "pro", score: 2 });
    expect(updated.body.data[0].creationTime).toBe(alice.creationTime);
    expect(updated.body.data[0].lastUpdateTime).toBeGreaterThanOrEqual(alice.lastUpdateTime);

    const mixed = await put(`${A(t)}/endUsers`, t, [{ id: "alice" }, { id: "carol" }]);
    expect(mixed.status).toBe(201);
  });

  it("PUT /endUsers: 207 for a mixed outcome, 400 problem listing errors when all fail", async () => {
    const r = await put(`${A(t)}/endUsers`, t, [{ id: "dave", custom: { score: 3 } }, { id: "erin", custom: { score: "high" } }, { custom: { plan: "x" } }]);
    expect(r.status).toBe(207);
    expect(r.body).toEqual({
      success: [{ index: 0, id: "dave", statusCode: 201 }],
      failure: [
        { index: 1, id: "erin", statusCode: 400, errors: ["custom.score must be a number"] },
        { index: 2, id: null, statusCode: 400, errors: ["id is required (a non-empty string)"] },
      ],
    });
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: "erin" } })).toBe(0);

    const all = await put(`${A(t)}/endUsers`, t, [
      { id: "x", custom: { nope: 1 } },
      { id: "y", custom: { active: "yes" } },
    ]);
    expectProblem(all, 400);
    expect(all.body.errors).toEqual([
      { path: "[0]", message: "unknown custom field 'nope' (add it to the end-user schema first)" },
      { path: "[1]", message: "custom.active must be true or false" },
    ]);
  });

  it("a repeated id in one request fails the repeat", async () => {
    const r = await put(`${A(t)}/endUsers`, t, [
      { id: "rep", custom: { plan: "a" } },
      { id: "rep", custom: { plan: "b" } },
    ]);
    expect(r.status).toBe(207);
    expect(r.body.failure[0]).toMatchObject({ index: 1, id: "rep", errors: [expect.stringMatching(/more than once/)] });
    expect((await get(`${A(t)}/endUsers/rep`, t)).body.custom).toEqual({ plan: "a" });
  });

  it("GET /endUsers/{id}: 200 without user-action maps; 404 for an unknown id", async () => {
    await put(`${B(t)}/endUsers`, t, [{ id: "withActions", custom: { plan: "p" }, userActionCount: { a1: 3 } }]);
    const r = await get(`${A(t)}/endUsers/withActions`, t);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: "withActions", creationTime: expect.any(Number), lastUpdateTime: expect.any(Number), custom: { plan: "p" } });
    expectProblem(await get(`${A(t)}/endUsers/nobody`, t), 404);
  });

  it("GET /endUsers: pages in creation order with limit and cursor; bad limit or cursor is a 400", async () => {
    const l = await tenant("list");
    const ids = Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, "0")}`);
    // Created one by one so creation order is the id order.
    for (const id of ids) await put(`${A(l)}/endUsers/${id}`, l, {});
    const first = await get(`${A(l)}/endUsers`, l);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(10); // default limit
    expect(first.body.cursor).toEqual(expect.any(String));
    expect(first.body.data[0]).not.toHaveProperty("userActionCount");

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Reply = await get(`${A(l)}/endUsers?limit=7${cursor ? `&cursor=${cursor}` : ""}`, l);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((u: any) => u.id));
      cursor = page.body.cursor;
    } while (cursor);
    expect(seen).toEqual(ids);

    expectProblem(await get(`${A(l)}/endUsers?limit=0`, l), 400);
    expectProblem(await get(`${A(l)}/endUsers?limit=10001`, l), 400);
    expectProblem(await get(`${A(l)}/endUsers?limit=ten`, l), 400);
    expectProblem(await get(`${A(l)}/endUsers?cursor=not-a-cursor!`, l), 400);
  });

  it("PUT /endUsers/{id}: {errors:[], id, statusCode} with 201 created, 200 updated", async () => {
    const c = await put(`${A(t)}/endUsers/frank`, t, { plan: "basic" });
    expect(c.status).toBe(201);
    expect(c.body).toEqual({ errors: [], id: "frank", statusCode: 201 });
    const u = await put(`${A(t)}/endUsers/frank`, t, { score: 9 });
    expect(u.status).toBe(200);
    expect(u.body).toEqual({ errors: [], id: "frank", statusCode: 200 });
    expect((await get(`${A(t)}/endUsers/frank`, t)).body.custom).toEqual({ plan: "basic", score: 9 });
  });

  it("PUT /endUsers/{id}: failures keep the {errors, id, statusCode} shape", async () => {
    const bad = await put(`${A(t)}/endUsers/frank`, t, { score: "x", ghost: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      errors: ["custom.score must be a number", "unknown custom field 'ghost' (add it to the end-user schema first)"],
      id: "frank",
      statusCode: 400,
    });
    const arr = await put(`${A(t)}/endUsers/frank`, t, [{ plan: "x" }]);
    expect(arr.status).toBe(400);
    expect(arr.body).toEqual({ errors: [expect.stringMatching(/JSON object/)], id: "frank", statusCode: 400 });
    const comma = await put(`${A(t)}/endUsers/a,b`, t, { plan: "x" });
    expect(comma.status).toBe(400);
    expect(comma.body).toEqual({ errors: ["id must not contain a comma"], id: "a,b", statusCode: 400 });
    // Nor white space at an end: the delete list trims its entries, so ` u ` could never be erased.
    const spaced = await put(`${A(t)}/endUsers/%20u%20`, t, { plan: "x" });
    expect([spaced.status, spaced.body]).toEqual([400, { errors: ["id must not begin or end with white space"], id: " u ", statusCode: 400 }]);
    const bulk = await put(`${A(t)}/endUsers`, t, [{ id: "u\t" }, { id: "fine-id" }]);
    expect([bulk.status, bulk.body.failure?.[0]?.errors], bulk.text).toEqual([207, ["id must not begin or end with white space"]]);
    // Nor `.` or `..`: a URL parser drops such a path segment, so `/endUsers/.` could never be read.
    const dots = await put(`${A(t)}/endUsers`, t, [{ id: "." }, { id: ".." }, { id: "..." }]);
    expect([dots.status, dots.body.failure?.map((f: { errors: string[] }) => f.errors[0])], dots.text).toEqual([
      207,
      ['id must not be "." or ".." (a URL cannot name it as a path segment)', 'id must not be "." or ".." (a URL cannot name it as a path segment)'],
    ]);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: { in: [" u ", "u\t", ".", ".."] } } })).toBe(0);
    expect((await get(`${A(t)}/endUsers/frank`, t)).body.custom).toEqual({ plan: "basic", score: 9 });
  });

  it("DELETE /endUsers/{ids}: 204 all (values and actions go too), 207 some, 404 none", async () => {
    const d = await fresh("dele");
    await put(
      `${B(d)}/endUsers`,
      d,
      ["g1", "g2", "g3"].map((id) => ({ id, custom: { plan: id }, userActionCount: { act: 1 } })),
    );
    const rowIds = (await prisma.endUser.findMany({ where: { accountId: d.accountId, externalId: { in: ["g1", "g2"] } } })).map((r) => r.id);
    const all = await del(`${A(d)}/endUsers/g1,g2`, d);
    expect(all.status).toBe(204);
    expect(all.text).toBe("");
    expect(await prisma.endUser.count({ where: { id: { in: rowIds } } })).toBe(0);
    expect(await prisma.endUserValue.count({ where: { endUserId: { in: rowIds } } })).toBe(0);
    expect(await prisma.endUserAction.count({ where: { endUserId: { in: rowIds } } })).toBe(0);

    const some = await del(`${A(d)}/endUsers/g1,g3`, d);
    expect(some.status).toBe(207);
    expect(some.body).toEqual({
      success: [{ index: 1, id: "g3", statusCode: 204 }],
      failure: [{ index: 0, id: "g1", statusCode: 404, errors: ["no end user with id 'g1'"] }],
    });
    expectProblem(await del(`${A(d)}/endUsers/g1,g2`, d), 404);
    expectProblem(await del(`${A(d)}/endUsers/g1,,g2`, d), 400);
    expect(await prisma.endUser.count({ where: { accountId: d.accountId } })).toBe(0);
  });
});

// ---- typed custom values ------------------------------------------------------------------------------

describe("typed custom fields", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await fresh("typed");
  });

  it.each([
    ["string", "plan", "enterprise", [42, true, { a: 1 }, ["x"], "x".repeat(10_001)]],
    ["double", "score", -12.25, ["1.5", true, { n: 1 }]],
    ["boolean", "active", false, ["true", 0, 1, "false"]],
    ["timestamp", "seenAt", 1_700_000_000_123, [-62_135_596_800_001, 1.5, "2024-01-01", true, 253_402_300_800_000, 8.64e15 + 1]],
    ["encrypted_string", "ssn", "123-45-6789", [123, false, { s: "x" }]],
  ] as const)("%s: the right value is stored and read back, wrong ones fail (207 item / 400)", async (type, field, good, bads) => {
    const r = await put(`${A(t)}/endUsers`, t, [
      { id: `ok-${type}`, custom: { [field]: good } },
      ...bads.map((bad, i) => ({ id: `bad-${type}-${i}`, custom: { [field]: bad } })),
    ]);
    expect(r.status, r.text).toBe(207);
    expect(r.body.success).toEqual([{ index: 0, id: `ok-${type}`, statusCode: 201 }]);
    expect(r.body.failure).toHaveLength(bads.length);
    for (const f of r.body.failure) {
      expect(f).toMatchObject({ statusCode: 400, errors: [expect.stringMatching(new RegExp(`^custom\\.${field} must be `))] });
    }
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: { startsWith: `bad-${type}` } } })).toBe(0);
    const back = await get(`${A(t)}/endUsers/ok-${type}`, t);
    expect(back.body.custom).toEqual({ [field]: good });
    expect(typeof back.body.custom[field]).toBe(typeof good);
    // The same through B15: a wrong value is a 400 in the single-update shape.
    const one = await put(`${B(t)}/endUsers/ok-${type}`, t, { [field]: bads[0] });
    expect(one.status).toBe(400);
    expect(one.body).toEqual({ errors: [expect.stringMatching(new RegExp(`^custom\\.${field} must be `))], id: `ok-${type}`, statusCode: 400 });
  });

  it("extreme values of each type are stored and read back", async () => {
    const custom = { plan: "x".repeat(1_500), score: -1e300, active: true, seenAt: 253_402_300_799_999, ssn: "é✓ 𝄞" }; // plan: the 1,500-byte limit; seenAt: 9999-12-31T23:59:59.999Z
    const r = await put(`${A(t)}/endUsers`, t, [
      { id: "extremes", custom },
      { id: "zeroes", custom: { plan: "", score: 0, active: false, seenAt: 0, ssn: "" } },
    ]);
    expect(r.status, r.text.slice(0, 300)).toBe(201);
    expect((await get(`${A(t)}/endUsers/extremes`, t)).body.custom).toEqual(custom);
    expect((await get(`${A(t)}/endUsers/zeroes`, t)).body.custom).toEqual({ plan: "", score: 0, active: false, seenAt: 0, ssn: "" });
    const counts = await put(`${B(t)}/endUsers`, t, [
      { id: "extremes", userActionCount: { a: 2 ** 31 - 1 }, userActions: { a: Number.MAX_SAFE_INTEGER, b: Number.MIN_SAFE_INTEGER } },
    ]);
    expect(counts.status).toBe(200);
    expect(counts.body.data[0]).toMatchObject({
      userActionCount: { a: 2 ** 31 - 1, b: 0 },
      userActions: { a: Number.MAX_SAFE_INTEGER, b: Number.MIN_SAFE_INTEGER },
    });
  });

  it("timestamps before 1970, down to 0001-01-01, are stored and read back to the millisecond by every path; segment rules and Explore compare them; outside the range a 400 says it", async () => {
    const u = await fresh("negts");
    const MIN = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
    const seen: Record<string, number> = {
      n1: MIN,
      n2: Date.parse("1850-06-15T12:34:56.789Z"), // before time zones: local mean time in most zones
      n3: -86_400_000, // 1969-12-31
      n4: -1,
      p1: 5,
    };
    const created = await put(
      `${A(u)}/endUsers`,
      u,
      Object.entries(seen).map(([id, seenAt]) => ({ id, custom: { seenAt } })),
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.map((d: any) => [d.id, d.custom.seenAt])).toEqual(Object.entries(seen));
    const stored = async () =>
      Object.fromEntries(
        (await prisma.endUserValue.findMany({ where: { accountId: u.accountId, field: "seenAt" }, include: { endUser: true } })).map((v) => [
          v.endUser.externalId,
          v.time!.getTime(),
        ]),
      );
    expect(await stored()).toEqual(seen);
    const reads = async (id: string) => [
      (await get(`${A(u)}/endUsers/${id}`, u)).body.custom.seenAt,
      (await get(`${B(u)}/endUsers/${id}?fields=custom`, u)).body.custom.seenAt, // B14
      (await post(`${B(u)}/endUsers/lookup`, u, { id, fields: ["custom"] })).body.custom.seenAt, // B13
    ];
    for (const [id, v] of Object.entries(seen)) expect(await reads(id)).toEqual([v, v, v]);
    const list = await get(`${A(u)}/endUsers?limit=100`, u);
    expect(Object.fromEntries(list.body.data.map((d: any) => [d.id, d.custom.seenAt]))).toEqual(seen);

    // Updates (the bulk UPDATE and B15) keep them exact too.
    seen.n3 = -86_400_001;
    seen.n4 = MIN + 1;
    const updated = await put(`${A(u)}/endUsers`, u, [
      { id: "n3", custom: { seenAt: seen.n3 } },
      { id: "n4", custom: { seenAt: seen.n4 } },
    ]);
    expect(updated.status, updated.text).toBe(200);
    seen.p1 = -31_536_000_000;
    expect((await put(`${B(u)}/endUsers/p1`, u, { seenAt: seen.p1 })).body).toEqual({ errors: [], id: "p1", statusCode: 200 });
    expect(await stored()).toEqual(seen);
    for (const id of ["n3", "n4", "p1"]) expect(await reads(id)).toEqual([seen[id], seen[id], seen[id]]);

    // Outside the range: a 400 that says the range, nothing written.
    for (const bad of [MIN - 1, 253_402_300_800_000]) {
      const r = await put(`${A(u)}/endUsers`, u, [{ id: "n1", custom: { seenAt: bad } }]);
      expectProblem(
        r,
        400,
        "custom.seenAt must be an integer of epoch milliseconds from -62135596800000 (0001-01-01T00:00:00.000Z) to 253402300799999 (9999-12-31T23:59:59.999Z)",
      );
    }
    expect(await stored()).toEqual(seen);

    // Segment rules compare them in time order (the evaluator over the one-statement read).
    const made = await gql(server, u, `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }`, {
      a: u.accountId,
      input: {
        name: "before 1850",
        rule: {
          and: [
            { field: "custom.seenAt", op: "lt", value: Date.parse("1850-06-15T12:34:56.790Z") },
            { field: "custom.seenAt", op: "gte", value: MIN },
          ],
        },
      },
    });
    const segmentId = made.data.createSegment.id as string;
    const matches = await gql(
      server,
      u,
      `query($a: String!, $s: String!) { account(id: $a) { segment(id: $s) { n1: matches(endUserId: "n1") n2: matches(endUserId: "n2") n3: matches(endUserId: "n3") n4: matches(endUserId: "n4") p1: matches(endUserId: "p1") } } }`,
      { a: u.accountId, s: segmentId },
    );
    expect(matches.data.account.segment).toEqual({ n1: true, n2: true, n3: false, n4: true, p1: false });

    // Explore: a user:<field> dimension reads them back exactly, comparisons and inSegment (SQL) order them.
    const now = Date.now();
    const events = Object.keys(seen).map((endUserId, i) => ({ type: "user_action", time: now - 60_000 - i, endUserId, actionId: "x" }));
    expect((await post(`${B(u)}/events`, u, events)).status).toBe(202);
    const ask = (body: object) => post(`${B(u)}/analytics/query`, u, { metrics: ["users"], ...body });
    const byValue = await ask({ dimensions: ["user:seenAt"], orderBy: [["user:seenAt", "asc"]] });
    expect(byValue.status, byValue.text).toBe(200);
    expect(byValue.body.rows).toEqual(
      Object.values(seen)
        .sort((x, y) => x - y)
        .map((v) => [v, 1]),
    );
    const before1900 = await ask({ filters: [["lt", "user:seenAt", Date.parse("1900-01-01T00:00:00Z")]] });
    expect(before1900.body.totals).toEqual([3]);
    const inSegment = await ask({ filters: [["inSegment", segmentId]] });
    expect(inSegment.body.totals).toEqual([3]);
  });

  it("an unknown custom field is rejected", async () => {
    const r = await put(`${A(t)}/endUsers`, t, [{ id: "unk", custom: { favouriteColour: "blue" } }]);
    expectProblem(r, 400);
    expect(r.body.detail).toMatch(/unknown custom field 'favouriteColour'/);
    expect(await prisma.endUser.count({ where: { accountId: t.accountId, externalId: "unk" } })).toBe(0);
  });

  it("default fields take values of their type", async () => {
    const r = await put(`${A(t)}/endUsers`, t, [
      { id: "dflt", custom: { email: "d@example.com", signupTime: 1_600_000_000_000 } },
      { id: "dflt2", custom: { signupTime: "yesterday" } },
    ]);
    expect(r.status).toBe(207);
    expect((await get(`${A(t)}/endUsers/dflt`, t)).body.custom).toEqual({ email: "d@example.com", signupTime: 1_600_000_000_000 });
  });

  it("merge semantics: absent fields stay, null clears a value", async () => {
    await put(`${A(t)}/endUsers/merge`, t, { plan: "pro", score: 1, active: true, seenAt: 5, ssn: "s" });
    await put(`${A(t)}/endUsers/merge`, t, { score: 2 });
    expect((await get(`${A(t)}/endUsers/merge`, t)).body.custom).toEqual({ plan: "pro", score: 2, active: true, seenAt: 5, ssn: "s" });

    const cleared = await put(`${A(t)}/endUsers`, t, [{ id: "merge", custom: { plan: null, ssn: null } }]);
    expect(cleared.status).toBe(200);
    expect(cleared.body.data[0].custom).toEqual({ score: 2, active: true, seenAt: 5 });
    const row = await prisma.endUser.findUniqueOrThrow({
      where: { accountId_externalId: { accountId: t.accountId, externalId: "merge" } },
      include: { values: true },
    });
    expect(row.values.map((v) => v.field).sort()).toEqual(["active", "score", "seenAt"]);

    // Clearing an absent value is fine; an item without `custom` changes no value.
    expect((await put(`${A(t)}/endUsers/merge`, t, { plan: null })).status).toBe(200);
    expect((await put(`${A(t)}/endUsers`, t, [{ id: "merge" }])).status).toBe(200);
    expect((await get(`${A(t)}/endUsers/merge`, t)).body.custom).toEqual({ score: 2, active: true, seenAt: 5 });
  });

  it("encrypted_string: decrypted over REST, ciphertext at rest", async () => {
    const secret = "tax-id 987-65-4321";
    const w = await put(`${A(t)}/endUsers`, t, [
      { id: "enc1", custom: { ssn: secret } },
      { id: "enc2", custom: { ssn: secret } },
    ]);
    expect(w.body.data.map((u: any) => u.custom.ssn)).toEqual([secret, secret]);
    expect((await get(`${A(t)}/endUsers/enc1`, t)).body.custom.ssn).toBe(secret);
    expect((await get(`${B(t)}/endUsers/enc2?fields=custom`, t)).body.custom.ssn).toBe(secret);
    expect((await post(`${B(t)}/endUsers/lookup`, t, { id: "enc2" })).body.custom.ssn).toBe(secret);

    const rows = await prisma.endUserValue.findMany({ where: { accountId: t.accountId, field: "ssn", endUser: { externalId: { in: ["enc1", "enc2"] } } } });
    expect(rows).toHaveLength(2);
    for (const v of rows) {
      expect(v.type).toBe("encrypted_string");
      expect(v.text).not.toContain(secret);
      expect(v.text).not.toContain("987-65-4321");
      expect(v.text).not.toContain(Buffer.from(secret).toString("base64"));
      expect(v.text).toMatch(/^v1:/);
    }
    expect(rows[0]!.text).not.toBe(rows[1]!.text); // a fresh IV per value
  });
});
