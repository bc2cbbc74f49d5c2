// Conditional GETs (issue 33 item 4): every GET route of the REST table answers an ETag and a 304
// with no body for a current If-None-Match, the JSON answers (the compiled path), long pages read
// in slices, CSV and NDJSON streams and file downloads alike; and a change to what an answer shows
// changes its tag. Requests go over node:http: fetch adds Cache-Control: no-cache, which makes
// every request unconditional.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, createUser } from "../src/admin.js";
import { sampleInput } from "../src/openapi/requestDocs.js";
import { PAGE_SLICE } from "../src/rest/router.js";
import { type RestRoute, routes } from "../src/rest/routes.js";
import { schema } from "../src/schema/index.js";
import { seedContents } from "./factories/content.js";
import { seedTags } from "./factories/tags.js";
import { call, gql, httpGet, prisma, type RawReply, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
const files = mkdtempSync(join(tmpdir(), "gg-etag-files-"));
/** Path parameters of the records the GETs read (filled in beforeAll). */
const ids: Record<string, string> = {};

const get = (path: string, headers: Record<string, string> = {}): Promise<RawReply> => httpGet(`${server.url}${path}`, { ...t.headers, ...headers });

const write = async (method: string, path: string, body: unknown) => {
  const r = await call(`${server.url}${path}`, { method, headers: t.headers, body });
  expect(r.status, `${method} ${path}: ${r.text.slice(0, 300)}`).toBeLessThan(207);
  return r;
};
const A = () => `/api/v1/${t.accountId}`;
const B = () => `/v1/accounts/${t.accountId}`;

beforeAll(async () => {
  // Long pages cost in proportion to their rows (test/graphql-cost.test.ts); this file reads several a minute for one account.
  server = await startServer({ FILES_DIR: files, WEBHOOKS_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "100000" });
  t = await tenant("etag");
  const dst = `${t.accountId}-dst`;
  await createAccount(dst);
  await createUser(t.email, [t.accountId, dst]);
  const tags = await seedTags(t.accountId, 3);
  // More rows than a slice: lists of limit > PAGE_SLICE are read in slices.
  await seedContents(t.accountId, PAGE_SLICE + 50, tags);
  const made = await write("POST", `${B()}/content`, [{ title: "First", type: "text" }]);
  ids.id = made.body.data[0].id;
  await write("PUT", `${A()}/endUserSchema`, [{ name: "plan", type: "string", description: "Subscription plan" }]);
  await write("PUT", `${A()}/endUsers`, [{ id: "u1", custom: { plan: "gold" } }]);
  await write("PUT", `${B()}/integrationAttributeSchema`, [{ name: "company", type: "string" }]);
  await write("PUT", `${B()}/integrationAttributes`, [{ attributeName: "company", attributeValue: "acme" }]);
  ids.fieldName = "plan";
  ids.attributeName = "company";
  const seg = await gql(server, t, "mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }", {
    a: t.accountId,
    input: { name: "Gold", rule: { field: "custom.plan", op: "eq", value: "gold" }, contentIds: [ids.id] },
  });
  ids.segmentId = seg.data.createSegment.id;
  const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(512, 1), Buffer.from("\n%%EOF\n")]);
  const up = await fetch(`${server.url}${B()}/content/upload/cloud/pdf/flow-1/1/1718000000000/guide.pdf`, {
    method: "POST",
    headers: { "content-type": "application/pdf", ...t.headers },
    body: pdf,
  });
  expect(up.status).toBe(201);
  ids.fileId = ((await up.json()) as { id: string }).id;
  const job = await write("POST", `${B()}/content/copy`, { destinationAccountId: dst, destinationUserId: t.email, contentIds: [ids.id] });
  ids.jobId = job.body.jobId ?? job.body.id;
  const hook = await write("POST", `${B()}/webhooks`, { url: "http://127.0.0.1:9/in", events: ["content.created"], description: "CRM" });
  ids.id = made.body.data[0].id;
  ids.webhookId = hook.body.id;
  // A saved endpoint (getEndpoint), and GET /run/{name} is a read like the table's.
  const saved = await write("PUT", `${B()}/endpoints/tags`, {
    document: "query T($accountId: String!) { account(id: $accountId) { tags(first: 5) { nodes { name } } } }",
  });
  expect(saved.status, saved.text).toBe(201);
  ids.name = "tags";
  await write("POST", `${B()}/events`, [
    { type: "flow_started", time: Date.parse("2024-06-01T10:00:00Z"), flowId: "f1", endUserId: "u1", widget: "self_help" },
  ]);
}, 120_000);
afterAll(async () => {
  await server.close();
  rmSync(files, { recursive: true, force: true });
});

