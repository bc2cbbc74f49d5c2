// The OpenAPI document: valid 3.1, one operation per REST row, request docs that agree with what
// each row's variables() reads, and response schemas that real responses satisfy.
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { type GraphQLSchema, getOperationAST, parse } from "graphql";
import { getVariableValues } from "graphql/execution/values.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../src/admin.js";
import { endpointsOpenApiExtra } from "../src/domains/endpoints/openapi.js";
import { AppError } from "../src/errors.js";
import { openApiPath, sampleInput } from "../src/openapi/requestDocs.js";
import { type RestInput, type RestRoute, routes } from "../src/rest/routes.js";
import { schema } from "../src/schema/index.js";
import { call, httpGet, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
let doc: any;

beforeAll(async () => {
  server = await startServer();
  t = await tenant("oas");
  const r = await call(`${server.url}/openapi.json`);
  expect(r.status).toBe(200);
  doc = r.body;
});
afterAll(() => server.close());

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("has exactly one operation per route of the table, named after it", () => {
    // Segment-format ingestion and calling saved endpoints are served outside the table (src/ingest/openapi.ts
    // and src/domains/endpoints/openapi.ts describe them).
    const operations = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>)
      .filter(([path]) => !path.startsWith("/segment/") && !(path in endpointsOpenApiExtra.paths))
      .flatMap(([, p]) => Object.values(p));
    expect(operations.map((o) => o.operationId).sort()).toEqual(routes.map((r) => r.name).sort());
    for (const route of routes) {
      const op = doc.paths[openApiPath(route.path).path]?.[route.method];
      expect(op, `${route.method.toUpperCase()} ${route.path}`).toBeDefined();
      expect(op.operationId).toBe(route.name);
      expect(op.summary).toBe(route.summary);
      const pathParams = op.parameters.filter((p: any) => p.in === "path").map((p: any) => p.name);
      expect(pathParams).toEqual(openApiPath(route.path).params);
    }
  });

  it("documents the file download's byte ranges: Range and If-Range, 206 with Content-Range, 416, Accept-Ranges", () => {
    const op = doc.paths["/v1/accounts/{accountId}/files/{fileId}"].get;
    const headers = op.parameters.filter((p: any) => p.in === "header").map((p: any) => p.name);
    expect(headers).toEqual(expect.arrayContaining(["Range", "If-Range", "If-None-Match"]));
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "206", "304", "404", "416"]));
    expect(Object.keys(op.responses["200"].headers)).toEqual(expect.arrayContaining(["ETag", "Accept-Ranges", "Content-Length"]));
    expect(Object.keys(op.responses["206"].headers)).toEqual(expect.arrayContaining(["ETag", "Accept-Ranges", "Content-Range", "Content-Length"]));
    expect(op.responses["206"].content["application/pdf"]).toBeDefined();
    expect(Object.keys(op.responses["416"].headers)).toContain("Content-Range");
    expect(op.responses["416"].content["application/problem+json"]).toBeDefined();
  });

  it("documents what the routes served outside the table answer: Segment's 415, a saved endpoint's 413 and 415, the endpoints document's 304", async () => {
    const writeKey = (await createKey(t.email, { scope: "ingest", accountId: t.accountId })).key;
    const segment = await call(`${server.url}/segment/v1/batch`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString("base64")}`, "content-encoding": "compress" },
      body: { batch: [] },
    });
    expect(segment.status, segment.text).toBe(415);
    for (const path of Object.keys(doc.paths).filter((p) => p.startsWith("/segment/")))
      expect(Object.keys(doc.paths[path].post.responses), path).toEqual(expect.arrayContaining(["200", "400", "401", "403", "413", "415", "429"]));

    const put = await call(`${server.url}/v1/accounts/${t.accountId}/endpoints/oasTypename`, {
      method: "PUT",
      headers: t.headers,
      body: { document: "{ __typename }" },
    });
    expect(put.status, put.text).toBe(201);
    const run = `${server.url}/v1/accounts/${t.accountId}/run/oasTypename`;
    const big = await fetch(run, {
      method: "POST",
      headers: { ...t.headers, "content-type": "application/json" },
      body: `{"x":"${"a".repeat(10 * 1024 * 1024)}"}`,
    });
    expect(big.status).toBe(413);
    const plain = await call(run, { method: "POST", headers: { ...t.headers, "content-type": "text/plain" }, raw: "{}" });
    expect(plain.status, plain.text).toBe(415);
    expect(Object.keys(doc.paths["/v1/accounts/{accountId}/run/{name}"].post.responses)).toEqual(expect.arrayContaining(["200", "413", "415"]));

    const own = `${server.url}/v1/accounts/${t.accountId}/endpoints/openapi.json`;
    const first = await call(own, { headers: t.headers });
    const again = await httpGet(own, { ...t.headers, "if-none-match": first.headers.get("etag")! });
    expect(again.status).toBe(304);
    expect(Object.keys(doc.paths["/v1/accounts/{accountId}/endpoints/openapi.json"].get.responses)).toEqual(expect.arrayContaining(["200", "304"]));
  });

  it("declares both auth headers as apiKey schemes, required together", () => {
    expect(doc.components.securitySchemes).toEqual({
      integrationKey: expect.objectContaining({ type: "apiKey", in: "header", name: "x-service-integration-key" }),
      serviceUser: expect.objectContaining({ type: "apiKey", in: "header", name: "x-service-user" }),
      writeKey: expect.objectContaining({ type: "http", scheme: "basic" }),
    });
    expect(doc.security).toEqual([{ integrationKey: [], serviceUser: [] }]);
  });

  it("documents a success status with a schema or no content, problem+json errors, and examples", () => {
    for (const route of routes) {
      const op = doc.paths[openApiPath(route.path).path][route.method];
      const statuses = Object.keys(op.responses).map(Number);
      const success = statuses.filter((s) => s < 300);
      expect(success.length, route.name).toBeGreaterThan(0);
      for (const s of success) {
        const json = op.responses[s].content?.["application/json"];
        const declared = route.reply.responses[s];
        if (s === 204) expect(json, route.name).toBeUndefined();
        else if (typeof declared === "object" && "binary" in declared)
          expect(op.responses[s].content[declared.binary]?.schema, `${route.name} ${s}`).toBeDefined();
        else expect(json?.schema && json.example !== undefined, `${route.name} ${s}`).toBe(true);
      }
      for (const s of [400, 401, 403, 429, 500]) expect(op.responses[s], `${route.name} ${s}`).toBeDefined();
      if (!route.errorBody) expect(op.responses[401].content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem" });
      if (route.jsonBody) expect(op.requestBody.content["application/json"].example, route.name).toBeDefined();
    }
  });

  it("derives record schemas from the GraphQL types (enums, nullability, descriptions)", () => {
    const list = doc.paths["/api/v1/{accountId}/content"].get.responses[200].content["application/json"].schema;
    const content = list.properties.data.items;
    expect(content.properties.type.enum).toEqual(expect.arrayContaining(["link", "video", "text"]));
    expect(content.properties.description_md.type).toEqual(["string", "null"]);
    expect(content.properties.creationTime).toMatchObject({ type: "integer" });
    expect(list.properties.cursor.type).toEqual(["string", "null"]);
    const bulk = doc.paths["/api/v1/{accountId}/content"].post.responses;
    expect(Object.keys(bulk)).toEqual(expect.arrayContaining(["201", "207"]));
    expect(bulk[207].content["application/json"].schema.properties).toHaveProperty("failure");
  });
});

describe("route docs agree with the code", () => {
  /** The query keys variables() reads, recorded through a Proxy. */
  function queryRead(route: RestRoute, input: RestInput) {
    const read = new Set<string>();
    const query = new Proxy(input.query, {
      get(target, key) {
        if (typeof key === "string") read.add(key);
        return Reflect.get(target, key);
      },
    });
    let error: unknown;
    let variables: Record<string, unknown> | undefined;
    try {
      variables = route.variables({ ...input, query });
    } catch (err) {
      error = err;
    }
    return { read, error, variables };
  }

  function coerce(route: RestRoute, s: GraphQLSchema, variables: Record<string, unknown>) {
    const op = getOperationAST(parse(route.document))!;
    // JSON round trip: what the router sends is JSON, so undefined values disappear as they do there.
    const result = getVariableValues(s, op.variableDefinitions ?? [], JSON.parse(JSON.stringify(variables)));
    return result.errors?.map((e) => e.message) ?? [];
  }

  it.each(routes.map((r) => [r.name, r] as const))("%s: documented inputs are what variables() reads, and its examples are accepted", (_name, route) => {
    if (route.jsonBody && !route.optionalBody) expect(route.body, `${route.name} reads a JSON body: describe it in the row's \`body\``).toBeDefined();
    const input = sampleInput(route, schema);
    const { read, error, variables } = queryRead(route, input);
    const message = error instanceof AppError ? `${error.message} ${JSON.stringify(error.fieldErrors)}` : String(error);
    expect(error, `variables() refused the documented examples: ${message}`).toBeUndefined();
    expect([...read].sort(), "query parameters read vs documented in the row's `query`").toEqual(Object.keys(route.query ?? {}).sort());
    expect(coerce(route, schema, variables!)).toEqual([]);
  });
});

