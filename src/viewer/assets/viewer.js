// The report viewer's script (GET /reports). Plain JavaScript, no build step: served as written.
// It reads data through the public API only: GraphQL `viewer` (the key's accounts), the REST content
// list (flow and content titles) and the REST report route (rows), with the key the person entered, kept
// in sessionStorage. The selection lives in the URL's query string, so a view can be shared; the
// key never does. Chart.js (a classic script loaded before this module) draws the charts.
/* global Chart */
import { createExplore, MAX_SERIES } from "./explore.js";

const KEY = "guidegate.reports.key";
const EMAIL = "guidegate.reports.email";
const DAY = 86_400_000;
const PRESETS = ["7", "30", "90"];
const DEFAULT_DAYS = "30";
/** Bars drawn per chart; the table lists every row. */
const TOP_ITEMS = 25;
const PAGE_SIZE = 25;
/** Rows asked per report page (`limit`), the largest a REST list takes. */
const PAGE_ROWS = 10_000;
/** Rows loaded for one view when the API pages them (it answers `cursor` while more follow). */
const MAX_ROWS = 100_000;
/** Content pages (of 100) read for titles; past 10,000 items, ids are shown as they are. */
const CONTENT_PAGES = 100;
const CONTENT_TITLES =
  "query ContentTitles($account: String!, $after: String) { account(id: $account) { contents(first: 100, after: $after) { nodes { id title type } pageInfo { hasNextPage endCursor } } } }";
// Okabe-Ito: told apart with the common colour-vision deficiencies.
const COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#F0E442", "#000000"];

/** Axis and legend labels are cut to this many characters with an ellipsis (the tooltip and the table keep the whole text). */
const LABEL_MAX = 40;

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat("en");
const num = (n) => fmt.format(n);

const state = {
  /** name → report of the catalog (columns, chart shape, group). */
  reports: new Map(),
  order: [],
  accounts: [],
  /** account → Promise<Map<id, {title, type}>> */
  content: new Map(),
  sel: null,
  data: null,
  chart: null,
  generation: 0,
  /** flowViews rows of the last window asked, for the flow picker: { key, rows }. */
  flowViews: null,
};

// ---- credentials (sessionStorage only) -----------------------------------------------------------

function credentials() {
  const key = sessionStorage.getItem(KEY);
  const email = sessionStorage.getItem(EMAIL);
  return key && email ? { key, email } : null;
}

function forget() {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(EMAIL);
}

// ---- the API --------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function messageFor(status, detail, retryAfter) {
  if (status === 401)
    return "The API key or e-mail was not accepted (401): it may be mistyped, revoked or expired, or belong to another user. Enter them again.";
  if (status === 403) return `This key may not read this account (403).${detail ? ` ${detail}` : ""}`;
  if (status === 429) return `Too many requests for this account right now (429). Try again in ${retryAfter ? `${retryAfter} seconds` : "a minute"}.`;
  return `The request failed (${status})${detail ? `: ${detail}` : "."}`;
}

async function api(path, init = {}) {
  const creds = credentials();
  if (!creds) throw new ApiError(401, messageFor(401));
  let res;
  try {
    res = await fetch(path, { ...init, headers: { ...init.headers, "x-service-integration-key": creds.key, "x-service-user": creds.email } });
  } catch {
    throw new ApiError(0, "The service could not be reached. Check that it is running, then try again.");
  }
  if (res.ok) return res;
  let detail = "";
  try {
    const body = await res.json();
    detail = body.detail ?? body.errors?.[0]?.message ?? body.title ?? "";
  } catch {
    // not JSON: the status says enough
  }
  throw new ApiError(res.status, messageFor(res.status, detail, res.headers.get("retry-after")));
}

