// Persisted documents over REST: a client's manifest, as GraphQL Codegen's client preset and gql.tada emit it.
import { sha256Hex } from "../../graphql/persistedDocuments.js";
import { B, type RestRoute, route } from "../../rest/contract.js";
import { graphql } from "../../rest/operation.js";
import { pathParam } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { MANIFEST_MAX_DOCUMENTS, manifestEntries } from "./store.js";

const STORE = graphql(`mutation StorePersistedDocuments($accountId: String!, $documents: [PersistedDocumentInput!]!) {
  storePersistedDocuments(accountId: $accountId, documents: $documents) { stored } }`);

const EXAMPLE_TEXT = "query Tags($accountId: String!) { account(id: $accountId) { tags(first: 10) { nodes { name } } } }";

export const persistedDocumentRoutes: RestRoute[] = [
  route(STORE, {
    name: "storePersistedDocuments",
    method: "post",
    path: `${B}/graphql/documents`,
    summary: "Register persisted GraphQL documents (a client's manifest) for `documentId` requests",
    body: {
      description: `A manifest: document id (\`sha256:<hex>\` or \`<hex>\`, the SHA-256 of the text) → document text; at most ${MANIFEST_MAX_DOCUMENTS} documents. Each text must be a valid document for the schema.`,
      schema: { type: "object", minProperties: 1, maxProperties: MANIFEST_MAX_DOCUMENTS, additionalProperties: { type: "string" } },
      example: { [`sha256:${sha256Hex(EXAMPLE_TEXT)}`]: EXAMPLE_TEXT },
    },
    jsonBody: true,
    variables: (i) => ({ accountId: pathParam(i, "accountId"), documents: manifestEntries(i.body) }),
    reply: reply.custom<{ storePersistedDocuments: { stored: number } }>(
      { 200: { json: { type: "object", required: ["stored"], properties: { stored: { type: "integer", minimum: 1 } } } }, 400: "problem" },
      (d) => ({ status: 200, body: { stored: d.storePersistedDocuments.stored } }),
    ),
  }),
];
