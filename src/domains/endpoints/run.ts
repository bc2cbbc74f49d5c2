// Calling a saved endpoint, GET/POST /v1/accounts/{accountId}/run/{name}, and the account's OpenAPI
// document of its endpoints, GET /v1/accounts/{accountId}/endpoints/openapi.json.
//
// A call runs as a REST route does (src/rest/router.ts): the key first (401, 403), then the charge
// of the operation's cost to the account's budget (429), then the request's shape, then the operation, compiled with
// graphql-jit and executed with the request's own context, counted and masked like the spec
// routes' operations; its `data` is the answer. What is compiled is cached per document, and the
// endpoint's definition as resolved keys are (endpointDefinitions below): a warm call reads nothing
// before its operation runs.
import express, { type Request, type Response, type Router } from "express";
import {
  type DocumentNode,
  type GraphQLInputType,
  GraphQLNonNull,
  type GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type OperationDefinitionNode,
  parse,
  typeFromAST,
  visit,
} from "graphql";
import { LRUCache } from "lru-cache";
import { onCommit } from "../../audit/recorder.js";
import { authorize, followAuthChanges } from "../../auth/identity.js";
import type { Context } from "../../context.js";
import { prisma } from "../../db/index.js";
import { AppError, type FieldError, knownError } from "../../errors.js";
import { documentLimitsNow, documentPastLimits } from "../../graphql/armor.js";
import type { ChargeRequest } from "../../graphql/budget.js";
import { type CompiledOperation, compileOperation } from "../../graphql/compiled.js";
import { accountsOf, type CostPlan, costPlan } from "../../graphql/cost.js";
import { selectsAuditLog } from "../../graphql/persistedDocuments.js";
import { logger } from "../../logger.js";
import { PROBLEM_SCHEMAS, SECURITY_SCHEMES } from "../../openapi/document.js";
import { inputSchema } from "../../openapi/graphqlSchemas.js";
import { selectionSchema } from "../../openapi/selectionSchema.js";
import { publicBaseUrl } from "../../publicUrl.js";
import { B, type RestRoute } from "../../rest/contract.js";
import type { JsonSchema } from "../../rest/docs.js";
import { methodNotAllowed, problem, problemOf, sendProblem } from "../../rest/problem.js";
import { reply } from "../../rest/responses.js";
import { jsonBodyParser, runRoute } from "../../rest/router.js";
import { findUnstorableText, unstorableLiteral, unstorableTextError } from "../../text.js";
import { requireAccount } from "../accounts/schema.js";
import { ACCOUNT_VARIABLE, ENDPOINT_NAME, type EndpointVariable, MAX_ENDPOINTS, soleOperation, variablesOf } from "./store.js";

/** Where an endpoint is called. */
export const RUN_PATH = `${B}/run/:name`;

/** Documents of endpoints a process keeps compiled (across accounts). */
const COMPILED_MAX = 1_000;

interface Prepared {
  operation: CompiledOperation;
  /** its price with given variables (made once: src/graphql/cost.ts) */
  cost: CostPlan;
  definition: OperationDefinitionNode;
  document: DocumentNode;
  /** each variable's type, by name */
  types: Map<string, GraphQLInputType>;
  /** Why it cannot run whatever the configuration, when saved before the save checked it (a NUL in a string literal). */
  refusal: AppError | null;
  /** Whether it asks `__schema` or `__type` (refused while INTROSPECTION is off). */
  introspects: boolean;
}

export interface EndpointExecution {
  schema: GraphQLSchema;
  /** Charges a priced request to its account before it runs, as the REST table does. */
  charge: ChargeRequest;
  /** The request's GraphQL context, from the factory REST routes and POST /graphql use. */
  context(req: Request, res: Response): Context;
}

const bad = (path: string, message: string) => new AppError(400, `${path} ${message}`, [{ path, message }] as FieldError[]);

