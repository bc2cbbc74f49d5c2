// With INTROSPECTION=false the schema is not for browsing, so no answer names what a typo was close
// to: graphql-js's "Did you mean …?" hints are hidden in every form (field and argument names, enum
// values, input fields; validation and a variable's coercion alike), on POST /graphql (Yoga's path
// and the compiled fast path), by persisted document and through a saved endpoint's run/.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { configureDocumentLimits, limitsOf } from "../src/graphql/armor.js";
import { call, expectJson, expectProblem, pathB, type Server, startServer, type Tenant, tenant } from "./helpers.js";

const QUERY = "query Q($id: String!, $in: AnalyticsQueryInput!) { account(id: $id) { analytics { query(input: $in) { columns } } } }";
const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe.each([
  ["off", "false"],
  ["on", "true"],
])("with introspection %s", (_label, introspection) => {
  let server: Server;
  let a: Tenant;
  const hidden = introspection === "false";
  beforeAll(async () => {
    server = await startServer({ INTROSPECTION: introspection });
    a = await tenant("hints");
  });
  afterAll(async () => {
    await server.close();
    // The limits stored documents are held to are the last app's: back to the environment's.
    configureDocumentLimits(limitsOf(loadConfig()));
  });

  const gql = (body: unknown) => call(`${server.url}/graphql`, { method: "POST", headers: a.headers, body });
  /** The hint's place in a message: hidden or shown, as the setting says. */
  const hinted = (message: string, hint: string) => {
    if (hidden) {
      expect(message).not.toMatch(/Did you mean/);
      expect(message).toMatch(/\[Suggestion hidden\]$/);
    } else expect(message).toContain(hint);
  };

  it("in validation: a field name, an enum value", async () => {
    const field = await gql({ query: "{ viewer { emal } }" });
    hinted(field.body.errors[0].message, 'Did you mean "email"?');
    const enumValue = await gql({
      query: `{ account(id: "${a.accountId}") { analytics { query(input: {metrics: ["events"], interval: weeks}) { columns } } } }`,
    });
    expect(enumValue.body.errors).toHaveLength(1);
    hinted(enumValue.body.errors[0].message, 'Did you mean the enum value "week"?');
  });

  it("in a variable's coercion, on Yoga's path and on the fast path, and by persisted document", async () => {
    const ok = await gql({ query: QUERY, variables: { id: a.accountId, in: { metrics: ["events"], interval: "week" } } });
    expect(ok.status, ok.text).toBe(200);
    // The text is accepted now: the same text with bad variables runs on the fast path.
    for (let i = 0; i < 2; i++) {
      const enumValue = await gql({ query: QUERY, variables: { id: a.accountId, in: { metrics: ["events"], interval: "weeks" } } });
      expect(enumValue.status).toBe(400);
      hinted(enumValue.body.errors[0].message, 'Did you mean the enum value "week"?');
      const inputField = await gql({ query: QUERY, variables: { id: a.accountId, in: { metrics: ["events"], intervall: "week" } } });
      expect(inputField.status).toBe(400);
      hinted(inputField.body.errors[0].message, 'Did you mean "interval"?');
    }
    const pushed = await call(`${server.url}${pathB(a)}/graphql/documents`, { method: "POST", headers: a.headers, body: { [`sha256:${sha(QUERY)}`]: QUERY } });
    expect(pushed.status, pushed.text).toBeLessThan(300);
    const byId = await gql({ documentId: `sha256:${sha(QUERY)}`, variables: { id: a.accountId, in: { metrics: ["events"], interval: "weeks" } } });
    expect(byId.status).toBe(400);
    hinted(byId.body.errors[0].message, 'Did you mean the enum value "week"?');
  });

  it("in a saved endpoint's variables", async () => {
    const document =
      'query Weekly($accountId: String!, $interval: AnalyticsInterval) { account(id: $accountId) { analytics { query(input: {metrics: ["events"], interval: $interval}) { columns } } } }';
    const saved = await call(`${server.url}${pathB(a)}/endpoints/weekly`, { method: "PUT", headers: a.headers, body: { document } });
    expect(saved.status, saved.text).toBeLessThan(300);
    expectJson(await call(`${server.url}${pathB(a)}/run/weekly?interval=week`, { headers: a.headers }), 200);
    const typo = await call(`${server.url}${pathB(a)}/run/weekly?interval=weeks`, { headers: a.headers });
    expectProblem(typo, 400);
    hinted(typo.body.detail, 'Did you mean the enum value "week"?');
    for (const e of typo.body.errors ?? []) expect(hidden ? e.message : "").not.toMatch(/Did you mean/);
  });
});
