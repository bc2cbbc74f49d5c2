// The static cost of GraphQL operations (issue 33 item 1, first step): objects 1, scalars 0, lists
// their size (`first`/`limit`, from literals, variables or the argument's default; a connection's
// `nodes` take the connection's size; other lists DEFAULT_LIST_SIZE) times an item's cost. Computed
// from the document and variables against the real schema, before anything runs. Not yet charged.
import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIST_SIZE, operationCost } from "../src/graphql/cost.js";
import { routes } from "../src/rest/routes.js";
import { schema } from "../src/schema/index.js";

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
