// What the REST content route tests (test/rest-content/*.test.ts) share: the server, the requester,
// database views of an account and of a record, and fixtures made through the routes.
import { afterAll, beforeAll, expect } from "vitest";
import { withTransaction } from "../../src/db/index.js";
import { expectJson, pathA, prisma, type Reply, requester, type Server, startServer, type Tenant } from "../helpers.js";

export let server: Server;

/** Starts a server before the file's tests and closes it after them (once, at the top of a test file). */
export function withServer(): void {
  beforeAll(async () => {
    // Pages of up to 10,000 records cost up to 1,100 points (test/graphql-cost.test.ts), more than the
    // default budget of 600 a minute: these files read several for one account.
    server = await startServer({ RATE_LIMIT_PER_MINUTE: "100000" });
  });
  afterAll(() => server.close());
}

/** Direct database writes, for fixtures the REST layer cannot make (the shared client audits every change). */
export const write = withTransaction;

export const req = requester(() => server);

/** Everything an account holds, for "nothing changed" assertions. */
export async function dbState(accountId: string) {
  const contents = await prisma.content.findMany({ where: { accountId }, include: { tags: true }, orderBy: { id: "asc" } });
  const tags = await prisma.tag.findMany({ where: { accountId }, orderBy: { id: "asc" } });
  return {
    contents: contents.map(({ tags: links, ...c }) => ({ ...c, tags: links.map((l) => l.tagId).sort() })),
    tags,
  };
}

export const contentCount = (t: Tenant) => prisma.content.count({ where: { accountId: t.accountId } });

/** The wire record of a content as the database holds it. */
export async function dbRecord(id: string, style: "A" | "B") {
  const c = await prisma.content.findUniqueOrThrow({ where: { id }, include: { tags: { include: { tag: true } } } });
  const tags = c.tags.map((l) => l.tag).sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return {
    id: c.id,
    title: c.title,
    type: c.type,
    url: c.url,
    source: c.source,
    description: c.description,
    description_md: c.descriptionMd,
    tags: tags.map((tag) => (style === "A" ? tag.id : tag.name)),
    state: c.state,
    stage: c.stage,
    parentId: c.parentId,
    creationTime: c.createdAt.getTime(),
    lastUpdateTime: c.updatedAt.getTime(),
  };
}

export async function createA(t: Tenant, items: object[]): Promise<any[]> {
  const r = await req(`${pathA(t)}/content`, { method: "POST", headers: t.headers, body: items });
  expectJson(r, 201);
  return r.body.data;
}

/** Follows cursors from the first page; `between(n)` runs after page n. */
export async function walk(t: Tenant, path: string, limit: number, between?: (page: number) => Promise<void>) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  let page = 0;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const r: Reply = await req(`${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers: t.headers });
    expectJson(r, 200);
    ids.push(...r.body.data.map((d: { id: string }) => d.id));
    sizes.push(r.body.data.length);
    cursor = r.body.cursor;
    if (cursor !== null) expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    page++;
    if (between) await between(page);
    expect(page).toBeLessThan(100);
  } while (cursor);
  return { ids, sizes };
}

export const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
