// Content over in-process GraphQL: results and the SQL that ran (N+1 guards), filters and keyset
// pagination, bulk writes with per-item results, auth, tenant isolation and error masking.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createKey, createUser } from "../src/admin.js";
import { withTransaction } from "../src/db/index.js";
import { seedContents, type ContentRow } from "./factories/content.js";
import { byKey, MINUTE, T0 } from "./factories/random.js";
import { seedTags, type TagRow } from "./factories/tags.js";
import { gql, prisma, sqlOf, startServer, tenant, type Server, type Tenant } from "./helpers.js";
import { AUTH, LOCK, shape } from "./sql.js";

let server: Server;
let a: Tenant; // 200 seeded contents with 2-3 of 10 tags each
let b: Tenant; // another tenant, for isolation
let aTags: TagRow[];
let aContents: ContentRow[];
let bTags: TagRow[];
let bContents: ContentRow[];

beforeAll(async () => {
  // A budget no test reaches: these files send hundreds of requests a minute to one account.
  server = await startServer({ RATE_LIMIT_PER_MINUTE: "1000000" });
  a = await tenant("content-a");
  b = await tenant("content-b");
  aTags = await seedTags(a.accountId, 10);
  aContents = await seedContents(a.accountId, 200, aTags, 42);
  bTags = await seedTags(b.accountId, 3, "btag");
  bContents = await seedContents(b.accountId, 3, bTags, 7);
});
afterAll(() => server.close());

/** What `tags { id name }` returns for a seeded content: its tags by name. */
const tagsOf = (c: ContentRow) => [...c.tags].sort(byKey((t) => t.name)).map((t) => ({ id: t.id, name: t.name }));
const expectedNode = (c: ContentRow) => ({ id: c.id, title: c.title, tags: tagsOf(c) });

const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;

