// The report viewer's Explore page (GET /reports?view=explore): ad hoc questions over the engagement
// events through the public Explore API (docs/explore.md): `query`, `funnel` and `retention`.
// Plain JavaScript like viewer.js, served as written; viewer.js imports it and hands it what the two
// pages share (the API call with the key, the window, colours, number formats), so the key handling,
// error sentences and window presets are the reports' own. The whole selection lives in the URL
// (`view=explore&tab=…`), so a link reopens the same question.
/* global Chart */

/** Lines (or bar series) drawn at most; past it the smallest are summed into one "other". */
export const MAX_SERIES = 6;
/** Bars drawn per chart; the table lists every row. */
const TOP_BARS = 25;
/** Rows asked of `query` (its largest page); the table says when the API has more. */
const QUERY_LIMIT = 10_000;
const TABS = ["query", "funnel", "retention"];
/** Metrics that add up across lines (an "other" line may sum them), whole numbers all; averages and eventsPerUser do not. */
const ADDITIVE = ["events", "users", "sum:step", "sum:resultCount"];
const METRICS = ["events", "users", "eventsPerUser", "sum:step", "sum:resultCount", "avg:step", "avg:resultCount"];
const EVENT_DIMENSIONS = [
  "event:type",
  "event:flowId",
  "event:contentId",
  "event:widget",
  "event:domain",
  "event:step",
  "event:searchTerm",
  "event:actionId",
  "event:useful",
  "event:endUserId",
];
/** Filterable but not a grouping dimension (the API answers 400 for it as a dimension). */
const FILTER_ONLY = ["event:resultCount"];
const OPERATORS = ["is", "isNot", "contains", "gt", "lt"];
const INTERVALS = ["", "hour", "day", "week", "month"];
const PERIODS = ["day", "week", "month"];
const MAX_DIMENSIONS = 3;
/** Metrics a query takes at most (the API's limit). */
const MAX_METRICS = 6;
/** Conversion windows offered for funnels (ms); the API takes any up to 366 days. */
const WINDOWS = [
  ["3600000", "1 hour"],
  ["86400000", "1 day"],
  ["604800000", "7 days"],
  ["2592000000", "30 days"],
];
const DEFAULT_WINDOW = "604800000";

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const json = (s, fallback) => {
  try {
    const v = JSON.parse(s);
    return v ?? fallback;
  } catch {
    return fallback;
  }
};
const clampInt = (s, min, max, dflt) => {
  const n = Number.parseInt(s ?? "", 10);
  return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : dflt;
};
/** Filter rows as the editor holds them: [dimension, operator, value text]. */
const cleanRows = (v) =>
  (Array.isArray(v) ? v : [])
    .filter((r) => Array.isArray(r) && typeof r[0] === "string" && OPERATORS.includes(r[1]))
    .map((r) => [r[0], r[1], String(r[2] ?? "")]);

/** Dimensions whose values are numbers, and the one whose values are true or false (the API's types). */
const NUMBER_DIMENSIONS = ["event:step", "event:resultCount"];
const BOOLEAN_DIMENSIONS = ["event:useful"];
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const listOf = (text) =>
  text
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");

/**
 * A filter row's value as the API takes it (`{ value }`), or why it cannot be (`{ problem }`): a
 * number for gt/lt; a list for is/isNot/contains (comma-separated), of numbers for event:step and
 * event:resultCount and of true/false for event:useful (`null` in those lists: a missing value).
 * Nothing is changed to fit: a value of the wrong kind is refused at its row.
 */
function parseRow([dim, op, text]) {
  if (op === "gt" || op === "lt") {
    const t = text.trim();
    return NUMBER.test(t) ? { value: Number(t) } : { problem: `${op} compares numbers: "${t}" is not a number.` };
  }
  const values = listOf(text);
  if (op === "contains") return { value: values };
  if (NUMBER_DIMENSIONS.includes(dim)) {
    const bad = values.find((v) => v !== "null" && !NUMBER.test(v));
    if (bad !== undefined) return { problem: `${dim} holds numbers: "${bad}" is not a number (null matches a missing value).` };
    return { value: values.map((v) => (v === "null" ? null : Number(v))) };
  }
  if (BOOLEAN_DIMENSIONS.includes(dim)) {
    const words = new Map([
      ["true", true],
      ["false", false],
      ["null", null],
    ]);
    const bad = values.find((v) => !words.has(v.toLowerCase()));
    if (bad !== undefined) return { problem: `${dim} is true or false: "${bad}" is neither (null matches a missing value).` };
    return { value: values.map((v) => words.get(v.toLowerCase())) };
  }
  return { value: values };
}

/** A filter row as the API's condition; a value the page refused goes as written (the API answers 400). */
function condition([dim, op, text]) {
  const { value, problem } = parseRow([dim, op, text]);
  if (problem) return [op, dim, op === "gt" || op === "lt" ? text.trim() : listOf(text)];
  return [op, dim, value];
}
const conditions = (rows) => rows.filter((r) => r[0] && r[2].trim() !== "").map(condition);

// ---- time buckets, as the API makes them (src/domains/explore/buckets.ts) ------------------------

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The API's default window when a date is not given (src/domains/reports/window.ts). */
const DEFAULT_DAYS = 30;
const MAX_BUCKETS = 1_000;

