// Tags over in-process GraphQL: results and the SQL that ran (N+1 guards on content counts and
// lookups by name), pagination by name, bulk upsert/delete with per-item results, auth and isolation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../src/db/index.js";
import { seedContents } from "./factories/content.js";
import { seedTags, type TagRow } from "./factories/tags.js";
import { call, gql, prisma, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";
import { AUTH, LOCK, shape } from "./sql.js";

let server: Server;
let a: Tenant; // 200 tags, 150 contents carrying 2-3 of them
let b: Tenant; // another tenant, for isolation
let aTags: TagRow[];
let bTags: TagRow[];
const counts = new Map<string, number>();

beforeAll(async () => {
  // A budget no test reaches: these files send hundreds of requests a minute to one account.
  server = await startServer({ RATE_LIMIT_PER_MINUTE: "1000000" });
  a = await tenant("tags-a");
  b = await tenant("tags-b");
  aTags = await seedTags(a.accountId, 200);
  for (const c of await seedContents(a.accountId, 150, aTags, 3)) for (const t of c.tags) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  // B reuses A's tag names: names are unique per account only.
  bTags = await seedTags(b.accountId, 5);
  await seedContents(b.accountId, 4, bTags, 9);
});
afterAll(() => server.close());

const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;
const expectedTag = (t: TagRow) => ({ name: t.name, contentCount: counts.get(t.name) ?? 0 });

describe("errors say where", () => {
  it("an answer with data and errors is a 200 (GraphQL over HTTP), with either media type; no data keeps the error's status", async () => {
    // endUser is nullable: its error (an idType the account does not use) leaves the rest answered.
    const partial = `query($a: String!) { ok: viewer { email } account(id: $a) { id bad: endUser(id: "nobody", idType: APP) { id } } }`;
    for (const accept of ["application/graphql-response+json", "application/json"]) {
      const r = await call(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...a.headers, accept },
        body: { query: partial, variables: { a: a.accountId } },
      });
      expect([accept, r.status, r.body.data?.ok?.email, r.body.errors?.[0]?.extensions?.code]).toEqual([accept, 200, a.email, "BAD_REQUEST"]);
      const none = await call(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...a.headers, accept },
        body: { query: `query($a: String!) { account(id: $a) { bad: tags(first: 0) { nodes { name } } } }`, variables: { a: a.accountId } },
      });
      expect([accept, none.status, none.body.data?.account ?? null]).toEqual([accept, 400, null]);
    }
  });

  it("a field's error carries its path (which alias failed), with its code and message", async () => {
    const r = await gql(server, a, `query($a: String!) { account(id: $a) { ok: tags(first: 1) { nodes { name } } bad: tags(first: 0) { nodes { name } } } }`, {
      a: a.accountId,
    });
    expect(r.errors).toEqual([
      expect.objectContaining({
        message: "first must be between 1 and 10000",
        path: ["account", "bad"],
        extensions: expect.objectContaining({ code: "BAD_REQUEST" }),
      }),
    ]);
  });
});

