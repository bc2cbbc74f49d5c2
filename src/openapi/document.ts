// The OpenAPI 3.1 document, generated from the REST route table and the GraphQL schema: paths and
// operations from the rows, parameters and bodies from their docs and the GraphQL input types,
// responses from what each row's reply() makes of its document's GraphQL result types.
import type { GraphQLSchema } from "graphql";
import { KEY_HEADER, USER_HEADER } from "../auth/identity.js";
import { problem } from "../rest/problem.js";
import { JSON_BODY_LIMIT_BYTES } from "../rest/router.js";
import type { RestRoute } from "../rest/routes.js";
import { bodySchema, exampleOf, openApiPath, sampleInput } from "./requestDocs.js";

export interface OpenApiOptions {
  version?: string;
  /** Rate limit per account and minute, for the description. */
  rateLimitPerMinute?: number;
  /** The server's public base URL (PUBLIC_URL), without a trailing slash. */
  publicUrl?: string;
  /** What each resource is (the path segment after the account), for the tag descriptions of the reference page: the domains' openApiTags. */
  resources?: Readonly<Record<string, string>>;
  /** Paths served outside the route table (Segment-format ingestion), OpenAPI 3.1 `webhooks`, and their security schemes and tags. */
  extra?: {
    paths?: Record<string, Record<string, unknown>>;
    webhooks?: Record<string, unknown>;
    securitySchemes?: Record<string, unknown>;
    tags?: { name: string; description: string }[];
  };
}

const PROBLEM_REF = { $ref: "#/components/schemas/Problem" };
const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  206: "Partial Content: the one byte range the Range header asked for",
  304: "Not Modified: the ETag given in If-None-Match is current; no body",
  207: "Multi-Status: some items succeeded, some failed",
  400: "Bad request: malformed input, or no item of a bulk write succeeded (all failed validation, or failed with different statuses)",
  401: "Missing, unknown, expired or revoked key, or the key's owner does not match x-service-user",
  403: "The key's user has no access to this account",
  404: "Not found",
  409: "Conflict with a concurrent change",
  413: `Body larger than ${JSON_BODY_LIMIT_BYTES / 1024 / 1024} MiB`,
  415: "Body is not JSON",
  416: "Range Not Satisfiable: the range starts at or past the end (Content-Range: bytes */size)",
  422: "The question took longer than EXPLORE_TIMEOUT_MS and was stopped: narrow it (a shorter window, fewer or coarser dimensions, a longer interval, filters that match fewer events) and ask again",
  429: "The request costs more points than the account has left this minute (nothing ran); retry after Retry-After seconds",
  500: "Unexpected error; the request may succeed on retry",
  503: "The change kept conflicting with concurrent changes, or the database was busy; nothing was written; retry after Retry-After seconds",
};

/** Errors every account route can answer, besides what its reply declares. */
function commonErrors(route: RestRoute): number[] {
  const statuses = [400, 401, 403, 429, 500, 503];
  if (route.jsonBody || route.rawBody) statuses.push(413, 415);
  return statuses;
}

/** Groups operations by resource and path style (A `/api/v1/…`, B `/v1/accounts/…`). */
function tagOf(path: string): string {
  const m = /^\/(?:api\/v1\/:accountId|v1\/accounts\/:accountId)\/([^/]+)/.exec(path);
  const style = path.startsWith("/api/v1/") ? "A" : path.startsWith("/v1/accounts/") ? "B" : "";
  const resource = m?.[1] ?? path.split("/")[1] ?? "other";
  return style ? `${resource} (style ${style})` : resource;
}

function tagDescription(tag: string, resources: Readonly<Record<string, string>>): string {
  const [resource, style] = tag.split(" ");
  const what = resources[resource ?? ""] ?? "Operations on this resource.";
  const prefix =
    style === "(style A)" ? " Style A paths: `/api/v1/{accountId}/…`." : style === "(style B)" ? " Style B paths: `/v1/accounts/{accountId}/…`." : "";
  return what + prefix;
}

function operationName(document: string): string | undefined {
  const m = /^\s*(?:query|mutation)\s+(\w+)/.exec(document);
  return m?.[1];
}

/** The security schemes of every document (this one and an account's endpoints/openapi.json): the two key headers. */
export const SECURITY_SCHEMES = {
  integrationKey: { type: "apiKey", in: "header", name: KEY_HEADER, description: "The API key (created with `npm run cli -- key create`)." },
  serviceUser: { type: "apiKey", in: "header", name: USER_HEADER, description: "The e-mail of the key's owner; must match the key." },
};

