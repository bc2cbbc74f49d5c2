// Segment's browser library, the real @segment/analytics-next (analytics.js 2.0), in a real headless
// Chromium, pointed at the service with `apiHost: "<host>/segment/v1"`: a page on another origin
// (so every request is a real cross-origin one, preflight included) loads the library's own bundle
// and makes identify, track, page, group, alias and screen calls, one request each (`/i`, `/t`, …),
// again after a failed request (its retry carries X-Retry-Count), and batched (`/b`). Without /usr/bin/chromium (or CHROMIUM_PATH) the suite is skipped;
// test/segment.test.ts replays the same requests without a browser.
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join, normalize } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../src/admin.js";
import { prisma, requester, type Server, startServer, type Tenant, tenant, until } from "./helpers.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available) console.warn(`Segment browser-library tests SKIPPED: no Chromium at ${CHROMIUM}`);

/** The library's browser bundles (dist/umd), served by the page's own origin as its "CDN". */
const BUNDLES = join(dirname(createRequire(import.meta.url).resolve("@segment/analytics-next/package.json")), "dist", "umd");

describe.skipIf(!available)("@segment/analytics-next in headless Chromium", () => {
  let server: Server;
  let site: HttpServer;
  let origin: string;
  let browser: Browser;
  const req = requester(() => server);

  beforeAll(async () => {
    server = await startServer();
    // The customer's site: a page and the library's bundles, on an origin of its own.
    site = createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://x");
      if (url.pathname === "/") {
        response.setHeader("content-type", "text/html");
        return void response.end('<!doctype html><title>Invoices</title><script src="/analytics-next/bundles/index.js"></script>');
      }
      const file = normalize(url.pathname.replace(/^\/analytics-next\/bundles\//, ""));
      if (!url.pathname.startsWith("/analytics-next/bundles/") || file.startsWith("..") || !existsSync(join(BUNDLES, file))) {
        response.statusCode = 404;
        return void response.end();
      }
      response.setHeader("content-type", "text/javascript");
      response.end(readFileSync(join(BUNDLES, file)));
    });
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", () => r()));
    // Another host name than the service's (localhost, not 127.0.0.1): a cross-origin page.
    origin = `http://localhost:${(site.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => site?.close(r));
    await server?.close();
  });

  /** A page of the site with the library loaded and pointed at the service; what it sent and got back. */
  async function sitePage() {
    const page: Page = await browser.newPage();
    const sent: { method: string; path: string; contentType: string | undefined; status: number; body: any }[] = [];
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("requestfailed", (r) => errors.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
    page.on("response", async (r) => {
      const url = new URL(r.url());
      if (!url.pathname.startsWith("/segment/")) return;
      const request = r.request();
      sent.push({
        method: request.method(),
        path: url.pathname,
        contentType: request.headers()["content-type"],
        status: r.status(),
        body: request.method() === "POST" ? await r.json().catch(() => null) : null,
      });
    });
    await page.goto(`${origin}/`);
    return { page, sent, errors };
  }

  const calls = async (page: Page, writeKey: string, batching: boolean) =>
    page.evaluate(
      async ({ writeKey, apiHost, cdnURL, batching }) => {
        const segment = {
          apiHost,
          protocol: "http",
          ...(batching ? { deliveryStrategy: { strategy: "batching", config: { size: 7, timeout: 60_000 } } } : {}),
        };
        const [analytics] = await (window as any).AnalyticsNext.AnalyticsBrowser.load(
          { writeKey, cdnURL, cdnSettings: { integrations: { "Segment.io": { apiKey: writeKey, ...segment } } } },
          { integrations: { "Segment.io": segment } },
        );
        await analytics.identify("ada", { name: "Ada", plan: "pro", favouriteColour: "green" });
        await analytics.track("Flow Started", { flowId: "f1", widget: "self_help" });
        await analytics.page("Docs", "Invoices");
        await analytics.group("g1", { name: "Acme" });
        await analytics.alias("ada2", "ada");
        await analytics.screen("Home");
        await analytics.track("Exported Report", { format: "csv" });
      },
      { writeKey, apiHost: `${new URL(server.url).host}/segment/v1`, cdnURL: origin, batching },
    );

  async function account(): Promise<{ t: Tenant; key: string }> {
    const t = await tenant("segbrowser");
    const key = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const fields = await req(`/v1/accounts/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] });
    expect(fields.status, fields.text).toBeLessThan(300);
    return { t, key };
  }

  async function expectStored(t: Tenant) {
    // By type: a call sent again after a failed request arrives after the later ones.
    const events = await prisma.event.findMany({ where: { accountId: t.accountId }, orderBy: { type: "asc" } });
    expect(events.map((e) => [e.type, e.endUserId, e.flowId, e.widget, e.actionId, e.domain])).toEqual([
      ["flow_started", "ada", "f1", "self_help", null, "localhost"],
      ["user_action", "ada", null, null, "Exported Report", "localhost"],
    ]);
    const user = await req(`/v1/accounts/${t.accountId}/endUsers/ada?fields=custom`, { headers: t.headers });
    expect(user.status, user.text).toBe(200);
    expect(user.body.custom).toEqual(expect.objectContaining({ name: "Ada", plan: "pro" }));
    expect(user.body.custom).not.toHaveProperty("favouriteColour");
    // identify and the two tracks keep their messageIds; page, group, alias and screen none.
    expect(await prisma.ingestMessage.count({ where: { accountId: t.accountId } })).toBe(3);
  }

  it("one request a call: /i, /t, /p, /g, /a, /s under apiHost, text/plain, each answered 200 and stored", async () => {
    const { t, key } = await account();
    const { page, sent, errors } = await sitePage();
    await calls(page, key, false);
    await until("7 answers", async () => sent.filter((s) => s.method === "POST").length >= 7);
    await page.close();
    expect(errors).toEqual([]);
    const posts = sent.filter((s) => s.method === "POST");
    expect(posts.map((s) => [s.path, s.contentType, s.status, s.body?.accepted])).toEqual(
      ["i", "t", "p", "g", "a", "s", "t"].map((p) => [`/segment/v1/${p}`, "text/plain", 200, 1]),
    );
    await expectStored(t);
  }, 60_000);

  it("a call retried after a failed request comes again with X-Retry-Count, which the preflight allows: stored once", async () => {
    const { t, key } = await account();
    const { page, sent, errors } = await sitePage();
    // The first request to /t fails on the way (the network, not the service); later ones go through untouched.
    let failed = 0;
    await page.route("**/segment/v1/t", async (route) => {
      failed++;
      await route.abort("connectionreset");
      await page.unroute("**/segment/v1/t");
    });
    const retried: Record<string, string>[] = [];
    page.on("request", (r) => {
      if (r.url().endsWith("/segment/v1/t") && r.method() === "POST" && r.headers()["x-retry-count"]) retried.push(r.headers());
    });
    await calls(page, key, false);
    await until("the retried track call's answer", async () => sent.filter((s) => s.path === "/segment/v1/t" && s.status === 200).length >= 2, 30_000);
    await page.close();
    expect(failed).toBe(1);
    expect(retried.length).toBe(1);
    expect(errors.filter((e) => !/segment\/v1\/t: net::ERR_CONNECTION_RESET/.test(e))).toEqual([]);
    await expectStored(t);
  }, 60_000);

  it("batching: one request to /b with all seven calls", async () => {
    const { t, key } = await account();
    const { page, sent, errors } = await sitePage();
    await calls(page, key, true);
    await until("the batch's answer", async () => sent.some((s) => s.method === "POST"));
    await page.close();
    expect(errors).toEqual([]);
    const posts = sent.filter((s) => s.method === "POST");
    expect(posts.map((s) => [s.path, s.contentType, s.status])).toEqual([["/segment/v1/b", "text/plain", 200]]);
    expect(posts[0]!.body).toEqual({ success: true, accepted: 7, duplicates: 0, rejected: [], ignoredTraits: 1 });
    await expectStored(t);
  }, 60_000);
});