async function graphql(query, variables = {}) {
  const res = await api("/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables }) });
  const body = await res.json();
  const error = body.errors?.[0];
  if (error) {
    const status = error.extensions?.http?.status ?? 400;
    throw new ApiError(status, messageFor(status, error.message));
  }
  return body.data;
}

/**
 * The account's content titles (flows for the flow picker, labels for content and flow ids): pages
 * of 100 over GraphQL selecting only id, title and type. A request is charged what it may read
 * (objects, not bytes): such a page costs 1 point of the account's budget a minute, where a REST
 * content page of 1,000, which answers every field with each item's tags, costs 113 (and a GraphQL
 * page of 1,000 is past the query-cost guard's static limit).
 */
function contentOf(account) {
  let loaded = state.content.get(account);
  if (!loaded) {
    loaded = (async () => {
      const map = new Map();
      let cursor = null;
      for (let i = 0; i < CONTENT_PAGES; i++) {
        const data = await graphql(CONTENT_TITLES, { account, after: cursor });
        const page = data.account.contents;
        for (const c of page.nodes) map.set(c.id, { title: c.title, type: c.type });
        cursor = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
        if (!cursor) break;
      }
      return map;
    })();
    // A failure (403, 429) is not remembered: the next load asks again.
    loaded.catch(() => state.content.delete(account));
    state.content.set(account, loaded);
  }
  return loaded;
}

/** The report's rows for the selection, following `cursor` while the API says more rows follow. */
async function fetchReport(sel) {
  const report = state.reports.get(sel.report);
  // Pages as large as REST lists allow (10,000): a report paged at the default 1,000 rows would cost
  // one request of the account's rate-limit budget per 1,000 rows. Unpaged routes ignore it.
  const query = new URLSearchParams({ limit: String(PAGE_ROWS) });
  const w = windowOf(sel);
  if (w.startDate) query.set("startDate", w.startDate);
  if (w.endDate) query.set("endDate", w.endDate);
  if (sel.include) query.set("includeDomains", sel.include);
  if (sel.exclude) query.set("excludeDomains", sel.exclude);
  if (report.flow) query.set("flowId", sel.flow);
  const path = `/v1/accounts/${encodeURIComponent(sel.account)}/reports/${encodeURIComponent(sel.report)}`;
  const rows = [];
  let body;
  let cursor = null;
  let truncated = false;
  do {
    const q = new URLSearchParams(query);
    if (cursor) q.set("cursor", cursor);
    body = await (await api(`${path}?${q}`)).json();
    for (const row of body.rows) rows.push(row);
    cursor = typeof body.cursor === "string" && body.cursor ? body.cursor : null;
    if (cursor && rows.length >= MAX_ROWS) truncated = true;
  } while (cursor && !truncated);
  return { report: body.report, startDate: body.startDate, endDate: body.endDate, columns: body.columns, rows, truncated };
}

// ---- the selection (the URL's query string) -----------------------------------------------------

const utcDay = (ms) => new Date(ms).toISOString().slice(0, 10);
const isDay = (s) => /^\d{4}-\d{2}-\d{2}$/.test(s);
const domains = (s) =>
  (s ?? "")
    .split(",")
    .map((d) => d.trim())
    .filter(Boolean)
    .join(",");

/** The window of a URL's query string (the reports' and Explore's alike): { days, from, to }. */
function readWindow(q) {
  const from = isDay(q.get("from") ?? "") ? q.get("from") : "";
  const to = isDay(q.get("to") ?? "") ? q.get("to") : "";
  const days = PRESETS.includes(q.get("days")) ? q.get("days") : from || to ? "custom" : DEFAULT_DAYS;
  return { days, from: days === "custom" ? from : "", to: days === "custom" ? to : "" };
}

function writeWindow(q, sel) {
  if (sel.days === "custom") {
    if (sel.from) q.set("from", sel.from);
    if (sel.to) q.set("to", sel.to);
  } else if (sel.days !== DEFAULT_DAYS) q.set("days", sel.days);
}

const isExplore = () => new URLSearchParams(location.search).get("view") === "explore";

function readSelection() {
  const q = new URLSearchParams(location.search);
  const { days, from, to } = readWindow(q);
  const report = state.reports.has(q.get("report")) ? q.get("report") : state.order[0];
  const columns = state.reports.get(report).columns.map((c) => c.name);
  return {
    account: q.get("account") ?? "",
    report,
    days,
    from,
    to,
    include: domains(q.get("include")),
    exclude: domains(q.get("exclude")),
    flow: q.get("flow") ?? "",
    view: q.get("view") === "table" ? "table" : "chart",
    sort: columns.includes(q.get("sort")) ? q.get("sort") : "",
    dir: q.get("dir") === "desc" ? "desc" : "asc",
    page: Math.max(1, Number.parseInt(q.get("page") ?? "1", 10) || 1),
  };
}

function urlOf(sel) {
  const q = new URLSearchParams();
  if (sel.account) q.set("account", sel.account);
  q.set("report", sel.report);
  writeWindow(q, sel);
  if (sel.include) q.set("include", sel.include);
  if (sel.exclude) q.set("exclude", sel.exclude);
  if (sel.flow && state.reports.get(sel.report).flow) q.set("flow", sel.flow);
  if (sel.view === "table" && state.reports.get(sel.report).chart.type !== "table") q.set("view", "table");
  if (sel.sort) {
    q.set("sort", sel.sort);
    q.set("dir", sel.dir);
  }
  if (sel.page > 1) q.set("page", String(sel.page));
  return `${location.pathname}?${q}`;
}

/** The API's window: a preset is the last N whole UTC days up to today (today included). */
function windowOf(sel) {
  if (sel.days === "custom") return { startDate: sel.from, endDate: sel.to };
  const n = Number(sel.days);
  return { startDate: utcDay(Date.now() - (n - 1) * DAY), endDate: utcDay(Date.now()) };
}

function go(sel, { push = true, focus = false } = {}) {
  const url = urlOf(sel);
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
  return load({ focus });
}

// ---- labels ------------------------------------------------------------------------------------

const humanize = (name) => {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return words[0].toUpperCase() + words.slice(1);
};
/** What a label column counts, for summaries ("8 flows"): [one, many]. */
const NOUNS = {
  flowId: ["flow", "flows"],
  contentId: ["content item", "content items"],
  searchTerm: ["term", "terms"],
  userId: ["editor", "editors"],
  actionId: ["user action", "user actions"],
  outcome: ["outcome", "outcomes"],
  widget: ["widget", "widgets"],
};
/** Reports whose content ids are of one kind. */
const CONTENT_NOUNS = {
  beacons: ["beacon", "beacons"],
  popups: ["popup", "popups"],
  guidedPopups: ["guided popup", "guided popups"],
  smartPopups: ["smart popup", "smart popups"],
  smartTipPlays: ["Smart Tip", "Smart Tips"],
};
const count = (n, column) => {
  const [one, many] = (column === "contentId" && CONTENT_NOUNS[state.sel?.report]) || NOUNS[column] || ["item", "items"];
  return `${num(n)} ${n === 1 ? one : many}`;
};
const REPORT_TITLES = {
  flowDropOff: "Flow drop-off",
  summary: "Summary",
  searchSuccessVsFailure: "Search success vs failure",
  selfHelpContent: "Self Help content viewed",
};
const reportTitle = (name) => REPORT_TITLES[name] ?? humanize(name);

/** How a cell reads in the page: titles for content and flow ids, UTC times, yes/no. */
function display(column, value, titles) {
  if (value === null || value === undefined) return "—";
  if (column.kind === "time") return `${new Date(value).toISOString().slice(0, 19).replace("T", " ")} UTC`;
  if (column.kind === "bool") return value ? "yes" : "no";
  if (column.kind === "int") return num(value);
  if ((column.name === "contentId" || column.name === "flowId") && titles?.has(value)) return titles.get(value).title;
  if (column.name === "step") return `Step ${value}`;
  return String(value);
}

// ---- CSV, exactly as the REST route writes it (format=csv) -------------------------------------

function csvCell(column, value) {
  if (value === null || value === undefined) return "";
  if (column.kind === "time") return new Date(value).toISOString();
  const s = String(value);
  // As the API: a spreadsheet would run text starting with these as a formula; an apostrophe keeps it text.
  return column.kind === "string" && /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
}
const csvField = (s) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

function csvOf(columns, rows) {
  const lines = [columns.map((c) => csvField(c.name)).join(",")];
  for (const row of rows) lines.push(columns.map((c, i) => csvField(csvCell(c, row[i]))).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

function download() {
  const { data, sel } = state;
  if (!data) return;
  const columns = state.reports.get(data.report).columns;
  const blob = new Blob([csvOf(columns, sortedRows(data, sel))], { type: "text/csv;charset=utf-8" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = `${data.report}_${data.startDate.slice(0, 10)}_${data.endDate.slice(0, 10)}.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}

// ---- the table ------------------------------------------------------------------------------------

const compare = (a, b) => {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  // Code-point order, as the API sorts (JavaScript's < compares UTF-16 units: past U+FFFF the two
  // differ, "～" < "😀" by code point but not by unit).
  const x = String(a);
  const y = String(b);
  for (let i = 0, j = 0; i < x.length && j < y.length; ) {
    const cx = x.codePointAt(i);
    const cy = y.codePointAt(j);
    if (cx !== cy) return cx - cy;
    i += cx > 0xffff ? 2 : 1;
    j += cy > 0xffff ? 2 : 1;
  }
  return x.length - y.length;
};

/** Rows sorted by the column at `index` (stable; -1: as they are). */
function sortRows(rows, index, dir) {
  if (index < 0) return rows;
  const sign = dir === "desc" ? -1 : 1;
  return [...rows].sort((a, b) => sign * compare(a[index], b[index]));
}

/** The rows in the order shown: the API's order, or sorted by the chosen column (stable). */
const sortedRows = (data, sel) => (sel.sort ? sortRows(data.rows, data.columns.indexOf(sel.sort), sel.dir) : data.rows);

/** A table box's size watcher (one each: a redraw replaces it). */
const observers = new WeakMap();

/**
 * The page's tables (the reports' and Explore's): a caption, column headers that are buttons (click
 * or Enter sorts, numbers largest first, again reverses; `aria-sort` says the order), pages of
 * PAGE_SIZE rows with a pager, in a scroll box that takes the keyboard focus while it scrolls (a
 * named region), so its hidden part can be read with the arrow keys.
 * - `columns`: [{ name, label, numeric, title }]; `rows`: arrays in the columns' order.
 * - `view`: { sort (a column's name, or ""), dir ("asc" | "desc"), page }.
 * - `caption(count)`: the caption's text (the sort order is added); `text(row, i)`: a cell's text;
 *   `decorate(td, row, i)`: anything more on a cell (a tooltip, a shade).
 * - `onView(view)`: told of a new sort or page before it is drawn (the reports keep it in the URL).
 */
function tableView(box, { columns, rows, view, caption, text, decorate, onView }) {
  const draw = (v, focus) => {
    const index = columns.findIndex((c) => c.name === v.sort);
    const sorted = sortRows(rows, index, v.dir);
    const pages = Math.max(1, Math.ceil(sorted.length / PAGE_SIZE));
    const page = Math.min(Math.max(1, v.page), pages);
    const shown = sorted.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
    const change = (next, selector) => {
      onView?.(next);
      draw(next, selector);
    };

    const table = document.createElement("table");
    const cap = document.createElement("caption");
    cap.textContent = `${caption(sorted.length)}${
      index >= 0 ? `, sorted by ${columns[index].label.toLowerCase()} ${v.dir === "desc" ? "descending" : "ascending"}` : ""
    }`;
    table.append(cap);
    const head = table.createTHead().insertRow();
    for (const c of columns) {
      const th = document.createElement("th");
      th.scope = "col";
      if (c.numeric) th.className = "num";
      th.setAttribute("aria-sort", v.sort === c.name ? (v.dir === "desc" ? "descending" : "ascending") : "none");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.sort = c.name;
      if (c.title) button.title = c.title;
      button.textContent = c.label;
      button.addEventListener("click", () => {
        const dir = v.sort === c.name ? (v.dir === "asc" ? "desc" : "asc") : c.numeric ? "desc" : "asc";
        change({ sort: c.name, dir, page: 1 }, `th button[data-sort="${CSS.escape(c.name)}"]`);
      });
      th.append(button);
      head.append(th);
    }
    const body = table.createTBody();
    for (const row of shown) {
      const tr = body.insertRow();
      columns.forEach((c, i) => {
        const td = tr.insertCell();
        if (c.numeric) td.className = "num";
        td.textContent = text(row, i);
        decorate?.(td, row, i);
      });
    }
    const wrap = document.createElement("div");
    wrap.className = "table-scroll";
    wrap.append(table);
    box.replaceChildren(wrap);

    if (pages > 1) {
      const nav = document.createElement("nav");
      nav.className = "pager";
      nav.setAttribute("aria-label", "Table pages");
      const to = (p) => () => change({ ...v, page: p }, p < page ? "[data-page=prev]" : "[data-page=next]");
      const prev = document.createElement("button");
      prev.type = "button";
      prev.dataset.page = "prev";
      prev.textContent = "Previous";
      prev.disabled = page === 1;
      prev.addEventListener("click", to(page - 1));
      const next = document.createElement("button");
      next.type = "button";
      next.dataset.page = "next";
      next.textContent = "Next";
      next.disabled = page === pages;
      next.addEventListener("click", to(page + 1));
      const where = document.createElement("span");
      where.textContent = `Rows ${num((page - 1) * PAGE_SIZE + 1)}–${num((page - 1) * PAGE_SIZE + shown.length)} of ${num(sorted.length)} (page ${page} of ${pages})`;
      nav.append(prev, where, next);
      box.append(nav);
    }
    // A box that scrolls is a tab stop (and a named region), so the keyboard can scroll it; one that does not is none.
    // Decided now (a Tab right after a sort must reach it, before the observer's first callback) and again on each resize.
    const stop = () => {
      const scrolls = wrap.scrollWidth > wrap.clientWidth || wrap.scrollHeight > wrap.clientHeight;
      if (scrolls) {
        wrap.tabIndex = 0;
        wrap.setAttribute("role", "region");
        wrap.setAttribute("aria-label", cap.textContent);
      } else {
        wrap.removeAttribute("tabindex");
        wrap.removeAttribute("role");
        wrap.removeAttribute("aria-label");
      }
    };
    stop();
    observers.get(box)?.disconnect();
    const observer = new ResizeObserver(stop);
    observer.observe(wrap);
    observers.set(box, observer);
    // After a click the focus stays on its control (a Next at the last page: Previous).
    if (focus) (box.querySelector(`${focus}:not(:disabled)`) ?? box.querySelector("[data-page]:not(:disabled)"))?.focus();
  };
  draw(view, null);
}

function renderTable(report, data, titles) {
  const named = (c) => (c.name === "contentId" || c.name === "flowId") && titles;
  tableView($("table-box"), {
    columns: report.columns.map((c) => ({ name: c.name, label: humanize(c.name), numeric: c.kind === "int", title: c.description })),
    rows: data.rows,
    view: { sort: state.sel.sort, dir: state.sel.dir, page: state.sel.page },
    caption: (n) => `${reportTitle(report.name)}: ${num(n)} ${n === 1 ? "row" : "rows"}`,
    text: (row, i) => display(report.columns[i], row[i], titles),
    decorate: (td, row, i) => {
      if (named(report.columns[i]) && titles.has(row[i])) td.title = row[i];
    },
    onView: (v) => {
      state.sel = { ...state.sel, ...v };
      history.replaceState(null, "", urlOf(state.sel));
    },
  });
}

// ---- the charts -----------------------------------------------------------------------------------

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
/** Counts of distinct end users: adding them up across days or items would count a user twice. */
const distinct = (column) => /^unique|^users/.test(column);
/** The window's last day: the API's endDate is exclusive. */
const lastDay = (data) => utcDay(Date.parse(data.endDate) - 1);
const pct = (part, whole) => (whole ? `${Math.round((part / whole) * 100)}%` : "0%");

/** Every UTC day of the window the API used, for per-day lines without gaps. */
function daysOf(data) {
  const days = [];
  const from = Date.parse(data.startDate.slice(0, 10));
  const to = Date.parse(data.endDate);
  for (let t = from; t < to; t += DAY) days.push(utcDay(t));
  return days;
}

/** The items a bar chart draws (the largest first): the top TOP_ITEMS, and how many are left out. */
function bucket(items) {
  const shown = items.slice(0, TOP_ITEMS);
  return { shown, hidden: items.length - shown.length };
}

/** The chart's Chart.js configuration and its text summary, from the report's shape and rows. */
function chartOf(report, data, titles) {
  const shape = report.chart;
  const col = (name) => data.columns.indexOf(name);
  const column = (name) => report.columns.find((c) => c.name === name);
  const labelOf = (name, v) => display(column(name), v, titles);
  const base = { responsive: true, maintainAspectRatio: false, animation: false, plugins: { legend: { position: "bottom" } } };
  const color = (i) => COLORS[i % COLORS.length];

  if (shape.type === "line") {
    const days = daysOf(data);
    const at = new Map(days.map((d, i) => [d, i]));
    const di = col("date");
    let series;
    if (shape.series) {
      const si = col(shape.series);
      const vi = col(shape.values[0]);
      const totals = new Map();
      for (const r of data.rows) totals.set(r[si], (totals.get(r[si]) ?? 0) + r[vi]);
      const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
      // At most MAX_SERIES lines: past that, the largest MAX_SERIES - 1 and one summing the rest.
      const kept = ranked.length > MAX_SERIES ? MAX_SERIES - 1 : ranked.length;
      const top = new Set(ranked.slice(0, kept));
      const lines = new Map([...top].map((k) => [k, new Array(days.length).fill(0)]));
      const other = new Array(days.length).fill(0);
      for (const r of data.rows) {
        const i = at.get(r[di]);
        if (i !== undefined) (lines.get(r[si]) ?? other)[i] += r[vi];
      }
      series = [...lines.entries()].map(([k, values]) => ({ label: labelOf(shape.series, k), values }));
      if (ranked.length > kept)
        series.push({ label: `${num(ranked.length - kept)} other ${shape.series === "flowId" ? "flows" : "items"} (summed)`, values: other });
    } else {
      series = shape.values.map((v) => {
        const values = new Array(days.length).fill(0);
        const vi = col(v);
        for (const r of data.rows) {
          const i = at.get(r[di]);
          if (i !== undefined) values[i] = r[vi];
        }
        return { label: humanize(v), values, distinct: distinct(v) };
      });
    }
    const sentences = series.map((s) => {
      let hi = 0;
      let lo = 0;
      s.values.forEach((v, i) => {
        if (v > s.values[hi]) hi = i;
        if (v < s.values[lo]) lo = i;
      });
      const total = s.distinct ? "" : ` ${num(sum(s.values))} in total,`;
      return `${s.label}:${total} most on ${days[hi]} (${num(s.values[hi])}), fewest on ${days[lo]} (${num(s.values[lo])}).`;
    });
    return {
      config: {
        type: "line",
        data: {
          labels: days,
          datasets: series.map((s, i) => ({
            label: s.label,
            data: s.values,
            borderColor: color(i),
            backgroundColor: color(i),
            pointRadius: 2,
            cubicInterpolationMode: "monotone",
          })),
        },
        options: { ...base, interaction: { mode: "index", intersect: false }, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
      },
      summary: `Per UTC day, ${days[0]} to ${days[days.length - 1]} (${days.length} days). ${sentences.join(" ")}`,
      height: 380,
    };
  }

  if (shape.type === "columns") {
    const row = data.rows[0];
    const values = shape.values.map((v) => row[col(v)]);
    const labels = shape.values.map(humanize);
    return {
      config: {
        type: "bar",
        data: { labels, datasets: [{ label: "Count", data: values, backgroundColor: shape.values.map((_, i) => color(i)) }] },
        options: { ...base, plugins: { legend: { display: false } }, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
      },
      summary: `${labels.map((l, i) => `${l}: ${num(values[i])}`).join("; ")}.`,
      height: 380,
    };
  }

  if (shape.type === "funnel") {
    const li = col(shape.label);
    const vi = col(shape.value);
    const dropped = col(shape.dropped);
    const rows = [...data.rows].sort((a, b) => a[li] - b[li]);
    const first = rows[0][vi];
    const last = rows[rows.length - 1];
    let worst = rows[0];
    for (const r of rows) if (r[dropped] > worst[dropped]) worst = r;
    return {
      config: {
        type: "bar",
        data: {
          labels: rows.map((r) => `Step ${r[li]}: ${num(r[vi])}`),
          // Bars centred on zero make the funnel's shape; the tooltip says the real count.
          datasets: [{ label: "Users who reached the step", data: rows.map((r) => [-r[vi] / 2, r[vi] / 2]), backgroundColor: color(0) }],
        },
        options: {
          ...base,
          indexAxis: "y",
          plugins: {
            legend: { display: false },
            tooltip: {
              callbacks: {
                label: (ctx) => {
                  const r = rows[ctx.dataIndex];
                  return `${num(r[vi])} users reached it (${pct(r[vi], first)} of step ${rows[0][li]}); ${num(r[dropped])} stopped there`;
                },
              },
            },
          },
          scales: { x: { display: false }, y: { grid: { display: false } } },
        },
      },
      summary: `${num(first)} users reached step ${rows[0][li]}; ${num(last[vi])} reached step ${last[li]} (${pct(last[vi], first)}). Most users stopped after step ${worst[li]} (${num(worst[dropped])} without completing the flow).`,
      height: Math.max(260, rows.length * 48 + 40),
    };
  }

  if (shape.type === "stackedBy") {
    const li = col(shape.label);
    const bi = col(shape.by);
    const vi = col(shape.value);
    const totals = new Map();
    for (const r of data.rows) totals.set(r[li], (totals.get(r[li]) ?? 0) + r[vi]);
    const items = [...totals.entries()].sort((a, b) => b[1] - a[1]);
    const b = bucket(items);
    const keys = [...new Set(data.rows.map((r) => r[bi]))].sort(compare);
    const index = new Map(b.shown.map(([k], i) => [k, i]));
    const datasets = keys.map((k, i) => ({ label: labelOf(shape.by, k), data: new Array(b.shown.length).fill(0), backgroundColor: color(i) }));
    for (const r of data.rows) {
      const i = index.get(r[li]);
      if (i !== undefined) datasets[keys.indexOf(r[bi])].data[i] += r[vi];
    }
    const byKey = keys.map((k) => [labelOf(shape.by, k), sum(data.rows.filter((r) => r[bi] === k).map((r) => r[vi]))]).sort((x, y) => y[1] - x[1]);
    return {
      config: {
        type: "bar",
        data: { labels: b.shown.map(([k]) => labelOf(shape.label, k)), datasets },
        options: { ...base, indexAxis: "y", scales: { x: { stacked: true, beginAtZero: true, ticks: { precision: 0 } }, y: { stacked: true } } },
      },
      summary: `${count(items.length, shape.label)}, ${num(sum(items.map((i) => i[1])))} ${humanize(shape.value).toLowerCase()} in total. Most: ${labelOf(shape.label, items[0][0])} (${num(items[0][1])}). By ${humanize(shape.by).toLowerCase()}: ${byKey.map(([k, v]) => `${k} ${num(v)}`).join(", ")}.${b.hidden ? ` The chart shows the top ${TOP_ITEMS}; the table lists all.` : ""}`,
      height: Math.max(220, b.shown.length * 30 + 90),
    };
  }

  // bars and stacked: one bar (or stack) per row, largest first.
  const li = col(shape.label);
  const vis = shape.values.map(col);
  const stacked = shape.type === "stacked";
  const items = [...data.rows].sort((a, b) => (stacked ? sum(vis.map((i) => b[i])) - sum(vis.map((i) => a[i])) : b[vis[0]] - a[vis[0]]));
  const b = bucket(items);
  let summary;
  if (stacked) {
    const [part, rest] = shape.values;
    const totalPart = sum(items.map((r) => r[col(part)]));
    const total = totalPart + sum(items.map((r) => r[col(rest)]));
    const lines = items
      .slice(0, 3)
      .map(
        (r) =>
          `${labelOf(shape.label, r[li])}: ${num(r[col(part)])} ${humanize(part).toLowerCase()} of ${num(r[col(part)] + r[col(rest)])} (${pct(r[col(part)], r[col(part)] + r[col(rest)])})`,
      );
    summary = `${items.length === 1 ? "" : `${count(items.length, shape.label)}. `}${num(totalPart)} of ${num(total)} ${humanize(part).toLowerCase()} (${pct(totalPart, total)}), ${num(total - totalPart)} ${humanize(rest).toLowerCase()}. ${lines.join("; ")}.`;
  } else {
    const v0 = vis[0];
    const top = items.slice(0, 3).map((r) => `${labelOf(shape.label, r[li])} (${num(r[v0])})`);
    const total = distinct(shape.values[0]) ? "" : `, ${num(sum(items.map((r) => r[v0])))} ${humanize(shape.values[0]).toLowerCase()} in total`;
    summary = `${count(items.length, shape.label)}${total}. Most ${humanize(shape.values[0]).toLowerCase()}: ${top.join(", ")}.`;
  }
  if (b.hidden) summary += ` The chart shows the top ${TOP_ITEMS} of ${num(items.length)}; the table lists all.`;
  return {
    config: {
      type: "bar",
      data: {
        labels: b.shown.map((r) => labelOf(shape.label, r[li])),
        datasets: shape.values.map((v, i) => ({ label: humanize(v), data: b.shown.map((r) => r[vis[i]]), backgroundColor: color(i) })),
      },
      options: {
        ...base,
        indexAxis: "y",
        scales: { x: { stacked, beginAtZero: true, ticks: { precision: 0 } }, y: { stacked } },
      },
    },
    summary,
    height: Math.max(200, b.shown.length * (shape.values.length > 1 && !stacked ? 36 : 26) + 90),
  };
}

// ---- rendering ----------------------------------------------------------------------------------

function setStatus(text, kind = "info") {
  const status = $("status");
  status.textContent = text;
  status.dataset.kind = kind;
  status.hidden = !text;
}

function markNav(sel, explore = false) {
  for (const a of document.querySelectorAll("#reports-nav a[data-report]")) {
    const name = a.dataset.report;
    a.href = urlOf({ ...sel, report: name, view: "chart", sort: "", page: 1 });
    if (name === sel.report && !explore) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  // Explore keeps the account and window of the view it is opened from.
  const ex = $("nav-explore");
  const q = new URLSearchParams({ view: "explore", account: sel.account });
  writeWindow(q, sel);
  ex.href = explore ? location.href : `${location.pathname}?${q}`;
  if (explore) ex.setAttribute("aria-current", "page");
  else ex.removeAttribute("aria-current");
}

/** Shows the reports' parts or Explore's; the account and window controls serve both. */
function showPage(explore) {
  $("report-head").hidden = $("report-body").hidden = explore;
  $("explore-head").hidden = $("explore-body").hidden = !explore;
  // Explore's questions take no domain lists (event:domain is a filter there) and no flow picker.
  $("include-label").hidden = $("exclude-label").hidden = explore;
  if (explore) $("flow-label").hidden = true;
}

function fillControls(sel, report) {
  const account = $("account");
  const ids = state.accounts.includes(sel.account) || !sel.account ? state.accounts : [...state.accounts, sel.account];
  account.replaceChildren(...ids.map((id) => new Option(id, id, false, id === sel.account)));
  $("days").value = sel.days;
  const w = windowOf(sel);
  $("from").value = w.startDate ?? "";
  $("to").value = w.endDate ?? "";
  $("from").disabled = $("to").disabled = sel.days !== "custom";
  $("include").value = sel.include;
  $("exclude").value = sel.exclude;
  $("flow-label").hidden = !report.flow;
  $("report-title").textContent = reportTitle(report.name);
  $("report-description").textContent = report.description;
  document.title = `${reportTitle(report.name)} · guidegate reports`;
  const isTable = report.chart.type === "table";
  $("show-chart").hidden = $("show-table").hidden = isTable;
}

/**
 * The flow picker: the flows played in the window first (most plays first, with their count, from
 * the flowViews report for the same window and domains), then the account's other flows. Returns
 * the flow to show when the selection names none: the one played most, else the first flow.
 */
async function fillFlows(sel, titles) {
  const key = JSON.stringify([sel.account, windowOf(sel), sel.include, sel.exclude]);
  if (state.flowViews?.key !== key) state.flowViews = { key, rows: (await fetchReport({ ...sel, report: "flowViews" })).rows };
  const played = [...state.flowViews.rows].sort((a, b) => b[1] - a[1] || compare(a[0], b[0]));
  const playedIds = new Set(played.map((r) => r[0]));
  const others = [...titles.entries()]
    .filter(([id, c]) => c.type === "flow" && !playedIds.has(id))
    .sort((a, b) => compare(a[1].title, b[1].title))
    .map(([id]) => id);
  const chosen = sel.flow || played[0]?.[0] || others[0] || "";
  const option = (id, text) => new Option(text, id, false, id === chosen);
  const name = (id) => titles.get(id)?.title ?? id;
  const groups = [];
  if (played.length) {
    const g = document.createElement("optgroup");
    g.label = "Played in this window";
    g.append(...played.map((r) => option(r[0], `${name(r[0])} (${num(r[1])} plays)`)));
    groups.push(g);
  }
  if (others.length) {
    const g = document.createElement("optgroup");
    g.label = "No plays in this window";
    g.append(...others.map((id) => option(id, name(id))));
    groups.push(g);
  }
  if (chosen && !playedIds.has(chosen) && !others.includes(chosen)) groups.unshift(option(chosen, name(chosen)));
  $("flow").replaceChildren(...groups);
  return chosen;
}

function render() {
  const { sel, data } = state;
  const report = state.reports.get(sel.report);
  const titles = data.titles;
  const isTable = report.chart.type === "table";
  const showTable = isTable || sel.view === "table";
  $("show-chart").setAttribute("aria-pressed", String(!showTable));
  $("show-table").setAttribute("aria-pressed", String(showTable));
  state.chart?.destroy();
  state.chart = null;
  const main = $("report");
  main.dataset.rows = String(data.rows.length);

  // `summary` and `searchSuccessVsFailure` always answer rows; all zeros is as empty as no rows.
  const counts = report.columns.flatMap((c, i) => (c.kind === "int" ? [i] : []));
  const empty = !data.rows.length || (counts.length > 0 && data.rows.every((r) => counts.every((i) => r[i] === 0)));
  if (empty) {
    setStatus(
      `Nothing to show: no ${reportTitle(report.name).toLowerCase()} data for this account${report.flow ? " and flow" : ""} in this window (${data.startDate.slice(0, 10)} to ${lastDay(data)}). Try a longer window or other domains.`,
    );
    $("summary").textContent = "";
    $("chart-box").hidden = true;
    $("table-box").hidden = true;
    return;
  }
  setStatus(data.truncated ? `Showing the first ${num(data.rows.length)} rows; the API has more. Narrow the window or domains to see them all.` : "");
  if (isTable) {
    const who = report.columns.some((c) => c.name === "endUserId") ? "end users" : "rows";
    const users = new Set(data.rows.map((r) => r[data.columns.indexOf("endUserId")])).size;
    $("summary").textContent =
      `${num(data.rows.length)} rows${who === "end users" ? ` from ${num(users)} end users` : ""}, ${data.startDate.slice(0, 10)} to ${lastDay(data)}. Sort by any column with its header.`;
    $("chart-box").hidden = true;
  } else {
    const { config, summary, height } = chartOf(report, data, titles);
    $("summary").textContent = summary;
    const box = $("chart-box");
    box.hidden = showTable;
    box.style.height = `${height}px`;
    const canvas = $("chart");
    canvas.setAttribute("aria-label", `${reportTitle(report.name)} chart. ${summary}`);
    if (!showTable) state.chart = new Chart(canvas, config);
  }
  $("table-box").hidden = !showTable;
  if (showTable) renderTable(report, data, titles);
}

async function load({ focus = false } = {}) {
  const generation = ++state.generation;
  const sel = readSelection();
  if (!sel.account) sel.account = state.accounts.includes("demo") ? "demo" : (state.accounts[0] ?? "");
  state.sel = sel;
  const explore = isExplore();
  showPage(explore);
  if (explore) {
    // A report still loading is dropped (its generation is past); Explore draws in its own boxes.
    state.data = null;
    state.chart?.destroy();
    state.chart = null;
    fillControls(sel, state.reports.get(sel.report));
    showPage(true);
    markNav(sel, true);
    if (focus) $("explore-title").focus();
    await exploreView.load(sel.account);
    markNav(sel, true);
    return;
  }
  exploreView.cancel();
  // The URL names the whole selection (the account chosen by default included), so it can be shared.
  history.replaceState(null, "", urlOf(sel));
  const report = state.reports.get(sel.report);
  fillControls(sel, report);
  markNav(sel);
  const main = $("report");
  main.dataset.state = "loading";
  main.setAttribute("aria-busy", "true");
  setStatus("Loading…");
  if (focus) $("report-title").focus();
  try {
    if (!sel.account) throw new ApiError(403, "This key's user has access to no account.");
    const titles = await contentOf(sel.account);
    if (report.flow) {
      const chosen = await fillFlows(sel, titles);
      if (generation !== state.generation) return;
      if (!sel.flow && chosen) {
        sel.flow = chosen;
        history.replaceState(null, "", urlOf(sel));
        markNav(sel);
      }
      if (!sel.flow) throw new ApiError(0, "This account has no flows yet.");
    }
    const data = await fetchReport(sel);
    if (generation !== state.generation) return;
    state.data = { ...data, titles };
    render();
    main.dataset.state = "ready";
  } catch (err) {
    if (generation !== state.generation) return;
    state.data = null;
    state.chart?.destroy();
    state.chart = null;
    $("summary").textContent = "";
    $("chart-box").hidden = true;
    $("table-box").hidden = true;
    main.dataset.state = "error";
    if (err instanceof ApiError && err.status === 401) {
      forget();
      showLogin(err.message);
      return;
    }
    setStatus(err instanceof ApiError ? err.message : `Something went wrong: ${err.message}`, "error");
  } finally {
    if (generation === state.generation) main.removeAttribute("aria-busy");
  }
}

// ---- Explore (explore.js) ----------------------------------------------------------------------------

const exploreView = createExplore({
  $,
  api,
  ApiError,
  COLORS,
  num,
  windowOf,
  readWindow,
  writeWindow,
  setStatus,
  tableView,
  sortRows,
  /** The account and window as the shared controls hold them. */
  sharedControls: () => {
    const days = $("days").value;
    return { account: $("account").value, days, from: days === "custom" ? $("from").value : "", to: days === "custom" ? $("to").value : "" };
  },
  onAuthError: (err) => {
    forget();
    showLogin(err.message);
  },
});

// ---- start ------------------------------------------------------------------------------------------

function buildNav(catalog) {
  const nav = $("reports-nav");
  for (const group of catalog.groups) {
    const h = document.createElement("h2");
    h.id = `group-${group.id}`;
    h.textContent = group.title;
    const ul = document.createElement("ul");
    ul.setAttribute("aria-labelledby", h.id);
    for (const r of group.reports) {
      state.reports.set(r.name, { ...r, group: group.id });
      state.order.push(r.name);
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.dataset.report = r.name;
      a.textContent = reportTitle(r.name);
      if (r.flow) {
        const one = document.createElement("span");
        one.className = "tag";
        one.textContent = "one flow";
        a.append(" ", one);
      }
      a.title = r.description;
      a.href = `?report=${r.name}`;
      a.addEventListener("click", (e) => {
        // Plain clicks stay in the page; a middle click or Ctrl+click opens the link's own URL.
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        go({ ...state.sel, report: r.name, view: "chart", sort: "", dir: "asc", page: 1 }, { focus: true });
      });
      li.append(a);
      ul.append(li);
    }
    nav.append(h, ul);
  }
}

function showLogin(message = "") {
  $("app").hidden = true;
  $("who").hidden = true;
  $("login").hidden = false;
  const m = $("login-message");
  m.textContent = message;
  m.hidden = !message;
  $("login-email").value = sessionStorage.getItem(EMAIL) ?? $("login-email").value;
  (message ? $("login-key") : $("login-email").value ? $("login-key") : $("login-email")).focus();
}

async function enter() {
  let viewer;
  try {
    viewer = (await graphql("query ReportViewer { viewer { email accountIds } }")).viewer;
  } catch (err) {
    if (err.status === 401) forget();
    showLogin(err.message);
    return;
  }
  state.accounts = viewer.accountIds;
  $("login").hidden = true;
  $("app").hidden = false;
  $("who").hidden = false;
  $("who-text").textContent = `Signed in as ${viewer.email}`;
  await load();
}

function wire() {
  $("login").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem(EMAIL, $("login-email").value.trim());
    sessionStorage.setItem(KEY, $("login-key").value.trim());
    $("login-key").value = "";
    enter();
  });
  $("forget").addEventListener("click", () => {
    forget();
    state.content.clear();
    showLogin();
  });
  const apply = (changes = {}) => {
    const days = $("days").value;
    const sel = {
      ...state.sel,
      account: $("account").value,
      days,
      from: days === "custom" ? $("from").value : "",
      to: days === "custom" ? $("to").value : "",
      include: domains($("include").value),
      exclude: domains($("exclude").value),
      flow: $("flow").value,
      page: 1,
      ...changes,
    };
    go(sel);
  };
  $("controls").addEventListener("submit", (e) => {
    e.preventDefault();
    if (isExplore()) applyExplore();
    else apply();
  });
  // On Explore the shared controls re-ask the question shown, with the form's current choices.
  const applyExplore = () => $("ex-form").requestSubmit();
  $("account").addEventListener("change", () => (isExplore() ? applyExplore() : apply({ flow: "" })));
  $("flow").addEventListener("change", () => apply());
  $("days").addEventListener("change", () => {
    if ($("days").value === "custom") {
      // Start from the window shown; the person edits the dates, then applies.
      $("from").disabled = $("to").disabled = false;
      $("from").focus();
    } else if (isExplore()) applyExplore();
    else apply();
  });
  // Chart and table show the same rows: switching redraws, it does not ask the API again.
  const show = (view) => () => {
    state.sel = { ...state.sel, view };
    history.replaceState(null, "", urlOf(state.sel));
    if (state.data) render();
  };
  $("show-chart").addEventListener("click", show("chart"));
  $("show-table").addEventListener("click", show("table"));
  $("download").addEventListener("click", download);
  exploreView.wire((url) => {
    history.pushState(null, "", url);
    return load();
  });
  $("nav-explore").addEventListener("click", (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    history.pushState(null, "", $("nav-explore").href);
    load({ focus: true });
  });
  window.addEventListener("popstate", () => load());
}

/** A label cut to LABEL_MAX characters (code points), "…" marking the cut. */
function shortLabel(text) {
  const chars = Array.from(String(text));
  return chars.length > LABEL_MAX ? `${chars.slice(0, LABEL_MAX - 1).join("")}…` : String(text);
}

/**
 * Every chart of the page (reports and Explore): a long category label (a 150-character search
 * term) would take the axis half the chart's width and still be clipped at its start, so category
 * ticks and legend entries are cut to LABEL_MAX characters; the tooltip's title is the whole label.
 */
function chartDefaults() {
  Chart.defaults.scales.category.ticks.callback = function (value) {
    const label = this.getLabelForValue(value);
    return typeof label === "string" ? shortLabel(label) : label;
  };
  const legendLabels = Chart.defaults.plugins.legend.labels.generateLabels;
  Chart.defaults.plugins.legend.labels.generateLabels = (chart) => legendLabels(chart).map((item) => ({ ...item, text: shortLabel(item.text) }));
}

async function start() {
  chartDefaults();
  const catalog = await (await fetch("/reports/catalog.json")).json();
  buildNav(catalog);
  wire();
  if (credentials()) await enter();
  else showLogin();
}

start();
