// Wire shape of tag records: the GraphQL selection the tag routes ask for, sent as it is.

import { exampleId } from "../../rest/examples.js";
import type { Selected } from "../../rest/operation.js";
import { wireRecord } from "../../rest/responses.js";

export const TAG_FIELDS = `id name description type`;

export const tagRecord = wireRecord(
  {
    type: "object",
    required: ["id", "name", "description", "type"],
    properties: {
      id: { type: "string" },
      name: { type: "string", description: "Unique within the account; no commas." },
      description: { type: ["string", "null"] },
      type: { type: "string", enum: ["USER", "PAGE", "ROLE"], description: "Tags created through the API are USER tags." },
    },
  },
  (t: Selected<"Tag", typeof TAG_FIELDS>) => t,
  { id: exampleId("t"), name: "onboarding", description: "For new users", type: "USER" },
);