describe("real responses satisfy the documented schemas", () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat("int64", true);
  // Absolute URLs (files' `url` with PUBLIC_URL set): checked, not ignored as an unknown format.
  ajv.addFormat("uri", (value: string) => URL.canParse(value));

  function check(route: RestRoute, status: number, body: unknown) {
    const response = doc.paths[openApiPath(route.path).path][route.method].responses[status];
    expect(response, `${route.name} does not document status ${status}`).toBeDefined();
    const schemaOf = response.content?.["application/json"]?.schema;
    if (!schemaOf) return;
    const validate = ajv.compile({ ...schemaOf, $defs: undefined });
    const ok = validate(body);
    expect(validate.errors ?? [], `${route.name} ${status}: ${JSON.stringify(body).slice(0, 300)}`).toEqual([]);
    expect(ok).toBe(true);
  }

  const route = (name: string) => routes.find((r) => r.name === name)!;
  const url = (r: RestRoute, params: Record<string, string> = {}) =>
    server.url + r.path.replace(/:(\w+)/g, (_m, p: string) => (p === "accountId" ? t.accountId : params[p]!));

  it("content and tag writes and reads", async () => {
    const created = await call(url(route("createContentA")), {
      method: "POST",
      headers: t.headers,
      body: [
        { title: "Doc", type: "link", url: "https://example.com" },
        { title: "Text", type: "text", description: "**x**" },
      ],
    });
    expect(created.status).toBe(201);
    check(route("createContentA"), 201, created.body);
    const mixed = await call(url(route("createContentB")), { method: "POST", headers: t.headers, body: [{ title: "ok", type: "text" }, { type: "text" }] });
    expect(mixed.status).toBe(207);
    check(route("createContentB"), 207, mixed.body);
    const tags = await call(url(route("upsertTags")), { method: "PUT", headers: t.headers, body: [{ name: "onboarding", description: "New users" }] });
    check(route("upsertTags"), tags.status, tags.body);
    const one = await call(url(route("getContentA"), { id: created.body.data[0].id }), { headers: t.headers });
    check(route("getContentA"), 200, one.body);
    const del = await call(url(route("deleteContentA"), { id: created.body.data[1].id }), { method: "DELETE", headers: t.headers });
    expect(del.status).toBe(204);
  });

  it("every list and lookup without an id in the path answers what it documents", async () => {
    await call(`${server.url}/api/v1/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: [{ id: "u1", custom: {} }] });
    // The examples name the attribute `company`.
    const attrs = `${server.url}/v1/accounts/${t.accountId}`;
    expect((await call(`${attrs}/integrationAttributeSchema`, { method: "PUT", headers: t.headers, body: [{ name: "company", type: "string" }] })).status).toBe(
      200,
    );
    expect(
      (await call(`${attrs}/integrationAttributes`, { method: "PUT", headers: t.headers, body: [{ attributeName: "company", attributeValue: "acme" }] }))
        .status,
    ).toBe(201);
    const gets = routes.filter((r) => r.method === "get" && openApiPath(r.path).params.length === 1);
    expect(gets.length).toBeGreaterThan(4);
    for (const r of gets) {
      const q = new URLSearchParams(sampleInput(r, schema).query as Record<string, string>);
      q.delete("cursor"); // the example cursor belongs to no real list
      q.delete("fieldName");
      const res = await call(`${url(r)}?${q}`, { headers: t.headers });
      expect(res.status, `${r.name}: ${res.text.slice(0, 200)}`).toBe(200);
      check(r, 200, res.body);
    }
  });

  it("errors are problem+json as documented", async () => {
    const r = route("listContentA");
    const res = await call(`${url(r)}?limit=0`, { headers: t.headers });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    const problemSchema = doc.components.schemas.Problem;
    const validate = ajv.compile({ ...problemSchema, properties: { ...problemSchema.properties, errors: { type: "array" } } });
    expect(validate(res.body)).toBe(true);
  });
});

describe("the documented examples are answers the server would give", () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat("int64", true);
  ajv.addFormat("uri", (value: string) => URL.canParse(value));
  const EPOCH_MS = [Date.UTC(2001, 0, 1), Date.UTC(2100, 0, 1)];
  const isJson = (text: string) => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  };
  const JSON_TYPE = /^application\/(json|problem\+json)$/;

  /** Every example of the document: responses and request bodies, with the schema each stands for. */
  function examples() {
    const out: { where: string; op: any; status: number | null; example: unknown; schema: any }[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses ?? {}) as [string, any][])
          for (const [type, c] of Object.entries(r.content ?? {}) as [string, any][])
            if (JSON_TYPE.test(type) && c.example !== undefined)
              out.push({ where: `${method.toUpperCase()} ${path} ${status} ${type}`, op, status: Number(status), example: c.example, schema: c.schema });
        const body = op.requestBody?.content?.["application/json"];
        if (body?.example !== undefined)
          out.push({ where: `${method.toUpperCase()} ${path} request`, op, status: null, example: body.example, schema: body.schema });
      }
    return out;
  }

  /** Problems of one example beyond its schema: times, URLs, cursors and per-item outcomes as the server makes them. */
  function oddities(example: unknown, op: any, status: number | null): string[] {
    const found: string[] = [];
    const declared = Object.keys(op.responses ?? {}).map(Number);
    const walk = (v: unknown, at: string) => {
      if (Array.isArray(v)) {
        v.forEach((x, i) => {
          walk(x, `${at}[${i}]`);
        });
        return;
      }
      if (v === null || typeof v !== "object") return;
      const o = v as Record<string, unknown>;
      for (const [k, x] of Object.entries(o)) {
        const here = `${at}.${k}`;
        // Epoch milliseconds of a real date (not 1, not seconds).
        if (/(^time|Time|^timestamp)$/.test(k) && typeof x === "number" && (x < EPOCH_MS[0]! || x > EPOCH_MS[1]!))
          found.push(`${here}: ${x} is no epoch-ms time`);
        if (k === "url" && typeof x === "string") {
          const ok = /^https:\/\//.test(x) ? URL.canParse(x) : /^\/v1\/accounts\/[^/]+\/files\/[^/]+$/.test(x);
          if (!ok) found.push(`${here}: ${x} is no URL the server gives`);
          if (x.includes("/files/") && typeof o.id === "string" && !x.endsWith(`/files/${o.id}`)) found.push(`${here}: not the download of file ${o.id}`);
        }
        // Cursors are base64url JSON.
        if (k === "cursor" && typeof x === "string" && !(/^[A-Za-z0-9_-]+$/.test(x) && isJson(Buffer.from(x, "base64url").toString())))
          found.push(`${here}: ${x} is no cursor`);
        walk(x, here);
      }
      // A 207 (or a problem's failure list): every item once, by its index; statuses the route answers.
      const success = Array.isArray(o.success) ? (o.success as any[]) : [];
      const failure = Array.isArray(o.failure) ? (o.failure as any[]) : [];
      if (success.length || failure.length) {
        const indexes = [...success, ...failure].map((i) => i.index).sort((a, b) => a - b);
        if (new Set(indexes).size !== indexes.length || indexes.some((i, n) => i !== n)) found.push(`${at}: item indexes ${indexes} are not 0..n-1 once each`);
        const ok = declared.filter((s) => s < 300 && s !== 207);
        for (const i of success) if (!ok.includes(i.statusCode)) found.push(`${at}.success: status ${i.statusCode} is none of the route's ${ok}`);
        for (const i of failure)
          if (!(i.statusCode >= 400 && declared.includes(i.statusCode))) found.push(`${at}.failure: status ${i.statusCode} is none the route answers`);
        if (status === 207 && (!success.length || !failure.length)) found.push(`${at}: a 207 has both successes and failures`);
      }
      if (status !== null && status < 300 && typeof o.statusCode === "number" && at === "$" && o.statusCode !== status)
        found.push(`$.statusCode: ${o.statusCode} in a ${status} answer`);
    };
    walk(example, "$");
    return found;
  }

  it("every example validates against the schema it illustrates", () => {
    const failures: string[] = [];
    for (const { where, example, schema: s } of examples()) {
      const validate = ajv.compile({ ...s, components: doc.components });
      if (!validate(example)) failures.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(failures).toEqual([]);
  });

  it("request bodies list the read-only fields of records the server takes and ignores; a record sent back with them is written alike", async () => {
    const u = await tenant("oas-ro");
    const B = `${server.url}/v1/accounts/${u.accountId}`;
    // What the examples name: the end-user field `plan`, the attributes `company`, `region`, `seats`.
    expect((await call(`${B}/endUserSchema`, { method: "PUT", headers: u.headers, body: [{ name: "plan", type: "string" }] })).status).toBe(200);
    const attrs = [
      { name: "company", type: "string" },
      { name: "region", type: "string" },
      { name: "seats", type: "double" },
    ];
    expect((await call(`${B}/integrationAttributeSchema`, { method: "PUT", headers: u.headers, body: attrs })).status).toBe(200);
    const itemSchema = (r: RestRoute) => {
      const s = doc.paths[openApiPath(r.path).path][r.method].requestBody?.content?.["application/json"]?.schema;
      return s?.type === "array" ? s.items : s;
    };
    const readOnlyOf = (r: RestRoute) =>
      Object.entries((itemSchema(r)?.properties ?? {}) as Record<string, any>)
        .filter(([, p]) => p.readOnly)
        .map(([k]) => k);
    const withReadOnly = routes.filter((r) => readOnlyOf(r).length);
    expect(withReadOnly.map((r) => `${r.name}: ${readOnlyOf(r).join(",")}`).sort()).toEqual([
      "createContentA: creationTime,lastUpdateTime,stage",
      "createContentB: creationTime,lastUpdateTime,stage",
      "updateContentA: creationTime,lastUpdateTime,stage",
      "updateContentB: creationTime,lastUpdateTime,stage",
      "upsertEndUsersA: creationTime,lastUpdateTime",
      "upsertEndUsersB: creationTime,lastUpdateTime",
      "upsertIntegrationAttributes: lastUpdateTime,lastUpdatedBy",
    ]);
    const made = await call(`${server.url}/api/v1/${u.accountId}/content`, {
      method: "POST",
      headers: u.headers,
      body: [{ title: "to update", type: "link", url: "https://example.com/x" }],
    });
    expect(made.status).toBe(201);
    for (const r of withReadOnly) {
      const op = doc.paths[openApiPath(r.path).path][r.method];
      // Each example item with the read-only fields of the record its success example shows (an existing content for updates).
      const record = (op.responses[201] ?? op.responses[200]).content["application/json"].example.data[0];
      const items = (structuredClone(op.requestBody.content["application/json"].example) as Record<string, unknown>[]).map((item) => ({
        ...item,
        ...(r.name.startsWith("updateContent") ? { id: made.body.data[0].id } : {}),
        ...Object.fromEntries(readOnlyOf(r).map((k) => [k, record[k]])),
      }));
      const res = await call(`${server.url}${r.path.replace(":accountId", u.accountId)}`, { method: r.method.toUpperCase(), headers: u.headers, body: items });
      expect(res.status, `${r.name}: ${res.text.slice(0, 300)}`).toBeLessThan(300);
      // Ignored: the answer shows the server's own times and author, not the ones sent.
      for (const written of res.body.data)
        for (const k of readOnlyOf(r).filter((f) => /Time$|By$/.test(f))) expect(written[k], `${r.name} ${k}`).not.toEqual(record[k]);
    }
  });

  it("examples have real times, URLs, cursors and per-item outcomes", () => {
    const failures = examples().flatMap(({ where, op, status, example }) => oddities(example, op, status).map((f) => `${where}: ${f}`));
    expect(failures).toEqual([]);
  });
});

