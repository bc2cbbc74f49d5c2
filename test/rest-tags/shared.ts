// What the REST tag route tests (test/rest-tags/*.test.ts) share: the server, the requester, database
// views of an account's tags and content, and fixtures made through the routes.
import { afterAll, beforeAll } from "vitest";
import { withTransaction } from "../../src/db/index.js";
import { expectJson, pathB, prisma, requester, type Server, startServer, type Tenant } from "../helpers.js";

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

export const tags = (t: Tenant | string) => `${pathB(t)}/tags`;

export const put = (t: Tenant, body: unknown) => req(tags(t), { method: "PUT", headers: t.headers, body });

/** The account's tags as the database holds them, in name order, as wire records. */
export async function dbTags(accountId: string) {
  const rows = await prisma.tag.findMany({ where: { accountId }, orderBy: [{ name: "asc" }, { id: "asc" }] });
  return rows.map((r) => ({ id: r.id, name: r.name, description: r.description, type: r.type }));
}

export async function dbState(accountId: string) {
  const contents = await prisma.content.findMany({ where: { accountId }, include: { tags: true }, orderBy: { id: "asc" } });
  return {
    tags: await prisma.tag.findMany({ where: { accountId }, orderBy: { id: "asc" } }),
    contents: contents.map(({ tags: links, ...c }) => ({ ...c, tags: links.map((l) => l.tagId).sort() })),
  };
}

/** Creates tags through PUT /tags (201) and returns their records. */
export async function createTags(t: Tenant, items: object[]): Promise<any[]> {
  const r = await put(t, items);
  expectJson(r, 201);
  return r.body.data;
}

/** A text content carrying the named tags (style B create). */
export async function contentWithTags(t: Tenant, names: string[]): Promise<string> {
  const r = await req(`/v1/accounts/${t.accountId}/content`, { method: "POST", headers: t.headers, body: [{ title: "tagged", type: "text", tags: names }] });
  expectJson(r, 201);
  return r.body.data[0].id;
}

export const contentTagNames = async (t: Tenant, id: string) =>
  (await req(`/v1/accounts/${t.accountId}/content/createdAfter?fromTime=0&limit=10000`, { headers: t.headers })).body.data.find((c: any) => c.id === id).tags;

export const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/**
 * An enabled webhook endpoint subscribed to content.updated (written directly: its URL is never
 * reached in these tests), and a reader of the content.updated payloads queued for the account.
 */
export async function contentUpdatedHook(accountId: string): Promise<() => Promise<{ id: string; tags: string[]; lastUpdateTime: number }[]>> {
  const now = new Date();
  await write((tx) =>
    tx.webhook.create({
      data: {
        id: `wh_${accountId}`,
        accountId,
        url: "https://hooks.invalid/",
        events: JSON.stringify(["content.updated"]),
        secret: "x",
        createdAt: now,
        updatedAt: now,
      },
    }),
  );
  return async () =>
    (await prisma.webhookDelivery.findMany({ where: { accountId, type: "content.updated" }, orderBy: { createdAt: "asc" } })).flatMap(
      (d) => JSON.parse(d.payload).data,
    );
}