/** The router of calls and of the per-account OpenAPI document; mount it before the REST table (its `/endpoints/:name` would take `openapi.json`). */
export function endpointRouter(execution: EndpointExecution): Router {
  const router = express.Router({ strict: true });
  const compiled = new LRUCache<string, Prepared>({ max: COMPILED_MAX });
  const definitions = endpointDefinitions();

  const prepare = (hash: string, text: string): Prepared => {
    // By hash alone: the same text compiles to the same operation whichever account saved it.
    const key = hash;
    const hit = compiled.get(key);
    if (hit) return hit;
    // Validated against the schema when the endpoint was saved; a failure here is ours (a 500).
    // The limits too, since this check came in; an endpoint saved before it may be past them.
    const past = documentPastLimits(text, execution.schema);
    if (past.length)
      throw new AppError(400, `This endpoint's document is past this API's limits on a GraphQL document (${past.join("; ")}): save it again within them.`);
    const document = parse(text);
    const definition = soleOperation(document);
    const types = new Map<string, GraphQLInputType>();
    for (const v of definition.variableDefinitions ?? []) types.set(v.variable.name.value, typeFromAST(execution.schema, v.type) as GraphQLInputType);
    // The document is a persisted one of the account: its span names it as POST /graphql's by id do.
    const operation = { ...compileOperation(execution.schema, document), documentId: `sha256:${hash}` };
    const literal = unstorableLiteral(document);
    const refusal = literal ? new AppError(400, `This endpoint's document has a ${literal.message}: save it again without.`) : null;
    const prepared = { operation, cost: costPlan(execution.schema, document), definition, document, types, refusal, introspects: introspects(document) };
    compiled.set(key, prepared);
    return prepared;
  };

  const run = async (req: Request, res: Response) => {
    const accountId = String(req.params.accountId);
    const name = String(req.params.name);
    const ctx = execution.context(req, res);
    try {
      // Who may call comes first (401, 403), before whether the endpoint exists (404). A call is
      // charged what its operation costs (in runRoute, as a spec route is); one that runs nothing
      // (an unknown name, the wrong method) costs the minimum, 1 point.
      authorize(await ctx.identity(), accountId, ["integration"]);
      // A name no endpoint can have is not looked up (PostgreSQL refuses a NUL in a bound value: a 500).
      const endpoint = ENDPOINT_NAME.test(name) ? await definitions.get(accountId, name) : null;
      if (!endpoint || (endpoint.method === "POST" && req.method !== "POST")) await execution.charge(ctx, 0, [accountId]);
      if (!endpoint) return sendProblem(res, problem(404, `No endpoint '${name}' in this account.`));
      if (endpoint.method === "POST" && req.method !== "POST") {
        res.set("Allow", "POST, OPTIONS");
        return sendProblem(res, problem(405, `Endpoint '${name}' is called with POST (its method).`));
      }
      let prepared = compiled.get(endpoint.documentHash);
      if (!prepared) {
        const doc = await prisma.persistedDocument.findUniqueOrThrow({
          where: { accountId_hash: { accountId, hash: endpoint.documentHash } },
          select: { text: true },
        });
        prepared = prepare(endpoint.documentHash, doc.text);
      }
      // Saved before the save refused these: nothing runs (a NUL reaches the database; introspection is off now).
      const refusal = refusalOf(prepared);
      if (refusal) throw refusal;
      // From here the call is a row of the REST table, run by the table's own runRoute: the same
      // account gate and budget (charged by the operation's cost), body and
      // text checks, execution (counted, masked) and problem answers as every spec route.
      const row = endpointRow(name, endpoint, prepared, req, accountId);
      await runRoute(
        row,
        {
          operation: prepared.operation,
          cost: prepared.cost,
          charge: execution.charge,
          accounts: (variables) => accountsOf(execution.schema, prepared.document, null, variables),
        },
        ctx,
        { params: req.params as Record<string, string>, query: {}, body: req.body, header: (h) => req.get(h) },
        req,
        res,
      );
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      const known = knownError(err);
      if (known) return sendProblem(res, ...problemOf(known));
      logger.error({ err, endpoint: name, requestId: req.get("x-request-id") }, "saved endpoint failed");
      sendProblem(res, problem(500, "Unexpected error; the request may succeed on retry."));
    }
  };

  router.get(RUN_PATH, run);
  router.post(RUN_PATH, jsonBodyParser(), run);
  router.all(RUN_PATH, (req, res) => {
    res.set("Allow", "GET, POST, HEAD, OPTIONS");
    sendProblem(res, problem(405, `${req.method} is not allowed on ${req.path}; allowed: GET, POST, HEAD, OPTIONS.`));
  });

  router.get(`${B}/endpoints/openapi.json`, async (req, res) => {
    const accountId = String(req.params.accountId);
    try {
      await requireAccount(execution.context(req, res), accountId);
      const rows = await prisma.savedEndpoint.findMany({
        where: { accountId },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        take: MAX_ENDPOINTS,
        select: { name: true, method: true, description: true, maxAgeSeconds: true, variables: true, documentHash: true, document: { select: { text: true } } },
      });
      // An endpoint saved before today's checks, whose every call is refused, is listed apart with
      // the reason: the account's other endpoints stay documented.
      const documented: DocumentedEndpoint[] = [];
      const refused: RefusedEndpoint[] = [];
      for (const r of rows) {
        let refusal: AppError | null;
        try {
          const prepared = prepare(r.documentHash, r.document.text);
          refusal = refusalOf(prepared);
          if (!refusal) documented.push({ ...r, text: r.document.text, prepared });
        } catch (err) {
          refusal = knownError(err);
          if (refusal?.status !== 400) throw err;
        }
        if (refusal) refused.push({ name: r.name, reason: refusal.message });
      }
      const doc = endpointsOpenApi(accountId, documented, execution.schema, refused);
      res.status(200).json(doc);
    } catch (err) {
      const known = knownError(err);
      if (known) return sendProblem(res, ...problemOf(known));
      logger.error({ err, requestId: req.get("x-request-id") }, "endpoints OpenAPI document failed");
      sendProblem(res, problem(500, "The OpenAPI document could not be generated."));
    }
  });
  // A literal path wins over a pattern (docs/rest.md), for the methods it does not serve too: PUT or
  // DELETE here is not the endpoint named `openapi.json` (no endpoint can be), it is a 405.
  router.all(`${B}/endpoints/openapi.json`, methodNotAllowed(["GET"]));
  return router;
}