/** `#/components/schemas` of problem+json answers, shared by every document. */
export const PROBLEM_SCHEMAS = {
  Problem: {
    type: "object",
    description: "RFC 9457 problem details.",
    required: ["type", "title", "status", "detail"],
    properties: {
      type: { type: "string", example: "about:blank" },
      title: { type: "string", example: "Bad Request" },
      status: { type: "integer", minimum: 400, maximum: 599 },
      detail: { type: "string" },
      errors: { type: "array", items: { $ref: "#/components/schemas/FieldError" } },
      failure: {
        type: "array",
        description:
          "A bulk write none of whose items succeeded: each item's outcome, as a 207 lists it (the status is the items' own when they all failed alike, else 400).",
        items: {
          type: "object",
          required: ["index", "id", "statusCode", "errors"],
          properties: {
            index: { type: "integer", minimum: 0 },
            id: { type: ["string", "null"] },
            statusCode: { type: "integer", minimum: 400, maximum: 599 },
            errors: { type: "array", items: { type: "string" } },
          },
        },
      },
    },
  },
  FieldError: {
    type: "object",
    required: ["path", "message"],
    properties: { path: { type: "string", example: "limit" }, message: { type: "string", example: "must be between 1 and 10000" } },
  },
};

export function buildOpenApi(routes: readonly RestRoute[], schema: GraphQLSchema, opts: OpenApiOptions = {}): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();

  for (const route of routes) {
    const { path, params } = openApiPath(route.path);
    const input = sampleInput(route, schema);
    const tag = tagOf(route.path);
    tags.add(tag);

    // The statuses the route's declared reply answers with, then those every route can answer.
    const responses: Record<string, unknown> = {};
    const declared = Object.entries(route.reply.responses).map(([s, doc]) => [Number(s), doc] as const);
    for (const [status, doc] of declared.sort(([a], [b]) => a - b)) {
      const description = STATUS_TEXT[status] ?? `Status ${status}`;
      const headers = { ...requestIdHeader(), ...(status < 300 ? successHeaders(route) : {}) };
      if (doc === "empty") responses[status] = { description, headers };
      else if (doc === "problem") responses[status] = errorResponse(route, status, input);
      else if ("binary" in doc) {
        const described = Object.fromEntries(Object.entries(doc.headers).map(([name, d]) => [name, { description: d, schema: { type: "string" } }]));
        responses[status] = {
          description,
          headers: { ...headers, ...described },
          content: { [doc.binary]: { schema: { type: "string", contentMediaType: doc.binary } } },
        };
      } else {
        const content: Record<string, unknown> = { "application/json": { schema: doc.json, example: doc.example ?? exampleOf(doc.json) } };
        for (const [type, t] of Object.entries(doc.text ?? {})) content[type] = { schema: { type: "string", description: t.description }, example: t.example };
        responses[status] = { description, headers, content };
      }
    }
    if (route.method === "get") {
      // Conditional GETs (src/rest/conditional.ts): every read answers an ETag and honours If-None-Match.
      const ok = responses[200] as { headers?: Record<string, unknown> } | undefined;
      if (ok) ok.headers = { ETag: ETAG_HEADER, ...ok.headers };
      responses[304] ??= { description: STATUS_TEXT[304], headers: { ...requestIdHeader(), ETag: ETAG_HEADER } };
    }
    for (const status of commonErrors(route)) responses[status] ??= errorResponse(route, status, input);
    if (params.length > 1) responses[404] ??= errorResponse(route, 404, input);

    const parameters = [
      ...params.map((name) => ({
        name,
        in: "path",
        required: true,
        description: route.params?.[name]?.description ?? (name === "accountId" ? "The account (the dashboard calls it entId)." : name),
        schema: { type: "string" },
        example: input.params[name],
      })),
      ...Object.entries(route.query ?? {}).map(([name, q]) => ({
        name,
        in: "query",
        required: q.required ?? false,
        description: q.description,
        schema: q.schema,
        example: input.query[name] !== undefined && q.schema.type === "integer" ? Number(input.query[name]) : input.query[name],
      })),
      ...Object.entries(route.headers ?? {}).map(([name, h]) => ({
        name,
        in: "header",
        required: false,
        description: h.description,
        schema: { type: "string" },
        example: h.example,
      })),
      ...(route.method === "get" ? [IF_NONE_MATCH] : []),
    ];

    const body = route.jsonBody ? (bodySchema(route.body, schema) ?? { description: "JSON body (not described)." }) : undefined;
    const opName = operationName(route.document);
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.name,
      summary: route.summary,
      description:
        `Runs the GraphQL ${opName ? `operation \`${opName}\`` : "document"} below through the same resolvers, auth and limits as \`POST /graphql\`.\n\n` +
        "```graphql\n" +
        route.document.trim() +
        "\n```",
      tags: [tag],
      parameters,
      ...(body ? { requestBody: { required: true, content: { "application/json": { schema: body, example: input.body } } } } : {}),
      ...(route.rawBody
        ? {
            requestBody: {
              required: true,
              description: route.rawBody.description,
              content: { [route.rawBody.contentType]: { schema: { type: "string", contentMediaType: route.rawBody.contentType } } },
            },
          }
        : {}),
      responses,
      "x-graphql-operation": opName,
    };
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "guidegate REST API",
      version: opts.version ?? "0.0.0",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
      // An absolute URL only (OpenAPI's `format: uri`): the docs page under PUBLIC_URL, else no url.
      contact: { name: "guidegate maintainers", ...(opts.publicUrl ? { url: `${opts.publicUrl}/docs` } : {}) },
      description:
        "The REST compatibility layer of guidegate. Every operation runs one GraphQL operation (shown in its description) " +
        "through the same resolvers as `POST /graphql`.\n\n" +
        `Authenticate every call with both headers \`${KEY_HEADER}\` (the API key) and \`${USER_HEADER}\` (the e-mail of its owner). ` +
        "Errors are RFC 9457 `application/problem+json`. Each account has a budget of points a minute" +
        (opts.rateLimitPerMinute ? ` (${opts.rateLimitPerMinute})` : "") +
        ", shared with `POST /graphql`: a request costs what its GraphQL operation may read, charged before it runs " +
        "(1 point per 100 objects it may return, rounded, at least 1: a content counts with up to 10 tags, so a page of 10 contents costs 1 point and one of 1,000 costs 110; " +
        "Explore questions and reports by the days they scan; docs/production.md). " +
        "Over what is left: 429 and nothing runs; over the most one request may cost: 400 naming its cost. See the `RateLimit-*` headers.\n\n" +
        "Lists answer `{data, cursor}`; pass `cursor` back unchanged for the next page (`null` on the last one). " +
        "Bulk writes answer 207 with `{success, failure}` when some items succeed and some fail; when none succeeds, a problem " +
        "whose `failure` lists each item, with the items' status when they all failed alike, else 400.",
    },
    servers: [{ url: opts.publicUrl ?? "/" }],
    security: [{ integrationKey: [], serviceUser: [] }],
    tags: [...[...tags].sort().map((name) => ({ name, description: tagDescription(name, opts.resources ?? {}) })), ...(opts.extra?.tags ?? [])],
    paths: { ...paths, ...opts.extra?.paths },
    ...(opts.extra?.webhooks ? { webhooks: opts.extra.webhooks } : {}),
    components: {
      securitySchemes: { ...SECURITY_SCHEMES, ...opts.extra?.securitySchemes },
      schemas: PROBLEM_SCHEMAS,
      headers: {
        "X-Request-Id": { description: "The request's id (the caller's x-request-id, or a new one); also on every log line.", schema: { type: "string" } },
        "Retry-After": {
          description: "Seconds to wait before retrying: until the account's budget of points resets (429), or after a conflict with concurrent changes (503).",
          schema: { type: "integer" },
        },
        "RateLimit-Limit": { description: "The account's budget: points per one-minute window (REST and GraphQL together).", schema: { type: "integer" } },
        "RateLimit-Remaining": {
          description: "Points left in the window after this request (on a 429: what is left for a cheaper one; nothing was charged).",
          schema: { type: "integer" },
        },
        "RateLimit-Reset": { description: "Seconds until the window resets and the budget is whole again.", schema: { type: "integer" } },
      },
    },
  };
}

