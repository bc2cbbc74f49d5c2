// GET /reports: the report viewer, a public page (like /docs) that draws the 37 reports as charts and
// tables, and Explore (?view=explore, assets/explore.js): ad hoc questions through the analytics routes. The page itself holds no data: its script asks the public API (the REST report route and
// GraphQL) with the key the person enters, so it shows nothing the key could not read anyway.
// Everything it loads is served from here: its own script and style (src/viewer/assets, plain files,
// no build step) and Chart.js from node_modules, so it works without any CDN or internet access.
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import express, { type Response, type Router } from "express";
import { methodNotAllowed } from "../rest/problem.js";
import { viewerCatalog } from "./catalog.js";

const require = createRequire(import.meta.url);
// chart.js exports no package.json; its CommonJS entry lies in dist/, beside the UMD build the page loads.
const CHART_JS_DIST = dirname(require.resolve("chart.js"));
// Resolved from the module to the package root and back into src/: the same path from src/viewer
// (tests, tsx) and from dist/viewer (npm start), since the build copies no assets.
const ASSETS = fileURLToPath(new URL("../../src/viewer/assets/", import.meta.url));

// Scripts and styles from this origin only (no inline script, no eval), data calls to this origin
// only, no framing, no form posting anywhere: the key typed into the page cannot leave it except to
// the API. Chart.js draws on canvas and sets element styles through the CSSOM, which style-src
// does not restrict.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