describe("N+1 guards: the SQL of a page does not grow with its size", () => {
  // One statement: the page with its tags aggregated in SQL (src/domains/content/page.ts).
  const PAGE_READS = [...AUTH, "SELECT Content"];

  it("contents { nodes { tags } }: 5 statements for 5 and for 200 contents (auth and one page statement)", async () => {
    const query = `query($id: String!, $n: Int) { account(id: $id) { contents(first: $n) { nodes { id title tags { id name } } } } }`;
    const counts: number[] = [];
    for (const n of [5, 200]) {
      const { result, sql } = await sqlOf(() => gql(server, a, query, { id: a.accountId, n }));
      expect(result.errors).toBeUndefined();
      expect(result.data.account.contents.nodes).toEqual(aContents.slice(0, n).map(expectedNode));
      expect(shape(sql)).toEqual(PAGE_READS);
      counts.push(shape(sql).length);
    }
    expect(counts).toEqual([5, 5]);
  });

  it("contents { edges { node { tags } cursor } }: 5 statements for 5 and for 200 contents", async () => {
    const query = `query($id: String!, $n: Int) { account(id: $id) { contents(first: $n) {
      edges { cursor node { id title tags { id name } } } pageInfo { hasNextPage endCursor } } } }`;
    const counts: number[] = [];
    for (const n of [5, 200]) {
      const { result, sql } = await sqlOf(() => gql(server, a, query, { id: a.accountId, n }));
      expect(result.errors).toBeUndefined();
      const { edges, pageInfo } = result.data.account.contents;
      expect(edges.map((e: { node: unknown }) => e.node)).toEqual(aContents.slice(0, n).map(expectedNode));
      expect(pageInfo).toEqual({ hasNextPage: n < 200, endCursor: edges.at(-1).cursor });
      expect(shape(sql)).toEqual(PAGE_READS);
      counts.push(shape(sql).length);
    }
    expect(counts).toEqual([5, 5]);
  });

  it("nodes and edges together in one document still read each table once", async () => {
    const query = `query($id: String!) { account(id: $id) { contents(first: 50) {
      nodes { id tags { name } } edges { node { title tags { id } } } } } }`;
    const { result, sql } = await sqlOf(() => gql(server, a, query, { id: a.accountId }));
    expect(result.errors).toBeUndefined();
    expect(result.data.account.contents.nodes).toHaveLength(50);
    expect(result.data.account.contents.edges[3].node).toEqual({ title: aContents[3]!.title, tags: tagsOf(aContents[3]!).map(({ id }) => ({ id })) });
    expect(shape(sql)).toEqual(PAGE_READS);
  });

  it("content(id:) aliases batch into one content query: 7 statements for 1, 3 and 10 aliases", async () => {
    for (const k of [1, 3, 10]) {
      const picks = aContents.filter((_, i) => i % 17 === 0).slice(0, k);
      const fields = picks.map((c, i) => `c${i}: content(id: "${c.id}") { id title tags { id name } }`).join("\n");
      const { result, sql } = await sqlOf(() => gql(server, a, `query($id: String!) { account(id: $id) { ${fields} } }`, { id: a.accountId }));
      expect(result.errors).toBeUndefined();
      expect(Object.values(result.data.account)).toEqual(picks.map(expectedNode));
      // Lookups by id go through Prisma: its batched findUnique, then the tags it includes.
      expect(shape(sql)).toEqual([...AUTH, "SELECT Content", "SELECT ContentTag", "SELECT Tag"]);
    }
  });

  it("content(id:) aliases without nested tags: 5 statements whatever their number", async () => {
    for (const k of [2, 15]) {
      // 15: the alias limit of a document (GRAPHQL_MAX_ALIASES)
      const fields = aContents
        .slice(0, k)
        .map((c, i) => `c${i}: content(id: "${c.id}") { id }`)
        .join(" ");
      const { result, sql } = await sqlOf(() => gql(server, a, `query($id: String!) { account(id: $id) { ${fields} } }`, { id: a.accountId }));
      expect(Object.values(result.data.account)).toEqual(aContents.slice(0, k).map(({ id }) => ({ id })));
      expect(shape(sql)).toEqual([...AUTH, "SELECT Content"]);
    }
  });

  it("content(id:) under several accounts in one document looks each id up in its own account", async () => {
    // Regression: the batch used to be bound to the first account of the document, so B's content
    // read as null under B, and A's content showed under B.
    const email = `both-${a.accountId}@example.com`;
    await createUser(email, [a.accountId, b.accountId]);
    const { key } = await createKey(email);
    const both: Tenant = { ...a, email, key, headers: { "x-service-integration-key": key, "x-service-user": email } };
    const [ac, bc] = [aContents[0]!, bContents[0]!];
    const { result, sql } = await sqlOf(() =>
      gql(
        server,
        both,
        `query($a: String!, $b: String!) {
        x: account(id: $a) { own: content(id: "${ac.id}") { id } other: content(id: "${bc.id}") { id } }
        y: account(id: $b) { own: content(id: "${bc.id}") { id } other: content(id: "${ac.id}") { id } } }`,
        { a: a.accountId, b: b.accountId },
      ),
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ x: { own: { id: ac.id }, other: null }, y: { own: { id: bc.id }, other: null } });
    // One batch for all four lookups, or one per account when they resolve in different ticks;
    // never one per alias.
    const steps = shape(sql);
    expect(steps.slice(0, AUTH.length)).toEqual([...AUTH]);
    expect(steps.slice(AUTH.length).every((s) => s === "SELECT Content")).toBe(true);
    expect(steps.filter((s) => s === "SELECT Content").length).toBeLessThanOrEqual(2);
  });
});

