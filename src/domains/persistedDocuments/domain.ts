// The persisted-documents domain: what it is, its GraphQL schema, its REST row, how its model is audited.
import { defineDomain } from "../define.js";
import { persistedDocumentsAudit } from "./audit.js";
import { persistedDocumentRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const persistedDocuments = defineDomain({
  name: "persistedDocuments",
  description: "GraphQL documents a client registered per account (its manifest), run by `documentId` (src/graphql/persistedDocuments.ts).",
  graphql,
  routes: persistedDocumentRoutes,
  audit: persistedDocumentsAudit,
  openApiTags: {
    graphql:
      'Persisted GraphQL documents: a client\'s manifest (`{"sha256:<hex>": "<document>"}`, as GraphQL Codegen\'s client preset and gql.tada emit it), after which POST/GET /graphql take `documentId` in place of `query`.',
  },
});
