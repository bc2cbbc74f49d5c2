// The saved-endpoints domain: an account's own GraphQL operations as REST endpoints (its GraphQL
// schema, its REST rows, how its model is audited). Calling one, and its per-account OpenAPI
// document, are run.ts, mounted by src/app.ts.
import { defineDomain } from "../define.js";
import { endpointsAudit } from "./audit.js";
import { endpointRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const endpoints = defineDomain({
  name: "endpoints",
  description: "Saved operations served as REST endpoints of their account (GET/POST /v1/accounts/{accountId}/run/{name}).",
  graphql,
  routes: endpointRoutes,
  audit: endpointsAudit,
  openApiTags: {
    endpoints:
      "Saved operations: the account's own GraphQL operations as REST endpoints, called at `/v1/accounts/{accountId}/run/{name}` and documented at `/v1/accounts/{accountId}/endpoints/openapi.json`.",
    run: "Calling a saved endpoint: its variables from the query string (GET) or a JSON body (POST), its operation's `data` as the answer.",
  },
});