/** A route's URL on the records made above, with its documented example query (less cursors, which name no real page). */
function urlOf(route: RestRoute, query: Record<string, string> = {}): string {
  const id = route.path.includes("/webhooks/") ? ids.webhookId! : route.path.includes("/endUsers/") ? "u1" : ids.id!;
  const params: Record<string, string> = { ...ids, id, reportName: "flowViews" };
  const path = route.path.replace(/:(\w+)/g, (_m, p: string) => (p === "accountId" ? t.accountId : params[p]!));
  const q = new URLSearchParams(sampleInput(route, schema).query as Record<string, string>);
  q.delete("cursor");
  if (route.name === "segmentContentOrder") q.set("id", "u1");
  if (route.name === "listIntegrationAttributes") q.set("primaryAttrName", "company");
  if (route.name.startsWith("getEndUserSchema") || route.name === "getIntegrationAttributeSchema") {
    q.delete("fieldName");
    q.delete("attributeName");
  }
  if (route.name === "getEndUserB") q.delete("userid-type");
  if (["listContentCreatedAfter", "listContentUpdatedAfter", "listFiles"].includes(route.name)) q.set("fromTime", "0");
  for (const [k, v] of Object.entries(query)) q.set(k, v);
  return `${path}?${q}`;
}

const gets = routes.filter((r) => r.method === "get");

describe("every GET route of the table", () => {
  it.each(gets.map((r) => [r.name, r] as const))("%s: an ETag, and a 304 with no body for If-None-Match", async (_name, route) => {
    const url = urlOf(route);
    const first = await get(url);
    expect(first.status, `${url}: ${first.text.slice(0, 300)}`).toBe(200);
    const etag = first.headers.etag as string;
    expect(etag, url).toMatch(/^(W\/)?"[^"]+"$/);
    const again = await get(url);
    expect(again.headers.etag, "the same answer, the same tag").toBe(etag);
    const cached = await get(url, { "if-none-match": etag });
    expect([cached.status, cached.text, cached.headers.etag]).toEqual([304, "", etag]);
    expect(cached.headers["content-length"] ?? "0").toBe("0");
    // A tag that is not current: the full answer.
    const stale = await get(url, { "if-none-match": 'W/"0-stale"' });
    expect([stale.status, stale.text]).toEqual([200, first.text]);
  });
});

describe("a change to what an answer shows changes its tag", () => {
  const changed = async (url: string, change: () => Promise<unknown>) => {
    const before = await get(url);
    expect(before.status).toBe(200);
    const etag = before.headers.etag as string;
    expect((await get(url, { "if-none-match": etag })).status).toBe(304);
    await change();
    const after = await get(url, { "if-none-match": etag });
    expect(after.status, after.text.slice(0, 200)).toBe(200);
    expect(after.headers.etag).not.toBe(etag);
    expect(after.text).not.toBe(before.text);
    return { before, after };
  };
  const route = (name: string) => gets.find((r) => r.name === name)!;
  const rename = (title: string) => () => write("PUT", `${A()}/content`, [{ id: ids.id, title }]);

  it("a record (the compiled path) and a list", async () => {
    await changed(urlOf(route("getContentA")), rename("Renamed"));
    await changed(urlOf(route("listTags")), () => write("PUT", `${B()}/tags`, [{ name: "another" }]));
  });

  it("a long page read in slices: one tag over the whole body, which a change to any row changes", async () => {
    const url = urlOf(route("listContentA"), { limit: String(PAGE_SLICE + 500) });
    const { after } = await changed(url, rename("Renamed again"));
    const body = JSON.parse(after.text) as { data: { id: string; title: string }[] };
    expect(body.data.length).toBeGreaterThan(PAGE_SLICE);
    expect(body.data.find((c) => c.id === ids.id)?.title).toBe("Renamed again");
    expect(after.headers["content-type"]).toMatch(/^application\/json/);
  });

  it("a CSV report and the NDJSON export", async () => {
    const csv = await get(urlOf(route("report"), { format: "csv" }));
    expect([csv.status, csv.headers["content-type"]]).toEqual([200, expect.stringMatching(/^text\/csv/)]);
    expect((await get(urlOf(route("report"), { format: "csv" }), { "if-none-match": csv.headers.etag as string })).status).toBe(304);
    await changed(urlOf(route("exportEvents"), { format: "ndjson" }), () =>
      write("POST", `${B()}/events`, [{ type: "flow_started", time: Date.parse("2024-06-01T11:00:00Z"), flowId: "f1", endUserId: "u1", widget: "self_help" }]),
    );
  });
});

