// The two pages people use, in a real headless Chromium (Debian's package, driven by playwright-core):
// GraphiQL runs an authenticated query typed into its headers editor, and /docs renders every route.
// Screenshots go to test-results/screenshots/. Without /usr/bin/chromium the suite is skipped.

import { existsSync, mkdirSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endpointsOpenApiExtra } from "../src/domains/endpoints/openapi.js";
import { ingestOpenApi } from "../src/ingest/openapi.js";
import { routes } from "../src/rest/routes.js";
import { type Server, startServer, type Tenant, tenant } from "./helpers.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = "test-results/screenshots";
const available = existsSync(CHROMIUM);
if (!available) console.warn(`browser tests SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);

describe.skipIf(!available)("in headless Chromium", () => {
  let server: Server;
  let t: Tenant;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const offsite: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await startServer();
    t = await tenant("browser");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (e) => pageErrors.push(e.message));
    // The pages must not depend on any other host (these machines have no internet).
    page.on("request", (r) => {
      if (!/^(https?:\/\/127\.0\.0\.1[:/]|blob:|data:)/.test(r.url())) offsite.push(r.url());
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("GraphiQL runs a query with the auth headers typed into its headers editor and shows the result", async () => {
    await page.goto(`${server.url}/graphql?query=${encodeURIComponent("query Me { viewer { email accountIds } }")}`);
    const headersLine = page.getByText("x-service-integration-key").first();
    await headersLine.waitFor({ timeout: 20_000 });
    await headersLine.click();
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText(JSON.stringify({ "x-service-integration-key": t.key, "x-service-user": t.email }));
    // The editor auto-closes brackets and quotes while text arrives: drop what it added after the cursor.
    await page.keyboard.press("Shift+Control+End");
    await page.keyboard.press("Delete");
    await page.getByLabel("Execute query (Ctrl-Enter)").click();
    const result = page.getByLabel("Result Window");
    await result.getByText(t.email).waitFor({ timeout: 15_000 });
    await page.screenshot({ path: `${SHOTS}/graphiql.png` });
    // The result pane is an editor: its text is the JSON, wrapped over lines.
    const shown = (await result.innerText()).replace(/\s+/g, "");
    // With the cost block every answer carries (the viewer touches no account: nothing charged).
    expect(shown).toBe(
      JSON.stringify({
        data: { viewer: { email: t.email, accountIds: [t.accountId] } },
        extensions: { cost: { requestedQueryCost: 1, actualQueryCost: 0, throttleStatus: null } },
      }),
    );
    expect(pageErrors).toEqual([]);
    expect(offsite).toEqual([]);
  }, 60_000);

  it("/docs renders the API reference with every route of the table", async () => {
    await page.goto(`${server.url}/docs`);
    await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
    // The route table's operations, the Segment-format paths and the webhook message (src/ingest/openapi.ts),
    // and calling saved endpoints (src/domains/endpoints/openapi.ts).
    const extra = [
      ...[...Object.values(ingestOpenApi.paths), ...Object.values(ingestOpenApi.webhooks)].map((p) => (p.post as { operationId: string }).operationId),
      ...Object.values(endpointsOpenApiExtra.paths).flatMap((p) => Object.values(p).map((o: { operationId: string }) => o.operationId)),
    ];
    await expect.poll(() => page.locator(".opblock").count()).toBe(routes.length + extra.length);
    await page.screenshot({ path: `${SHOTS}/docs.png` });
    const ids = await page.locator(".opblock-summary-operation-id").allInnerTexts();
    expect(ids.map((s) => s.trim()).sort()).toEqual([...routes.map((r) => r.name), ...extra].sort());
    const text = await page.locator("#swagger-ui").innerText();
    expect(text).toContain("guidegate REST API");
    expect(text).toContain(routes[0]!.summary);

    // One operation opened: its parameters, GraphQL document and a derived response schema show.
    const list = routes.find((r) => r.name === "listContentA")!;
    const op = page.locator(".opblock", { has: page.getByText(list.name, { exact: true }) });
    await op.locator(".opblock-summary").click();
    await op.getByText("Responses").waitFor();
    await op.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/docs-operation.png` });
    const opened = await op.innerText();
    for (const word of ["limit", "cursor", "query ContentPage", "application/json"]) expect(opened).toContain(word);
    expect(pageErrors).toEqual([]);
    expect(offsite).toEqual([]);
  }, 60_000);
});