describe("N+1 guards: content counts and lookups by name", () => {
  const LIST_READS = [...AUTH, "SELECT Tag", "SELECT ContentTag"];

  it("tags { nodes { name contentCount } }: 6 statements for 5 and for 200 tags", async () => {
    const query = `query($id: String!, $n: Int) { account(id: $id) { tags(first: $n) { nodes { name contentCount } } } }`;
    const sizes: number[] = [];
    for (const n of [5, 200]) {
      const { result, sql } = await sqlOf(() => gql(server, a, query, { id: a.accountId, n }));
      expect(result.errors).toBeUndefined();
      expect(result.data.account.tags.nodes).toEqual(aTags.slice(0, n).map(expectedTag));
      // The counts are one grouped query over the page's tags (DataLoader), not one query per tag.
      expect(shape(sql)).toEqual(LIST_READS);
      sizes.push(shape(sql).length);
    }
    expect(sizes).toEqual([6, 6]);
    expect([...counts.values()].reduce((x, y) => x + y)).toBe(await prisma.contentTag.count({ where: { tag: { accountId: a.accountId } } }));
  });

  it("tags { edges { node { ... } cursor } }: 6 statements for 5 and for 200 tags", async () => {
    const query = `query($id: String!, $n: Int) { account(id: $id) { tags(first: $n) {
      edges { cursor node { id name description type contentCount } } pageInfo { hasNextPage endCursor } } } }`;
    for (const n of [5, 200]) {
      const { result, sql } = await sqlOf(() => gql(server, a, query, { id: a.accountId, n }));
      expect(result.errors).toBeUndefined();
      const { edges, pageInfo } = result.data.account.tags;
      expect(edges.map((e: { node: unknown }) => e.node)).toEqual(
        aTags.slice(0, n).map((t) => ({ id: t.id, description: null, type: "USER", ...expectedTag(t) })),
      );
      expect(pageInfo).toEqual({ hasNextPage: n < 200, endCursor: edges.at(-1).cursor });
      expect(shape(sql)).toEqual(LIST_READS);
    }
  });

  it("contents with tags and their counts: 6 statements for 5 and for 150 contents", async () => {
    const query = `query($id: String!, $n: Int) { account(id: $id) { contents(first: $n) { nodes { id tags { name contentCount } } } } }`;
    for (const n of [5, 150]) {
      const { result, sql } = await sqlOf(() => gql(server, a, query, { id: a.accountId, n }));
      expect(result.errors).toBeUndefined();
      const nodes = result.data.account.contents.nodes as { tags: { name: string; contentCount: number }[] }[];
      expect(nodes).toHaveLength(n);
      for (const t of nodes.flatMap((x) => x.tags)) expect(t.contentCount).toBe(counts.get(t.name));
      // The page with its tags (one statement), then the counts of all its tags (one batch).
      expect(shape(sql)).toEqual([...AUTH, "SELECT Content", "SELECT ContentTag"]);
    }
  });

  it("tag(name:) aliases batch into one query: 5 statements for 1 and for 15 aliases (6 with contentCount)", async () => {
    for (const k of [1, 15]) {
      // 15: the alias limit of a document (GRAPHQL_MAX_ALIASES)
      const picks = aTags.filter((_, i) => i % 9 === 0).slice(0, k);
      const plain = picks.map((t, i) => `t${i}: tag(name: "${t.name}") { id name }`).join(" ");
      const r1 = await sqlOf(() => gql(server, a, `query($id: String!) { account(id: $id) { ${plain} } }`, { id: a.accountId }));
      expect(Object.values(r1.result.data.account)).toEqual(picks.map((t) => ({ id: t.id, name: t.name })));
      expect(shape(r1.sql)).toEqual([...AUTH, "SELECT Tag"]);
      // The lookup loads plain rows; their counts come from one more (batched) query.
      const counted = picks.map((t, i) => `t${i}: tag(name: "${t.name}") { name contentCount }`).join(" ");
      const r2 = await sqlOf(() => gql(server, a, `query($id: String!) { account(id: $id) { ${counted} } }`, { id: a.accountId }));
      expect(Object.values(r2.result.data.account)).toEqual(picks.map(expectedTag));
      expect(shape(r2.sql)).toEqual([...AUTH, "SELECT Tag", "SELECT ContentTag"]);
    }
  });

  it("tag(name:): unknown names are null, and a name is looked up in the account it hangs off", async () => {
    const r = await gql(
      server,
      b,
      `query($id: String!) { account(id: $id) { x: tag(name: "tag-000") { id } y: tag(name: "tag-150") { id } z: tag(name: "nope") { id } } }`,
      { id: b.accountId },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.account).toEqual({ x: { id: bTags[0]!.id }, y: null, z: null });
  });
});

describe("pagination by name", () => {
  const PAGE = `query($id: String!, $first: Int, $after: String) { account(id: $id) {
    tags(first: $first, after: $after) { nodes { name } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`;

  it("first/after walks every tag once, by name, at a constant cost per page", async () => {
    const seen: string[] = [];
    const more: boolean[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const { result, sql } = await sqlOf(() => gql(server, a, PAGE, { id: a.accountId, first: 70, after }));
      expect(result.errors).toBeUndefined();
      expect(shape(sql)).toEqual([...AUTH, "SELECT Tag"]);
      const { nodes, pageInfo } = result.data.account.tags;
      seen.push(...nodes.map((n: { name: string }) => n.name));
      more.push(pageInfo.hasNextPage);
      expect(pageInfo.hasPreviousPage).toBe(false);
      if (!pageInfo.hasNextPage) break;
      after = pageInfo.endCursor;
    }
    expect(more).toEqual([true, true, false]);
    expect(seen).toEqual(aTags.map((t) => t.name));
  });

  it("first defaults to 10", async () => {
    const r = await gql(server, a, PAGE, { id: a.accountId });
    expect(r.data.account.tags.nodes.map((n: { name: string }) => n.name)).toEqual(aTags.slice(0, 10).map((t) => t.name));
  });

  // Page arguments come as variables (a literal `first` also counts towards the document's cost limit).
  const cursor = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  it.each([
    ["last", { last: 1 }],
    ["before", { first: 1, before: cursor(["tag-001", "x"]) }],
    ["first: 0", { first: 0 }],
    ["first: 10001", { first: 10_001 }],
    ["a malformed cursor", { after: "%%%" }],
    ["a cursor of the content list (sorted by time)", { after: cursor([1_700_000_000_000, "c_x"]) }],
  ])("%s is a BAD_REQUEST (400)", async (_name, args) => {
    const query = `query($id: String!, $first: Int, $last: Int, $after: String, $before: String) {
      account(id: $id) { tags(first: $first, last: $last, after: $after, before: $before) { nodes { name } } } }`;
    const r = await gql(server, a, query, { id: a.accountId, ...args });
    expect([r.status, codeOf(r)]).toEqual([400, "BAD_REQUEST"]);
    expect(r.data).toBeNull();
  });
});

