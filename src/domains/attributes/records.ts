// Wire shape of integration-attribute records, from the GraphQL selection their routes ask for.

import { EXAMPLE_TIME } from "../../rest/examples.js";
import type { Selected } from "../../rest/operation.js";
import { wireRecord } from "../../rest/responses.js";

export const ATTRIBUTE_FIELDS = `attributeName attributeValue additionalAttributes lastUpdateTime lastUpdatedBy`;

export const attributeRecord = wireRecord(
  {
    type: "object",
    required: ["attributeName", "attributeValue", "additionalAttributes", "lastUpdateTime", "lastUpdatedBy"],
    properties: {
      attributeName: { type: "string", description: "The primary attribute (an entry of the integration-attribute schema)." },
      attributeValue: { type: "string", description: "The primary attribute's value, as text; with attributeName it keys the record." },
      additionalAttributes: {
        type: "object",
        additionalProperties: { type: ["string", "number", "boolean"] },
        description: "Secondary attributes: name → value of the schema's type.",
      },
      lastUpdateTime: { type: "integer", description: "Epoch milliseconds." },
      lastUpdatedBy: { type: ["string", "null"], description: "E-mail of the user whose request last changed the record." },
    },
  },
  (r: Selected<"IntegrationAttribute", typeof ATTRIBUTE_FIELDS>) => r,
  {
    attributeName: "company",
    attributeValue: "acme",
    additionalAttributes: { region: "emea", seats: 250 },
    lastUpdateTime: EXAMPLE_TIME,
    lastUpdatedBy: "ops@acme.com",
  },
);