/** The window [from, to) the API reads for the page's dates (a date-only end includes its day). */
function windowMs({ startDate, endDate }, now = Date.now()) {
  const start = startDate ? Date.parse(`${startDate}T00:00:00Z`) : null;
  const end = endDate ? Date.parse(`${endDate}T00:00:00Z`) + DAY : null;
  if (start !== null && end !== null) return { from: start, to: end };
  if (start !== null) return { from: start, to: Math.max(start, now) };
  if (end !== null) return { from: end - DEFAULT_DAYS * DAY, to: end };
  return { from: now - DEFAULT_DAYS * DAY, to: now };
}

/**
 * The label of every bucket that meets [from, to) in the zone, as the API labels them: local
 * wall-clock starts (the full hour, 00:00, Monday, the 1st), DST days 23 or 25 hours long, an hour
 * skipped by a spring-forward night without a bucket. With dimensions the API lists only the
 * combinations with events, so the page makes the x axis itself.
 */
function bucketLabels(from, to, interval, timeZone) {
  const f = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
  const wall = (t) => {
    const p = {};
    for (const x of f.formatToParts(new Date(t))) if (x.type !== "literal") p[x.type] = Number(x.value);
    const second = Math.floor(t / 1000) * 1000;
    return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) + (t - second);
  };
  const instantOf = (local) => {
    const c = [local - (wall(local) - local)];
    c.push(local - (wall(c[0]) - c[0]));
    const exact = c.filter((x) => wall(x) === local).sort((a, b) => a - b);
    if (exact.length) return exact[0];
    let lo = Math.min(...c) - 3 * HOUR;
    let hi = Math.max(...c) + 3 * HOUR;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (wall(mid) >= local) hi = mid;
      else lo = mid;
    }
    return hi;
  };
  const floor = (local) => {
    const d = new Date(local);
    const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    if (interval === "hour") return day + d.getUTCHours() * HOUR;
    if (interval === "day") return day;
    if (interval === "week") return day - ((d.getUTCDay() + 6) % 7) * DAY;
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  };
  const next = (local) => {
    const d = new Date(local);
    if (interval === "hour") return local + HOUR;
    if (interval === "day") return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
    if (interval === "week") return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 7);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  };
  const label = (local) => {
    const iso = new Date(local).toISOString();
    return interval === "hour" ? `${iso.slice(0, 13)}:00` : iso.slice(0, 10);
  };
  const out = [];
  if (!(from < to)) return out;
  let local = floor(wall(from));
  let start = instantOf(local);
  while (start < to && out.length <= MAX_BUCKETS) {
    const nl = next(local);
    const end = instantOf(nl);
    if (end > start) out.push(label(local));
    local = nl;
    start = end;
  }
  return out;
}

