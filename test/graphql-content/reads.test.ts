// Content over in-process GraphQL: results and the SQL that ran (N+1 guards), filters, order and
// keyset pagination.
import { beforeAll, describe, expect, it } from "vitest";
import { createKey, createUser } from "../../src/admin.js";
import { withTransaction } from "../../src/db/index.js";
import type { ContentRow } from "../factories/content.js";
import { seedTags, type TagRow } from "../factories/tags.js";
import { byKey, MINUTE, T0 } from "../factories/values.js";
import { gql, sqlOf, type Tenant, tenant } from "../helpers.js";
import { AUTH, shape } from "../sql.js";
import { a, aContents, b, bContents, bTags, codeOf, expectedNode, server, tagsOf, withServer } from "./shared.js";

withServer();

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
