// The endpoint record on the wire (the contract's "Saved operations as REST endpoints").
import { sha256Hex } from "../../graphql/persistedDocuments.js";
import { EXAMPLE_TIME } from "../../rest/examples.js";
import type { Selected } from "../../rest/operation.js";
import { wireRecord } from "../../rest/responses.js";
import { ENDPOINT_NAME, MAX_AGE_SECONDS } from "./store.js";

export const ENDPOINT_FIELDS = "name method documentId description maxAgeSeconds variables { name type required } createdTime lastUpdateTime";

/** The document of the examples (PUT's body; the record's documentId is its hash). */
export const EXAMPLE_ENDPOINT_DOCUMENT =
  "query TopTags($accountId: String!, $first: Int = 10) { account(id: $accountId) { tags(first: $first) { nodes { name type } } } }";

export const endpointRecord = wireRecord(
  {
    type: "object",
    required: ["name", "method", "documentId", "description", "maxAgeSeconds", "variables", "createdTime", "lastUpdateTime"],
    additionalProperties: false,
    properties: {
      name: { type: "string", pattern: ENDPOINT_NAME.source, example: "topTags" },
      method: { type: "string", enum: ["GET", "POST"] },
      documentId: {
        type: "string",
        pattern: "^sha256:[0-9a-f]{64}$",
        description: "The persisted document the endpoint runs.",
        example: `sha256:${sha256Hex(EXAMPLE_ENDPOINT_DOCUMENT)}`,
      },
      description: { type: ["string", "null"] },
      maxAgeSeconds: { type: "integer", minimum: 0, maximum: MAX_AGE_SECONDS, description: "GET answers carry `Cache-Control: private, max-age=<this>`." },
      variables: {
        type: "array",
        description: "The variables a call gives (`accountId`, if the operation has it, is the path's account).",
        items: {
          type: "object",
          required: ["name", "type", "required"],
          additionalProperties: false,
          properties: { name: { type: "string" }, type: { type: "string", example: "Int!" }, required: { type: "boolean" } },
        },
      },
      createdTime: { type: "integer", description: "Epoch ms." },
      lastUpdateTime: { type: "integer", description: "Epoch ms." },
    },
  },
  (e: Selected<"SavedEndpoint", typeof ENDPOINT_FIELDS>) => ({
    name: e.name,
    method: e.method,
    documentId: e.documentId,
    description: e.description,
    maxAgeSeconds: e.maxAgeSeconds,
    variables: e.variables,
    createdTime: e.createdTime,
    lastUpdateTime: e.lastUpdateTime,
  }),
  {
    name: "topTags",
    method: "GET",
    documentId: `sha256:${sha256Hex(EXAMPLE_ENDPOINT_DOCUMENT)}`,
    description: "The account's first tags",
    maxAgeSeconds: 60,
    variables: [{ name: "first", type: "Int", required: false }],
    createdTime: EXAMPLE_TIME,
    lastUpdateTime: EXAMPLE_TIME,
  },
);
