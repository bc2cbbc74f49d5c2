// The static cost of GraphQL operations (issue 33 item 1): objects 1, scalars 0, lists their size
// (`first`/`limit`, from literals, variables, the operation's defaults or the argument's default; a
// connection's `nodes` take the connection's size; other lists DEFAULT_LIST_SIZE) times an item's
// cost; fields that declare a cost (reports, Explore) weigh what they scan. Computed from the
// document and variables against the real schema, before anything runs, once per operation node
// into a plan (a constant when no variable can change it). What it is charged: test/cost-budget.test.ts.
import { isObjectType, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { REPORTS } from "../src/domains/reports/registry.js";
import { costPlan, DEFAULT_LIST_SIZE, operationCost, pointsOf } from "../src/graphql/cost.js";
import { routes } from "../src/rest/routes.js";
import { schema } from "../src/schema/index.js";
import { LIST_LIMITS } from "../src/schema/pagination.js";

const cost = (text: string, variables: Record<string, unknown> = {}, operationName?: string) => operationCost(schema, parse(text), operationName, variables);

describe("operationCost", () => {
  it("a cheap read costs 1; __typename and scalars nothing", () => {
    expect(cost("query($a: String!) { account(id: $a) { id name } }")).toBe(1);
    expect(cost("{ __typename }")).toBe(0);
    expect(cost("{ viewer { email accountIds } }")).toBe(1);
  });

  it("a connection: 1, plus its size times an item (nodes), plus its pageInfo", () => {
    const page = (first: string) => `query($a: String!, $n: Int) { account(id: $a) { tags(first: ${first}) { nodes { name } pageInfo { hasNextPage } } } }`;
    expect(cost(page("50"))).toBe(1 + 1 + 50 + 1);
    expect(cost(page("$n"), { n: 5 })).toBe(1 + 1 + 5 + 1);
    // A nested list nothing bounds: DEFAULT_LIST_SIZE items (a content's tags).
    const contents = "query($a: String!) { account(id: $a) { contents(first: 20) { nodes { id tags { id } } } } }";
    expect(cost(contents)).toBe(1 + 1 + 20 * (1 + DEFAULT_LIST_SIZE));
  });

  it("a connection asked without first is priced at the page it serves: its own default (audit log 100, files 50, others 10)", () => {
    expect(cost("query($a: String!) { auditLogs(accountId: $a) { nodes { id } } }")).toBe(1 + LIST_LIMITS.auditLogs.default);
    expect(cost("query($a: String!) { auditLogs(accountId: $a) { edges { node { id } } } }")).toBe(1 + 2 * LIST_LIMITS.auditLogs.default);
    expect(cost("query($a: String!) { account(id: $a) { files { nodes { id } } } }")).toBe(1 + 1 + LIST_LIMITS.files.default);
    expect(cost("query($a: String!) { account(id: $a) { tags { nodes { id } } } }")).toBe(1 + 1 + LIST_LIMITS.standard.default);
    // A variable left out is the same page; given, it is the size.
    const files = "query($a: String!, $n: Int) { account(id: $a) { files(first: $n) { nodes { id } } } }";
    expect([cost(files), cost(files, { n: 5 })]).toEqual([1 + 1 + LIST_LIMITS.files.default, 1 + 1 + 5]);
    // Every connection of the schema declares the limits its resolver pages with.
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith("__")) continue;
      for (const field of Object.values(type.getFields())) {
        const args = field.args.map((x) => x.name);
        if (args.includes("first") && args.includes("last")) expect(field.extensions.pageLimits, `${type.name}.${field.name}`).toBeDefined();
      }
    }
  });

  it("a page its connection refuses reads nothing and is priced so: first past the list's own maximum, last, before", () => {
    const audit = (args: string) => cost(`query($a: String!, $n: Int, $l: Int, $b: String) { auditLogs(accountId: $a, ${args}) { nodes { id } } }`);
    // The audit log takes at most 500 a page (other lists 10,000): 5,000 is refused, not read.
    expect([audit("first: 500"), audit("first: 5000"), audit("first: 0")]).toEqual([1 + 500, 1, 1]);
    expect([audit("last: 5000"), audit('first: 10, before: "x"'), audit("last: null")]).toEqual([1, 1, 1 + 100]);
    const page = "query($a: String!, $n: Int, $l: Int, $b: String) { account(id: $a) { contents(first: $n, last: $l, before: $b) { nodes { id } } } }";
    const plan = costPlan(schema, parse(page));
    expect([plan({ n: 50 }), plan({ l: 5000 }), plan({ n: 50, b: "x" }), plan({ n: 10_001 }), plan({ l: null })]).toEqual([
      1 + 1 + 50,
      1 + 1,
      1 + 1,
      1 + 1,
      1 + 1 + 10,
    ]);
  });

  it("fragments and inline fragments count as written; only the named operation counts", () => {
    const text = `
      query One($a: String!) { account(id: $a) { ...T } }
      query Two($a: String!) { account(id: $a) { ... on Account { tags(first: 3) { nodes { name } } } } }
      fragment T on Account { tags(first: 7) { nodes { name } } }`;
    expect(cost(text, {}, "One")).toBe(1 + 1 + 7);
    expect(cost(text, {}, "Two")).toBe(1 + 1 + 3);
    expect(cost(text, {}, "Three")).toBe(0);
  });

  it("every REST route's document has a cost, and a long page costs in proportion to its limit", () => {
    for (const r of routes) expect(cost(r.document, { accountId: "a", first: 10 }), r.name).toBeGreaterThanOrEqual(0);
    const list = routes.find((r) => r.name === "listContentA")!;
    const ten = cost(list.document, { accountId: "a", first: 10 });
    const thousand = cost(list.document, { accountId: "a", first: 1000 });
    // Each content: 1, and its tags (a list nothing bounds).
    expect(thousand - ten).toBe((1000 - 10) * (1 + DEFAULT_LIST_SIZE));
  });
});

