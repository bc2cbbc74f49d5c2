// The per-account OpenAPI document of saved endpoints (issue 35 item 3), checked by tools written by
// others, as test/third-party.test.ts checks the main one: Redocly's recommended rules and
// Spectral's spectral:oas lint it, and ajv checks real answers of every endpoint against its 200
// schema (aliases, fragments on an interface's members, @include, enums, nullability, lists).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, expectProblem, pathB, prisma, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
let doc: any;
const dir = mkdtempSync(join(tmpdir(), "gg-endpoints-openapi-"));

const ENDPOINTS: Record<string, { document: string; method?: string; description?: string; maxAgeSeconds?: number; call: string }> = {
  "top-tags": {
    document:
      "query TopTags($accountId: String!, $first: Int = 10) { account(id: $accountId) { id tags(first: $first) { nodes { name kind: type description contentCount } pageInfo { hasNextPage endCursor } } } }",
    description: "The account's first tags",
    maxAgeSeconds: 60,
    call: "?first=2",
  },
  contents: {
    document:
      "query Contents($accountId: String!, $states: [ContentState!], $withTitle: Boolean! = true, $filter: ContentFilter) { account(id: $accountId) { contents(first: 20, filter: $filter) { nodes { __typename id ...T @include(if: $withTitle) state stage tags { name } } } other: contents(first: 1, filter: { state: $states }) { nodes { id } } } } fragment T on Content { title url }",
    call: `?states=draft,ready&filter=${encodeURIComponent('{"type":"link"}')}`,
  },
  viewer: { document: "query Me { viewer { email scope accountIds } }", call: "" },
  // A list of input objects: one JSON array in the query string, as the document describes it (a
  // form-style array of objects would send each object's members as parameters of their own).
  "users-where": {
    document:
      "query UsersWhere($accountId: String!, $custom: [CustomFieldFilter!]!, $since: Timestamp) { account(id: $accountId) { endUsers(first: 5, filter: { custom: $custom, createdAfter: $since }) { nodes { id } } } }",
    call: `?custom=${encodeURIComponent('[{"field":"plan","equals":"pro"}]')}&since=0`,
  },
  // `top_tags` beside `top-tags`: two names, one identifier once `-` is `_`.
  top_tags: { document: "query Mine { viewer { email } }", call: "" },
  "add-tags": {
    document:
      "mutation AddTags($accountId: String!, $input: [TagInput!]!) { upsertTags(accountId: $accountId, input: $input) { results { statusCode errors } } }",
    method: "POST",
    call: JSON.stringify({ input: [{ name: "from-endpoint" }] }),
  },
};

beforeAll(async () => {
  server = await startServer();
  t = await tenant("epdoc");
  const schema = await call(`${server.url}/api/v1/${t.accountId}/endUserSchema`, {
    method: "PUT",
    headers: t.headers,
    body: [{ name: "plan", type: "string" }],
  });
  expect(schema.status, schema.text).toBe(200);
  await call(`${server.url}${pathB(t)}/content`, {
    method: "POST",
    headers: t.headers,
    body: [
      { title: "One", type: "link", url: "https://help.example.com/1", tags: ["a"] },
      { title: "Two", type: "text", description: "plain" },
    ],
  });
  for (const [name, { call: _c, ...body }] of Object.entries(ENDPOINTS)) {
    const r = await call(`${server.url}${pathB(t)}/endpoints/${name}`, { method: "PUT", headers: t.headers, body });
    expect(r.status, r.text).toBe(201);
  }
  const r = await call(`${server.url}${pathB(t)}/endpoints/openapi.json`, { headers: t.headers });
  expect(r.status, r.text).toBe(200);
  doc = r.body;
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (c) => void (stdout += c));
    child.on("close", (code) => resolve({ code, stdout }));
  });
}