/** Why every call of this saved endpoint is refused now (it was saved before today's checks), or null. */
function refusalOf(prepared: Prepared): AppError | null {
  if (prepared.refusal) return prepared.refusal;
  if (prepared.introspects && !documentLimitsNow().introspection)
    return new AppError(400, "This endpoint's document asks __schema or __type, and GraphQL introspection is disabled on this API.");
  return null;
}

/** Whether a document selects `__schema` or `__type` anywhere (NoSchemaIntrospectionCustomRule's fields). */
function introspects(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.name.value === "__schema" || node.name.value === "__type") found = true;
    },
  });
  return found;
}

interface Definition {
  method: string;
  documentHash: string;
  maxAgeSeconds: number;
  variables: string;
}

/** Endpoint definitions a process keeps (across accounts). */
const DEFINITIONS_MAX = 10_000;

/**
 * Endpoint definitions by account and name, kept as resolved keys are (src/auth/identity.ts): for
 * IDENTITY_CACHE_MS at most, dropped by this process's own commits at once and by everyone else's
 * through the auth-change signal (the SavedEndpoint triggers of 20261125215500_saved_endpoint_signal),
 * and not used while that signal cannot be seen. A warm call then reads nothing before its
 * operation, as POST /graphql reads nothing before its own. (A name that does not exist is not kept.)
 */
function endpointDefinitions() {
  const rows = new Map<string, { row: Definition; until: number }>();
  let generation = 0;
  const clear = () => {
    generation++;
    rows.clear();
  };
  const signal = followAuthChanges(clear);
  onCommit((models) => {
    if (models.has("SavedEndpoint")) clear();
  });
  return {
    async get(accountId: string, name: string): Promise<Definition | null> {
      const key = `${accountId}\u0000${name}`;
      const ttl = signal.usable();
      const now = Date.now();
      const hit = ttl ? rows.get(key) : undefined;
      if (hit && hit.until > now) return hit.row;
      const before = generation;
      const row = await prisma.savedEndpoint.findUnique({
        where: { accountId_name: { accountId, name } },
        select: { method: true, documentHash: true, maxAgeSeconds: true, variables: true },
      });
      if (row && ttl && generation === before) {
        if (rows.size >= DEFINITIONS_MAX) rows.clear();
        rows.set(key, { row, until: now + ttl });
      }
      return row;
    },
  };
}

/**
 * A call as a row of the REST table (src/rest/contract.ts), for runRoute: its variables from the
 * query string or the body, its reply the operation's `data` with the endpoint's Cache-Control.
 */
function endpointRow(name: string, endpoint: Definition, prepared: Prepared, req: Request, accountId: string): RestRoute {
  const post = req.method === "POST";
  const row = {
    name: "runEndpoint",
    method: post ? ("post" as const) : ("get" as const),
    path: RUN_PATH,
    summary: `Run ${name}`,
    document: "",
    variables: () => {
      const given = post ? bodyVariables(req) : queryVariables(req, prepared.types);
      return checkVariables(given, variablesOf(endpoint), accountId, prepared.types.has(ACCOUNT_VARIABLE));
    },
    reply: reply.custom<unknown>({ 200: { json: {} } }, (data) => ({
      status: 200,
      body: data,
      // (An operation over the audit log is never stored, whatever the endpoint's max age: as B25.)
      ...(post ? {} : { headers: { "Cache-Control": selectsAuditLog(prepared.document) ? "no-store" : `private, max-age=${endpoint.maxAgeSeconds}` } }),
    })),
  };
  // Not made by route(): its document is the endpoint's, checked when it was saved, not typed here.
  return row as unknown as RestRoute;
}

