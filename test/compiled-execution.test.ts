// REST routes run their operations compiled by graphql-jit (src/graphql/compiled.ts). Every route's
// document is run here through that compiled path and through graphql-js's own execute on the same
// data, and the two results must serialise to the same bytes: data, errors, their order. Queries run
// on the demo account (content with tags, end users with values, attribute records, a segment, a
// month of events); mutations run on two identical fresh tenants, one per path, and their results
// are compared with the tenant's id (and what the write generated: ids, times) put in common.
import { type ExecutionResult, execute, getOperationAST, parse } from "graphql";
import { beforeAll, describe, expect, it } from "vitest";
import { createContext } from "../src/context.js";
import { compileOperation } from "../src/graphql/compiled.js";
import { sampleInput } from "../src/openapi/requestDocs.js";
import { type RestInput, type RestRoute, routes } from "../src/rest/routes.js";
import { schema } from "../src/schema/index.js";
import { seedDemo } from "../src/seed/demo.js";
import { prisma, type Tenant, tenant } from "./helpers.js";

let demo: { key: string; accountId: string };
const real: Record<string, string> = {};

beforeAll(async () => {
  demo = await seedDemo({ contents: 40, sessions: 30 });
  const content = await prisma.content.findFirst({ where: { accountId: demo.accountId }, orderBy: { id: "asc" } });
  const user = await prisma.endUser.findFirst({ where: { accountId: demo.accountId }, orderBy: { id: "asc" } });
  const field = await prisma.endUserField.findFirst({ where: { accountId: demo.accountId } });
  const attr = await prisma.attributeField.findFirst({ where: { accountId: demo.accountId } });
  const record = await prisma.attributeRecord.findFirst({ where: { accountId: demo.accountId } });
  const segment = await prisma.segment.findFirst({ where: { accountId: demo.accountId } });
  const tag = await prisma.tag.findFirst({ where: { accountId: demo.accountId } });
  Object.assign(real, {
    content: content!.id,
    endUser: user!.externalId,
    fieldName: field?.name ?? "plan",
    attributeName: attr?.name ?? "company",
    record: record ? `${attr?.name}:${record.id}` : "x",
    segmentId: segment?.id ?? "s-1",
    names: tag?.name ?? "t",
  });
}, 120_000);

const headers = (key: string, email: string) => new Headers({ "x-service-integration-key": key, "x-service-user": email });

/** The route's sample input (its documented examples) with real ids of the account in its path. */
function inputFor(route: RestRoute, accountId: string): RestInput {
  const input = sampleInput(route, schema);
  const params: Record<string, string> = { ...input.params, accountId };
  if ("id" in params) params.id = /EndUser/i.test(route.name) ? real.endUser! : real.content!;
  for (const p of ["fieldName", "attributeName", "segmentId", "names"] as const) if (p in params) params[p] = real[p]!;
  const { cursor: _sampleCursor, ...query } = input.query; // a documented cursor belongs to no list here
  if (route.name === "segmentContentOrder") query.id = real.endUser!;
  return { ...input, params, query };
}

async function bothWays(route: RestRoute, variables: Record<string, unknown>, contexts: () => [object, object]): Promise<[string, string]> {
  const document = parse(route.document);
  const [c1, c2] = contexts();
  const compiled = (await compileOperation(schema, document).execute(c1, variables)) as ExecutionResult;
  const reference = (await execute({ schema, document, contextValue: c2, variableValues: variables })) as ExecutionResult;
  return [JSON.stringify(compiled), JSON.stringify(reference)];
}

/** Routes under a record the demo account has none of (a webhook): compared on their error answer. */
const NO_DEMO_RECORD = new Set(["listWebhookDeliveries"]);

const queries = routes.filter((r) => getOperationAST(parse(r.document))?.operation === "query");
const mutations = routes.filter((r) => getOperationAST(parse(r.document))?.operation === "mutation");

describe("compiled execution = graphql-js execute, byte for byte", () => {
  it("covers every route of the table", () => {
    expect(queries.length + mutations.length).toBe(routes.length);
    expect(queries.length).toBeGreaterThan(15);
  });

  it.each(queries.map((r) => [r.name, r] as const))("query %s", async (_name, route) => {
    let variables: Record<string, unknown>;
    try {
      variables = route.variables(inputFor(route, demo.accountId));
    } catch {
      return; // the samples do not make a valid request of this route (it is a 400 before execution)
    }
    const h = headers(demo.key, "admin@example.com");
    const [compiled, reference] = await bothWays(route, variables, () => [createContext(h), createContext(h)]);
    expect(compiled).toBe(reference);
    // The real ids make every query succeed, but for routes under a record the demo has none of.
    if (!NO_DEMO_RECORD.has(route.name)) expect(compiled).not.toMatch(/"errors"/);
  });

  it.each(mutations.map((r) => [r.name, r] as const))("mutation %s (on twin tenants)", async (_name, route) => {
    const [a, b]: Tenant[] = [await tenant("jit-a"), await tenant("jit-b")];
    let va: Record<string, unknown>;
    let vb: Record<string, unknown>;
    try {
      va = route.variables(inputFor(route, a!.accountId));
      vb = route.variables(inputFor(route, b!.accountId));
    } catch {
      return;
    }
    const document = parse(route.document);
    const ca = createContext(headers(a!.key, a!.email));
    const cb = createContext(headers(b!.key, b!.email));
    const compiled = JSON.stringify(await compileOperation(schema, document).execute(ca, va));
    const reference = JSON.stringify(await execute({ schema, document, contextValue: cb, variableValues: vb }));
    const common = (s: string, t: Tenant) =>
      s
        .replaceAll(t.accountId, "ACCOUNT")
        .replace(/"[a-z]{1,3}_[A-Za-z0-9_-]{16,}"/g, '"ID"')
        .replace(/\b1\d{12}\b/g, "TIME");
    expect(common(compiled, a!)).toBe(common(reference, b!));
  });
});
