// Content over in-process GraphQL: createContents / updateContents / deleteContents with per-item results.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { withTransaction } from "../../src/db/index.js";
import { seedTags, type TagRow } from "../factories/tags.js";
import { gql, prisma, sqlOf, type Tenant, tenant } from "../helpers.js";
import { AUTH, LOCK, shape } from "../sql.js";
import { aContents, b, bContents, bTags, codeOf, server, withServer } from "./shared.js";

withServer();

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
    // The rows, the folders' contents to move (none here: one statement, whatever the count), the webhooks, the audit's read, the delete.
    expect(shape(sql)).toEqual([
      ...AUTH,
      ...LOCK("Content"),
      "SELECT Content",
      "SELECT Content",
      "SELECT Webhook",
      "SELECT Content",
      "DELETE Content",
      "INSERT AuditLog",
    ]);
    expect(await titled("d1 ")).toEqual([]);
    expect(await prisma.contentTag.count({ where: { contentId: created[0].id } })).toBe(0);
    expect(await prisma.content.count({ where: { id: bContents[1]!.id } })).toBe(1);
    const empty = await gql(server, m, DELETE, { id: m.accountId, ids: [] });
    expect([empty.status, codeOf(empty)]).toEqual([400, "BAD_REQUEST"]);
  });
});
