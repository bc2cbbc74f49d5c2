// Clients cannot grow the server's memory through POST /graphql: every cache keyed by the text a
// client sends (Yoga's parsed documents and parse errors, the fast path's accepted queries) stays
// within GRAPHQL_CACHE_ENTRIES texts and GRAPHQL_CACHE_BYTES bytes of them, and a text over 64 KiB
// is never cached (nor compiled), however often it is sent.
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { prepareDb } from "../src/db/index.js";
import { MAX_CACHED_TEXT_BYTES } from "../src/textCache.js";
import { seedContents } from "./factories/content.js";
import { call, type Reply, type Tenant, tenant } from "./helpers.js";

const ENTRIES = 20;
const BYTES = 256 * 1024;

let app: ReturnType<typeof createApp>;
let url: string;
let close: () => Promise<void>;
let t: Tenant;

beforeAll(async () => {
  await prepareDb();
  app = createApp(loadConfig({ ...process.env, RATE_LIMIT_PER_MINUTE: "10000", GRAPHQL_CACHE_ENTRIES: String(ENTRIES), GRAPHQL_CACHE_BYTES: String(BYTES) }));
  const server = app.app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await app.close();
  };
  t = await tenant("gql-caches");
  await seedContents(t.accountId, 3, [], 0);
});
afterAll(() => close());

let n = 0;
/** A query text no earlier request sent, `padding` characters longer (a comment: no tokens, so within GRAPHQL_MAX_TOKENS). */
const fresh = (padding = 0) => `query C${++n}($a: String!) { account(id: $a) { contents(first: 2) { nodes { id title } } } }\n#${"x".repeat(padding)}\n`;

const post = (query: string): Promise<Reply> =>
  call(`${url}/graphql`, {
    method: "POST",
    headers: { ...t.headers, "content-type": "application/json" },
    raw: JSON.stringify({ query, variables: { a: t.accountId } }),
  });

async function ok(query: string): Promise<Reply> {
  const r = await post(query);
  expect([r.status, r.body.errors]).toEqual([200, undefined]);
  expect(r.body.data.account.contents.nodes).toHaveLength(2);
  return r;
}

const caches = () => ({ parsed: app.parsed.documentCache.size, accepted: app.accepted.size });

describe("POST /graphql's caches keyed by client text", () => {
  it("keep at most GRAPHQL_CACHE_ENTRIES texts, the most recently used", async () => {
    const texts = Array.from({ length: ENTRIES + 15 }, () => fresh());
    for (const text of texts) await ok(text);
    expect(caches()).toEqual({ parsed: ENTRIES, accepted: ENTRIES });
    // The latest is still known (the fast path answers it), the first was dropped (Yoga's again).
    const served = app.accepted.served;
    await ok(texts.at(-1)!);
    expect(app.accepted.served - served).toBe(1);
    await ok(texts[0]!);
    expect(app.accepted.served - served).toBe(1);
    expect(app.parsed.documentCache.has(texts[1]!)).toBe(false);
    expect(caches()).toEqual({ parsed: ENTRIES, accepted: ENTRIES });
  });

  it("keep parse errors within the same bound", async () => {
    for (let i = 0; i < ENTRIES + 5; i++) {
      const r = await post(`query Broken${++n} { account(id: "x") {`);
      expect(r.status).toBe(200);
      expect(r.body.errors[0].message).toMatch(/^Syntax Error/);
    }
    expect(app.parsed.errorCache.size).toBe(ENTRIES);
  });

  it("keep at most GRAPHQL_CACHE_BYTES bytes of texts", async () => {
    const big = Array.from({ length: 8 }, () => fresh(60 * 1024));
    for (const text of big) await ok(text);
    expect(app.parsed.documentCache.calculatedSize).toBeLessThanOrEqual(BYTES);
    expect(app.parsed.documentCache.has(big.at(-1)!)).toBe(true);
    expect(app.parsed.documentCache.has(big[0]!)).toBe(false);
    const kept = big.filter((text) => app.accepted.get(text));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.reduce((sum, text) => sum + Buffer.byteLength(text), 0)).toBeLessThanOrEqual(BYTES);
  });

  it("never keep (nor compile) a text over 64 KiB, however often it is sent", async () => {
    const huge = fresh(MAX_CACHED_TEXT_BYTES);
    expect(Buffer.byteLength(huge)).toBeGreaterThan(MAX_CACHED_TEXT_BYTES);
    const [served, compilations] = [app.accepted.served, app.compiled.compilations];
    const answers = [];
    // (the same answer but the budget left after each, extensions.cost.throttleStatus.currentlyAvailable)
    for (let i = 0; i < 3; i++) answers.push((await ok(huge)).text.replace(/"currentlyAvailable":\d+/, ""));
    expect(new Set(answers).size).toBe(1);
    expect([app.parsed.documentCache.has(huge), app.accepted.get(huge)]).toEqual([false, undefined]);
    expect([app.accepted.served - served, app.compiled.compilations - compilations]).toEqual([0, 0]);
    expect(app.parsed.documentCache.calculatedSize).toBeLessThanOrEqual(BYTES);
  });
});
