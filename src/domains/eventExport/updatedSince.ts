// `updatedSince` of GET /api/v1/{accountId}/endUsers (incremental user syncs): end users changed at
// or after a time, ordered by (lastUpdateTime, id). Runs the end-user list's own filter and order.

import type { RestInput } from "../../rest/contract.js";
import type { QueryParamDoc } from "../../rest/docs.js";
import type { EnumValue } from "../../rest/operation.js";
import { intParam } from "../../rest/params.js";
import { MAX_TIMESTAMP } from "../../schema/builder.js";

export const updatedSinceQuery: Record<string, QueryParamDoc> = {
  updatedSince: {
    description:
      "Epoch ms: only end users changed at or after it, ordered by (lastUpdateTime, id). Resume a sync from the last lastUpdateTime seen. A cursor belongs to its order: one taken without updatedSince is a 400 with it, and the other way round.",
    schema: { type: "integer", minimum: 0, maximum: MAX_TIMESTAMP },
    example: 1718000000000,
  },
};

export function updatedSinceVariables(i: RestInput): { filter?: { updatedAfter: number }; orderBy?: EnumValue<"EndUserOrder"> } {
  const since = intParam(i.query, "updatedSince", { min: 0, max: MAX_TIMESTAMP });
  if (since === undefined) return {};
  // The filter's updatedAfter is strict and times are whole milliseconds: after since−1 is at or after since.
  return { filter: { updatedAfter: Math.max(0, since - 1) }, orderBy: "UPDATED" };
}
