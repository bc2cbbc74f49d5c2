// What the GraphQL content tests (test/graphql-content/*.test.ts) share: a server, an account with
// 200 seeded contents carrying 2-3 of 10 tags each, another small account for isolation, and what
// the seeded rows should read as.
import { afterAll, beforeAll } from "vitest";
import { type ContentRow, seedContents } from "../factories/content.js";
import { seedTags, type TagRow } from "../factories/tags.js";
import { byKey } from "../factories/values.js";
import { type Server, startServer, type Tenant, tenant } from "../helpers.js";

export let server: Server;
export let a: Tenant; // 200 seeded contents with 2-3 of 10 tags each
export let b: Tenant; // another tenant, for isolation
export let aTags: TagRow[];
export let aContents: ContentRow[];
export let bTags: TagRow[];
export let bContents: ContentRow[];

/** Starts a server and seeds both accounts before the file's tests; closes the server after them. */
export function withServer(): void {
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
}

/** What `tags { id name }` returns for a seeded content: its tags by name. */
export const tagsOf = (c: ContentRow) => [...c.tags].sort(byKey((t) => t.name)).map((t) => ({ id: t.id, name: t.name }));
export const expectedNode = (c: ContentRow) => ({ id: c.id, title: c.title, tags: tagsOf(c) });

export const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;