describe("upsertTags / deleteTags", () => {
  let m: Tenant;
  const UPSERT = `mutation($id: String!, $input: [TagInput!]!) { upsertTags(accountId: $id, input: $input) {
    results { index statusCode id errors ok tag { id name description type contentCount } } } }`;
  const DELETE = `mutation($id: String!, $names: [String!]!) { deleteTags(accountId: $id, names: $names) { results { index statusCode id errors ok } } }`;
  const upsert = (input: unknown[], who: Tenant | null = m, accountId = m.accountId) => gql(server, who, UPSERT, { id: accountId, input });
  const tagsOf = async (accountId: string) =>
    (await prisma.tag.findMany({ where: { accountId }, orderBy: { name: "asc" } })).map((t) => [t.name, t.description]);

  beforeAll(async () => {
    m = await tenant("tag-mutations");
  });

  it("per-item results: 201 created, 200 updated/renamed, 400 invalid, 404 nothing to rename, 409 name taken", async () => {
    const [keep, old] = await seedTags(m.accountId, 2, "pre");
    const content = await withTransaction(async (tx) => {
      const c = await tx.content.create({ data: { id: `${m.accountId}-c`, accountId: m.accountId, title: "tagged", type: "text" } });
      await tx.contentTag.create({ data: { contentId: c.id, tagId: old!.id } });
      return c;
    });
    const input = [
      { name: "alpha", description: "first" },
      { name: "alpha", description: "again" }, // sees the item before it: an update
      { name: old!.name, newName: "renamed" },
      { name: "renamed", newName: keep!.name }, // taken
      { name: "ghost", newName: "spirit" },
      { name: "a,b" },
      { name: "" },
      { name: "x".repeat(101) },
      { description: "no name" },
      { name: "beta", description: "d".repeat(2_001) },
      { name: "  spaced  " },
    ];
    const { result, sql } = await sqlOf(() => upsert(input));
    expect(result.errors).toBeUndefined();
    const results = result.data.upsertTags.results;
    expect(results.map((r: { index: number; statusCode: number; ok: boolean; errors: string[] }) => [r.index, r.statusCode, r.ok, r.errors])).toEqual([
      [0, 201, true, []],
      [1, 200, true, []],
      [2, 200, true, []],
      [3, 409, false, [`a tag named '${keep!.name}' already exists`]],
      [4, 404, false, ["no tag named 'ghost' to rename"]],
      [5, 400, false, ["name must not contain a comma"]],
      [6, 400, false, ["name is required"]],
      [7, 400, false, ["name must be at most 100 characters"]],
      [8, 400, false, ["name is required"]],
      [9, 400, false, ["description must be at most 2000 characters"]],
      [10, 201, true, []],
    ]);
    expect(results[0].id).toBe(results[1].id);
    expect(results[1].tag).toEqual({ id: results[0].id, name: "alpha", description: "again", type: "USER", contentCount: 0 });
    expect(results[2].tag).toEqual({ id: old!.id, name: "renamed", description: null, type: "USER", contentCount: 1 });
    expect(results[3].id).toBe(old!.id);
    expect(results[10].tag).toMatchObject({ name: "spaced" });
    expect(results.filter((r: { ok: boolean }) => !r.ok).every((r: { tag: unknown }) => r.tag === null)).toBe(true);
    // Nothing of the failed items was written; the rename kept the tag (and its content link).
    expect(await tagsOf(m.accountId)).toEqual([
      ["alpha", "again"],
      [keep!.name, null],
      ["renamed", null],
      ["spaced", null],
    ]);
    expect(await prisma.contentTag.findMany({ where: { contentId: content.id } })).toEqual([{ contentId: content.id, tagId: old!.id }]);
    expect(shape(sql)).toEqual([
      ...AUTH,
      ...LOCK("Tag"),
      "SELECT Tag",
      // in request order: runs of creates as one insert, updates one by one in between
      "INSERT Tag",
      "UPDATE Tag",
      "UPDATE Tag",
      "INSERT Tag",
      // the renamed tag's content: a change of theirs (read for the audit, updated, its webhook subscribers)
      "SELECT ContentTag",
      "SELECT Content",
      "UPDATE Content",
      "SELECT Webhook",
      "INSERT AuditLog",
      "SELECT Tag",
      "SELECT ContentTag", // reload of the written rows, then their counts
    ]);
  });

  it("the statements do not grow with the number of items (consecutive creates are one insert)", async () => {
    const shapes: string[][] = [];
    for (const k of [3, 30]) {
      const { result, sql } = await sqlOf(() => upsert(Array.from({ length: k }, (_, i) => ({ name: `bulk-${k}-${i}` }))));
      expect(result.data.upsertTags.results.every((r: { statusCode: number }) => r.statusCode === 201)).toBe(true);
      const s = shape(sql);
      expect(s.filter((x) => x === "INSERT Tag")).toHaveLength(1);
      shapes.push(s.filter((x) => x !== "INSERT Tag"));
    }
    expect(shapes).toEqual([
      [...AUTH, ...LOCK("Tag"), "SELECT Tag", "INSERT AuditLog", "SELECT Tag", "SELECT ContentTag"],
      [...AUTH, ...LOCK("Tag"), "SELECT Tag", "INSERT AuditLog", "SELECT Tag", "SELECT ContentTag"],
    ]);
  });

  // A concurrent create of one of the names (the real race runs in test/concurrency.test.ts) makes
  // the transaction run again; test/transactions.test.ts covers that mechanism.
  it.each([
    ["0 items", 0],
    ["10,001 items", 10_001],
  ])("upsertTags / deleteTags with %s are a BAD_REQUEST and write nothing", async (_name, n) => {
    const before = await prisma.tag.count();
    const names = Array.from({ length: n }, (_, i) => `big-${i}`);
    const u = await sqlOf(() => upsert(names.map((name) => ({ name }))));
    expect([u.result.status, codeOf(u.result)]).toEqual([400, "BAD_REQUEST"]);
    expect(u.result.errors?.[0]?.extensions?.errors?.[0]?.path).toBe("input");
    expect(shape(u.sql)).toEqual([...AUTH]);
    const d = await sqlOf(() => gql(server, m, DELETE, { id: m.accountId, names: n ? names : [] }));
    expect([d.result.status, codeOf(d.result)]).toEqual([400, "BAD_REQUEST"]);
    expect(shape(d.sql)).toEqual([...AUTH]);
    expect(await prisma.tag.count()).toBe(before);
  });

  it("deleteTags: 204 per deleted name, 404 otherwise (also for other accounts' names); links cascade", async () => {
    const [gone, stays] = await seedTags(m.accountId, 2, "del");
    const c = await withTransaction(async (tx) => {
      const row = await tx.content.create({ data: { id: `${m.accountId}-del`, accountId: m.accountId, title: "del", type: "text" } });
      await tx.contentTag.createMany({
        data: [
          { contentId: row.id, tagId: gone!.id },
          { contentId: row.id, tagId: stays!.id },
        ],
      });
      return row;
    });
    const bOnly = (await seedTags(b.accountId, 1, "bonly"))[0]!;
    const { result, sql } = await sqlOf(() => gql(server, m, DELETE, { id: m.accountId, names: [gone!.name, "nope", bOnly.name] }));
    expect(result.data.deleteTags.results).toEqual([
      { index: 0, statusCode: 204, id: gone!.id, errors: [], ok: true },
      // The REST layer reports failed items by name, so `id` carries the name asked for.
      { index: 1, statusCode: 404, id: "nope", errors: ["no tag named 'nope'"], ok: false },
      { index: 2, statusCode: 404, id: bOnly.name, errors: [`no tag named '${bOnly.name}'`], ok: false },
    ]);
    // The contents carrying a deleted tag are read before, then updated (a change of theirs).
    expect(shape(sql)).toEqual([
      ...AUTH,
      ...LOCK("Tag"),
      "SELECT Tag",
      "SELECT ContentTag",
      "SELECT Tag",
      "DELETE Tag",
      "SELECT Content",
      "UPDATE Content",
      "SELECT Webhook",
      "INSERT AuditLog",
    ]);
    expect(await prisma.tag.count({ where: { id: gone!.id } })).toBe(0);
    expect(await prisma.tag.count({ where: { id: bOnly.id } })).toBe(1);
    expect(await prisma.contentTag.findMany({ where: { contentId: c.id } })).toEqual([{ contentId: c.id, tagId: stays!.id }]);
    expect(await prisma.content.count({ where: { id: c.id } })).toBe(1);
  });
});