function requestIdHeader() {
  return { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } };
}

/** Headers a route's successful answers carry (e.g. the audit log's Cache-Control: no-store). */
const ETAG_HEADER = {
  description: "A tag of this answer (weak, over its body; a file download's is its sha256): send it back as If-None-Match.",
  schema: { type: "string" },
};
const IF_NONE_MATCH = {
  name: "If-None-Match",
  in: "header",
  required: false,
  description: "The ETag of an answer you hold: a 304 with no body while it is still current.",
  schema: { type: "string" },
  example: 'W/"1f-2jmj7l5rSw0yVb/vlWAYkK/YBwk"',
};

function successHeaders(route: RestRoute): Record<string, unknown> {
  return Object.fromEntries(Object.entries(route.reply.headers ?? {}).map(([name, value]) => [name, { schema: { type: "string", const: value } }]));
}

function errorResponse(route: RestRoute, status: number, input: ReturnType<typeof sampleInput>) {
  let description = STATUS_TEXT[status] ?? `Status ${status}`;
  if (route.rawBody && status === 413) description = `Body larger than ${route.rawBody.limitBytes / 1024 / 1024} MiB`;
  if (route.rawBody && status === 415) description = `Body is not ${route.rawBody.contentType}`;
  const headers: Record<string, unknown> = requestIdHeader();
  if (status === 429) {
    for (const h of ["Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) headers[h] = { $ref: `#/components/headers/${h}` };
  }
  if (status === 503) headers["Retry-After"] = { $ref: "#/components/headers/Retry-After" };
  if (status === 416) headers["Content-Range"] = { description: "`bytes */size`: the size of what the Range asked bytes of.", schema: { type: "string" } };
  const message = status === 500 ? "Unexpected error; the request may succeed on retry." : (STATUS_TEXT[status] ?? "Error");
  if (route.errorBody && route.errorSchema) {
    // The spec's own failure shape for this route instead of problem+json.
    const example = route.errorBody(status, [message], input);
    return { description, headers, content: { "application/json": { schema: route.errorSchema, example } } };
  }
  return { description, headers, content: { "application/problem+json": { schema: PROBLEM_REF, example: problem(status, message) } } };
}