describe("the audit log over GET is never stored", () => {
  it("GET /graphql reading auditLogs answers Cache-Control: no-store (as B25's POST); other reads do not", async () => {
    const q = (query: string) => `/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ a: t.accountId }))}`;
    const audit = await get(q(`query($a: String!) { log: auditLogs(accountId: $a, first: 1) { nodes { id } } }`));
    expect([audit.status, audit.headers["cache-control"]]).toEqual([200, "no-store"]);
    const tags = await get(q(`query($a: String!) { account(id: $a) { tags(first: 1) { nodes { name } } } }`));
    expect([tags.status, tags.headers["cache-control"]]).toEqual([200, undefined]);
  });
});

describe("GET /graphql's tag", () => {
  it("covers the data whatever its field names (an alias `currentlyAvailable`), and leaves out only extensions.cost: no stale 304 after a change", async () => {
    // Two instances without Redis count budgets apart, so the same request leaves the same
    // `currentlyAvailable` on each: the tags of their answers must differ by the data alone.
    const other = await startServer({ RATE_LIMIT_PER_MINUTE: "100000" });
    try {
      const u = await tenant("etagq");
      // Each instance is charged a save (1 point) and a read: 99998 left after the read, on either.
      const save = (s: Server, maxAgeSeconds: number) =>
        call(`${s.url}/v1/accounts/${u.accountId}/endpoints/aliased`, {
          method: "PUT",
          headers: u.headers,
          body: { document: "query Me($accountId: String!) { account(id: $accountId) { id } }", maxAgeSeconds },
        });
      expect((await save(server, 60)).status).toBe(201);
      const path = `/graphql?query=${encodeURIComponent('query($a: String!) { account(id: $a) { endpoint(name: "aliased") { currentlyAvailable: maxAgeSeconds } } }')}&variables=${encodeURIComponent(JSON.stringify({ a: u.accountId }))}`;
      const on = (s: Server, headers: Record<string, string> = {}) => httpGet(`${s.url}${path}`, { ...u.headers, accept: "application/json", ...headers });
      const body = (r: RawReply) => JSON.parse(r.text);

      const first = await on(server);
      expect(first.status).toBe(200);
      expect(body(first)).toEqual({
        data: { account: { endpoint: { currentlyAvailable: 60 } } },
        extensions: {
          cost: { requestedQueryCost: 1, actualQueryCost: 1, throttleStatus: { maximumAvailable: 100000, currentlyAvailable: 99998, restoreRate: 1666.667 } },
        },
      });
      expect((await save(other, 120)).status).toBe(200);
      expect((await prisma.savedEndpoint.findFirstOrThrow({ where: { accountId: u.accountId, name: "aliased" } })).maxAgeSeconds).toBe(120);

      // The other instance: the same budget left (99998), the data changed: a 200 with it and a new tag.
      const changed = await on(other, { "if-none-match": first.headers.etag as string });
      expect(changed.status).toBe(200);
      expect(body(changed).data).toEqual({ account: { endpoint: { currentlyAvailable: 120 } } });
      expect(body(changed).extensions.cost.throttleStatus.currentlyAvailable).toBe(99998);
      expect(changed.headers.etag).toMatch(/^W\/"/);
      expect(changed.headers.etag).not.toBe(first.headers.etag);

      // Unchanged data, another budget left (99997 here): the tag is the same, so a 304 with no body.
      const again = await on(server, { "if-none-match": changed.headers.etag as string });
      expect([again.status, again.text, again.headers.etag, again.headers["ratelimit-remaining"]]).toEqual([304, "", changed.headers.etag, "99997"]);
    } finally {
      await other.close();
    }
  });
});