describe("GET /v1/accounts/{accountId}/endpoints/openapi.json", () => {
  it("documents each endpoint: its method, its variables as parameters or body, its operation's text", () => {
    expect(doc.openapi).toBe("3.1.0");
    const base = `/v1/accounts/${t.accountId}/run`;
    expect(Object.keys(doc.paths).sort()).toEqual(
      Object.keys(ENDPOINTS)
        .map((n) => `${base}/${n}`)
        .sort(),
    );
    const top = doc.paths[`${base}/top-tags`].get;
    expect(top.parameters.filter((p: { in: string }) => p.in === "query")).toEqual([
      { name: "first", in: "query", required: false, description: "$first: Int", schema: { type: "integer" } },
    ]);
    expect(top.responses[200].headers["Cache-Control"].schema.const).toBe("private, max-age=60");
    expect(top.description).toContain("query TopTags");
    const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((o: any) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    const contents = doc.paths[`${base}/contents`].get.parameters;
    expect(contents.find((p: { name: string }) => p.name === "states")).toMatchObject({
      style: "form",
      explode: true,
      schema: { type: "array", items: { type: "string", enum: ["draft", "production", "ready"] } },
    });
    expect(contents.find((p: { name: string }) => p.name === "filter").content["application/json"].schema.type).toBe("object");
    const custom = doc.paths[`${base}/users-where`].get.parameters.find((p: { name: string }) => p.name === "custom");
    expect([custom.required, custom.style, custom.schema]).toEqual([true, undefined, undefined]);
    expect(custom.content["application/json"].schema).toMatchObject({ type: "array", items: { type: "object", required: ["equals", "field"] } });
    const add = doc.paths[`${base}/add-tags`].post;
    expect(add.requestBody.content["application/json"].schema.required).toEqual(["input"]);
    // The selection decides the shape: aliases, nullability, @include makes a field optional.
    const node = top.responses[200].content["application/json"].schema.properties.account.properties.tags.properties.nodes.items;
    expect([node.properties.kind.type, [...node.properties.kind.enum].sort()]).toEqual(["string", ["PAGE", "ROLE", "USER"]]);
    expect(node.properties.description.type).toEqual(["string", "null"]);
    const contentNode =
      doc.paths[`${base}/contents`].get.responses[200].content["application/json"].schema.properties.account.properties.contents.properties.nodes.items;
    expect(contentNode.required).toEqual(["__typename", "id", "state", "stage", "tags"]);
    expect(Object.keys(contentNode.properties)).toEqual(["__typename", "id", "title", "url", "state", "stage", "tags"]);
  });

  it("answers conform to it (ajv, every endpoint called for real)", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const [name, e] of Object.entries(ENDPOINTS)) {
      const item = doc.paths[`/v1/accounts/${t.accountId}/run/${name}`];
      const op = item.get ?? item.post;
      const r =
        e.method === "POST"
          ? await call(`${server.url}${pathB(t)}/run/${name}`, { method: "POST", headers: t.headers, body: JSON.parse(e.call) })
          : await call(`${server.url}${pathB(t)}/run/${name}${e.call}`, { headers: t.headers });
      expect(r.status, `${name}: ${r.text}`).toBe(200);
      const validate = ajv.compile(op.responses[200].content["application/json"].schema);
      expect(validate(r.body) ? [] : validate.errors, `${name}: ${JSON.stringify(r.body)}`).toEqual([]);
    }
    // The list of input objects also as repeated JSON objects; a JSON array that does not parse is a 400 naming it.
    const each = encodeURIComponent('{"field":"plan","equals":"pro"}');
    expect((await call(`${server.url}${pathB(t)}/run/users-where?custom=${each}&custom=${each}`, { headers: t.headers })).status).toBe(200);
    expectProblem(
      await call(`${server.url}${pathB(t)}/run/users-where?custom=${encodeURIComponent("[{")}`, { headers: t.headers }),
      400,
      /^custom must be a JSON array/,
    );
  });

  it("is the caller's account's only: 401 without a key, 403 for another account", async () => {
    const other = await tenant("epdoc");
    expectProblem(await call(`${server.url}${pathB(t)}/endpoints/openapi.json`, { headers: other.headers }), 403);
    expectProblem(await call(`${server.url}${pathB(t)}/endpoints/openapi.json`), 401);
    const empty = await call(`${server.url}${pathB(other)}/endpoints/openapi.json`, { headers: other.headers });
    expect([empty.status, empty.body.paths]).toEqual([200, {}]);
  });

  it("is a literal path: another method on it is a 405 naming GET, not the endpoint named openapi.json", async () => {
    for (const method of ["PUT", "DELETE", "POST", "PATCH"]) {
      const r = await call(`${server.url}${pathB(t)}/endpoints/openapi.json`, { method, headers: t.headers, body: { document: "{ __typename }" } });
      expectProblem(r, 405, /allowed: GET, HEAD, OPTIONS/);
      expect(r.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    }
    expect(await prisma.savedEndpoint.count({ where: { accountId: t.accountId, name: "openapi.json" } })).toBe(0);
  });

  it("passes Redocly's recommended rules with no errors and no warnings", async () => {
    const file = join(dir, "endpoints.json");
    writeFileSync(file, JSON.stringify(doc));
    const r = await run(process.execPath, ["node_modules/@redocly/cli/bin/cli.js", "lint", file, "--format", "json"]);
    const report = JSON.parse(r.stdout.slice(r.stdout.indexOf("{"))) as { totals: object; problems: { ruleId: string; message: string }[] };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it("passes Spectral's spectral:oas with no errors", async () => {
    const file = join(dir, "spectral-endpoints.json");
    const ruleset = join(dir, ".spectral.yaml");
    writeFileSync(file, JSON.stringify(doc));
    writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
    const r = await run(process.execPath, ["node_modules/@stoplight/spectral-cli/dist/index.js", "lint", file, "--ruleset", ruleset, "--format", "json"]);
    // With nothing to report Spectral prints `[]` and then a sentence: read the JSON array alone.
    const json = r.stdout.slice(r.stdout.indexOf("["));
    const reports = JSON.parse(json.startsWith("[]") ? "[]" : json.slice(0, json.lastIndexOf("]") + 1)) as {
      code: string;
      severity: number;
      path: string[];
      message: string;
    }[];
    expect(r.code).toBe(0);
    expect(reports.filter((p) => p.severity <= 1).map((p) => `${p.code} ${p.path.join(".")}: ${p.message}`)).toEqual([]);
  }, 60_000);
});
