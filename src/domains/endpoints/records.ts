// The endpoint record on the wire (the contract's "Saved operations as REST endpoints").
import type { Selected } from "../../rest/operation.js";
import { wireRecord } from "../../rest/responses.js";
import { ENDPOINT_NAME, MAX_AGE_SECONDS } from "./store.js";

export const ENDPOINT_FIELDS = "name method documentId description maxAgeSeconds variables { name type required } createdTime lastUpdateTime";

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
        example: "sha256:9f2c7a4e0b5d6c1f8e3a2b7d4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e",
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
);