describe("cost plans", () => {
  it("are made once per operation node: a constant unless a variable sizes a list", () => {
    const doc = parse("query($a: String!, $n: Int = 50) { account(id: $a) { tags(first: $n) { nodes { name } } } }");
    const plan = costPlan(schema, doc);
    expect(costPlan(schema, doc)).toBe(plan);
    expect(plan.dynamic).toBe(true);
    // The operation's default stands for a variable left out; a value that is no size falls back to the list default.
    expect([plan({}), plan({ n: 5 }), plan({ n: "x" })]).toEqual([1 + 1 + 50, 1 + 1 + 5, 1 + 1 + DEFAULT_LIST_SIZE]);
    const fixed = costPlan(schema, parse("query($a: String!) { account(id: $a) { tags(first: 3) { nodes { name } } } }"));
    expect([fixed.dynamic, fixed({ a: "x" })]).toEqual([false, 5]);
  });

  it("points: units ÷ 100, rounded (GitHub's scale), at least 1", () => {
    expect([0, 1, 149, 150, 5_502, 110_003].map(pointsOf)).toEqual([1, 1, 1, 2, 55, 1100]);
  });

  it("REST routes: a cheap read costs 1 point at its default page; only list sizes and scans make a plan depend on the request", () => {
    let constant = 0;
    for (const r of routes) {
      const plan = costPlan(schema, parse(r.document));
      // A route with no list sized by a variable and no scan: one number for every request.
      if (!/\$(first|limit)\b|analytics \{|report\(/.test(r.document)) expect(plan.dynamic, r.name).toBe(false);
      if (!plan.dynamic) constant++;
      // (But the event export, whose default page is 1,000 events: 10 points.)
      expect(pointsOf(plan({ accountId: "a", first: 10 })), r.name).toBe(r.name === "exportEvents" ? 10 : 1);
    }
    expect(constant).toBeGreaterThan(routes.length / 2);
  });

  it("Explore questions weigh their window's days, their dimensions and user values; an input that does not parse costs 1", () => {
    const q = (input: string) => cost(`query($a: String!) { account(id: $a) { analytics { query(input: ${input}) { totals } } } }`);
    const month = 'startDate: "2026-01-01", endDate: "2026-01-30"';
    // 1 (account) + 1 (analytics) + the question's own cost (30 days × 10 units × ...).
    expect(q(`{ metrics: ["events"], ${month} }`)).toBe(2 + 300);
    expect(q(`{ metrics: ["events"], dimensions: ["event:type"], ${month} }`)).toBe(2 + 600);
    expect(q(`{ metrics: ["events"], dimensions: ["event:type", "user:plan"], ${month} }`)).toBe(2 + 1800);
    expect(q(`{ metrics: ["nope"], ${month} }`)).toBe(2 + 1);
    const funnel = cost(
      `query($a: String!) { account(id: $a) { analytics { funnel(input: { steps: [{}, {}], breakdown: "event:domain", ${month} }) { breakdown } } } }`,
    );
    expect(funnel).toBe(2 + 600);
    // The question's weight prices its whole answer: the groups and steps it selects are aggregates of its scan.
    const withSteps = cost(
      `query($a: String!) { account(id: $a) { analytics { funnel(input: { steps: [{}, {}], breakdown: "event:domain", ${month} }) { breakdown groups { steps { step users } } } } } }`,
    );
    expect(withSteps).toBe(funnel);
  });

  it("an event-export page weighs the events it may hold, on REST and GraphQL alike: 1,000 by default (10 points), 10,000 at most (100)", () => {
    const rest = routes.find((r) => r.name === "exportEvents")!.document;
    expect([cost(rest, { accountId: "a" }), cost(rest, { accountId: "a", limit: 10_000 }), cost(rest, { accountId: "a", limit: 50 })]).toEqual([
      1 + 1 + 1000,
      1 + 1 + 10_000,
      1 + 1 + 50,
    ]);
    expect([pointsOf(cost(rest, { accountId: "a" })), pointsOf(cost(rest, { accountId: "a", limit: 10_000 }))]).toEqual([10, 100]);
    const gql = "query($a: String!, $n: Int) { account(id: $a) { eventExport(limit: $n) { events cursor hasMore } } }";
    expect([cost(gql, { n: 10_000 }), cost(gql)]).toEqual([1 + 1 + 10_000, 1 + 1 + 1000]);
    // As the route sends them: an optional variable left undefined is not given.
    expect(cost(rest, { accountId: "a", cursor: undefined, limit: 5000, types: undefined })).toBe(1 + 1 + 5000);
    // A limit no page takes is refused before any read: the minimum.
    for (const limit of [0, 10_001]) expect(cost(rest, { accountId: "a", limit })).toBe(1 + 1);
  });

  it("reports weigh their window's days of rollups", () => {
    const r = (window: string) => cost(`query($a: String!) { report(accountId: $a, name: "flowStats", ${window}) { rows } }`, { a: "acme" });
    expect(r('startDate: "2026-01-01", endDate: "2026-01-30"')).toBe(60);
    expect(r('startDate: "2025-01-01", endDate: "2025-12-31"')).toBe(730);
    expect(r('startDate: "2026-01-30", endDate: "2026-01-01"')).toBe(1);
  });

  it("reports { … } weighs each report selected, as its REST route prices one report: 23 reports of a year are 23 × 730 units, not 730", () => {
    const year = 'startDate: "2025-01-01", endDate: "2025-12-31"';
    const reports = (selection: string, fragments = "") =>
      cost(`query($a: String!) { reports(accountId: $a, ${year}) { ${selection} } } ${fragments}`, { a: "acme" });
    const rest = cost(routes.find((r) => r.name === "report")!.document, { accountId: "a", name: "flowViews", startDate: "2025-01-01", endDate: "2025-12-31" });
    expect(rest).toBe(730);
    expect(reports("flowViews { flowId }")).toBe(rest);
    expect(reports("flowViews { flowId } summary { selfHelpQueriesServed }")).toBe(2 * rest);
    // Each alias runs its report again; one field written twice is merged into one run; __typename reads nothing.
    expect(reports("a: flowViews { flowId } b: flowViews { flowId } __typename")).toBe(2 * rest);
    expect(reports("flowViews { flowId } flowViews { flowId }")).toBe(rest);
    expect(reports("__typename")).toBe(1);
    // Fragments count as written; a per-user report's page size does not change what it reads.
    expect(reports("...R ... on Reports { beacons { contentId } }", "fragment R on Reports { userActions { actionId } }")).toBe(2 * rest);
    expect(reports("endUserEngagement(first: 10000) { nodes { endUserId } }")).toBe(rest);
    const some = REPORTS.filter((r) => !r.flow).slice(0, 23);
    const all = some.map((r) => (r.perUser ? `${r.name} { nodes { ${r.columns[0]!.name} } }` : `${r.name} { ${r.columns[0]!.name} }`)).join(" ");
    expect(reports(all)).toBe(23 * 730);
    expect(pointsOf(reports(all))).toBe(168);
    // The window's days still set the weight: 30 days are 60 units a report.
    expect(
      cost(`query($a: String!) { reports(accountId: $a, startDate: "2026-01-01", endDate: "2026-01-30") { flowViews { flowId } beacons { contentId } } }`, {
        a: "acme",
      }),
    ).toBe(120);
  });
});
