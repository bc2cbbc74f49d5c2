// The report viewer's Explore page (GET /reports?view=explore), in a real headless Chromium as
// test/reports-viewer.test.ts, against the seeded demo account: a query by day and event type drawn
// as monotone lines (at most six, the rest as "other") with the API's rows in the table, a funnel, a
// retention grid shaded by rate, the selection in the URL reopened in a new session (in another
// browser time zone), and the CSV: the API's own `format=csv` for `query`, the table as shown for
// funnel and retention. Screenshots go to test-results/screenshots/, or docs/images/ with
// UPDATE_SCREENSHOTS=1. Without /usr/bin/chromium the tests are skipped with a message.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestScope } from "../src/audit/requestScope.js";
import { DEMO_ACCOUNT, DEMO_EMAIL, seedDemo } from "../src/seed/demo.js";
import { call, type Server, startServer } from "./helpers.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const IMAGES = process.env.UPDATE_SCREENSHOTS === "1" ? "docs/images" : "test-results/screenshots";
const available = existsSync(CHROMIUM);
if (!available) console.warn(`explore viewer browser tests SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);

let server: Server;
let demoKey: string;
const demo = () => ({ "x-service-integration-key": demoKey, "x-service-user": DEMO_EMAIL });

beforeAll(async () => {
  server = await startServer();
  ({ key: demoKey } = await requestScope.run({ requestId: null, ip: null, actor: "system:seed" }, () => seedDemo()));
}, 180_000);
afterAll(() => server?.close());

/** The API's answer to a question (JSON, or the CSV response with `format=csv`). */
async function ask(route: string, body: unknown, query = "") {
  const r = await call(`${server.url}/v1/accounts/${DEMO_ACCOUNT}/analytics/${route}${query}`, { method: "POST", headers: demo(), body });
  expect(r.status, r.text.slice(0, 300)).toBe(200);
  return r;
}
/** A cell as the page shows it. */
const shown = (v: unknown) => (v === null || v === undefined ? "—" : typeof v === "number" ? v.toLocaleString("en", { maximumFractionDigits: 2 }) : String(v));
const csvField = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
const csv = (rows: unknown[][]) => `${rows.map((r) => r.map((v) => csvField(v === null ? "" : String(v))).join(",")).join("\r\n")}\r\n`;

describe.skipIf(!available)("Explore in headless Chromium", () => {
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
    p.on("request", (r) => {
      if (!/^(https?:\/\/127\.0\.0\.1[:/]|blob:|data:)/.test(r.url())) offsite.push(r.url());
    });
  };
  const ready = (p: Page) => p.waitForSelector("#report[data-state=ready]:not([aria-busy])", { timeout: 20_000 });
  const login = async (p: Page) => {
    await p.locator("#login-email").fill(DEMO_EMAIL);
    await p.locator("#login-key").fill(demoKey);
    await p.locator("#login-key").press("Enter");
  };
  const selection = (p: Page) => new URL(p.url()).searchParams;
  /** Runs the action and returns the body of the Explore question it made the page ask. */
  const asked = async (p: Page, route: string, action: () => Promise<unknown>) => {
    const [request] = await Promise.all([
      p.waitForRequest((r) => r.method() === "POST" && new URL(r.url()).pathname.endsWith(`/analytics/${route}`) && !r.url().includes("format=csv")),
      action(),
    ]);
    await p.waitForSelector("#report:is([data-state=ready], [data-state=error]):not([aria-busy])", { timeout: 30_000 });
    expect(await p.locator("#report").getAttribute("data-state"), await p.locator("#status").innerText()).toBe("ready");
    return JSON.parse(request.postData()!) as Record<string, unknown>;
  };
  const tableCells = (p: Page) =>
    p.locator("#ex-table tbody tr").evaluateAll((trs) => trs.map((tr) => [...(tr as HTMLTableRowElement).cells].map((td) => td.textContent)));
  const tableHead = (p: Page) => p.locator("#ex-table thead th").allInnerTexts();
  const drawn = (p: Page) =>
    p.evaluate(() => {
      const chart = (window as any).Chart.getChart("ex-chart");
      if (!chart) return null;
      return {
        type: chart.config.type as string,
        labels: chart.data.labels as string[],
        datasets: chart.data.datasets.map((d: any) => ({ label: d.label, data: d.data, mode: d.cubicInterpolationMode })) as {
          label: string;
          data: (number | null)[];
          mode?: string;
        }[],
      };
    });
  /** The buckets of a question's window: the API's rows for it without dimensions (zero-filled). */
  const bucketsOf = async (body: Record<string, unknown>) =>
    ((await ask("query", { ...body, metrics: ["events"], dimensions: [], filters: [] })).body as { rows: unknown[][] }).rows.map((r) => r[0] as string);
  const downloadText = async (p: Page) => {
    const [dl] = await Promise.all([p.waitForEvent("download"), p.locator("#ex-download").click()]);
    return { text: readFileSync((await dl.path())!, "utf8"), name: dl.suggestedFilename() };
  };

  beforeAll(async () => {
    mkdirSync(IMAGES, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
    // The browser's zone is the default time zone of a question: not the process's, not UTC.
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, acceptDownloads: true, timezoneId: "Europe/Berlin" });
    page = await context.newPage();
    watch(page, errors);
    await page.goto(`${server.url}/reports?report=summary`);
    await page.locator("#login").waitFor();
    await login(page);
    await ready(page);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  let queryUrl = "";
  let queryBody: Record<string, unknown> = {};

  it("opens Explore from the list; a query by day and event type is drawn as monotone lines, at most six, and the table holds the API's rows", async () => {
    await page.locator("#nav-explore").click();
    await ready(page);
    expect(selection(page).get("view")).toBe("explore");
    expect(selection(page).get("tab")).toBe("query");
    expect(selection(page).get("account")).toBe(DEMO_ACCOUNT);
    expect(await page.locator("#nav-explore").getAttribute("aria-current")).toBe("page");
    expect(await page.locator("#ex-tz").inputValue()).toBe("Europe/Berlin");

    await page.locator("#ex-interval").selectOption("day");
    await page.locator("#ex-dim-0").selectOption("event:type");
    await page.locator("#ex-filters .add").click();
    const row = page.locator("#ex-filters .filter-row").first();
    await row.locator("[data-part=op]").selectOption("isNot");
    await row.locator("[data-part=value]").fill("user_action, selfhelp_search");
    const body = await asked(page, "query", () => page.locator("#ex-form button[type=submit]").click());
    expect(body).toMatchObject({
      metrics: ["events", "users"],
      dimensions: ["event:type"],
      filters: [["isNot", "event:type", ["user_action", "selfhelp_search"]]],
      interval: "day",
      timeZone: "Europe/Berlin",
    });
    expect(selection(page).get("dims")).toBe("event:type");
    expect(selection(page).get("interval")).toBe("day");

    const api = (await ask("query", body)).body as { columns: string[]; rows: unknown[][] };
    expect(api.rows.length).toBeGreaterThan(0);
    expect(await tableHead(page)).toEqual(api.columns);
    expect(await tableCells(page)).toEqual(api.rows.slice(0, 25).map((r) => r.map(shown)));
    expect(await page.locator("#report").getAttribute("data-rows")).toBe(String(api.rows.length));

    const chart = (await drawn(page))!;
    expect(chart.type).toBe("line");
    // The x axis is every bucket of the window, as the API lists them without dimensions.
    const times = await bucketsOf(body);
    expect(chart.labels).toEqual(times);
    const types = new Set(api.rows.map((r) => r[1]));
    expect(chart.datasets.length).toBe(Math.min(6, types.size));
    for (const d of chart.datasets) expect(d.mode).toBe("monotone");
    if (types.size > 6) expect(chart.datasets[5]!.label).toBe(`${types.size - 5} other values (summed)`);
    // Every event is on a line: per day the lines add up to the API's events.
    times.forEach((t, i) => {
      const events = api.rows.filter((r) => r[0] === t).reduce((a, r) => a + (r[2] as number), 0);
      expect(chart.datasets.reduce((a, d) => a + (d.data[i] ?? 0), 0)).toBe(events);
    });
    expect(await page.locator("#ex-chart-box").isVisible()).toBe(true);
    await page.screenshot({ path: `${IMAGES}/explore-query.png`, fullPage: false });

    // The CSV is the API's own for the same question, byte for byte, with its file name.
    const dl = await downloadText(page);
    const fromApi = await ask("query", body, "?format=csv");
    expect(dl.text).toBe(fromApi.text);
    expect(dl.name).toBe("explore_query.csv");
    queryUrl = page.url();
    queryBody = body;
    expect(errors).toEqual([]);
  }, 90_000);

  it("the reports' many-flow line chart draws at most six monotone lines, the rest summed as one", async () => {
    await page.goto(`${server.url}/reports?report=allFlowsPlaysByDay`);
    await ready(page);
    const chart = await page.evaluate(() => {
      const c = (window as any).Chart.getChart("chart");
      return c.data.datasets.map((d: any) => ({
        label: d.label as string,
        mode: d.cubicInterpolationMode as string,
        total: d.data.reduce((a: number, v: number) => a + v, 0) as number,
      })) as { label: string; mode: string; total: number }[];
    });
    const d = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
    const api = await call(`${server.url}/v1/accounts/${DEMO_ACCOUNT}/reports/allFlowsPlaysByDay?startDate=${d(29)}&endDate=${d(0)}&limit=10000`, {
      headers: demo(),
    });
    const rows = api.body.rows as unknown[][];
    const flows = new Set(rows.map((r) => r[1])).size;
    expect(chart.length).toBe(Math.min(6, flows));
    for (const s of chart) expect(s.mode).toBe("monotone");
    expect(flows).toBeGreaterThan(6);
    expect(chart[5]!.label).toBe(`${flows - 5} other flows (summed)`);
    // Every play is on a line.
    expect(chart.reduce((a, s) => a + s.total, 0)).toBe(rows.reduce((a, r) => a + (r[2] as number), 0));
    expect(errors).toEqual([]);
  }, 60_000);

  it("the URL reopens the same question in a new session, time zone included", async () => {
    expect(queryUrl).not.toBe("");
    const other = await browser.newContext({ timezoneId: "America/New_York" });
    const p2 = await other.newPage();
    const errs: string[] = [];
    watch(p2, errs);
    const [request] = await Promise.all([
      p2.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/analytics/query")),
      (async () => {
        await p2.goto(queryUrl);
        await login(p2);
      })(),
    ]);
    await ready(p2);
    expect(JSON.parse(request.postData()!)).toEqual(queryBody);
    expect(p2.url()).toBe(queryUrl);
    expect(await p2.locator("#ex-dim-0").inputValue()).toBe("event:type");
    expect(await p2.locator("#ex-interval").inputValue()).toBe("day");
    expect(await p2.locator("#ex-tz").inputValue()).toBe("Europe/Berlin");
    expect(await p2.locator("#ex-filters .filter-row [data-part=value]").inputValue()).toBe("user_action, selfhelp_search");
    expect(await p2.locator("#ex-metrics input:checked").evaluateAll((cs) => cs.map((c) => (c as HTMLInputElement).value))).toEqual(["events", "users"]);
    const api = (await ask("query", queryBody)).body as { rows: unknown[][] };
    expect(await tableCells(p2)).toEqual(api.rows.slice(0, 25).map((r) => r.map(shown)));
    expect(errs).toEqual([]);
    await other.close();
  }, 60_000);

  it("a funnel: users per step as bars by breakdown, the table and its CSV as shown", async () => {
    // The last 7 days: a funnel over the demo's whole month runs for seconds on SQLite (see the report).
    await page.goto(`${server.url}/reports?view=explore&days=7`);
    await ready(page);
    const tab = await asked(page, "funnel", () => page.locator("#ex-tab-funnel").click());
    expect(selection(page).get("tab")).toBe("funnel");
    expect(tab.steps).toEqual([{ filters: [["is", "event:type", ["flow_started"]]] }, { filters: [["is", "event:type", ["flow_completed"]]] }]);
    const plain = (await ask("funnel", tab)).body as { steps: { step: number; users: number; conversionFromFirst: number }[] };
    expect((await drawn(page))!.labels).toEqual(
      plain.steps.map((s) => `Step ${s.step}: ${s.users.toLocaleString("en")} (${(s.conversionFromFirst * 100).toFixed(1)}%)`),
    );

    // A third step (feedback given), and a breakdown by the entry event's domain.
    await page.locator("#ex-add-step").click();
    const step3 = page.locator("#ex-steps fieldset.step").nth(2).locator(".filter-row").first();
    await step3.locator("[data-part=value]").fill("flow_feedback");
    await page.locator("#ex-breakdown").selectOption("event:domain");
    const body = await asked(page, "funnel", () => page.locator("#ex-form button[type=submit]").click());
    expect(body).toMatchObject({
      steps: [
        { filters: [["is", "event:type", ["flow_started"]]] },
        { filters: [["is", "event:type", ["flow_completed"]]] },
        { filters: [["is", "event:type", ["flow_feedback"]]] },
      ],
      conversionWindowMs: 604_800_000,
      breakdown: "event:domain",
    });
    type Step = { step: number; users: number; conversionFromFirst: number; conversionFromPrevious: number; medianMsFromPrevious: number | null };
    const api = (await ask("funnel", body)).body as { breakdown: string; groups: { value: string | null; steps: Step[] }[] };
    expect(api.groups.length).toBeGreaterThan(0);
    const expected = api.groups.flatMap((g) =>
      g.steps.map((s) => [
        g.value,
        s.step,
        s.users,
        (s.conversionFromFirst * 100).toFixed(1),
        (s.conversionFromPrevious * 100).toFixed(1),
        s.medianMsFromPrevious === null ? null : (s.medianMsFromPrevious / 1000).toFixed(1),
      ]),
    );
    const columns = ["event:domain", "step", "users", "conversion from first (%)", "conversion from previous (%)", "median time from previous (s)"];
    expect(await tableHead(page)).toEqual(columns);
    expect(await tableCells(page)).toEqual(expected.slice(0, 25).map((r) => r.map(shown)));
    const chart = (await drawn(page))!;
    expect(chart.type).toBe("bar");
    expect(chart.labels).toEqual(["Step 1", "Step 2", "Step 3"]);
    expect(chart.datasets.length).toBe(Math.min(6, api.groups.length));
    // Groups partition the entrants: the bars of a step add up to its users.
    for (let i = 0; i < 3; i++) expect(chart.datasets.reduce((a, d) => a + (d.data[i] ?? 0), 0)).toBe(api.groups.reduce((a, g) => a + g.steps[i]!.users, 0));
    await page.screenshot({ path: `${IMAGES}/explore-funnel.png`, fullPage: false });
    const dl = await downloadText(page);
    expect(dl.text).toBe(csv([columns, ...expected]));
    expect(dl.name).toBe("explore_funnel.csv");
    expect(errors).toEqual([]);
  }, 90_000);

  it("a retention grid: cohorts by week, cells shaded by rate, the CSV as shown", async () => {
    await page.goto(`${server.url}/reports?view=explore`);
    await ready(page);
    await asked(page, "retention", () => page.locator("#ex-tab-retention").click());
    expect(selection(page).get("tab")).toBe("retention");
    await page.locator("#ex-periods").fill("4");
    const body = await asked(page, "retention", () => page.locator("#ex-form button[type=submit]").click());
    expect(body).toMatchObject({ startEvent: { filters: [["is", "event:type", ["flow_started"]]] }, period: "week", periods: 4, timeZone: "Europe/Berlin" });
    expect(body.returnEvent).toBeUndefined();
    expect(selection(page).get("periods")).toBe("4");
    const api = (await ask("retention", body)).body as { period: string; cohorts: { start: string; users: number; retained: number[] }[] };
    expect(api.cohorts.length).toBeGreaterThan(1);
    const width = Math.max(...api.cohorts.map((c) => c.retained.length - 1));
    const columns = ["cohort", "users", ...Array.from({ length: width }, (_, k) => `week ${k + 1}`)];
    const expected = api.cohorts.map((c) => [c.start, c.users, ...Array.from({ length: width }, (_, k) => c.retained[k + 1] ?? null)]);
    expect(await tableHead(page)).toEqual(columns);
    expect(await tableCells(page)).toEqual(expected.slice(0, 25).map((r) => r.map(shown)));
    // Shaded by the share of the cohort: the rate in the cell's data and a darker blue for more.
    const shades = await page
      .locator("#ex-table td[data-rate]")
      .evaluateAll((tds) => tds.map((td) => [Number((td as HTMLElement).dataset.rate), getComputedStyle(td).backgroundColor] as const));
    expect(shades.length).toBe(expected.reduce((a, r) => a + r.slice(2).filter((v) => v !== null).length, 0));
    const alpha = (c: string) => Number(/rgba\([^)]*,\s*([\d.]+)\)/.exec(c)?.[1] ?? 1);
    const sorted = [...shades].sort((a, b) => a[0] - b[0]);
    expect(alpha(sorted[0]![1])).toBeLessThanOrEqual(alpha(sorted.at(-1)![1]));
    expect(await drawn(page)).toBeNull();
    await page.screenshot({ path: `${IMAGES}/explore-retention.png`, fullPage: false });
    const dl = await downloadText(page);
    expect(dl.text).toBe(csv([columns, ...expected]));
    // The grid's numbers are the API's CSV's (which names the period columns 1…n).
    const fromApi = (await ask("retention", body, "?format=csv")).text.split("\r\n").slice(1);
    expect(dl.text.split("\r\n").slice(1)).toEqual(fromApi);
    expect(errors).toEqual([]);
    expect(offsite).toEqual([]);
  }, 90_000);

  it("saves the question on screen as an endpoint: its document and variables shown, a curl line to copy that answers the same rows", async () => {
    await page.goto(queryUrl);
    await ready(page);
    await page.locator("#ex-endpoint-open").click();
    expect(await page.locator("#ex-endpoint-open").getAttribute("aria-expanded")).toBe("true");
    expect(await page.locator("#ex-endpoint-name").inputValue()).toBe("explore-query");
    await page.locator("#ex-endpoint-name").fill("types-by-day");
    const [put] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "PUT" && r.url().endsWith(`/v1/accounts/${DEMO_ACCOUNT}/endpoints/types-by-day`)),
      page.locator("#ex-endpoint-save").click(),
    ]);
    expect(put.status()).toBe(201);
    await page.locator("#ex-endpoint-result").waitFor();
    const document = await page.locator("#ex-endpoint-document").innerText();
    expect(document).toMatch(/^query ExploreQuery\(\$accountId: String!, \$input: AnalyticsQueryInput!\)/);
    const variables = JSON.parse(await page.locator("#ex-endpoint-variables").innerText()) as { input: Record<string, unknown> };
    // The REST body's conditions in their GraphQL form; everything else as the page asked.
    expect(variables.input).toEqual({
      ...queryBody,
      filters: [{ op: "isNot", dimension: "event:type", values: ["user_action", "selfhelp_search"] }],
    });
    const saved = await call(`${server.url}/v1/accounts/${DEMO_ACCOUNT}/endpoints/types-by-day`, { headers: demo() });
    expect(saved.body).toMatchObject({ name: "types-by-day", method: "GET", variables: [{ name: "input", type: "AnalyticsQueryInput!", required: true }] });
    expect(await page.locator("#status").innerText()).toContain(`GET /v1/accounts/${DEMO_ACCOUNT}/run/types-by-day`);

    // The curl line, copied through the page's button, run with the key: the same rows as the Explore route.
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.locator("#ex-endpoint-copy").click();
    const curl = await page.evaluate(() => navigator.clipboard.readText());
    expect(curl).toBe(await page.locator("#ex-endpoint-curl").inputValue());
    const m = /--data-urlencode '(input=[^']*)' '([^']+)'$/.exec(curl)!;
    expect(m, curl).not.toBeNull();
    expect(curl).toContain('-H "x-service-integration-key: $GUIDEGATE_KEY" -H "x-service-user: $GUIDEGATE_USER"');
    const [, param, url] = m;
    const eq = param!.indexOf("=");
    const run = await call(`${url}?input=${encodeURIComponent(param!.slice(eq + 1))}`, { headers: demo() });
    expect(run.status, run.text.slice(0, 300)).toBe(200);
    const api = (await ask("query", queryBody)).body as { columns: string[]; rows: unknown[][] };
    expect(run.body.account.analytics.query.columns).toEqual(api.columns);
    expect(run.body.account.analytics.query.rows).toEqual(api.rows);
    await page.locator("#ex-endpoint").screenshot({ path: `${IMAGES}/explore-endpoint.png` });
    expect(errors).toEqual([]);
    expect(offsite).toEqual([]);
  }, 90_000);
  it("refuses a filter value that does not fit its dimension at its row, and sends numbers and booleans as the API types them", async () => {
    await page.goto(`${server.url}/reports?view=explore&days=7`);
    await ready(page);
    const posts: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => {
      if (r.method() === "POST" && r.url().includes("/analytics/")) posts.push(r.url());
    };
    page.on("request", onRequest);
    await page.locator("#ex-filters .add").click();
    const row = page.locator("#ex-filters .filter-row").first();
    const refused = async (dim: string, op: string, value: string, message: string) => {
      posts.length = 0;
      await row.locator("[data-part=dim]").selectOption(dim);
      await row.locator("[data-part=op]").selectOption(op);
      await row.locator("[data-part=value]").fill(value);
      await page.locator("#ex-form button[type=submit]").click();
      await row.locator(".row-problem").waitFor({ timeout: 5_000 });
      // Said at the row, the value box marked and focused; nothing is asked (not another question).
      expect(await row.locator(".row-problem").innerText()).toBe(message);
      expect(await row.locator("[data-part=value]").getAttribute("aria-invalid")).toBe("true");
      expect(await row.locator("[data-part=value]").getAttribute("aria-describedby")).toBe(await row.locator(".row-problem").getAttribute("id"));
      expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.part)).toBe("value");
      expect(await page.locator("#status").innerText()).toContain("does not fit its dimension");
      expect(posts).toEqual([]);
    };
    await refused("event:step", "is", "2, abc", 'event:step holds numbers: "abc" is not a number (null matches a missing value).');
    await refused("event:resultCount", "isNot", "many", 'event:resultCount holds numbers: "many" is not a number (null matches a missing value).');
    await refused("event:step", "gt", "abc", 'gt compares numbers: "abc" is not a number.');
    await refused("event:useful", "is", "yes", 'event:useful is true or false: "yes" is neither (null matches a missing value).');

    // Numbers as numbers (null: a missing value), event:useful as booleans.
    await row.locator("[data-part=dim]").selectOption("event:step");
    await row.locator("[data-part=value]").fill("2, null");
    let body = await asked(page, "query", () => page.locator("#ex-form button[type=submit]").click());
    expect(body.filters).toEqual([["is", "event:step", [2, null]]]);
    expect(await page.locator("#ex-filters .row-problem").count()).toBe(0);
    await page.locator("#ex-filters .filter-row [data-part=dim]").selectOption("event:useful");
    await page.locator("#ex-filters .filter-row [data-part=value]").fill("true, FALSE");
    body = await asked(page, "query", () => page.locator("#ex-form button[type=submit]").click());
    expect(body.filters).toEqual([["is", "event:useful", [true, false]]]);

    // A shared link with such a value: refused at the row as well.
    posts.length = 0;
    await page.goto(`${server.url}/reports?view=explore&days=7&filters=${encodeURIComponent(JSON.stringify([["event:resultCount", "is", "x"]]))}`);
    await page.waitForSelector("#report[data-state=error]:not([aria-busy])", { timeout: 20_000 });
    expect(await page.locator("#ex-filters .row-problem").innerText()).toContain('"x" is not a number');
    expect(posts).toEqual([]);
    page.off("request", onRequest);
    expect(errors).toEqual([]);
  }, 60_000);
  it("a query's lines with a dimension span every bucket of the window: a count is 0 where a line has no events, an average a gap", async () => {
    // 90 days: the demo's events fill the last month only, so most days have no row for any line.
    const open = (metrics: string, filters = "") =>
      asked(page, "query", () =>
        page.goto(`${server.url}/reports?view=explore&days=90&metrics=${metrics}&dims=event:type&interval=day&tz=Europe/Berlin${filters}`),
      );
    let body = await open("events");
    const buckets = await bucketsOf(body);
    let api = (await ask("query", body)).body as { rows: unknown[][] };
    const withRows = new Set(api.rows.map((r) => r[0]));
    expect(buckets.length).toBeGreaterThan(withRows.size);
    let chart = (await drawn(page))!;
    expect(chart.labels).toEqual(buckets);
    for (const d of chart.datasets) expect(d.data.length).toBe(buckets.length);
    buckets.forEach((t, i) => {
      const events = api.rows.filter((r) => r[0] === t).reduce((a, r) => a + (r[2] as number), 0);
      expect(chart.datasets.reduce((a, d) => a + (d.data[i] as number), 0)).toBe(events);
      if (!withRows.has(t)) for (const d of chart.datasets) expect(d.data[i]).toBe(0);
    });
    expect(await page.locator("#ex-summary").innerText()).toContain(`(${buckets.length} days`);

    // Three lines (no "other"): each its own average per day, a gap where it has no events.
    body = await open("avg:step", `&filters=${encodeURIComponent(JSON.stringify([["event:type", "is", "flow_started, flow_step, flow_completed"]]))}`);
    api = (await ask("query", body)).body as { rows: unknown[][] };
    chart = (await drawn(page))!;
    expect(chart.labels).toEqual(buckets);
    expect(chart.datasets.length).toBe(3);
    for (const d of chart.datasets) {
      const points = new Map(api.rows.filter((r) => (r[1] ?? "—") === d.label).map((r) => [r[0], r[2]]));
      expect(d.data).toEqual(buckets.map((t) => (points.has(t) ? points.get(t) : null)));
    }
    expect(errors).toEqual([]);
  }, 60_000);
  it("six lines are six lines; past six, counts sum the rest as one line and averages leave the rest out, as the summary says", async () => {
    const open = (query: string) => asked(page, "query", () => page.goto(`${server.url}/reports?view=explore&interval=day&dims=event:type&${query}`));
    // The six most frequent event types: exactly six lines, none of them "other", and the summary says nothing of a rest.
    let body = await open("metrics=events");
    const byType = (await ask("query", { ...body, interval: undefined, timeZone: undefined })).body as { rows: [string, number][] };
    expect(byType.rows.length).toBeGreaterThan(6);
    const six = byType.rows.slice(0, 6).map((r) => r[0]);
    body = await open(`metrics=events&filters=${encodeURIComponent(JSON.stringify([["event:type", "is", six.join(", ")]]))}`);
    let chart = (await drawn(page))!;
    expect(chart.datasets.map((d) => d.label).sort()).toEqual([...six].sort());
    let summary = await page.locator("#ex-summary").innerText();
    expect(summary).not.toMatch(/largest|other|rest/);

    // Past six, a count: the five largest and the rest summed.
    await open("metrics=events");
    chart = (await drawn(page))!;
    expect(chart.datasets.length).toBe(6);
    expect(chart.datasets[5]!.label).toBe(`${byType.rows.length - 5} other values (summed)`);
    expect(await page.locator("#ex-summary").innerText()).toContain(`the 5 largest lines and the other ${byType.rows.length - 5} summed as one`);

    // Past six, an average: a sum of averages means nothing, so the six highest are drawn and the rest left out.
    for (const metric of ["eventsPerUser", "avg:step"]) {
      body = await open(`metrics=${metric}`);
      const api = (await ask("query", body)).body as { rows: unknown[][] };
      const types = new Set(api.rows.map((r) => r[1]));
      chart = (await drawn(page))!;
      expect(chart.datasets.length, metric).toBe(6);
      for (const d of chart.datasets) expect(types.has(d.label), `${metric}: ${d.label}`).toBe(true);
      summary = await page.locator("#ex-summary").innerText();
      expect(summary).toContain(`the 6 lines of the highest ${metric}, the other ${types.size - 6} left out (the table lists them)`);
      expect(summary).not.toContain("summed");
    }
    expect(errors).toEqual([]);
  }, 60_000);
  it("cuts long labels on the axis and in the legend with an ellipsis, so the plot keeps the chart's width; the tooltip and the table hold them whole", async () => {
    const long = "how do i export the quarterly revenue report with every region and currency ".repeat(2).slice(0, 150);
    const today = new Date().toISOString().slice(0, 10);
    // Answers with a 150-character search term (the demo has none that long).
    await page.route("**/v1/accounts/demo/analytics/query", (route) => {
      const body = JSON.parse(route.request().postData()!);
      const answer = body.interval
        ? {
            columns: ["time", "event:searchTerm", "events"],
            rows: [
              [today, long, 9],
              [today, "export", 3],
            ],
            totals: [12],
            cursor: null,
          }
        : {
            columns: ["event:searchTerm", "events"],
            rows: [
              [long, 9],
              ["export", 3],
            ],
            totals: [12],
            cursor: null,
          };
      return route.fulfill({ json: answer });
    });
    const measure = () =>
      page.evaluate((text) => {
        const c = (window as any).Chart.getChart("ex-chart");
        const i = c.data.labels.indexOf(text);
        if (i >= 0) {
          c.tooltip.setActiveElements([{ datasetIndex: 0, index: i }], { x: 0, y: 0 });
          c.update();
        }
        return {
          width: c.width as number,
          axis: c.scales.y.width as number,
          tick: i >= 0 ? (c.scales.y.ticks[i].label as string) : null,
          title: c.tooltip.title as string[],
          legend: c.legend.legendItems.map((l: { text: string }) => l.text) as string[],
          datasets: c.data.datasets.map((d: { label: string }) => d.label) as string[],
        };
      }, long);
    await page.goto(`${server.url}/reports?view=explore&metrics=events&dims=event:searchTerm`);
    await ready(page);
    const bars = await measure();
    expect(bars.tick).toBe(`${long.slice(0, 39)}…`);
    expect(bars.axis).toBeLessThan(bars.width * 0.35);
    expect(bars.title).toEqual([long]);
    expect(await page.locator("#ex-table tbody td").allInnerTexts()).toContain(long);

    await page.goto(`${server.url}/reports?view=explore&metrics=events&dims=event:searchTerm&interval=day&days=7&tz=UTC`);
    await ready(page);
    const lines = await measure();
    expect(lines.datasets).toContain(long);
    expect(lines.legend).toContain(`${long.slice(0, 39)}…`);
    await page.unroute("**/v1/accounts/demo/analytics/query");
    expect(errors).toEqual([]);
  }, 60_000);
  it("the table is the reports' table: headers that sort (aria-sort), pages of 25, a scroll box the keyboard reaches; a CSV the page writes is in the order shown", async () => {
    const body = await asked(page, "query", () => page.goto(`${server.url}/reports?view=explore&metrics=events,users&dims=event:type&interval=day`));
    const api = (await ask("query", body)).body as { columns: string[]; rows: unknown[][] };
    const n = api.rows.length;
    expect(n).toBeGreaterThan(50);
    const pages = Math.ceil(n / 25);
    expect(await page.locator("#ex-table tbody tr").count()).toBe(25);
    expect(await page.locator("#ex-table .pager span").innerText()).toBe(`Rows 1–25 of ${n.toLocaleString("en")} (page 1 of ${pages})`);
    await page.locator("#ex-table [data-page=next]").click();
    expect(await page.locator("#ex-table .pager span").innerText()).toBe(`Rows 26–50 of ${n.toLocaleString("en")} (page 2 of ${pages})`);
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.page)).toBe("next");
    expect(await tableCells(page)).toEqual(api.rows.slice(25, 50).map((r) => r.map(shown)));

    // Headers are buttons: a number column sorts largest first, again reverses; aria-sort says the order.
    const th = page.locator('#ex-table th:has(button[data-sort="events"])');
    expect(await page.locator("#ex-table th").evaluateAll((ths) => ths.map((t) => t.getAttribute("aria-sort")))).toEqual(api.columns.map(() => "none"));
    await page.locator('#ex-table th button[data-sort="events"]').click();
    expect(await th.getAttribute("aria-sort")).toBe("descending");
    const max = Math.max(...api.rows.map((r) => r[2] as number));
    expect((await tableCells(page))[0]![2]).toBe(shown(max));
    expect(await page.locator("#ex-table caption").innerText()).toContain("sorted by events descending");
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.sort)).toBe("events");
    await page.keyboard.press("Enter");
    expect(await th.getAttribute("aria-sort")).toBe("ascending");

    // The scroll box is the next tab stop after the toolbar, a named region the arrow keys scroll:
    // a tab stop as soon as the table is drawn (not a frame later), so a Tab right after a sort reaches it.
    const atOnce = await page.evaluate(() => {
      (document.querySelector('#ex-table th button[data-sort="events"]') as HTMLButtonElement).click();
      const el = document.querySelector("#ex-table .table-scroll") as HTMLElement;
      return { tabIndex: el.tabIndex, role: el.getAttribute("role") };
    });
    expect(atOnce).toEqual({ tabIndex: 0, role: "region" });
    expect(await th.getAttribute("aria-sort")).toBe("descending");
    await page.locator("#ex-endpoint-open").focus();
    await page.keyboard.press("Tab");
    const box = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      return { scroll: el.classList.contains("table-scroll"), role: el.getAttribute("role"), label: el.getAttribute("aria-label") };
    });
    expect(box).toEqual({ scroll: true, role: "region", label: expect.stringContaining(`${n.toLocaleString("en")} rows`) });
    await page.keyboard.press("PageDown");
    await page.waitForFunction(() => document.querySelector("#ex-table .table-scroll")!.scrollTop > 0);

    // A CSV the page writes (retention) follows the order the table shows.
    await asked(page, "retention", () => page.locator("#ex-tab-retention").click());
    await page.locator('#ex-table th button[data-sort="users"]').click();
    const shownRows = await tableCells(page);
    const users = shownRows.map((r) => Number(r[1]!.replaceAll(",", "")));
    expect(users).toEqual([...users].sort((a, b) => b - a));
    const dl = await downloadText(page);
    expect(
      dl.text
        .split("\r\n")
        .slice(1, -1)
        .map((l) => l.split(",")[0]),
    ).toEqual(shownRows.map((r) => r[0]));
    expect(errors).toEqual([]);
  }, 60_000);
  it("keeps the focus where the person works: Add filter on the new row, Remove on the row before (or Add), Remove last step on Add step", async () => {
    await page.goto(`${server.url}/reports?view=explore&days=7`);
    await ready(page);
    /** The focused element: its part (or id, or text) and its row's index among the filter rows. */
    const focused = () =>
      page.evaluate(() => {
        const el = document.activeElement as HTMLElement;
        const rows = [...document.querySelectorAll("#ex-filters .filter-row")];
        return { part: el.dataset.part ?? el.id ?? "", text: el.textContent, row: rows.indexOf(el.closest(".filter-row")!) };
      });
    await page.locator("#ex-filters .add").click();
    expect(await focused()).toEqual({ part: "dim", text: expect.any(String), row: 0 });
    await page.locator("#ex-filters .add").click();
    await page.locator("#ex-filters .add").click();
    expect(await focused()).toEqual({ part: "dim", text: expect.any(String), row: 2 });
    const remove = (i: number) => page.locator("#ex-filters .filter-row").nth(i).locator("button").click();
    await remove(2);
    expect(await focused()).toEqual({ part: "", text: "Remove", row: 1 });
    await remove(0);
    expect(await focused()).toEqual({ part: "", text: "Remove", row: 0 });
    await remove(0);
    expect(await focused()).toEqual({ part: "", text: "Add filter", row: -1 });

    // Funnel: Remove last step keeps its focus while it can remove more, then hands it to Add step.
    await asked(page, "funnel", () => page.locator("#ex-tab-funnel").click());
    await page.locator("#ex-add-step").click();
    await page.locator("#ex-add-step").click();
    await page.locator("#ex-remove-step").click();
    expect((await focused()).part).toBe("ex-remove-step");
    await page.locator("#ex-remove-step").click();
    expect(await page.locator("#ex-remove-step").isDisabled()).toBe(true);
    expect(await page.locator("#ex-steps fieldset.step").count()).toBe(2);
    expect((await focused()).part).toBe("ex-add-step");
    expect(errors).toEqual([]);
  }, 60_000);
  it("count axes have whole ticks, a missing value is — in every legend and table (empty in the CSV), and a seventh metric cannot be ticked", async () => {
    const today = new Date().toISOString().slice(0, 10);
    // Small counts (Chart.js would tick them by 0.2) and a funnel group without a domain.
    await page.route("**/v1/accounts/demo/analytics/*", (route) => {
      const body = JSON.parse(route.request().postData()!);
      if (route.request().url().endsWith("/funnel")) {
        const steps = (users: number[]) =>
          users.map((u, i) => ({
            step: i + 1,
            users: u,
            conversionFromFirst: u / users[0]!,
            conversionFromPrevious: i ? u / users[i - 1]! : 1,
            medianMsFromPrevious: i ? 1500 : null,
          }));
        return route.fulfill({
          json: {
            breakdown: "event:domain",
            groups: [
              { value: null, steps: steps([2, 1]) },
              { value: "app.acme.com", steps: steps([1, 1]) },
            ],
          },
        });
      }
      const answer = body.interval
        ? {
            columns: ["time", "event:type", "events"],
            rows: [
              [today, "flow_started", 2],
              [today, null, 1],
            ],
            totals: [3],
            cursor: null,
          }
        : {
            columns: ["event:type", "events"],
            rows: [
              ["flow_started", 2],
              [null, 1],
            ],
            totals: [3],
            cursor: null,
          };
      return route.fulfill({ json: answer });
    });
    const ticks = (axis: string) =>
      page.evaluate((a) => (window as any).Chart.getChart("ex-chart").scales[a].ticks.map((t: { value: number }) => t.value) as number[], axis);
    const datasets = () => page.evaluate(() => (window as any).Chart.getChart("ex-chart").data.datasets.map((d: { label: string }) => d.label) as string[]);
    await page.goto(`${server.url}/reports?view=explore&metrics=events&dims=event:type&interval=day&days=7&tz=UTC`);
    await ready(page);
    const lineTicks = await ticks("y");
    expect(lineTicks.length).toBeGreaterThan(1);
    for (const t of lineTicks) expect(Number.isInteger(t), `tick ${t}`).toBe(true);
    expect(await datasets()).toContain("—");
    await page.goto(`${server.url}/reports?view=explore&metrics=events&dims=event:type`);
    await ready(page);
    for (const t of await ticks("x")) expect(Number.isInteger(t), `tick ${t}`).toBe(true);
    expect((await tableCells(page)).map((r) => r[0])).toEqual(["flow_started", "—"]);

    // The funnel's group without a domain: — in the legend and the table, an empty field in the CSV.
    await page.goto(`${server.url}/reports?view=explore&tab=funnel&breakdown=event:domain&days=7`);
    await ready(page);
    expect(await datasets()).toEqual(["—", "app.acme.com"]);
    expect((await tableCells(page)).map((r) => r[0])).toEqual(["—", "—", "app.acme.com", "app.acme.com"]);
    const dl = await downloadText(page);
    expect(dl.text.split("\r\n")[1]).toBe(",1,2,100.0,100.0,");
    await page.unroute("**/v1/accounts/demo/analytics/*");

    // Six metrics at most: the seventh box is disabled once six are ticked, enabled again when one is not.
    await page.goto(`${server.url}/reports?view=explore&metrics=events&days=7`);
    await ready(page);
    const boxes = page.locator("#ex-metrics input");
    expect(await boxes.count()).toBe(7);
    for (let i = 1; i < 6; i++) await boxes.nth(i).check();
    expect(await page.locator("#ex-metrics input:checked").count()).toBe(6);
    expect(await boxes.nth(6).isDisabled()).toBe(true);
    await boxes.nth(0).uncheck();
    expect(await boxes.nth(6).isDisabled()).toBe(false);
    expect(errors).toEqual([]);
  }, 60_000);
});