describe("GET /docs", () => {
  it("serves the reference page and its assets locally", async () => {
    const page = await call(`${server.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.every((a) => a.startsWith("/"))).toBe(true); // nothing from another host
    for (const a of assets) expect((await fetch(server.url + a)).status, a).toBe(200);
  });
});

describe("PUBLIC_URL", () => {
  it("unset: info.contact has no url (a relative one is not a URI), servers is the server's root", () => {
    expect(doc.info.contact).toEqual({ name: "guidegate maintainers" });
    expect(doc.servers).toEqual([{ url: "/" }]);
  });

  it("set: contact url, servers and file urls are absolute under it", async () => {
    const pub = await startServer({ PUBLIC_URL: "https://api.example.com/gg/" });
    try {
      const d = (await call(`${pub.url}/openapi.json`)).body;
      expect(d.info.contact).toEqual({ name: "guidegate maintainers", url: "https://api.example.com/gg/docs" });
      expect(d.servers).toEqual([{ url: "https://api.example.com/gg" }]);
      const res = await fetch(`${pub.url}/v1/accounts/${t.accountId}/content/upload/cloud/pdf/flow-1/1/1/a.pdf`, {
        method: "POST",
        headers: { ...t.headers, "content-type": "application/pdf" },
        body: Buffer.from("%PDF-1.4\n%%EOF\n"),
      });
      expect(res.status).toBe(201);
      const file = (await res.json()) as { id: string; url: string };
      expect(file.url).toBe(`https://api.example.com/gg/v1/accounts/${t.accountId}/files/${file.id}`);
    } finally {
      await pub.close();
    }
  });
});
