// The main OpenAPI document's description of what saved endpoints add outside the route table:
// calling one, and the account's own OpenAPI document (whose shapes are each endpoint's own).
import { ENDPOINT_NAME } from "./store.js";

const PROBLEM = { $ref: "#/components/schemas/Problem" };
const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: PROBLEM } } });
const ACCOUNT = { name: "accountId", in: "path", required: true, description: "The account (the dashboard calls it entId).", schema: { type: "string" } };
const NAME = {
  name: "name",
  in: "path",
  required: true,
  description: "The endpoint's name.",
  schema: { type: "string", pattern: ENDPOINT_NAME.source },
  example: "topTags",
};
const ERRORS = {
  400: problem("A variable that is missing, unknown or of the wrong type (named in the problem), or an error of the operation"),
  401: problem("Missing, unknown, expired or revoked key, or the key's owner does not match x-service-user"),
  403: problem("The key's user has no access to this account"),
  404: problem("No endpoint of this name in the account"),
  429: problem("Rate limit of the account exceeded; retry after Retry-After seconds"),
};
const DATA = {
  description: "The operation's `data` object; its shape is the endpoint's own, in the account's `endpoints/openapi.json`.",
  headers: { ETag: { description: "Weak tag of this answer: send it back as If-None-Match.", schema: { type: "string" } } },
  content: { "application/json": { schema: { type: "object", additionalProperties: true } } },
};
const RUN = `Runs the account's saved endpoint \`name\` (saved with PUT /v1/accounts/{accountId}/endpoints/{name}) with the caller's key, scopes and rate budget.`;

export const endpointsOpenApiExtra = {
  tags: [
    {
      name: "run (style B)",
      description:
        "Calling a saved endpoint: its variables from the query string (GET) or a JSON body (POST), its operation's `data` as the answer. Style B paths: `/v1/accounts/{accountId}/…`.",
    },
  ],
  paths: {
    "/v1/accounts/{accountId}/run/{name}": {
      get: {
        operationId: "runEndpoint",
        summary: "Call a saved endpoint (variables in the query string)",
        description: `${RUN} Each query parameter is a variable, read by its type: Int, Float, Boolean (\`true\`/\`false\`), enums and strings as written, a list as repeated parameters or one comma-separated value, an input object as JSON. \`accountId\` is the path's. Answers carry \`Cache-Control: private, max-age=<the endpoint's maxAgeSeconds>\`.`,
        tags: ["run (style B)"],
        parameters: [ACCOUNT, NAME],
        responses: {
          200: { ...DATA, headers: { ...DATA.headers, "Cache-Control": { description: "private, max-age=<maxAgeSeconds>", schema: { type: "string" } } } },
          304: { description: "Not Modified: the ETag given in If-None-Match is current; no body" },
          ...ERRORS,
          405: problem("The endpoint is called with POST (a mutation)"),
        },
      },
      post: {
        operationId: "runEndpointWithBody",
        summary: "Call a saved endpoint (variables as a JSON body)",
        description: `${RUN} The body is a JSON object of the operation's variables (none: no body).`,
        tags: ["run (style B)"],
        parameters: [ACCOUNT, NAME],
        requestBody: {
          required: false,
          content: { "application/json": { schema: { type: "object", additionalProperties: true }, example: { first: 5 } } },
        },
        responses: {
          200: DATA,
          ...ERRORS,
          413: problem("Body over 10 MiB (as sent or once decoded)"),
          415: problem("Body is not JSON, or in a Content-Encoding other than gzip, deflate, br or identity"),
        },
      },
    },
    "/v1/accounts/{accountId}/endpoints/openapi.json": {
      get: {
        operationId: "endpointsOpenApi",
        summary: "The OpenAPI 3.1 document of the account's saved endpoints",
        description: "Each endpoint with its parameters (from the operation's variables) and its 200 schema (from the operation's selection).",
        tags: ["endpoints (style B)"],
        parameters: [ACCOUNT],
        responses: {
          200: {
            description: "An OpenAPI 3.1 document",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["openapi", "paths"],
                  properties: { openapi: { type: "string", const: "3.1.0" }, paths: { type: "object" } },
                },
              },
            },
          },
          304: { description: "Not Modified: the ETag given in If-None-Match is current; no body" },
          401: ERRORS[401],
          403: ERRORS[403],
          429: ERRORS[429],
        },
      },
    },
  },
};