export function createExplore(h) {
  const { $, api, ApiError, COLORS, num, windowOf, readWindow, writeWindow, onAuthError, setStatus, tableView, sortRows } = h;
  const dec = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });
  const color = (i) => COLORS[i % COLORS.length];
  const state = {
    sel: null,
    data: null,
    chart: null,
    generation: 0,
    fields: new Map(),
    eventDims: EVENT_DIMENSIONS,
    notes: 0,
    view: { sort: "", dir: "asc", page: 1 },
  };

  // ---- the selection ----------------------------------------------------------------------------

  function read(q) {
    const tab = TABS.includes(q.get("tab")) ? q.get("tab") : "query";
    const metrics = (q.get("metrics") ?? "events,users").split(",").filter((m) => METRICS.includes(m));
    return {
      ...readWindow(q),
      account: q.get("account") ?? "",
      tab,
      metrics: metrics.length ? metrics : ["events"],
      dims: (q.get("dims") ?? "")
        .split(",")
        .filter((d) => d)
        .slice(0, MAX_DIMENSIONS),
      filters: cleanRows(json(q.get("filters"), [])),
      interval: INTERVALS.includes(q.get("interval")) ? q.get("interval") : "",
      tz: q.get("tz") || browserZone(),
      steps: (Array.isArray(json(q.get("steps"), null))
        ? json(q.get("steps"), [])
        : [[["event:type", "is", "flow_started"]], [["event:type", "is", "flow_completed"]]]
      )
        .slice(0, 10)
        .map(cleanRows),
      conversion: WINDOWS.some(([v]) => v === q.get("conversion")) ? q.get("conversion") : DEFAULT_WINDOW,
      breakdown: q.get("breakdown") ?? "",
      start: cleanRows(json(q.get("start"), [["event:type", "is", "flow_started"]])),
      ret: cleanRows(json(q.get("return"), [])),
      period: PERIODS.includes(q.get("period")) ? q.get("period") : "week",
      periods: clampInt(q.get("periods"), 1, 52, 8),
    };
  }

  /** The URL of a selection: only what its tab uses, so a link says what it shows. */
  function url(sel) {
    const q = new URLSearchParams({ view: "explore" });
    if (sel.account) q.set("account", sel.account);
    writeWindow(q, sel);
    q.set("tab", sel.tab);
    if (sel.tab === "query") {
      q.set("metrics", sel.metrics.join(","));
      if (sel.dims.length) q.set("dims", sel.dims.join(","));
      if (sel.filters.length) q.set("filters", JSON.stringify(sel.filters));
      if (sel.interval) q.set("interval", sel.interval);
    } else if (sel.tab === "funnel") {
      q.set("steps", JSON.stringify(sel.steps));
      q.set("conversion", sel.conversion);
      if (sel.breakdown) q.set("breakdown", sel.breakdown);
    } else {
      q.set("start", JSON.stringify(sel.start));
      if (sel.ret.length) q.set("return", JSON.stringify(sel.ret));
      q.set("period", sel.period);
      q.set("periods", String(sel.periods));
    }
    if (sel.tab !== "funnel") q.set("tz", sel.tz);
    return `${location.pathname}?${q}`;
  }

  /** The API's question for a selection: [route, body]. */
  function question(sel) {
    const w = windowOf(sel);
    const window = {};
    if (w.startDate) window.startDate = w.startDate;
    if (w.endDate) window.endDate = w.endDate;
    if (sel.tab === "query") {
      const body = { metrics: sel.metrics, dimensions: sel.dims, filters: conditions(sel.filters), limit: QUERY_LIMIT, ...window };
      if (sel.interval) Object.assign(body, { interval: sel.interval, timeZone: sel.tz });
      return ["query", body];
    }
    if (sel.tab === "funnel") {
      const body = { steps: sel.steps.map((rows) => ({ filters: conditions(rows) })), conversionWindowMs: Number(sel.conversion), ...window };
      if (sel.breakdown) body.breakdown = sel.breakdown;
      return ["funnel", body];
    }
    const body = { startEvent: { filters: conditions(sel.start) }, period: sel.period, periods: sel.periods, timeZone: sel.tz, ...window };
    if (conditions(sel.ret).length) body.returnEvent = { filters: conditions(sel.ret) };
    return ["retention", body];
  }

  const ask = (sel, route, body, query = "") =>
    api(`/v1/accounts/${encodeURIComponent(sel.account)}/analytics/${route}${query}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  /** The account's end-user fields (`user:<field>` dimensions), from the end-user schema route. */
  function fieldsOf(account) {
    let loaded = state.fields.get(account);
    if (!loaded) {
      loaded = (async () => {
        const body = await (await api(`/v1/accounts/${encodeURIComponent(account)}/endUserSchema`)).json();
        // Encrypted fields hold ciphertext only the service reads: the API refuses them as dimensions.
        return body.data.filter((f) => f.type !== "encrypted_string").map((f) => `user:${f.name}`);
      })();
      loaded.catch(() => state.fields.delete(account));
      state.fields.set(account, loaded);
    }
    return loaded;
  }

  // ---- the form -----------------------------------------------------------------------------------

  const option = (value, text, selected) => new Option(text ?? value, value, false, value === selected);

  /** A filter-row editor: dimension, operator, value, and a Remove button per row; Add adds one. */
  function rowEditor(box, rows, dims, label) {
    box.replaceChildren();
    const list = document.createElement("div");
    list.className = "rows";
    const more = document.createElement("button");
    const add = (row) => {
      const line = document.createElement("div");
      line.className = "filter-row";
      const dim = document.createElement("select");
      dim.setAttribute("aria-label", `${label}: dimension`);
      dim.dataset.part = "dim";
      const known = dims.includes(row[0]) ? dims : [...dims, row[0]];
      dim.append(...known.map((d) => option(d, d, row[0])));
      const op = document.createElement("select");
      op.setAttribute("aria-label", `${label}: operator`);
      op.dataset.part = "op";
      op.append(...OPERATORS.map((o) => option(o, o, row[1])));
      const value = document.createElement("input");
      value.type = "text";
      value.spellcheck = false;
      value.dataset.part = "value";
      value.setAttribute("aria-label", `${label}: value (comma-separated for a list)`);
      value.placeholder = "value, value…";
      value.value = row[2];
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", `Remove this ${label.toLowerCase()} row`);
      remove.addEventListener("click", () => {
        // The focus goes to the row before's Remove (else the next row's, else Add), not to the page's top.
        const near = line.previousElementSibling ?? line.nextElementSibling;
        line.remove();
        (near?.querySelector("button") ?? more).focus();
      });
      line.append(dim, op, value, remove);
      list.append(line);
    };
    for (const r of rows) add(r);
    more.type = "button";
    more.className = "add";
    more.textContent = `Add ${label.toLowerCase()}`;
    more.addEventListener("click", () => {
      add([dims[0], "is", ""]);
      list.lastElementChild.querySelector("[data-part=dim]").focus();
    });
    box.append(list, more);
  }
  const rowsOf = (box) =>
    [...box.querySelectorAll(".filter-row")].map((line) => ["dim", "op", "value"].map((p) => line.querySelector(`[data-part=${p}]`).value));

  /**
   * Marks each row of the tab's editors whose value the API could not take as written (a sentence
   * at the row, `aria-invalid` on its value box) and clears the others; returns the first bad box.
   */
  function checkRows(tab) {
    let first = null;
    for (const line of $(`ex-${tab}`).querySelectorAll(".filter-row")) {
      const row = ["dim", "op", "value"].map((p) => line.querySelector(`[data-part=${p}]`).value);
      const problem = row[0] && row[2].trim() !== "" ? parseRow(row).problem : undefined;
      const box = line.querySelector("[data-part=value]");
      let note = line.querySelector(".row-problem");
      if (!problem) {
        note?.remove();
        box.removeAttribute("aria-invalid");
        box.removeAttribute("aria-describedby");
        continue;
      }
      if (!note) {
        note = document.createElement("span");
        note.className = "row-problem";
        note.id = `ex-problem-${++state.notes}`;
        line.append(note);
      }
      note.textContent = problem;
      box.setAttribute("aria-invalid", "true");
      box.setAttribute("aria-describedby", note.id);
      first ??= box;
    }
    return first;
  }
  const ROWS_REFUSED = "A filter value does not fit its dimension: see the marked row. Nothing was asked.";

  /** At most MAX_METRICS metrics (the API's limit): past that the boxes not ticked are disabled. */
  function limitMetrics() {
    const boxes = [...$("ex-metrics").querySelectorAll("input")];
    const full = boxes.filter((c) => c.checked).length >= MAX_METRICS;
    for (const c of boxes) c.disabled = full && !c.checked;
  }

  function fillForm(sel, fields) {
    const dims = [...EVENT_DIMENSIONS, ...fields];
    const filterDims = [...EVENT_DIMENSIONS, ...FILTER_ONLY, ...fields];
    for (const t of TABS) {
      $(`ex-tab-${t}`).setAttribute("aria-pressed", String(t === sel.tab));
      $(`ex-${t}`).hidden = t !== sel.tab;
    }
    $("ex-tz-label").hidden = sel.tab === "funnel";
    $("ex-tz").value = sel.tz;
    // query
    $("ex-metrics").replaceChildren(
      ...METRICS.map((m) => {
        const l = document.createElement("label");
        const c = document.createElement("input");
        c.type = "checkbox";
        c.name = "metric";
        c.value = m;
        c.checked = sel.metrics.includes(m);
        l.append(c, ` ${m}`);
        return l;
      }),
    );
    limitMetrics();
    for (let i = 0; i < MAX_DIMENSIONS; i++) {
      const s = $(`ex-dim-${i}`);
      const cur = sel.dims[i] ?? "";
      const known = !cur || dims.includes(cur) ? dims : [...dims, cur];
      s.replaceChildren(option("", "—", cur), ...known.map((d) => option(d, d, cur)));
    }
    rowEditor($("ex-filters"), sel.filters, filterDims, "Filter");
    $("ex-interval").value = sel.interval;
    // funnel
    state.eventDims = filterDims.filter((d) => d.startsWith("event:"));
    fillSteps(sel.steps);
    $("ex-conversion").replaceChildren(...WINDOWS.map(([v, t]) => option(v, t, sel.conversion)));
    const breakdowns = ["event:domain", ...fields];
    $("ex-breakdown").replaceChildren(option("", "none", sel.breakdown), ...breakdowns.map((d) => option(d, d, sel.breakdown)));
    // retention
    rowEditor(
      $("ex-start"),
      sel.start,
      filterDims.filter((d) => d.startsWith("event:")),
      "Start event condition",
    );
    rowEditor(
      $("ex-return"),
      sel.ret,
      filterDims.filter((d) => d.startsWith("event:")),
      "Return event condition",
    );
    $("ex-period").value = sel.period;
    $("ex-periods").value = String(sel.periods);
  }

  /** The funnel's steps, a fieldset of condition rows each. */
  function fillSteps(steps) {
    const box = $("ex-steps");
    box.replaceChildren();
    steps.forEach((rows, i) => {
      const f = document.createElement("fieldset");
      f.className = "step";
      const legend = document.createElement("legend");
      legend.textContent = `Step ${i + 1}`;
      const inner = document.createElement("div");
      f.append(legend, inner);
      box.append(f);
      rowEditor(inner, rows, state.eventDims, `Step ${i + 1} condition`);
    });
    $("ex-add-step").disabled = steps.length >= 10;
    $("ex-remove-step").disabled = steps.length <= 2;
  }
  const formSteps = () => [...$("ex-steps").querySelectorAll("fieldset.step")].map((f) => rowsOf(f));

  /** The selection as the form holds it (the window and account come from the shared controls). */
  function fromForm(base) {
    const steps = formSteps();
    return {
      ...base,
      tz: $("ex-tz").value.trim() || browserZone(),
      metrics: [...$("ex-metrics").querySelectorAll("input:checked")].map((c) => c.value),
      dims: [0, 1, 2].map((i) => $(`ex-dim-${i}`).value).filter((d, i, all) => d && all.indexOf(d) === i),
      filters: rowsOf($("ex-filters")),
      interval: $("ex-interval").value,
      steps,
      conversion: $("ex-conversion").value,
      breakdown: $("ex-breakdown").value,
      start: rowsOf($("ex-start")),
      ret: rowsOf($("ex-return")),
      period: $("ex-period").value,
      periods: clampInt($("ex-periods").value, 1, 52, 8),
    };
  }

  // ---- drawing ------------------------------------------------------------------------------------

  const cell = (v) => (v === null || v === undefined ? "—" : typeof v === "number" ? dec.format(v) : String(v));
  const rate = (x) => (x * 100).toFixed(1);
  const base = { responsive: true, maintainAspectRatio: false, animation: false, plugins: { legend: { position: "bottom" } } };

  /**
   * Series ranked by size, at most MAX_SERIES: `{ series, summed, left }`. Past that, for a metric
   * that adds up (counts and sums) the largest MAX_SERIES - 1 and one "N other values (summed)" (for
   * distinct users a sum all the same, so the label says so); for one that does not (averages and
   * eventsPerUser, whose sum means nothing) the MAX_SERIES highest by their mean, the rest left out.
   */
  function capSeries(series, additive = true) {
    if (series.length <= MAX_SERIES) return { series, summed: 0, left: 0 };
    const defined = (s) => s.values.filter((v) => v !== null && v !== undefined);
    const size = additive
      ? (s) => s.values.reduce((a, v) => a + (v ?? 0), 0)
      : (s) => (defined(s).length ? defined(s).reduce((a, v) => a + v, 0) / defined(s).length : Number.NEGATIVE_INFINITY);
    const ranked = [...series].sort((a, b) => size(b) - size(a));
    if (!additive) return { series: ranked.slice(0, MAX_SERIES), summed: 0, left: ranked.length - MAX_SERIES };
    const kept = ranked.slice(0, MAX_SERIES - 1);
    const rest = ranked.slice(MAX_SERIES - 1);
    const values = rest[0].values.map((_, i) => rest.reduce((a, s) => a + (s.values[i] ?? 0), 0));
    return { series: [...kept, { label: `${num(rest.length)} other values (summed)`, values }], summed: rest.length, left: 0 };
  }

  /** A cell's text: "—" for a missing value, a column's own format, else numbers as the page writes them. */
  const cellText = (column, v) => (v === null || v === undefined ? "—" : column.format ? column.format(v) : cell(v));
  const oneDecimal = (v) => v.toFixed(1);

  /**
   * The answer's table, the reports' own (tableView: headers that sort, pages of 25, a scroll box
   * the keyboard reaches): `columns` as [{ name, numeric, format }], `rows` as the API's values.
   * Its sort and page last until the next answer (state.view), not in the URL.
   */
  function table(columns, rows, caption, { shade } = {}) {
    tableView($("ex-table"), {
      columns: columns.map((c) => ({ name: c.name, label: c.name, numeric: c.numeric })),
      rows,
      view: state.view,
      caption: () => caption,
      text: (row, i) => cellText(columns[i], row[i]),
      decorate: shade && ((td, row, i) => shade(td, i, row)),
      onView: (v) => {
        state.view = v;
      },
    });
  }

  /** `asked`: the question's body, whose window the x axis spans. */
  function drawQuery(sel, data, asked) {
    const { columns, rows } = data;
    const hasTime = columns[0] === "time";
    const dimAt = columns.map((c, i) => (c !== "time" && !METRICS.includes(c) ? i : -1)).filter((i) => i >= 0);
    const metricAt = columns.map((c, i) => (METRICS.includes(c) ? i : -1)).filter((i) => i >= 0);
    const key = (r) => dimAt.map((i) => cell(r[i])).join(" · ");
    const first = metricAt[0];
    const gap = (m) => (/^avg:/.test(columns[m]) ? null : 0);
    // Counts and sums are whole numbers: their axis has no 0.5 ticks (averages may).
    const countTicks = (ms) => (ms.every((m) => ADDITIVE.includes(columns[m])) ? { precision: 0 } : {});
    let config;
    let summary;
    if (hasTime) {
      // Every bucket of the window, events or not (and any the API answered, should the two differ).
      let buckets = [];
      try {
        const { from, to } = windowMs(asked);
        buckets = bucketLabels(from, to, sel.interval, sel.tz);
      } catch {
        // A zone this browser does not know: the buckets the API answered.
      }
      const times = [...new Set([...buckets, ...rows.map((r) => r[0])])].sort();
      const at = new Map(times.map((t, i) => [t, i]));
      let series;
      let capped = { summed: 0, left: 0 };
      if (dimAt.length) {
        // One line per combination of the dimensions, of the first metric.
        const by = new Map();
        for (const r of rows) {
          const k = key(r);
          if (!by.has(k)) by.set(k, new Array(times.length).fill(gap(first)));
          by.get(k)[at.get(r[0])] = r[first];
        }
        capped = capSeries(
          [...by.entries()].map(([label, values]) => ({ label, values })),
          ADDITIVE.includes(columns[first]),
        );
        series = capped.series;
      } else series = metricAt.map((m) => ({ label: columns[m], values: times.map((t) => rows.find((r) => r[0] === t)?.[m] ?? gap(m)) }));
      config = {
        type: "line",
        data: {
          labels: times,
          datasets: series.map((s, i) => ({
            label: s.label,
            data: s.values,
            borderColor: color(i),
            backgroundColor: color(i),
            pointRadius: 2,
            spanGaps: true,
            // Monotone: a line never overshoots its points (no dip below zero between two days).
            cubicInterpolationMode: "monotone",
          })),
        },
        options: {
          ...base,
          interaction: { mode: "index", intersect: false },
          scales: { y: { beginAtZero: true, ticks: countTicks(dimAt.length ? [first] : metricAt) } },
        },
      };
      summary = `${dimAt.length ? `${columns[first]} per ${sel.interval} by ${dimAt.map((i) => columns[i]).join(" and ")}` : `${metricAt.map((m) => columns[m]).join(", ")} per ${sel.interval}`} in ${sel.tz}, ${times[0]} to ${times[times.length - 1]} (${num(times.length)} ${sel.interval}s${
        capped.summed
          ? `; the ${MAX_SERIES - 1} largest lines and the other ${num(capped.summed)} summed as one`
          : capped.left
            ? `; the ${MAX_SERIES} lines of the highest ${columns[first]}, the other ${num(capped.left)} left out (the table lists them)`
            : ""
      }).`;
    } else {
      const shown = rows.slice(0, TOP_BARS);
      const labels = dimAt.length ? shown.map(key) : metricAt.map((m) => columns[m]);
      const datasets = dimAt.length
        ? metricAt.map((m, i) => ({ label: columns[m], data: shown.map((r) => r[m]), backgroundColor: color(i) }))
        : [{ label: "value", data: metricAt.map((m) => rows[0]?.[m] ?? 0), backgroundColor: metricAt.map((_, i) => color(i)) }];
      config = {
        type: "bar",
        data: { labels, datasets },
        options: {
          ...base,
          indexAxis: dimAt.length ? "y" : "x",
          plugins: { legend: { display: dimAt.length > 0, position: "bottom" } },
          scales: { [dimAt.length ? "x" : "y"]: { beginAtZero: true, ticks: countTicks(metricAt) } },
        },
      };
      summary = dimAt.length
        ? `${num(rows.length)} ${rows.length === 1 ? "combination" : "combinations"} of ${dimAt.map((i) => columns[i]).join(", ")}.${rows.length > TOP_BARS ? ` The chart shows the first ${TOP_BARS}; the table lists all.` : ""}`
        : `${metricAt.map((m) => `${columns[m]}: ${cell(rows[0]?.[m])}`).join("; ")}.`;
    }
    const totals = metricAt.map((m, i) => `${columns[m]} ${cell(data.totals[i])}`).join(", ");
    summary += ` Totals over the window: ${totals}.`;
    const height = config.type === "bar" && dimAt.length ? Math.max(220, Math.min(rows.length, TOP_BARS) * 28 * Math.max(1, metricAt.length / 2) + 90) : 380;
    table(
      columns.map((name, i) => ({ name, numeric: metricAt.includes(i) })),
      rows,
      `${num(rows.length)} ${rows.length === 1 ? "row" : "rows"}${data.cursor ? ` (the first ${num(rows.length)}; the API has more)` : ""}`,
    );
    return { config, summary, height };
  }

  /** The funnel's table as shown (and as its CSV): [columns, rows]. */
  function funnelTable(data) {
    const groups = data.groups ?? [{ value: undefined, steps: data.steps }];
    const withValue = Boolean(data.groups);
    const columns = [
      ...(withValue ? [{ name: data.breakdown }] : []),
      { name: "step", numeric: true },
      { name: "users", numeric: true },
      { name: "conversion from first (%)", numeric: true, format: oneDecimal },
      { name: "conversion from previous (%)", numeric: true, format: oneDecimal },
      { name: "median time from previous (s)", numeric: true, format: oneDecimal },
    ];
    const rows = groups.flatMap((g) =>
      g.steps.map((s) => [
        ...(withValue ? [g.value] : []),
        s.step,
        s.users,
        s.conversionFromFirst * 100,
        s.conversionFromPrevious * 100,
        s.medianMsFromPrevious === null ? null : s.medianMsFromPrevious / 1000,
      ]),
    );
    return [columns, rows];
  }

  function drawFunnel(sel, data) {
    const groups = data.groups ?? [{ value: "all users", steps: data.steps }];
    const stepCount = groups[0]?.steps.length ?? sel.steps.length;
    const labels = Array.from({ length: stepCount }, (_, i) => `Step ${i + 1}`);
    // Users by breakdown value split the entrants: the rest summed is exact.
    const { series } = capSeries(groups.map((g) => ({ label: cell(g.value), values: g.steps.map((s) => s.users) })));
    if (!data.groups) {
      const s = data.steps;
      labels.forEach((_, i) => {
        labels[i] += `: ${num(s[i].users)} (${rate(s[i].conversionFromFirst)}%)`;
      });
    }
    const config = {
      type: "bar",
      data: { labels, datasets: series.map((s, i) => ({ label: s.label, data: s.values, backgroundColor: color(i) })) },
      options: {
        ...base,
        plugins: { legend: { display: Boolean(data.groups), position: "top" } },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
      },
    };
    const [columns, rows] = funnelTable(data);
    table(columns, rows, `Users per step${data.groups ? ` by ${data.breakdown}` : ""}`);
    const all = groups.map((g) => g.steps);
    const entered = all.reduce((a, s) => a + (s[0]?.users ?? 0), 0);
    const finished = all.reduce((a, s) => a + (s[s.length - 1]?.users ?? 0), 0);
    const summary = `${num(entered)} users entered the funnel; ${num(finished)} reached step ${stepCount} (${entered ? rate(finished / entered) : "0.0"}%) within ${WINDOWS.find(([v]) => v === sel.conversion)?.[1] ?? "the window"}.`;
    return { config, summary, height: 320 };
  }

  /** The retention grid as shown (and as its CSV): [columns, rows]; cells past now are empty. */
  function retentionTable(data) {
    const width = Math.max(0, ...data.cohorts.map((c) => c.retained.length - 1));
    const columns = [
      { name: "cohort" },
      { name: "users", numeric: true },
      ...Array.from({ length: width }, (_, k) => ({ name: `${data.period} ${k + 1}`, numeric: true })),
    ];
    const rows = data.cohorts.map((c) => [c.start, c.users, ...Array.from({ length: width }, (_, k) => c.retained[k + 1] ?? null)]);
    return [columns, rows];
  }

  function drawRetention(sel, data) {
    const [columns, rows] = retentionTable(data);
    table(columns, rows, `Users retained per ${data.period} after their cohort's (${sel.tz}); shaded by the share of the cohort`, {
      shade: (td, i, row) => {
        if (i < 2 || row[i] === null || !row[1]) return;
        const r = row[i] / row[1];
        // CSSOM, not a style attribute: the CSP's style-src allows it.
        td.style.backgroundColor = `rgba(0, 114, 178, ${(0.08 + r * 0.8).toFixed(3)})`;
        if (r > 0.5) td.style.color = "#fff";
        td.title = `${rate(r)}% of ${num(row[1])}`;
        td.dataset.rate = rate(r);
      },
    });
    const users = rows.reduce((a, r) => a + r[1], 0);
    const next = rows.filter((r) => r[2] !== null && r[2] !== undefined);
    const back = next.reduce((a, r) => a + r[2], 0);
    const of = next.reduce((a, r) => a + r[1], 0);
    return {
      config: null,
      summary: `${num(rows.length)} cohorts, ${num(users)} users.${of ? ` ${rate(back / of)}% came back in the ${data.period} after their first (${num(back)} of ${num(of)}).` : ""}`,
    };
  }

  // ---- CSV ------------------------------------------------------------------------------------------

  const csvField = (s) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  const csvText = (v) => {
    if (v === null || v === undefined) return "";
    const s = String(v);
    // As the API: text a spreadsheet would run as a formula is kept text.
    return typeof v === "string" && /^[=+\-@\t\r]/.test(s) && !/^-?\d/.test(s) ? `'${s}` : s;
  };
  /** A table's CSV: its rows in the order shown, each cell's text without thousands separators, a missing value empty. */
  const csvOf = (columns, rows) => {
    const index = columns.findIndex((c) => c.name === state.view.sort);
    const lines = [
      columns.map((c) => c.name),
      ...sortRows(rows, index, state.view.dir).map((r) => r.map((v, i) => (v !== null && v !== undefined && columns[i].format ? columns[i].format(v) : v))),
    ];
    return `${lines.map((r) => r.map((v) => csvField(csvText(v))).join(",")).join("\r\n")}\r\n`;
  };

  function save(blob, name) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
  }

  async function download() {
    const { sel, data } = state;
    if (!data) return;
    try {
      if (sel.tab === "query") {
        // The API's own CSV of the same question: every row, the API's quoting and file name.
        const [route, body] = question(sel);
        const res = await ask(sel, route, body, "?format=csv");
        const name = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? "explore_query.csv";
        save(await res.blob(), name);
        return;
      }
      const [columns, rows] = sel.tab === "funnel" ? funnelTable(data) : retentionTable(data);
      save(new Blob([csvOf(columns, rows)], { type: "text/csv;charset=utf-8" }), `explore_${sel.tab}.csv`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return onAuthError(err);
      setStatus(err instanceof ApiError ? err.message : `Something went wrong: ${err.message}`, "error");
    }
  }

  // ---- loading ------------------------------------------------------------------------------------

  function clear() {
    state.chart?.destroy();
    state.chart = null;
    $("ex-chart-box").hidden = true;
    $("ex-table").replaceChildren();
    $("ex-summary").textContent = "";
  }

  async function load(account) {
    const generation = ++state.generation;
    const sel = read(new URLSearchParams(location.search));
    sel.account = account;
    state.sel = sel;
    history.replaceState(null, "", url(sel));
    // The reports' main element carries the state, so "ready" and "busy" read the same on both pages.
    const main = $("report");
    main.dataset.state = "loading";
    main.setAttribute("aria-busy", "true");
    setStatus("Loading…");
    document.title = "Explore · guidegate reports";
    try {
      if (!sel.account) throw new ApiError(403, "This key's user has access to no account.");
      const fields = await fieldsOf(sel.account);
      if (generation !== state.generation) return;
      fillForm(sel, fields);
      if (checkRows(sel.tab)) {
        // A shared link with a value of the wrong kind: said at its row, not asked as another question.
        state.data = null;
        clear();
        main.dataset.state = "error";
        setStatus(ROWS_REFUSED, "error");
        return;
      }
      const [route, body] = question(sel);
      const data = await (await ask(sel, route, body)).json();
      if (generation !== state.generation) return;
      state.data = data;
      state.view = { sort: "", dir: "asc", page: 1 };
      clear();
      const empty =
        route === "query" ? !data.rows.length : route === "funnel" ? !(data.groups ?? [data]).some((g) => g.steps?.[0]?.users) : !data.cohorts.length;
      main.dataset.rows = String(route === "query" ? data.rows.length : route === "funnel" ? (data.groups ?? [data]).length : data.cohorts.length);
      if (empty) {
        setStatus("Nothing to show: no events match this question in this window. Try a longer window or fewer filters.");
      } else {
        setStatus(
          route === "query" && data.cursor ? `Showing the first ${num(data.rows.length)} rows; the API has more. Narrow the question to see them all.` : "",
        );
        const { config, summary, height } =
          route === "query" ? drawQuery(sel, data, body) : route === "funnel" ? drawFunnel(sel, data) : drawRetention(sel, data);
        $("ex-summary").textContent = summary;
        if (config) {
          const box = $("ex-chart-box");
          box.hidden = false;
          box.style.height = `${height}px`;
          const canvas = $("ex-chart");
          canvas.setAttribute("aria-label", `Explore ${route} chart. ${summary}`);
          state.chart = new Chart(canvas, config);
        }
      }
      main.dataset.state = "ready";
    } catch (err) {
      if (generation !== state.generation) return;
      state.data = null;
      clear();
      main.dataset.state = "error";
      if (err instanceof ApiError && err.status === 401) return onAuthError(err);
      setStatus(err instanceof ApiError ? err.message : `Something went wrong: ${err.message}`, "error");
    } finally {
      if (generation === state.generation) main.removeAttribute("aria-busy");
    }
  }

  // ---- saving the question as an endpoint (docs/endpoints.md) -----------------------------------------

  /** The GraphQL form of the REST route's condition `[op, a, b]` (the API's conditionFromWire). */
  function conditionInput(c) {
    const [op, a, b] = c;
    if (op === "is" || op === "isNot" || op === "contains") return { op, dimension: a, values: b };
    if (op === "inSegment") return { op, segmentId: a };
    if (op === "or") return { op, conditions: a.map(conditionInput) };
    if (op === "not") return { op, condition: conditionInput(a) };
    return { op, dimension: a, value: b };
  }
  const filtersInput = (filters) => (filters?.length ? filters.map(conditionInput) : undefined);
  const eventInput = (e) => (e ? { filters: filtersInput(e.filters) } : undefined);

  /** The question as a GraphQL operation (the same selection the analytics routes run) and its `input` variable. */
  function endpointOf(sel) {
    const [route, body] = question(sel);
    const selection = {
      query: "columns rows totals cursor",
      funnel:
        "breakdown steps { step users conversionFromFirst conversionFromPrevious medianMsFromPrevious } groups { value steps { step users conversionFromFirst conversionFromPrevious medianMsFromPrevious } }",
      retention: "period cohorts { start users retained }",
    }[route];
    const type = { query: "AnalyticsQueryInput", funnel: "AnalyticsFunnelInput", retention: "AnalyticsRetentionInput" }[route];
    const name = `Explore${route[0].toUpperCase()}${route.slice(1)}`;
    const document = `query ${name}($accountId: String!, $input: ${type}!) {\n  account(id: $accountId) {\n    analytics {\n      ${route}(input: $input) { ${selection} }\n    }\n  }\n}`;
    let input;
    if (route === "query") input = { ...body, filters: filtersInput(body.filters) };
    else if (route === "funnel") input = { ...body, steps: body.steps.map(eventInput), filters: filtersInput(body.filters) };
    else input = { ...body, startEvent: eventInput(body.startEvent), returnEvent: eventInput(body.returnEvent) };
    return { route, document, variables: { input: JSON.parse(JSON.stringify(input)) } };
  }

  const shellQuote = (s) => `'${s.replaceAll("'", "'\\''")}'`;

  async function saveEndpoint() {
    const sel = state.sel;
    const name = $("ex-endpoint-name").value.trim();
    if (!sel?.account || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
      setStatus("An endpoint name is 1 to 64 of letters, digits, - and _ (ASCII: A–Z, a–z, 0–9).", "error");
      return;
    }
    const { route, document, variables } = endpointOf(sel);
    try {
      const path = `/v1/accounts/${encodeURIComponent(sel.account)}/endpoints/${name}`;
      const res = await api(path, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ document, description: `Explore ${route} question` }),
      });
      const saved = await res.json();
      $("ex-endpoint-document").textContent = document;
      $("ex-endpoint-variables").textContent = JSON.stringify(variables, null, 2);
      const run = `${location.origin}/v1/accounts/${encodeURIComponent(sel.account)}/run/${name}`;
      $("ex-endpoint-curl").value =
        `curl -G -H "x-service-integration-key: $GUIDEGATE_KEY" -H "x-service-user: $GUIDEGATE_USER" ` +
        `--data-urlencode ${shellQuote(`input=${JSON.stringify(variables.input)}`)} ${shellQuote(run)}`;
      $("ex-endpoint-result").hidden = false;
      setStatus(`${res.status === 201 ? "Saved" : "Replaced"} endpoint ${saved.name}: GET ${run.replace(location.origin, "")}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return onAuthError(err);
      setStatus(err instanceof ApiError ? err.message : `Something went wrong: ${err.message}`, "error");
    }
  }

  async function copyCurl() {
    const box = $("ex-endpoint-curl");
    box.select();
    try {
      await navigator.clipboard.writeText(box.value);
      setStatus("The curl command is on the clipboard.");
    } catch {
      // No clipboard (an insecure origin, or permission refused): the text is selected for Ctrl+C.
      setStatus("Press Ctrl+C (⌘C) to copy the selected command.");
    }
  }

  /** Wires the form; `apply(sel)` pushes the selection's URL and loads it (viewer.js's navigation). */
  function wire(apply) {
    const submit = (changes = {}) => apply(url({ ...fromForm(state.sel), ...h.sharedControls(), ...changes }));
    $("ex-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const bad = checkRows(state.sel?.tab ?? "query");
      if (bad) {
        setStatus(ROWS_REFUSED, "error");
        bad.focus();
        return;
      }
      submit();
    });
    for (const t of TABS) $(`ex-tab-${t}`).addEventListener("click", () => submit({ tab: t }));
    // Steps are added and removed in the form; Run asks the question (a half-written step would be a 400).
    $("ex-add-step").addEventListener("click", () => {
      const steps = formSteps();
      if (steps.length < 10) fillSteps([...steps, [["event:type", "is", ""]]]);
      $("ex-steps").querySelector("fieldset.step:last-child [data-part=value]")?.focus();
    });
    $("ex-remove-step").addEventListener("click", () => {
      const steps = formSteps();
      if (steps.length > 2) fillSteps(steps.slice(0, -1));
      // Disabled at two steps, the button drops the focus: it goes to Add step.
      if ($("ex-remove-step").disabled) $("ex-add-step").focus();
    });
    $("ex-metrics").addEventListener("change", limitMetrics);
    $("ex-download").addEventListener("click", download);
    $("ex-endpoint-open").addEventListener("click", () => {
      const panel = $("ex-endpoint");
      panel.hidden = !panel.hidden;
      $("ex-endpoint-open").setAttribute("aria-expanded", String(!panel.hidden));
      if (!panel.hidden) {
        const box = $("ex-endpoint-name");
        if (!box.value) box.value = `explore-${state.sel?.tab ?? "query"}`;
        box.focus();
      }
    });
    $("ex-endpoint-form").addEventListener("submit", (e) => {
      e.preventDefault();
      saveEndpoint();
    });
    $("ex-endpoint-copy").addEventListener("click", copyCurl);
  }

  /** Leaving Explore: an answer still on its way is dropped. */
  const cancel = () => {
    state.generation++;
    clear();
  };
  return { load, wire, cancel, url: (q) => url(read(q)) };
}