/** A POST call's variables: the JSON object body (or none). */
function bodyVariables(req: Request): Record<string, unknown> {
  const noBody = Number(req.get("content-length") ?? 0) === 0 && !req.get("transfer-encoding");
  if (req.body === undefined) {
    if (noBody) return {};
    throw new AppError(415, "Send the variables as a JSON object with Content-Type: application/json.");
  }
  const body = req.body as unknown;
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw bad("body", "must be a JSON object of the endpoint's variables");
  const path = findUnstorableText(body, "body");
  if (path) throw unstorableTextError(path);
  return body as Record<string, unknown>;
}

/**
 * A GET call's variables from the query string, each read by its declared type: Int, Float and
 * Boolean parsed (a 400 naming the variable otherwise), enums and strings as written, a list from
 * repeated parameters or one comma-separated value, an input object (or a custom scalar other than
 * a string) as JSON. GraphQL's coercion checks the rest and names the variable too.
 *
 * One value of a list is split at the commas written as commas: an encoded one (`%2C`) stays in its
 * item, as an OpenAPI client encodes a comma inside an exploded item (`?terms=a%2C%20b` is the one
 * item "a, b"). A list of JSON (input objects, custom scalars) given as one value that is a JSON
 * array is that list, and one that is other JSON is one item (`{"a":1,"b":2}` is not split).
 */
function queryVariables(req: Request, types: ReadonlyMap<string, GraphQLInputType>): Record<string, unknown> {
  const at = req.originalUrl.indexOf("?");
  const query = at < 0 ? "" : req.originalUrl.slice(at + 1);
  const params = new URLSearchParams(query);
  let raw: Map<string, string[]> | undefined;
  // No prototype: a parameter named `__proto__` is a key like any other (an unknown variable, a 400),
  // not a write to the object's prototype that no later check would see.
  const out: Record<string, unknown> = Object.create(null);
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name);
    const bad1 = findUnstorableText(values, "query");
    if (bad1) throw unstorableTextError(`query.${name}`);
    const type = types.get(name);
    // Unknown names and accountId are refused by checkVariables, with the message that names them.
    if (!type || name === ACCOUNT_VARIABLE) {
      out[name] = values[0];
      continue;
    }
    const nullable = isNonNullType(type) ? type.ofType : type;
    if (isListType(nullable)) {
      const item = nullable.ofType as GraphQLInputType;
      const named = getNamedType(item);
      const json = isInputObjectType(named) || (isScalarType(named) && !PLAIN_SCALARS.has(named.name));
      if (json && values.length === 1) {
        const one = parseJson(values[0]!);
        if (Array.isArray(one)) {
          // A list of input objects as one JSON array (the form the OpenAPI document gives it).
          out[name] = one;
          continue;
        }
        if (isInputObjectType(named) && values[0]!.trimStart().startsWith("["))
          throw bad(name, "must be a JSON array of objects, or each object given as its own parameter");
        if (one !== undefined) {
          out[name] = [one];
          continue;
        }
      }
      raw ??= rawQueryValues(query);
      const items = values.length === 1 && !isInputObjectType(named) ? raw.get(name)![0]!.split(",").map(decodeQueryValue) : values;
      out[name] = items.map((v, i) => readValue(`${name}[${i}]`, v, item));
    } else {
      if (values.length > 1) throw bad(name, "must be given once (it is not a list)");
      out[name] = readValue(name, values[0]!, type);
    }
  }
  return out;
}

const DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** The scalars read from a query value as written, not as JSON. */
const PLAIN_SCALARS = new Set(["String", "ID", "Int", "Float", "Boolean"]);

/** A text's JSON value, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Each parameter's values as sent (percent-encoded), in order: where its literal commas are. */
function rawQueryValues(query: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of query.split("&")) {
    if (!pair) continue;
    const eq = pair.indexOf("=");
    const name = decodeQueryValue(eq < 0 ? pair : pair.slice(0, eq));
    const values = out.get(name) ?? [];
    values.push(eq < 0 ? "" : pair.slice(eq + 1));
    out.set(name, values);
  }
  return out;
}