function secure(res: Response) {
  res.set({ "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer" });
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>guidegate reports</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/reports/assets/viewer.css">
  <script src="/reports/assets/chart.umd.min.js" defer></script>
  <script src="/reports/assets/viewer.js" type="module"></script>
</head>
<body>
  <a class="skip" href="#report">Skip to the report</a>
  <header class="top">
    <h1>guidegate reports</h1>
    <p id="who" class="who" hidden><span id="who-text"></span> <button type="button" id="forget">Forget key</button></p>
  </header>
  <noscript><p class="message">This page draws the reports with JavaScript; the API answers them as JSON and CSV without it (see /docs).</p></noscript>
  <form id="login" class="login" method="post" hidden>
    <h2>Enter your API key</h2>
    <p>Data is read through the public API with your key. It is kept in this tab's session storage only (never in the URL or a cookie) and forgotten when the tab closes.</p>
    <p class="hint">The demo account: <code>admin@example.com</code> and the key <code>npm start</code> printed on a new database (another: <code>npm run cli -- key create admin@example.com</code>).</p>
    <label for="login-email">E-mail of the key's user</label>
    <input id="login-email" name="email" type="email" autocomplete="username" required>
    <label for="login-key">API key</label>
    <input id="login-key" name="key" type="password" autocomplete="off" required>
    <button type="submit">Show reports</button>
    <p id="login-message" class="message" role="alert" hidden></p>
  </form>
  <div id="app" class="app" hidden>
    <nav id="reports-nav" class="nav" aria-label="Reports">
      <p class="explore-link"><a id="nav-explore" href="?view=explore">Explore</a> <span class="tag">your own questions</span></p>
    </nav>
    <main id="report" class="report" tabindex="-1">
      <form id="controls" class="controls" aria-label="Report selection">
        <label>Account <select id="account" name="account"></select></label>
        <fieldset class="window">
          <legend>Window</legend>
          <select id="days" name="days" aria-label="Date window">
            <option value="7">Last 7 days</option>
            <option value="30">Last 30 days</option>
            <option value="90">Last 90 days</option>
            <option value="custom">Custom</option>
          </select>
          <label>From <input id="from" name="from" type="date"></label>
          <label>To <input id="to" name="to" type="date"></label>
        </fieldset>
        <label id="include-label">Include domains <input id="include" name="include" type="text" placeholder="app.acme.com, help.acme.com" spellcheck="false"></label>
        <label id="exclude-label">Exclude domains <input id="exclude" name="exclude" type="text" placeholder="admin.acme.com" spellcheck="false"></label>
        <label id="flow-label" hidden>Flow <select id="flow" name="flow"></select></label>
        <button type="submit">Apply</button>
      </form>
      <div id="report-head">
        <h2 id="report-title" tabindex="-1"></h2>
        <p id="report-description" class="description"></p>
        <div class="toolbar">
          <div role="group" aria-label="Show as">
            <button type="button" id="show-chart" aria-pressed="true">Chart</button>
            <button type="button" id="show-table" aria-pressed="false">Table</button>
          </div>
          <button type="button" id="download">Download CSV</button>
        </div>
      </div>
      <div id="explore-head" hidden>
        <h2 id="explore-title" tabindex="-1">Explore</h2>
        <p class="description">Ask your own questions of the engagement events: counts by any dimensions, funnels and retention (the API's <code>analytics</code> routes).</p>
        <div class="tabs" role="group" aria-label="Question">
          <button type="button" id="ex-tab-query" aria-pressed="true">Query</button>
          <button type="button" id="ex-tab-funnel" aria-pressed="false">Funnel</button>
          <button type="button" id="ex-tab-retention" aria-pressed="false">Retention</button>
        </div>
        <form id="ex-form" class="explore-form" aria-label="Explore question">
          <div id="ex-query">
            <fieldset><legend>Metrics (1 to 6)</legend><div id="ex-metrics" class="checks"></div></fieldset>
            <fieldset><legend>Dimensions (up to three)</legend>
              <select id="ex-dim-0" aria-label="Dimension 1"></select> <select id="ex-dim-1" aria-label="Dimension 2"></select> <select id="ex-dim-2" aria-label="Dimension 3"></select>
            </fieldset>
            <fieldset><legend>Filters (all must hold)</legend><div id="ex-filters"></div></fieldset>
            <label>Interval <select id="ex-interval"><option value="">none</option><option value="hour">hour</option><option value="day">day</option><option value="week">week</option><option value="month">month</option></select></label>
          </div>
          <div id="ex-funnel" hidden>
            <div id="ex-steps"></div>
            <button type="button" id="ex-add-step">Add step</button> <button type="button" id="ex-remove-step">Remove last step</button>
            <label>Conversion window <select id="ex-conversion"></select></label>
            <label>Breakdown <select id="ex-breakdown"></select></label>
          </div>
          <div id="ex-retention" hidden>
            <fieldset><legend>Start event</legend><div id="ex-start"></div></fieldset>
            <fieldset><legend>Return event (none: any event)</legend><div id="ex-return"></div></fieldset>
            <label>Period <select id="ex-period"><option value="day">day</option><option value="week">week</option><option value="month">month</option></select></label>
            <label>Periods <input id="ex-periods" type="number" min="1" max="52"></label>
          </div>
          <label id="ex-tz-label">Time zone <input id="ex-tz" type="text" spellcheck="false"></label>
          <div class="toolbar"><button type="submit">Run</button> <button type="button" id="ex-download">Download CSV</button> <button type="button" id="ex-endpoint-open" aria-expanded="false" aria-controls="ex-endpoint">Save as endpoint</button></div>
        </form>
        <section id="ex-endpoint" class="endpoint-panel" aria-label="Save as endpoint" hidden>
          <p class="description">Saves this question as a REST endpoint of the account: a plain GET that answers it (docs/endpoints.md).</p>
          <form id="ex-endpoint-form"><label>Endpoint name <input id="ex-endpoint-name" type="text" spellcheck="false" maxlength="64" required></label> <button type="submit" id="ex-endpoint-save">Save endpoint</button></form>
          <div id="ex-endpoint-result" hidden>
            <h3>Document</h3><pre id="ex-endpoint-document"></pre>
            <h3>Variables</h3><pre id="ex-endpoint-variables"></pre>
            <h3>Call it</h3>
            <div class="copy-line"><input id="ex-endpoint-curl" type="text" readonly aria-label="curl command"> <button type="button" id="ex-endpoint-copy">Copy</button></div>
          </div>
        </section>
      </div>
      <p id="status" class="message" role="status" aria-live="polite"></p>
      <div id="report-body">
        <p id="summary" class="summary"></p>
        <div id="chart-box" class="chart-box"><canvas id="chart" role="img"></canvas></div>
        <div id="table-box" class="table-box" hidden></div>
      </div>
      <div id="explore-body" hidden>
        <p id="ex-summary" class="summary"></p>
        <div id="ex-chart-box" class="chart-box" hidden><canvas id="ex-chart" role="img"></canvas></div>
        <div id="ex-table" class="table-box"></div>
      </div>
    </main>
  </div>
</body>
</html>`;

export function reportViewerRouter(): Router {
  const router = express.Router();
  // Built once: the registry does not change while the process runs.
  let catalog: string | undefined;
  router.get("/reports", (_req, res) => {
    secure(res);
    res.type("html").send(PAGE);
  });
  router.get("/reports/catalog.json", (_req, res) => {
    catalog ??= JSON.stringify(viewerCatalog());
    res.type("application/json").send(catalog);
  });
  const assets = { index: false, maxAge: "1h", setHeaders: (res: Response) => secure(res) };
  router.use("/reports/assets", express.static(ASSETS, assets));
  router.get("/reports/assets/chart.umd.min.js", (_req, res) => {
    secure(res);
    res.sendFile("chart.umd.min.js", { root: CHART_JS_DIST, maxAge: "1d" });
  });
  // Other methods on these paths: 405 with Allow, as on every known path.
  router.all(["/reports", "/reports/catalog.json"], methodNotAllowed(["GET"]));
  return router;
}