describe("auth and tenant isolation", () => {
  it("no credentials → UNAUTHENTICATED 401, for the list and for writes (nothing written)", async () => {
    const q = await gql(server, null, `query($id: String!) { account(id: $id) { tags { nodes { name } } } }`, { id: a.accountId });
    expect([q.status, codeOf(q)]).toEqual([401, "UNAUTHENTICATED"]);
    const u = await gql(server, null, `mutation($id: String!) { upsertTags(accountId: $id, input: [{ name: "anon" }]) { results { statusCode } } }`, {
      id: a.accountId,
    });
    expect([u.status, codeOf(u)]).toEqual([401, "UNAUTHENTICATED"]);
    expect(await prisma.tag.count({ where: { name: "anon" } })).toBe(0);
  });

  it("another account → FORBIDDEN 403: B's tags can be neither listed, upserted nor deleted with A's key", async () => {
    const before = await prisma.tag.findMany({ where: { accountId: b.accountId }, orderBy: { id: "asc" } });
    const q = await gql(server, a, `query($id: String!) { account(id: $id) { tags { nodes { name } } } }`, { id: b.accountId });
    expect([q.status, codeOf(q)]).toEqual([403, "FORBIDDEN"]);
    const u = await gql(
      server,
      a,
      `mutation($id: String!) { upsertTags(accountId: $id, input: [{ name: "tag-000", description: "hijacked" }, { name: "new" }]) { results { statusCode } } }`,
      { id: b.accountId },
    );
    expect([u.status, codeOf(u)]).toEqual([403, "FORBIDDEN"]);
    const d = await gql(server, a, `mutation($id: String!) { deleteTags(accountId: $id, names: ["tag-001"]) { results { statusCode } } }`, { id: b.accountId });
    expect([d.status, codeOf(d)]).toEqual([403, "FORBIDDEN"]);
    expect(await prisma.tag.findMany({ where: { accountId: b.accountId }, orderBy: { id: "asc" } })).toEqual(before);
  });

  it("the same name in two accounts: upsert in A touches A's tag only", async () => {
    const r = await gql(
      server,
      a,
      `mutation($id: String!) { upsertTags(accountId: $id, input: [{ name: "tag-004", description: "A's" }]) { results { statusCode id } } }`,
      { id: a.accountId },
    );
    expect(r.data.upsertTags.results).toEqual([{ statusCode: 200, id: aTags[4]!.id }]);
    expect((await prisma.tag.findUniqueOrThrow({ where: { id: bTags[4]!.id } })).description).toBeNull();
  });

  it("another account's tags in createContents → per-item 400, by id and by name", async () => {
    const bOnly = (await seedTags(b.accountId, 1, "bmark"))[0]!;
    const r = await gql(
      server,
      a,
      `mutation($id: String!, $in: [ContentInput!]!) { createContents(accountId: $id, input: $in) { results { statusCode errors } } }`,
      {
        id: a.accountId,
        in: [
          { title: "iso-1", type: "text", tagIds: [bTags[0]!.id] },
          { title: "iso-2", type: "text", tagNames: [bOnly.name] },
          { title: "iso-3", type: "text", tagIds: [aTags[0]!.id] },
        ],
      },
    );
    expect(r.data.createContents.results).toEqual([
      { statusCode: 400, errors: [`unknown tag id '${bTags[0]!.id}'`] },
      { statusCode: 400, errors: [`unknown tag '${bOnly.name}' (create it with PUT /tags first)`] },
      { statusCode: 201, errors: [] },
    ]);
    expect((await prisma.content.findMany({ where: { title: { startsWith: "iso-" } } })).map((c) => c.title)).toEqual(["iso-3"]);
  });
});