describe("filters, order and keyset pagination", () => {
  const FOLDER = "<the folder F>"; // stands for F's id, known once the tenant exists
  let f: Tenant;
  let red: TagRow, blue: TagRow;
  const at = (m: number) => new Date(T0 + m * MINUTE);
  const titles = (r: { data?: any }) => r.data.account.contents.nodes.map((n: { title: string }) => n.title);
  const list = (vars: Record<string, unknown>) =>
    gql(
      server,
      f,
      `query($id: String!, $filter: ContentFilter, $orderBy: ContentOrder) {
      account(id: $id) { contents(filter: $filter, orderBy: $orderBy) { nodes { title } } } }`,
      { id: f.accountId, ...vars },
    );

  beforeAll(async () => {
    f = await tenant("filters");
    [red, blue] = (await seedTags(f.accountId, 2, "color")) as [TagRow, TagRow];
    const id = (t: string) => `${f.accountId}-${t}`;
    // created: F L X V P; updated: F X P L V
    await withTransaction(async (tx) => {
      await tx.content.createMany({
        data: [
          { id: id("F"), title: "F", type: "folder", state: "draft", stage: "design", createdAt: at(1), updatedAt: at(1) },
          {
            id: id("L"),
            title: "L",
            type: "link",
            url: "https://example.com/l",
            state: "production",
            stage: "production",
            parentId: id("F"),
            createdAt: at(2),
            updatedAt: at(20),
          },
          { id: id("X"), title: "X", type: "text", state: "ready", stage: "design", createdAt: at(3), updatedAt: at(5) },
          {
            id: id("V"),
            title: "V",
            type: "video",
            url: "https://example.com/v",
            state: "draft",
            stage: "design",
            parentId: id("F"),
            createdAt: at(4),
            updatedAt: at(30),
          },
          { id: id("P"), title: "P", type: "text", state: "production", stage: "production", createdAt: at(5), updatedAt: at(6) },
        ].map((r) => ({ ...r, accountId: f.accountId })),
      });
      await tx.contentTag.createMany({
        data: [
          ["L", red],
          ["X", red],
          ["X", blue],
          ["V", blue],
        ].map(([c, t]) => ({ contentId: id(c as string), tagId: (t as TagRow).id })),
      });
    });
  });

  it.each([
    ["no filter", {}, ["F", "L", "X", "V", "P"]],
    ["state: [draft]", { state: ["draft"] }, ["F", "V"]],
    ["state: [ready, production]", { state: ["ready", "production"] }, ["L", "X", "P"]],
    ["state: [] (no constraint)", { state: [] }, ["F", "L", "X", "V", "P"]],
    ["stage: production", { stage: "production" }, ["L", "P"]],
    ["stage: design", { stage: "design" }, ["F", "X", "V"]],
    ["type: text", { type: "text" }, ["X", "P"]],
    ["type: folder", { type: "folder" }, ["F"]],
    ["createdAfter (strictly after)", { createdAfter: T0 + 3 * MINUTE }, ["V", "P"]],
    ["updatedAfter (strictly after)", { updatedAfter: T0 + 6 * MINUTE }, ["L", "V"]],
    ["parentId", { parentId: FOLDER }, ["L", "V"]],
    ["parentId unknown", { parentId: "nope" }, []],
    ["tagName", { tagName: "color-001" }, ["X", "V"]],
    ["tagName unknown", { tagName: "nope" }, []],
    ["state + tagName", { state: ["draft"], tagName: "color-001" }, ["V"]],
    ["type + stage + createdAfter", { type: "text", stage: "design", createdAfter: T0 }, ["X"]],
  ])("filter %s", async (_name, filter, expected) => {
    const resolved = Object.fromEntries(Object.entries(filter).map(([k, v]) => [k, v === FOLDER ? `${f.accountId}-F` : v]));
    const { result, sql } = await sqlOf(() => list({ filter: resolved }));
    expect(result.errors).toBeUndefined();
    expect(titles(result)).toEqual(expected);
    expect(shape(sql)).toEqual([...AUTH, "SELECT Content"]);
  });

  it("filter tagId, including another account's tag id (nothing)", async () => {
    expect(titles(await list({ filter: { tagId: red.id } }))).toEqual(["L", "X"]);
    expect(titles(await list({ filter: { tagId: blue.id } }))).toEqual(["X", "V"]);
    expect(titles(await list({ filter: { tagId: bTags[0]!.id } }))).toEqual([]);
  });

  it("orderBy CREATED (default) vs UPDATED", async () => {
    expect(titles(await list({ orderBy: "CREATED" }))).toEqual(["F", "L", "X", "V", "P"]);
    expect(titles(await list({ orderBy: "UPDATED" }))).toEqual(["F", "X", "P", "L", "V"]);
    expect(titles(await list({ orderBy: "UPDATED", filter: { updatedAfter: T0 + 5 * MINUTE } }))).toEqual(["P", "L", "V"]);
  });

  it("creationTime / lastUpdateTime are epoch milliseconds", async () => {
    const r = await gql(
      server,
      f,
      `query($id: String!) { account(id: $id) { contents(first: 1) { nodes { creationTime lastUpdateTime stage state type parentId } } } }`,
      { id: f.accountId },
    );
    expect(r.data.account.contents.nodes[0]).toEqual({
      creationTime: T0 + MINUTE,
      lastUpdateTime: T0 + MINUTE,
      stage: "design",
      state: "draft",
      type: "folder",
      parentId: null,
    });
  });

  it("a Timestamp beyond the range of dates is a 400, not an unexpected error", async () => {
    const { result, sql } = await sqlOf(() => list({ filter: { updatedAfter: Number.MAX_SAFE_INTEGER } }));
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.message).toMatch(/Timestamp must be/);
    expect(shape(sql)).toEqual([...AUTH]); // who is asking is decided first
  });

  const PAGE = `query($id: String!, $first: Int, $after: String, $orderBy: ContentOrder) { account(id: $id) {
    contents(first: $first, after: $after, orderBy: $orderBy) { nodes { id } edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`;

  it.each(["CREATED", "UPDATED"] as const)("first/after walks all 200 contents once, in %s order, at a constant cost per page", async (orderBy) => {
    const key = orderBy === "CREATED" ? (c: ContentRow) => c.createdAt : (c: ContentRow) => c.updatedAt;
    const expected = [...aContents].sort(byKey(key)).map((c) => c.id);
    const seen: string[] = [];
    const pages: boolean[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const { result, sql } = await sqlOf(() => gql(server, a, PAGE, { id: a.accountId, first: 64, after, orderBy }));
      expect(result.errors).toBeUndefined();
      const { nodes, edges, pageInfo } = result.data.account.contents;
      expect(shape(sql)).toEqual([...AUTH, "SELECT Content"]);
      expect(pageInfo.hasPreviousPage).toBe(false);
      expect(pageInfo.startCursor).toBe(edges[0].cursor);
      expect(pageInfo.endCursor).toBe(edges.at(-1).cursor);
      seen.push(...nodes.map((n: { id: string }) => n.id));
      pages.push(pageInfo.hasNextPage);
      if (!pageInfo.hasNextPage) break;
      after = pageInfo.endCursor;
    }
    expect(pages).toEqual([true, true, true, false]);
    expect(seen).toEqual(expected);
  });

  it("an empty page has null cursors and no next page", async () => {
    const r = await gql(
      server,
      f,
      `query($id: String!) { account(id: $id) { contents(filter: { tagName: "nope" }) { nodes { id } pageInfo { hasNextPage startCursor endCursor } } } }`,
      { id: f.accountId },
    );
    expect(r.data.account.contents).toEqual({ nodes: [], pageInfo: { hasNextPage: false, startCursor: null, endCursor: null } });
  });

  it("first defaults to 10 and accepts 10000", async () => {
    expect((await gql(server, a, PAGE, { id: a.accountId })).data.account.contents.nodes).toHaveLength(10);
    expect((await gql(server, a, PAGE, { id: a.accountId, first: 10_000 })).data.account.contents.nodes).toHaveLength(200);
  });

  // Page arguments come as variables, as clients send them: a literal `first` also counts towards the
  // document's cost limit, which refuses large ones before they reach the resolver.
  const cursor = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  it.each([
    ["last", { last: 2 }],
    ["before", { first: 2, before: cursor([T0, "x"]) }],
    ["first: 0", { first: 0 }],
    ["first: 10001", { first: 10_001 }],
    ["first: -1", { first: -1 }],
    ["a malformed cursor", { after: "not a cursor!" }],
    ["a cursor of another list (tags: sorted by name)", { after: cursor(["tag-001", "x"]) }],
    ["a cursor beyond the range of dates", { after: cursor([9e15, "x"]) }],
  ])("%s is a BAD_REQUEST (400)", async (_name, args) => {
    const query = `query($id: String!, $first: Int, $last: Int, $after: String, $before: String) {
      account(id: $id) { contents(first: $first, last: $last, after: $after, before: $before) { nodes { id } } } }`;
    const { result, sql } = await sqlOf(() => gql(server, a, query, { id: a.accountId, ...args }));
    expect(result.status).toBe(400);
    expect(codeOf(result)).toBe("BAD_REQUEST");
    expect(result.errors?.[0]?.message).not.toMatch(/Unexpected/);
    expect(shape(sql)).toEqual([...AUTH]);
  });
});

