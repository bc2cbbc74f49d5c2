// GET /reports, the report viewer: served with its assets from this server (no CDN), and, in a real
// headless Chromium (Debian's package, driven by playwright-core, as test/browser.test.ts), against
// the seeded demo account: the key entered once, every one of the 37 reports opened and drawn as its
// chart or table with the API's rows, the controls, the URL, paging, CSV and the error messages.
// Four views are screenshotted into test-results/screenshots/ on every run, and into docs/images/
// (the README's pictures) when UPDATE_SCREENSHOTS=1, so a test run does not dirty the work tree.
// Without /usr/bin/chromium the browser part is skipped with a message.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setAccount } from "../src/admin.js";
import { requestScope } from "../src/audit/requestScope.js";
import { REPORTS } from "../src/domains/reports/registry.js";
import { DEMO_ACCOUNT, DEMO_EMAIL, seedDemo } from "../src/seed/demo.js";
import { VIEWER_GROUPS, viewerCatalog } from "../src/viewer/catalog.js";
import { call, type Server, startServer, type Tenant, tenant } from "./helpers.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const IMAGES = process.env.UPDATE_SCREENSHOTS === "1" ? "docs/images" : "test-results/screenshots";
const available = existsSync(CHROMIUM);
if (!available) console.warn(`report viewer browser tests SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);

let server: Server;
let demoKey: string;
const demo = () => ({ "x-service-integration-key": demoKey, "x-service-user": DEMO_EMAIL });
const catalog = viewerCatalog();
const all = catalog.groups.flatMap((g) => g.reports);

beforeAll(async () => {
  server = await startServer();
  ({ key: demoKey } = await requestScope.run({ requestId: null, ip: null, actor: "system:seed" }, () => seedDemo()));
}, 180_000);
afterAll(() => server?.close());

describe("the page and its assets", () => {
  it("lists every report of the API exactly once, in the seven groups", () => {
    const names = VIEWER_GROUPS.flatMap((g) => Object.keys(g.reports));
    expect(names.length).toBe(37);
    expect([...names].sort()).toEqual(REPORTS.map((r) => r.name).sort());
    expect(catalog.groups.map((g) => g.title)).toEqual(["Engagement", "Self Help search", "Flows", "Popups", "Smart Tips", "Beacons", "User actions"]);
    // Every column a chart reads is a column of its report.
    for (const r of all) {
      const columns = new Set(r.columns.map((c) => c.name));
      const chart = r.chart as Record<string, unknown>;
      const used = Object.entries(chart)
        .filter(([k]) => k !== "type")
        .flatMap(([, v]) => (Array.isArray(v) ? v : [v])) as string[];
      for (const c of used) expect(columns.has(c), `${r.name}: ${c}`).toBe(true);
    }
    // Per-day reports are lines, per-user and comment reports tables, the drop-off a funnel.
    const shape = (n: string) => all.find((r) => r.name === n)!.chart.type;
    for (const r of all.filter((r) => r.columns[0]?.name === "date")) expect(shape(r.name), r.name).toBe("line");
    for (const r of all.filter((r) => r.columns.some((c) => c.name === "endUserId" || c.name === "comment"))) expect(shape(r.name), r.name).toBe("table");
    expect(shape("flowDropOff")).toBe("funnel");
    for (const n of ["flowCompletion", "allFlowsCompletion", "flowFeedback", "allFlowsFeedback"]) expect(shape(n)).toBe("stacked");
  });

  it("serves the page, its script, style, Chart.js and catalog without credentials, under a strict CSP", async () => {
    const page = await call(`${server.url}/reports`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(page.text).not.toMatch(/<script>|<script [^>]*>[^<]/); // no inline script
    const srcs = [...page.text.matchAll(/(?:src|href)="(\/reports\/[^"]+)"/g)].map((m) => m[1]!);
    expect(srcs.sort()).toEqual(["/reports/assets/chart.umd.min.js", "/reports/assets/viewer.css", "/reports/assets/viewer.js"]);
    for (const src of srcs) {
      const r = await call(`${server.url}${src}`);
      expect(r.status, src).toBe(200);
      expect(r.headers.get("content-type"), src).toMatch(src.endsWith(".css") ? /text\/css/ : /javascript/);
    }
    const chartJs = await call(`${server.url}/reports/assets/chart.umd.min.js`);
    expect(chartJs.text).toContain("Chart.js v4");
    const cat = await call(`${server.url}/reports/catalog.json`);
    expect(cat.body).toEqual(catalog);
    // Static assets are one route in the metrics, not "unmatched" (which reads as 404s).
    const metrics = await call(`${server.url}/metrics`);
    expect(metrics.text).toMatch(/http_requests_total\{[^}]*route="\/reports\/assets"[^}]*status="200"/);
    expect(metrics.text).not.toMatch(/route="unmatched"[^}]*status="200"/);
  });
});

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The window the page asks for with a preset: the last N whole UTC days, today included. */
const preset = (n: number) => ({ startDate: day(Date.now() - (n - 1) * 86_400_000), endDate: day(Date.now()) });

/** The report's whole answer from the REST route, following `cursor` when the route pages its rows. */
async function rest(report: string, q: Record<string, string>, headers = demo()) {
  let body: { rows: unknown[][]; columns: string[]; startDate: string; endDate: string; cursor?: string | null } | undefined;
  const rows: unknown[][] = [];
  do {
    const query = new URLSearchParams(q);
    if (body?.cursor) query.set("cursor", body.cursor);
    const r = await call(`${server.url}/v1/accounts/${DEMO_ACCOUNT}/reports/${report}?${query}`, { headers });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    body = r.body;
    rows.push(...body!.rows);
  } while (body?.cursor);
  return { ...body!, rows };
}

describe.skipIf(!available)("in headless Chromium", () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];
  const offsite: string[] = [];

  const watch = (p: Page, sink: string[]) => {
    p.on("pageerror", (e) => sink.push(e.message));
    p.on("console", (m) => {
      if (m.type() === "error") sink.push(m.text());
    });
    // The page must not depend on any other host (these machines have no internet).
    p.on("request", (r) => {
      if (!/^(https?:\/\/127\.0\.0\.1[:/]|blob:|data:)/.test(r.url())) offsite.push(r.url());
    });
  };
  const ready = (p: Page) => p.waitForSelector("#report[data-state=ready]:not([aria-busy])", { timeout: 20_000 });
  const settled = (p: Page) => p.waitForSelector("#report:is([data-state=ready], [data-state=error]):not([aria-busy])", { timeout: 20_000 });
  const login = async (p: Page, email: string, key: string) => {
    await p.locator("#login-email").fill(email);
    await p.locator("#login-key").fill(key);
    await p.locator("#login-key").press("Enter");
  };
  const selection = (p: Page) => new URL(p.url()).searchParams;
  /** Opens /reports?<query> on the demo, entering the key if this tab has none yet (each test runs alone too). */
  const open = async (p: Page, query: string) => {
    await p.goto(`${server.url}/reports?${query}`);
    await p.waitForSelector("#login:not([hidden]), #report[data-state]", { state: "attached" });
    if (await p.locator("#login").isVisible()) await login(p, DEMO_EMAIL, demoKey);
    await ready(p);
  };
  /** What Chart.js drew: its type, labels and the datasets' values. */
  const drawn = (p: Page) =>
    p.evaluate(() => {
      const chart = (window as any).Chart.getChart("chart");
      if (!chart) return null;
      return { type: chart.config.type as string, labels: chart.data.labels as string[], data: chart.data.datasets.map((d: any) => d.data) as unknown[][] };
    });

  beforeAll(async () => {
    mkdirSync(IMAGES, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    watch(page, errors);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it("asks for the key once and keeps it in sessionStorage only, never in the URL or a cookie", async () => {
    await page.goto(`${server.url}/reports`);
    await page.locator("#login").waitFor();
    await login(page, DEMO_EMAIL, demoKey);
    await ready(page);
    expect(await page.locator("#who-text").innerText()).toBe(`Signed in as ${DEMO_EMAIL}`);
    expect(page.url()).not.toContain(demoKey);
    expect(selection(page).get("account")).toBe(DEMO_ACCOUNT);
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate(() => sessionStorage.getItem("guidegate.reports.key"))).toBe(demoKey);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    // A reload keeps the key (same tab) and the view.
    await page.reload();
    await ready(page);
    expect(await page.locator("#login").isHidden()).toBe(true);
    // The first view is the demo month as a chart.
    const summary = await rest("summary", preset(30));
    expect((await drawn(page))!.data[0]).toEqual(summary.rows[0]);
  }, 60_000);

  it("opens every report from the list and draws its chart, or its table, with the API's rows", async () => {
    const shots: Record<string, string> = {
      selfHelpSearchTrend: "reports-lines.png",
      allFlowsCompletion: "reports-stacked.png",
      flowDropOff: "reports-funnel.png",
      endUserEngagement: "reports-table.png",
    };
    await open(page, "report=summary");
    for (const report of all) {
      await page.locator(`#reports-nav a[data-report="${report.name}"]`).click();
      await ready(page);
      const sel = selection(page);
      expect(sel.get("report")).toBe(report.name);
      const q: Record<string, string> = preset(30);
      if (report.flow) {
        expect(sel.get("flow"), report.name).toMatch(/\S/);
        q.flowId = sel.get("flow")!;
      }
      const api = await rest(report.name, q);
      // The demo month gives every report rows; an empty one would say so plainly (tested below).
      expect(api.rows.length, `${report.name} has rows on the demo`).toBeGreaterThan(0);
      expect(await page.locator("#report").getAttribute("data-rows"), report.name).toBe(String(api.rows.length));
      expect((await page.locator("#summary").innerText()).length, report.name).toBeGreaterThan(20);
      const chart = await drawn(page);
      if (report.chart.type === "table") {
        expect(chart, report.name).toBeNull();
        expect(await page.locator("#table-box tbody tr").count(), report.name).toBe(Math.min(25, api.rows.length));
        expect(await page.locator("#table-box caption").innerText()).toContain(`${api.rows.length.toLocaleString("en")} row`);
      } else {
        expect(chart, report.name).not.toBeNull();
        expect(await page.locator("#chart").getAttribute("aria-label"), report.name).toContain(await page.locator("#summary").innerText());
        const points = chart!.data.flat().filter((v) => (Array.isArray(v) ? v[1] !== 0 : v !== 0)).length;
        expect(points, `${report.name} draws non-zero values`).toBeGreaterThan(0);
        const rows = api.rows.length;
        const expected: Record<string, number> = {
          line: Math.round((Date.parse(api.endDate) - Date.parse(api.startDate)) / 86_400_000),
          columns: 6,
          funnel: rows,
          bars: Math.min(25, rows),
          stacked: Math.min(25, rows),
          stackedBy: Math.min(25, new Set(api.rows.map((r) => r[0])).size),
        };
        expect(chart!.labels.length, report.name).toBe(expected[report.chart.type]);
        // The table behind the chart is one click away.
        await page.locator("#show-table").click();
        expect(await page.locator("#table-box tbody tr").count(), report.name).toBe(Math.min(25, rows));
        expect(await page.locator("#chart-box").isHidden()).toBe(true);
        await page.locator("#show-chart").click();
        expect(await drawn(page)).not.toBeNull();
      }
      if (shots[report.name]) await page.screenshot({ path: `${IMAGES}/${shots[report.name]}`, fullPage: false });
    }
    expect(errors).toEqual([]);
    expect(offsite).toEqual([]);
  }, 240_000);

  it("keeps the selection in the URL, so a shared link opens the same view once the key is entered", async () => {
    await open(page, "report=flowDropOff");
    await page.locator("#days").selectOption("7");
    await ready(page);
    const shared = page.url();
    const sel = selection(page);
    expect(sel.get("days")).toBe("7");
    const other = await browser.newContext();
    const p2 = await other.newPage();
    const errs: string[] = [];
    watch(p2, errs);
    await p2.goto(shared);
    await login(p2, DEMO_EMAIL, demoKey);
    await ready(p2);
    expect(p2.url()).toBe(shared);
    expect(await p2.locator("#days").inputValue()).toBe("7");
    expect(await p2.locator("#flow").inputValue()).toBe(sel.get("flow"));
    const api = await rest("flowDropOff", { ...preset(7), flowId: sel.get("flow")! });
    expect((await drawn(p2))!.labels).toEqual(api.rows.map((r) => `Step ${r[0]}: ${(r[1] as number).toLocaleString("en")}`));
    expect(errs).toEqual([]);
    await other.close();
  }, 60_000);

  it("window, domain and flow controls change what the API is asked for and the URL", async () => {
    await open(page, "report=flowViews");
    const rowsShown = async () => Number(await page.locator("#report").getAttribute("data-rows"));
    const requests: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/reports/flowViews")) requests.push(r.url());
    });
    await page.locator("#include").fill("help.acme.com");
    await page.locator("#include").press("Enter");
    await ready(page);
    expect(selection(page).get("include")).toBe("help.acme.com");
    expect(new URL(requests.at(-1)!).searchParams.get("includeDomains")).toBe("help.acme.com");
    expect(await rowsShown()).toBe((await rest("flowViews", { ...preset(30), includeDomains: "help.acme.com" })).rows.length);
    const plays = (await drawn(page))!.data[0] as number[];
    const apiPlays = (await rest("flowViews", { ...preset(30), includeDomains: "help.acme.com" })).rows.map((r) => r[1] as number);
    expect([...plays].sort((a, b) => b - a)).toEqual([...apiPlays].sort((a, b) => b - a));

    await page.locator("#include").fill("");
    await page.locator("#exclude").fill("app.acme.com, admin.acme.com");
    await page.locator("#controls button[type=submit]").click();
    await ready(page);
    expect(selection(page).get("exclude")).toBe("app.acme.com,admin.acme.com");
    expect(selection(page).has("include")).toBe(false);
    expect(new URL(requests.at(-1)!).searchParams.get("excludeDomains")).toBe("app.acme.com,admin.acme.com");

    // A custom window: both dates inclusive, as the API reads a date-only end.
    const from = day(Date.now() - 10 * 86_400_000);
    const to = day(Date.now() - 3 * 86_400_000);
    await page.locator("#days").selectOption("custom");
    await page.locator("#from").fill(from);
    await page.locator("#to").fill(to);
    await page.locator("#controls button[type=submit]").click();
    await ready(page);
    expect(selection(page).get("from")).toBe(from);
    expect(selection(page).get("to")).toBe(to);
    const last = new URL(requests.at(-1)!).searchParams;
    expect([last.get("startDate"), last.get("endDate")]).toEqual([from, to]);
    expect(await rowsShown()).toBe((await rest("flowViews", { startDate: from, endDate: to, excludeDomains: "app.acme.com,admin.acme.com" })).rows.length);

    // The flow picker (flow reports): titles, and the chosen flow in the request.
    await page.locator("#days").selectOption("30");
    await ready(page);
    await page.locator("#exclude").fill("");
    await page.locator("#controls button[type=submit]").click();
    await ready(page);
    await page.locator('#reports-nav a[data-report="flowPlaysByDay"]').click();
    await ready(page);
    // Flows played in the window come first, most played first, with their plays; then the others.
    const views = (await rest("flowViews", preset(30))).rows.sort((a, b) => (b[1] as number) - (a[1] as number));
    const played = await page
      .locator('#flow optgroup[label="Played in this window"] option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(played).toEqual(views.map((r) => r[0]));
    expect(selection(page).get("flow")).toBe(views[0]![0]);
    expect(await page.locator('#flow optgroup[label="No plays in this window"] option').count()).toBeGreaterThan(0);
    const next = played[1]!;
    await page.locator("#flow").selectOption(next);
    await ready(page);
    expect(selection(page).get("flow")).toBe(next);
    const series = (await drawn(page))!.data[0] as number[];
    expect(series.reduce((a, b) => a + b, 0)).toBe(
      (await rest("flowPlaysByDay", { ...preset(30), flowId: next })).rows.reduce((a, r) => a + (r[1] as number), 0),
    );
    expect(errors).toEqual([]);
  }, 90_000);

  it("sorts and pages the table, and the CSV download is exactly the rows shown, as the API writes CSV", async () => {
    await open(page, "report=endUserEngagement");
    const api = await rest("endUserEngagement", preset(30));
    const flowsPlayed = api.columns.indexOf("flowsPlayed");
    await page.locator('#table-box th button[data-sort="flowsPlayed"]').click();
    expect(await page.locator('#table-box th:has(button[data-sort="flowsPlayed"])').getAttribute("aria-sort")).toBe("descending");
    expect(selection(page).get("sort")).toBe("flowsPlayed");
    const max = Math.max(...api.rows.map((r) => r[flowsPlayed] as number));
    const firstCells = await page.locator("#table-box tbody tr:first-child td").allInnerTexts();
    expect(firstCells[flowsPlayed]).toBe(max.toLocaleString("en"));
    await page.locator("#table-box [data-page=next]").click();
    expect(await page.locator(".pager span").innerText()).toContain(`Rows 26–50 of ${api.rows.length}`);
    expect(selection(page).get("page")).toBe("2");

    // Sorted: the download holds all rows in the order shown.
    const [sortedDl] = await Promise.all([page.waitForEvent("download"), page.locator("#download").click()]);
    const sortedCsv = readFileSync((await sortedDl.path())!, "utf8").split("\r\n");
    expect(sortedCsv[0]).toBe(api.columns.join(","));
    expect(sortedCsv.length).toBe(api.rows.length + 2); // header, rows, the empty string after the last CRLF
    expect(Number(sortedCsv[1]!.split(",")[flowsPlayed])).toBe(max);

    // In the API's order: byte for byte the API's CSV (quotes, times, formula guard), same file name.
    for (const name of ["negativeFeedbackComments", "flowViews"]) {
      await page.locator(`#reports-nav a[data-report="${name}"]`).click();
      await ready(page);
      const [dl] = await Promise.all([page.waitForEvent("download"), page.locator("#download").click()]);
      const fromApi = await call(`${server.url}/v1/accounts/${DEMO_ACCOUNT}/reports/${name}?${new URLSearchParams({ ...preset(30), format: "csv" })}`, {
        headers: demo(),
      });
      expect(readFileSync((await dl.path())!, "utf8"), name).toBe(fromApi.text);
      expect(dl.suggestedFilename()).toBe(/filename="([^"]+)"/.exec(fromApi.headers.get("content-disposition")!)![1]);
    }
    expect(errors).toEqual([]);
  }, 60_000);

  it("is keyboard navigable: the report list, the chart/table switch and the table's sort buttons", async () => {
    await open(page, "report=summary");
    await page.locator('#reports-nav a[data-report="popups"]').focus();
    await page.keyboard.press("Enter");
    await ready(page);
    expect(selection(page).get("report")).toBe("popups");
    // Focus moves to the report's heading, so a screen reader announces the new report.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("report-title");
    await page.locator("#show-table").focus();
    await page.keyboard.press("Enter");
    expect(await page.locator("#table-box tbody tr").count()).toBeGreaterThan(0);
    await page.keyboard.press("Tab"); // → Download CSV
    await page.keyboard.press("Tab"); // → the first sort button
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.sort)).toBe("contentId");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    expect(await page.locator('#table-box th:has(button[data-sort="appearances"])').getAttribute("aria-sort")).toBe("descending");
    expect(errors).toEqual([]);
  }, 60_000);

  it("cuts a long label on the axis with an ellipsis, so the bars keep the chart's width; the tooltip and the table hold it whole", async () => {
    await open(page, "report=summary");
    const api = await rest("searchTermsWithResults", preset(30));
    const long = "how do i export the quarterly revenue report with every region and currency ".repeat(2).slice(0, 150);
    expect(long.length).toBe(150);
    const rows = api.rows.map((r, i) => (i === 0 ? [long, ...r.slice(1)] : r));
    await page.route("**/v1/accounts/demo/reports/searchTermsWithResults?*", (route) =>
      route.fulfill({ json: { ...api, report: "searchTermsWithResults", rows, cursor: null } }),
    );
    await page.locator('#reports-nav a[data-report="searchTermsWithResults"]').click();
    await ready(page);
    await page.unroute("**/v1/accounts/demo/reports/searchTermsWithResults?*");
    const axis = await page.evaluate((text) => {
      const c = (window as any).Chart.getChart("chart");
      const i = c.data.labels.indexOf(text);
      c.tooltip.setActiveElements([{ datasetIndex: 0, index: i }], { x: 0, y: 0 });
      c.update();
      return { width: c.width as number, axis: c.scales.y.width as number, tick: c.scales.y.ticks[i].label as string, title: c.tooltip.title as string[] };
    }, long);
    expect(axis.tick).toBe(`${long.slice(0, 39)}…`);
    // The labels take a fixed part of the width, not half of it.
    expect(axis.axis).toBeLessThan(axis.width * 0.35);
    expect(axis.title).toEqual([long]);
    await page.locator("#show-table").click();
    expect(await page.locator("#table-box tbody td").allInnerTexts()).toContain(long);
    expect(errors).toEqual([]);
  }, 60_000);

  it("follows the API's cursor when a report comes in pages, and reads it whole when there is none", async () => {
    await open(page, "report=summary");
    const api = await rest("endUserEngagement", preset(30));
    const asked: string[] = [];
    // The API answers in two pages here, as the paged report routes do: `cursor` until the last page.
    await page.route("**/v1/accounts/demo/reports/endUserEngagement?*", async (route) => {
      const url = new URL(route.request().url());
      asked.push(url.search);
      const second = url.searchParams.get("cursor") === "page2";
      const rows = second ? api.rows.slice(100) : api.rows.slice(0, 100);
      await route.fulfill({ json: { ...api, report: "endUserEngagement", rows, cursor: second ? null : "page2" } });
    });
    await page.locator('#reports-nav a[data-report="endUserEngagement"]').click();
    await ready(page);
    await page.unroute("**/v1/accounts/demo/reports/endUserEngagement?*");
    expect(asked).toHaveLength(2);
    expect(new URLSearchParams(asked[1]).get("cursor")).toBe("page2");
    expect(new URLSearchParams(asked[1]).get("startDate")).toBe(new URLSearchParams(asked[0]).get("startDate"));
    // Pages as large as REST lists allow, so a long report costs few requests of the rate budget.
    expect(asked.map((q) => new URLSearchParams(q).get("limit"))).toEqual(["10000", "10000"]);
    expect(await page.locator("#report").getAttribute("data-rows")).toBe(String(api.rows.length));
    expect(errors).toEqual([]);
  }, 60_000);

  describe("plain messages", () => {
    let ctx: BrowserContext;
    let p: Page;
    let other: Tenant;
    beforeAll(async () => {
      other = await tenant("viewer");
      ctx = await browser.newContext();
      p = await ctx.newPage();
    });
    afterAll(() => ctx.close());

    it("401: a wrong key is refused at the form, and nothing is kept", async () => {
      await p.goto(`${server.url}/reports`);
      await login(p, DEMO_EMAIL, `${demoKey}x`);
      await p.locator("#login-message").waitFor();
      expect(await p.locator("#login-message").innerText()).toContain("(401)");
      expect(await p.evaluate(() => sessionStorage.length)).toBe(0);
    });

    it("403: an account the key's user may not read", async () => {
      await p.goto(`${server.url}/reports`);
      await login(p, DEMO_EMAIL, demoKey);
      await ready(p);
      await p.goto(`${server.url}/reports?account=${other.accountId}&report=flowViews`);
      await settled(p);
      expect(await p.locator("#status").innerText()).toContain("(403)");
    });

    it("an empty report says so plainly; 429 once the account's budget is spent", async () => {
      await setAccount(other.accountId, { rateLimitPerMinute: 5 });
      await ctx.clearCookies();
      await p.evaluate(() => sessionStorage.clear());
      await p.goto(`${server.url}/reports?report=smartTipPlays`);
      await login(p, other.email, other.key);
      await ready(p);
      expect(await p.locator("#status").innerText()).toMatch(/^Nothing to show: no smart tip plays data/);
      expect(await p.locator("#chart-box").isHidden()).toBe(true);
      // A report that always answers rows (one of zeros) is as empty.
      await p.locator('#reports-nav a[data-report="summary"]').click();
      await ready(p);
      expect(await p.locator("#status").innerText()).toMatch(/^Nothing to show: no summary data/);
      let message = "";
      for (let i = 0; i < 6 && !message.includes("(429)"); i++) {
        await p.locator(`#reports-nav a[data-report="${i % 2 ? "popups" : "beacons"}"]`).click();
        await settled(p);
        message = await p.locator("#status").innerText();
      }
      expect(message).toMatch(/Too many requests for this account right now \(429\)\. Try again in \d+ seconds\./);
    });
  });
});
