// Wire shapes of end users and schema fields, from the GraphQL selections their routes ask for.
import type { Style } from "../../rest/contract.js";
import { EXAMPLE_TIME } from "../../rest/examples.js";
import type { Selected } from "../../rest/operation.js";
import { wireRecord } from "../../rest/responses.js";
import { FIELD_TYPES } from "./fields.js";

export const SCHEMA_FIELD_FIELDS = `name type description default`;
export const END_USER_FIELDS = `id creationTime lastUpdateTime custom @include(if: $custom) userActionCount @include(if: $actions) userActions @include(if: $actions)`;

type EndUserNode = Selected<"EndUser", typeof END_USER_FIELDS>;

const CUSTOM_VALUES = { type: "object", additionalProperties: { type: ["string", "number", "boolean"] }, description: "Custom field name → value." };

/**
 * End users: style A has no user-action maps. Fields not fetched are not sent: `custom` and the
 * action maps are optional in the schema, because `fields=` on B13/B14 can leave them out.
 */
export function endUserRecord(style: Style) {
  return wireRecord(
    {
      type: "object",
      required: ["id", "creationTime", "lastUpdateTime"],
      properties: {
        id: { type: "string", description: "The id in the account's identification method." },
        creationTime: { type: "integer", description: "Epoch milliseconds." },
        lastUpdateTime: { type: "integer", description: "Epoch milliseconds." },
        custom: CUSTOM_VALUES,
        ...(style === "B"
          ? {
              userActionCount: { type: "object", additionalProperties: { type: "integer", minimum: 0 }, description: "User-action id → count." },
              userActions: { type: "object", additionalProperties: { type: "integer" }, description: "User-action id → the integer last reported." },
            }
          : {}),
      },
    },
    (u: EndUserNode) => ({
      id: u.id,
      creationTime: u.creationTime,
      lastUpdateTime: u.lastUpdateTime,
      ...(u.custom !== undefined ? { custom: u.custom } : {}),
      ...(style === "B" && u.userActionCount !== undefined ? { userActionCount: u.userActionCount, userActions: u.userActions } : {}),
    }),
    {
      id: "user-42",
      creationTime: EXAMPLE_TIME,
      lastUpdateTime: EXAMPLE_TIME,
      custom: { plan: "gold" },
      ...(style === "B" ? { userActionCount: { "action-1": 2 }, userActions: { "action-1": EXAMPLE_TIME } } : {}),
    },
  );
}

export const schemaFieldRecord = wireRecord(
  {
    type: "object",
    required: ["name", "type", "description", "default"],
    properties: {
      name: { type: "string" },
      type: { type: "string", enum: [...FIELD_TYPES] },
      description: { type: ["string", "null"] },
      default: { type: "boolean", description: "Service-provided; cannot be changed or deleted." },
    },
  },
  (f: Selected<"SchemaField", typeof SCHEMA_FIELD_FIELDS>) => f,
  { name: "plan", type: "string", description: "Subscription plan", default: false },
);