describe("createContents / updateContents / deleteContents", () => {
  let m: Tenant;
  let red: TagRow, blue: TagRow;
  const RESULT = `results { index statusCode id errors ok content { id title type url source description descriptionMd state stage parentId tags { name } } }`;
  const CREATE = `mutation($id: String!, $input: [ContentInput!]!, $allowed: [ContentType!]) {
    createContents(accountId: $id, input: $input, allowedTypes: $allowed) { ${RESULT} } }`;
  const UPDATE = `mutation($id: String!, $input: [ContentInput!]!, $allowed: [ContentType!]) {
    updateContents(accountId: $id, input: $input, allowedTypes: $allowed) { ${RESULT} } }`;
  const DELETE = `mutation($id: String!, $ids: [String!]!) { deleteContents(accountId: $id, ids: $ids) { results { index statusCode id errors ok } } }`;
  const create = (input: unknown[], allowed?: string[], who: Tenant | null = m, accountId = m.accountId) =>
    gql(server, who, CREATE, { id: accountId, input, allowed });
  const titled = (prefix: string) => prisma.content.findMany({ where: { title: { startsWith: prefix } }, orderBy: { title: "asc" }, include: { tags: true } });

  beforeAll(async () => {
    m = await tenant("mutations");
    [red, blue] = (await seedTags(m.accountId, 2, "m")) as [TagRow, TagRow];
  });

  it("createContents: per-item results; the valid items are written, nothing of the invalid ones", async () => {
    const input = [
      { title: "c1 text", type: "text", descriptionMd: "# md", tagNames: [blue.name, red.name, red.name] },
      { title: "c1 link without url", type: "link" },
      { title: "c1 link", type: "link", url: "https://example.com/a", tagIds: [red.id], state: "production" },
      { title: "c1 foreign tag", type: "text", tagIds: [bTags[0]!.id] },
      { title: "c1 foreign tag name", type: "text", tagNames: [bTags[0]!.name] },
      { title: "c1 with id", type: "text", id: "mine" },
      { title: "c1 both tag styles", type: "text", tagIds: [red.id], tagNames: [red.name] },
      { title: "c1 video", type: "video", url: "https://example.com/v", description: "no" },
      { title: "", type: "text" },
      { title: "c1 no type" },
      { title: "c1 bad url", type: "link", url: "ftp://example.com" },
      { title: "c1 source on text", type: "text", source: "knowledgebase" },
      { title: "c1 md on link", type: "link", url: "https://example.com/b", descriptionMd: "x" },
      { title: "c1 unknown parent", type: "text", parentId: "nope" },
      { title: "c1 parent not a folder", type: "text", parentId: aContents[0]!.id },
    ];
    const { result, sql } = await sqlOf(() => create(input));
    expect(result.errors).toBeUndefined();
    const results = result.data.createContents.results;
    expect(results.map((r: { index: number; statusCode: number; ok: boolean }) => [r.index, r.statusCode, r.ok])).toEqual(
      input.map((_, i) => [i, i === 0 || i === 2 ? 201 : 400, i === 0 || i === 2]),
    );
    expect(results.map((r: { errors: string[] }) => r.errors)).toEqual([
      [],
      ["url is required for link content"],
      [],
      [`unknown tag id '${bTags[0]!.id}'`],
      [`unknown tag '${bTags[0]!.name}' (create it with PUT /tags first)`],
      ["id must not be given when creating (it is assigned)"],
      ["give tags as ids or as names, not both"],
      ["description is not allowed on video content"],
      ["title is required"],
      ["type is required (one of link, video, text)"],
      ["url must be an absolute http(s) URL"],
      ["source is allowed on link content only"],
      ["description_md is allowed on text content only"],
      ["unknown parent 'nope'"],
      [`unknown parent '${aContents[0]!.id}'`],
    ]);
    const [text, link] = [results[0], results[2]];
    expect(text.content).toEqual({
      id: text.id,
      title: "c1 text",
      type: "text",
      url: null,
      source: null,
      description: null,
      descriptionMd: "# md",
      state: "draft",
      stage: "design",
      parentId: null,
      tags: [{ name: "m-000" }, { name: "m-001" }],
    });
    expect(link.content).toMatchObject({
      id: link.id,
      type: "link",
      url: "https://example.com/a",
      source: "default",
      state: "production",
      stage: "production",
      tags: [{ name: "m-000" }],
    });
    expect(results.filter((r: { ok: boolean }) => !r.ok).every((r: { id: unknown; content: unknown }) => r.id === null && r.content === null)).toBe(true);

    const rows = await titled("c1 ");
    expect(rows.map((r) => [r.id, r.title, r.tags.map((t) => t.tagId).sort()])).toEqual([
      [link.id, "c1 link", [red.id]],
      [text.id, "c1 text", [red.id, blue.id].sort()],
    ]);
    expect(await prisma.content.count({ where: { accountId: m.accountId, title: "" } })).toBe(0);
    // One read per kind of reference (tag ids, tag names, parents), one insert per table and one
    // audit insert for the whole transaction, one reload of the written rows.
    expect(shape(sql)).toEqual([
      ...AUTH,
      "SELECT Tag",
      "SELECT Tag",
      "SELECT Content",
      "INSERT Content",
      "INSERT ContentTag",
      "SELECT Webhook", // the account's webhook endpoints (content.created messages)
      "INSERT AuditLog",
      "SELECT Content",
      "SELECT ContentTag",
      "SELECT Tag",
    ]);
  });

  it("createContents: the statements do not grow with the number of items", async () => {
    const shapes: string[][] = [];
    for (const k of [3, 30]) {
      const input = Array.from({ length: k }, (_, i) => ({ title: `c2 ${k}-${i}`, type: "text", tagIds: [red.id, blue.id] }));
      const { result, sql } = await sqlOf(() => create(input));
      expect(result.data.createContents.results.every((r: { statusCode: number }) => r.statusCode === 201)).toBe(true);
      shapes.push(shape(sql));
    }
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[0]).toEqual([
      ...AUTH,
      "SELECT Tag",
      "INSERT Content",
      "INSERT ContentTag",
      "SELECT Webhook", // the account's webhook endpoints (content.created messages)
      "INSERT AuditLog",
      "SELECT Content",
      "SELECT ContentTag",
      "SELECT Tag",
    ]);
    expect(await prisma.contentTag.count({ where: { content: { title: { startsWith: "c2 30-" } } } })).toBe(60);
  });

  it("createContents: all items invalid → no write at all", async () => {
    const { result, sql } = await sqlOf(() => create([{ title: "c3 a", type: "link" }, { title: "c3 b" }]));
    expect(result.data.createContents.results.map((r: { statusCode: number }) => r.statusCode)).toEqual([400, 400]);
    expect(shape(sql)).toEqual([...AUTH]);
    expect(await titled("c3 ")).toEqual([]);
  });

  it("createContents: allowedTypes restricts the types written; without it, every type", async () => {
    const input = [
      { title: "c4 folder", type: "folder" },
      { title: "c4 flow", type: "flow" },
      { title: "c4 text", type: "text" },
    ];
    const limited = await create(input, ["link", "video", "text"]);
    expect(limited.data.createContents.results.map((r: { statusCode: number; errors: string[] }) => [r.statusCode, r.errors])).toEqual([
      [400, ["type 'folder' cannot be written here (allowed: link, video, text)"]],
      [400, ["type 'flow' cannot be written here (allowed: link, video, text)"]],
      [201, []],
    ]);
    expect((await titled("c4 ")).map((r) => r.title)).toEqual(["c4 text"]);
    const open = await create(input.slice(0, 2));
    expect(open.data.createContents.results.map((r: { statusCode: number }) => r.statusCode)).toEqual([201, 201]);
  });

  it("createContents: a parent folder of the account", async () => {
    const folder = (await create([{ title: "c5 folder", type: "folder" }])).data.createContents.results[0];
    const child = await create([{ title: "c5 child", type: "text", parentId: folder.id }]);
    expect(child.data.createContents.results[0]).toMatchObject({ statusCode: 201, content: { parentId: folder.id } });
    const list = await gql(server, m, `query($id: String!, $p: String) { account(id: $id) { contents(filter: { parentId: $p }) { nodes { title } } } }`, {
      id: m.accountId,
      p: folder.id,
    });
    expect(list.data.account.contents.nodes).toEqual([{ title: "c5 child" }]);
    // A folder of another account is unknown here.
    const foreign = await withTransaction((tx) =>
      tx.content.create({ data: { id: `${b.accountId}-folder`, accountId: b.accountId, title: "B folder", type: "folder" } }),
    );
    const r = await create([{ title: "c5 foreign parent", type: "text", parentId: foreign.id }]);
    expect(r.data.createContents.results[0]).toMatchObject({ statusCode: 400, errors: [`unknown parent '${foreign.id}'`] });
  });

  it.each([
    ["0 items", 0],
    ["10,001 items", 10_001],
  ])("createContents with %s is a BAD_REQUEST and writes nothing", async (_name, n) => {
    const before = await prisma.content.count();
    const input = Array.from({ length: n }, (_, i) => ({ title: `c6 ${i}`, type: "text" }));
    const { result, sql } = await sqlOf(() => create(input));
    expect(result.status).toBe(400);
    expect(codeOf(result)).toBe("BAD_REQUEST");
    expect(result.errors?.[0]?.extensions?.errors?.[0]?.path).toBe("input");
    expect(result.data).toBeNull();
    expect(shape(sql)).toEqual([...AUTH]); // authentication comes first; nothing else ran
    expect(await prisma.content.count()).toBe(before);
  });

  it("createContents: the valid items are one transaction (a tag deleted meanwhile rolls all back: 409)", async () => {
    const doomed = (await seedTags(m.accountId, 1, "doomed"))[0]!;
    const original = prisma.tag.findMany.bind(prisma.tag);
    // A concurrent request deletes the tag between the reference check and the write.
    const spy = vi.spyOn(prisma.tag, "findMany").mockImplementationOnce((async (args: never) => {
      const rows = await original(args);
      await withTransaction((tx) => tx.tag.delete({ where: { id: doomed.id } }));
      return rows;
    }) as never);
    try {
      const r = await create([
        { title: "c7 first", type: "text" },
        { title: "c7 tagged", type: "text", tagIds: [doomed.id] },
      ]);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(r.data).toBeNull();
      // A foreign key broken by a concurrent delete is a conflict to retry, not an internal error.
      expect(r.errors![0]!.extensions!.code).toBe("CONFLICT");
      expect(r.errors![0]!.message).toMatch(/retry/);
    } finally {
      spy.mockRestore();
    }
    expect(await titled("c7 ")).toEqual([]);
  });

  describe("updateContents", () => {
    let text: string, link: string, link2: string, folder: string, other: string;
    beforeAll(async () => {
      const r = await create([
        { title: "u text", type: "text", description: "d", tagIds: [red.id] },
        { title: "u link", type: "link", url: "https://example.com/u" },
        { title: "u link b", type: "link", url: "https://example.com/b" },
        { title: "u folder", type: "folder" },
        { title: "u other", type: "text" },
      ]);
      [text, link, link2, folder, other] = r.data.createContents.results.map((x: { id: string }) => x.id);
    });

    it("per-item results: 200, 404, 400; only the valid items change", async () => {
      const input = [
        { id: text, title: "u text 2", description: null, tagNames: [blue.name], state: "production" },
        { id: "nope", title: "x" },
        { id: text, title: "again" },
        { id: link, type: "video", title: "u link changed?" },
        { title: "no id" },
        { id: bContents[0]!.id, title: "B's, via A" },
        { id: link2, url: null },
        { id: folder, parentId: folder },
        { id: other, parentId: folder, tagIds: [] },
      ];
      const untouched = () => prisma.content.findMany({ where: { id: { in: [link, link2, folder, bContents[0]!.id] } }, orderBy: { id: "asc" } });
      const before = await untouched();
      const { result, sql } = await sqlOf(() => gql(server, m, UPDATE, { id: m.accountId, input }));
      expect(result.errors).toBeUndefined();
      const results = result.data.updateContents.results;
      expect(results.map((r: { index: number; statusCode: number; id: string | null; errors: string[] }) => [r.index, r.statusCode, r.id, r.errors])).toEqual([
        [0, 200, text, []],
        [1, 404, "nope", ["no content with id 'nope'"]],
        [2, 400, text, [`id '${text}' appears more than once in this request`]],
        [3, 400, link, ["type cannot be changed (it is 'link')"]],
        [4, 400, null, ["id is required to update"]],
        [5, 404, bContents[0]!.id, [`no content with id '${bContents[0]!.id}'`]],
        [6, 400, link2, ["url is required for link content"]],
        [7, 400, folder, ["a content cannot be its own parent"]],
        [8, 200, other, []],
      ]);
      expect(results[0].content).toMatchObject({ title: "u text 2", description: null, state: "production", stage: "production", tags: [{ name: "m-001" }] });
      expect(results[8].content).toMatchObject({ parentId: folder, tags: [] });
      expect(results[1].content).toBeNull();
      // Nothing of the invalid items (nor of B's content) was written.
      expect(await untouched()).toEqual(before);
      expect((await prisma.contentTag.findMany({ where: { contentId: text } })).map((l) => l.tagId)).toEqual([blue.id]);
      // Existing rows, tag references and parent folders are read concurrently (any order), then the
      // valid items are written one by one (the update returns the row the audit entry names), the tags of all of them
      // replaced at once, the audit entries inserted at once, and the written rows reloaded once.
      const steps = shape(sql);
      const head = AUTH.length + LOCK("Content").length;
      expect(steps.slice(0, head)).toEqual([...AUTH, ...LOCK("Content")]);
      expect(steps.slice(head, head + 3).sort()).toEqual(["SELECT Content", "SELECT Content", "SELECT Tag"]);
      expect(steps.slice(head + 3)).toEqual([
        "UPDATE Content", // item 0
        "UPDATE Content", // item 8
        "DELETE ContentTag",
        "INSERT ContentTag", // tags of items 0 (replaced) and 8 (cleared)
        "SELECT Webhook", // the account's webhook endpoints (content.updated messages)
        "INSERT AuditLog",
        "SELECT Content",
        "SELECT ContentTag",
        "SELECT Tag",
      ]);
    });

    it("absent fields stay, tags stay when neither tagIds nor tagNames is given", async () => {
      const r = await gql(server, m, UPDATE, { id: m.accountId, input: [{ id: text, title: "u text 3" }] });
      expect(r.data.updateContents.results[0].content).toMatchObject({ title: "u text 3", state: "production", tags: [{ name: "m-001" }] });
    });

    it("allowedTypes restricts the types updated", async () => {
      const r = await gql(server, m, UPDATE, {
        id: m.accountId,
        input: [
          { id: folder, title: "u folder 2" },
          { id: link, title: "u link 2" },
        ],
        allowed: ["link", "video", "text"],
      });
      expect(r.data.updateContents.results.map((x: { statusCode: number; errors: string[] }) => [x.statusCode, x.errors])).toEqual([
        [400, ["type 'folder' cannot be written here (allowed: link, video, text)"]],
        [200, []],
      ]);
      expect((await prisma.content.findUniqueOrThrow({ where: { id: folder } })).title).toBe("u folder");
    });

    it("0 and 10,001 items are a BAD_REQUEST", async () => {
      for (const n of [0, 10_001]) {
        const r = await gql(server, m, UPDATE, { id: m.accountId, input: Array.from({ length: n }, () => ({ id: text, title: "x" })) });
        expect([r.status, codeOf(r)]).toEqual([400, "BAD_REQUEST"]);
      }
      expect((await prisma.content.findUniqueOrThrow({ where: { id: text } })).title).toBe("u text 3");
    });
  });

  it("deleteContents: 204 per deleted id, 404 for unknown ids and other accounts' ids; links cascade", async () => {
    const created = (
      await create([
        { title: "d1 a", type: "text", tagIds: [red.id] },
        { title: "d1 b", type: "text" },
      ])
    ).data.createContents.results;
    const ids = [created[0].id, "nope", bContents[1]!.id, created[1].id];
    const { result, sql } = await sqlOf(() => gql(server, m, DELETE, { id: m.accountId, ids }));
    expect(result.data.deleteContents.results).toEqual([
      { index: 0, statusCode: 204, id: ids[0], errors: [], ok: true },
      { index: 1, statusCode: 404, id: "nope", errors: ["no content with id 'nope'"], ok: false },
      { index: 2, statusCode: 404, id: ids[2], errors: [`no content with id '${ids[2]}'`], ok: false },
      { index: 3, statusCode: 204, id: ids[3], errors: [], ok: true },
    ]);
    expect(shape(sql)).toEqual([...AUTH, ...LOCK("Content"), "SELECT Content", "SELECT Webhook", "SELECT Content", "DELETE Content", "INSERT AuditLog"]);
    expect(await titled("d1 ")).toEqual([]);
    expect(await prisma.contentTag.count({ where: { contentId: created[0].id } })).toBe(0);
    expect(await prisma.content.count({ where: { id: bContents[1]!.id } })).toBe(1);
    const empty = await gql(server, m, DELETE, { id: m.accountId, ids: [] });
    expect([empty.status, codeOf(empty)]).toEqual([400, "BAD_REQUEST"]);
  });
});

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