/** A part of a query string decoded exactly as URLSearchParams decodes a value (`+`, malformed `%`). */
const decodeQueryValue = (part: string): string => new URLSearchParams(`v=${part}`).get("v")!;

function readValue(path: string, text: string, type: GraphQLInputType): unknown {
  const named = getNamedType(type);
  if (isEnumType(named)) return text;
  if (isScalarType(named)) {
    switch (named.name) {
      case "String":
      case "ID":
        return text;
      case "Int":
        if (!/^-?\d+$/.test(text)) throw bad(path, "must be an integer");
        return Number(text);
      case "Float": {
        // A decimal number as JSON and GraphQL write one: not `0x10`, ` 5 `, `1_000` or `Infinity`,
        // which JavaScript's Number() would read.
        const n = DECIMAL.test(text) ? Number(text) : Number.NaN;
        if (!Number.isFinite(n)) throw bad(path, "must be a number");
        return n;
      }
      case "Boolean":
        if (text !== "true" && text !== "false") throw bad(path, "must be true or false");
        return text === "true";
    }
  }
  // Input objects and custom scalars: JSON (a custom scalar given as a bare string stays one).
  try {
    return JSON.parse(text);
  } catch {
    if (isInputObjectType(named)) throw bad(path, "must be a JSON object");
    return text;
  }
}

/** The call's variables checked against the endpoint's: unknown, accountId given, required missing; then the path's account added. */
function checkVariables(
  given: Record<string, unknown>,
  declared: readonly EndpointVariable[],
  accountId: string,
  takesAccount: boolean,
): Record<string, unknown> {
  if (Object.hasOwn(given, ACCOUNT_VARIABLE)) throw bad(ACCOUNT_VARIABLE, "is the path's account: do not give it as a variable");
  const names = new Set(declared.map((v) => v.name));
  for (const name of Object.keys(given)) {
    if (!names.has(name))
      throw bad(name, `is not a variable of this endpoint (${declared.length ? `its variables: ${[...names].join(", ")}` : "it takes none"})`);
  }
  for (const v of declared) if (v.required && (given[v.name] === undefined || given[v.name] === null)) throw bad(v.name, `is required (${v.type})`);
  return takesAccount ? { ...given, [ACCOUNT_VARIABLE]: accountId } : given;
}

// ---- the account's OpenAPI document ------------------------------------------------------------------

interface DocumentedEndpoint {
  name: string;
  method: string;
  description: string | null;
  maxAgeSeconds: number;
  variables: string;
  text: string;
  prepared: Prepared;
}

const PROBLEM = { $ref: "#/components/schemas/Problem" };
const problemResponse = (description: string) => ({ description, content: { "application/problem+json": { schema: PROBLEM } } });

/** A variable's schema where null cannot be written (a query parameter, a required member). */
function valueSchema(type: GraphQLInputType): JsonSchema {
  return inputSchema(isNonNullType(type) ? type : new GraphQLNonNull(type));
}

/** A saved endpoint every call of which is refused, and why. */
interface RefusedEndpoint {
  name: string;
  reason: string;
}

