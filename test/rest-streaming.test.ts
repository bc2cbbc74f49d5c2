// Long REST pages are read and sent in slices of 1,000 rows (src/rest/router.ts streamPage): the
// body is the same JSON a single read gives, sent once the last slice is read (its ETag is of the
// whole body: issue 33), and each slice costs the page's usual statements (so a 10,000-row page stays at 10 per 1,000).
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onQuery } from "../src/db/index.js";
import { PAGE_SLICE } from "../src/rest/router.js";
import { seedContents } from "./factories/content.js";
import { seedTags } from "./factories/tags.js";
import { call, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";
import { AUTH, shape } from "./sql.js";

let server: Server;
let t: Tenant;
const N = 2_500;
beforeAll(async () => {
  // Long pages cost in proportion to their rows (a 1,500-row content page: 165 points, test/graphql-cost.test.ts);
  // this file reads several a minute for one account, more than the default 600 points.
  server = await startServer({ RATE_LIMIT_PER_MINUTE: "100000" });
  t = await tenant("stream");
  await seedContents(t.accountId, N, await seedTags(t.accountId, 6));
}, 60_000);
afterAll(() => server.close());

const list = (query: string) => call(`${server.url}/api/v1/${t.accountId}/content?${query}`, { headers: t.headers });

/** Every content, walked in pages of PAGE_SLICE (each a single read). */
async function walked(): Promise<unknown[]> {
  const rows: unknown[] = [];
  let cursor: string | null = null;
  do {
    const page = await list(`limit=${PAGE_SLICE}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(page.headers.get("transfer-encoding")).toBeNull(); // one read, sent whole
    rows.push(...page.body.data);
    cursor = page.body.cursor;
  } while (cursor);
  return rows;
}

describe("long pages", () => {
  it("send the same records as single reads would, with the same cursor rules", async () => {
    const all = await walked();
    expect(all).toHaveLength(N);
    const whole = await list(`limit=${N}`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toMatch(/^application\/json/);
    // Sent whole once read (its ETag is of the whole body): with its length.
    expect(whole.headers.get("content-length")).toBe(String(Buffer.byteLength(whole.text)));
    expect(whole.body).toEqual({ data: all, cursor: null });

    // A page that ends inside the list: its cursor continues where it stopped.
    const part = await list("limit=2200");
    expect(part.body.data).toEqual(all.slice(0, 2200));
    expect(part.body.cursor).toEqual(expect.any(String));
    const rest = await list(`limit=${PAGE_SLICE}&cursor=${part.body.cursor}`);
    expect(rest.body).toEqual({ data: all.slice(2200), cursor: null });

    // Started from a cursor, and longer than what is left.
    const tail = await list(`limit=5000&cursor=${part.body.cursor}`);
    expect(tail.body).toEqual({ data: all.slice(2200), cursor: null });
  });

  it("read each slice with the page's statements, one authentication for all", async () => {
    const { result, sql } = await sqlOf(() => list(`limit=${N}`));
    expect(result.body.data).toHaveLength(N);
    const slice = ["SELECT Content"]; // one statement per slice: the page with its tags
    expect(shape(sql)).toEqual([...AUTH, ...slice, ...slice, ...slice]);
  });

  it("send the body once the last slice is read, with one ETag over all of it (issue 33: conditional GETs)", async () => {
    const events: string[] = [];
    const stop = onQuery((q) => {
      if (shape([q])[0] === "SELECT Content") events.push("read");
    });
    let etag: string | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        const req = request(`${server.url}/api/v1/${t.accountId}/content?limit=${N}`, { headers: t.headers }, (res) => {
          etag = res.headers.etag;
          res.on("data", () => {
            if (events.at(-1) !== "bytes") events.push("bytes");
          });
          res.on("end", resolve);
          res.on("error", reject);
        });
        req.on("error", reject);
        req.end();
      });
    } finally {
      stop();
    }
    // Three slice reads, then the bytes: a tag of the whole body goes in the headers, before it.
    expect(events).toEqual(["read", "read", "read", "bytes"]);
    expect(etag).toMatch(/^W\/"[0-9a-f]+-/);
  });

  it("answer a bad limit or cursor with a problem before streaming anything", async () => {
    expect((await list("limit=10001")).status).toBe(400);
    const bad = await list("limit=5000&cursor=bm9wZQ");
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toMatch(/problem\+json/);
  });
});
