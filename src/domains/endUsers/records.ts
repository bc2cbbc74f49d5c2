// Wire shapes of end users and schema fields, from the GraphQL selections their routes ask for.
import type { Style } from "../../rest/contract.js";

export const SCHEMA_FIELD_FIELDS = `name type description default`;
export const END_USER_FIELDS = `id creationTime lastUpdateTime custom @include(if: $custom) userActionCount @include(if: $actions) userActions @include(if: $actions)`;

interface EndUserNode {
  id: string;
  creationTime: number;
  lastUpdateTime: number;
  custom?: object;
  userActionCount?: object;
  userActions?: object;
}

/** End users: style A has no user-action maps; fields not fetched are not sent. */
export function endUserRecord(style: Style) {
  return (u: EndUserNode) => ({
    id: u.id,
    creationTime: u.creationTime,
    lastUpdateTime: u.lastUpdateTime,
    ...(u.custom !== undefined ? { custom: u.custom } : {}),
    ...(style === "B" && u.userActionCount !== undefined ? { userActionCount: u.userActionCount, userActions: u.userActions } : {}),
  });
}

export const schemaFieldRecord = (f: { name: string; type: string; description: string | null; default: boolean }) => f;