export function endpointsOpenApi(
  accountId: string,
  endpoints: readonly DocumentedEndpoint[],
  schema: GraphQLSchema,
  refused: readonly RefusedEndpoint[] = [],
): Record<string, unknown> {
  const publicUrl = publicBaseUrl();
  const operationIds = new Set<string>();
  const paths: Record<string, unknown> = {};
  for (const e of endpoints) {
    const declared = variablesOf(e);
    const types = e.prepared.types;
    const data = selectionSchema(schema, e.prepared.document, e.prepared.definition);
    const ok = {
      description: "The operation's `data`.",
      headers: {
        ETag: { description: "Weak tag of this answer: send it back as If-None-Match.", schema: { type: "string" } },
        ...(e.method === "GET"
          ? { "Cache-Control": { description: "How long the answer may be reused.", schema: { type: "string", const: `private, max-age=${e.maxAgeSeconds}` } } }
          : {}),
      },
      content: { "application/json": { schema: data } },
    };
    const errors = {
      400: problemResponse("A variable that is missing, unknown or of the wrong type (named in the problem), or an error of the operation"),
      401: problemResponse("Missing, unknown, expired or revoked key"),
      403: problemResponse("The key's user has no access to this account"),
      404: problemResponse("No such endpoint (any more)"),
      429: problemResponse("Rate limit of the account exceeded; retry after Retry-After seconds"),
    };
    const description = [e.description ?? "", `Runs:\n\n\`\`\`graphql\n${e.text.trim()}\n\`\`\``].filter(Boolean).join("\n\n");
    // Names differ, but `a-b` and `a_b` would not as identifiers: the second gets a suffix.
    let operationId = `run_${e.name.replace(/-/g, "_")}`;
    while (operationIds.has(operationId)) operationId += "_";
    operationIds.add(operationId);
    const item: Record<string, unknown> = {};
    if (e.method === "GET") {
      item.get = {
        operationId,
        summary: e.description ?? `Run ${e.name}`,
        description,
        tags: ["endpoints"],
        parameters: [
          ...declared.map((v) => queryParameter(v, types.get(v.name)!)),
          {
            name: "If-None-Match",
            in: "header",
            required: false,
            description: "The ETag of an answer you hold: a 304 while it is current.",
            schema: { type: "string" },
          },
        ],
        responses: { 200: ok, 304: { description: "Not Modified: the answer named by If-None-Match is current" }, ...errors },
      };
    } else {
      const properties: Record<string, JsonSchema> = {};
      for (const v of declared) properties[v.name] = v.required ? valueSchema(types.get(v.name)!) : inputSchema(types.get(v.name)!);
      const required = declared.filter((v) => v.required).map((v) => v.name);
      item.post = {
        operationId,
        summary: e.description ?? `Run ${e.name}`,
        description,
        tags: ["endpoints"],
        requestBody: {
          required: required.length > 0,
          content: {
            "application/json": { schema: { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false } },
          },
        },
        responses: { 200: ok, ...errors },
      };
    }
    paths[`/v1/accounts/${encodeURIComponent(accountId)}/run/${e.name}`] = item;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: `Saved endpoints of account ${accountId}`,
      version: "1",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
      // As the main document's: an absolute URL only (OpenAPI's `format: uri`), else no url.
      contact: { name: "guidegate maintainers", ...(publicUrl ? { url: `${publicUrl}/docs` } : {}) },
      description:
        "The account's saved GraphQL operations as REST endpoints: each answers its operation's `data`. " +
        "GET endpoints read their variables from the query string (lists repeated or comma-separated, input objects as JSON) " +
        "and also accept POST with a JSON object of variables." +
        (refused.length
          ? ` Left out: ${refused.map((r) => r.name).join(", ")}, saved before the checks that now refuse every call (\`x-refused-endpoints\` says why); save each again.`
          : ""),
    },
    servers: [{ url: publicUrl ?? "/" }],
    security: [{ integrationKey: [], serviceUser: [] }],
    tags: [{ name: "endpoints", description: "The account's saved endpoints." }],
    paths,
    ...(refused.length ? { "x-refused-endpoints": refused } : {}),
    components: { securitySchemes: SECURITY_SCHEMES, schemas: PROBLEM_SCHEMAS },
  };
}

function queryParameter(v: EndpointVariable, type: GraphQLInputType): Record<string, unknown> {
  const base = { name: v.name, in: "query", required: v.required, description: `$${v.name}: ${v.type}` };
  const named = getNamedType(type);
  const nullable = isNonNullType(type) ? type.ofType : type;
  // An input object, or a list of them (one JSON array; repeated JSON objects are read too): a
  // parameter of form style would send an object's members as parameters of their own.
  if (isInputObjectType(named)) return { ...base, content: { "application/json": { schema: valueSchema(type) } } };
  const s = valueSchema(type);
  if (isListType(nullable)) {
    // Exploded (repeated) items, as generated clients send them, encoding a comma inside an item.
    const description = `${base.description}. The parameter repeated, or one value split at its commas (an encoded comma, %2C, stays in its item)${isScalarType(named) && !PLAIN_SCALARS.has(named.name) ? ", or one JSON array" : ""}.`;
    return { ...base, description, style: "form", explode: true, schema: { ...s, items: stripNull((s as { items: JsonSchema }).items) } };
  }
  return { ...base, schema: s };
}

/** A list item given in a query string is never null. */
const stripNull = (s: JsonSchema): JsonSchema => {
  const out = { ...s };
  if (Array.isArray(out.type)) out.type = (out.type as string[]).filter((t) => t !== "null");
  if (Array.isArray(out.enum)) out.enum = (out.enum as unknown[]).filter((x) => x !== null);
  if (Array.isArray(out.type) && out.type.length === 1) out.type = out.type[0];
  return out;
};
