// REST row for engagement events: POST /v1/accounts/{accountId}/events (feeds the B24 reports).

import { AppError } from "../../errors.js";
import { MESSAGE_ID_MAX } from "../../ingest/idempotency.js";
import { B, type RestRoute, route, unchecked } from "../../rest/contract.js";
import { graphql } from "../../rest/operation.js";
import { pathParam } from "../../rest/params.js";
import { bulkReply, ITEM_OUTCOME, MULTI_STATUS, multiStatusExample, reply } from "../../rest/responses.js";
import { MAX_BULK_ITEMS } from "../../schema/bulk.js";
import { STORED } from "./schema.js";
import { EVENT_TYPES, WIDGETS } from "./validate.js";

const RECORD = graphql(`mutation RecordEvents($accountId: String!, $events: [EngagementEvent]!) {
  recordEvents(accountId: $accountId, events: $events) { results { index statusCode id errors ... on EventResult { duplicate } } } }`);

const str = (description: string) => ({ type: "string", minLength: 1, description });
const EVENT_SCHEMA = {
  type: "object",
  required: ["type", "time"],
  additionalProperties: false,
  properties: {
    type: { type: "string", enum: Object.keys(EVENT_TYPES), description: "What happened; decides which other fields are required." },
    time: { type: "integer", minimum: 0, description: "Epoch milliseconds (UTC); at most 5 minutes in the future." },
    id: {
      type: "string",
      minLength: 1,
      maxLength: MESSAGE_ID_MAX,
      description: "Optional idempotency key: an item whose id this account sent in the last 8 days is accepted and not stored again.",
    },
    endUserId: str("The end user (created on first sight)."),
    flowId: str("Flow events and task events."),
    contentId: str("The content shown, clicked or viewed; on selfhelp_search the result clicked."),
    widget: { type: "string", enum: [...WIDGETS], description: "Where a flow was played from (flow_started/completed/exited/failed)." },
    step: { type: "integer", minimum: 1, maximum: 2_147_483_647, description: "flow_step: the step reached." },
    searchTerm: str("selfhelp_search: the term (reports group it trimmed and lower-cased)."),
    resultCount: { type: "integer", minimum: 0, maximum: 2_147_483_647, description: "selfhelp_search: how many results it showed." },
    useful: { type: "boolean", description: "flow_feedback: was the flow useful." },
    comment: str("flow_feedback: the verbatim comment (optional)."),
    actionId: str("user_action: the action."),
    domain: str("The domain (host) the event happened on; reports filter by it."),
    userName: str("The end user's display name; the latest one (by event time) is shown in reports."),
  },
};

/** The bulk 207, with each accepted item's `duplicate` flag and the 202's two counts. */
const EVENTS_MULTI_STATUS = {
  ...MULTI_STATUS,
  required: ["accepted", "duplicates", "success", "failure"],
  properties: {
    accepted: { type: "integer", description: "Events stored." },
    duplicates: { type: "integer", description: "Items whose `id` was seen before (accepted, not stored again)." },
    success: {
      type: "array",
      items: {
        ...ITEM_OUTCOME,
        required: [...(ITEM_OUTCOME.required as string[]), "duplicate"],
        properties: {
          ...(ITEM_OUTCOME.properties as object),
          duplicate: { type: "boolean", description: "The item's `id` was seen before: accepted, not stored again." },
        },
      },
    },
    failure: (MULTI_STATUS.properties as Record<string, unknown>).failure,
  },
};

const mixed = multiStatusExample([STORED], [400], { ids: [null, null], error: "time is more than 5 minutes in the future" });
const EVENTS_MULTI_STATUS_EXAMPLE = {
  accepted: 1,
  duplicates: 0,
  success: mixed.success.map((item) => ({ ...item, duplicate: false })),
  failure: mixed.failure,
};

export const eventRoutes: RestRoute[] = [
  route(RECORD, {
    name: "recordEvents",
    method: "post",
    path: `${B}/events`,
    summary: "Engagement events from the parent application (1 to 10,000 a request; feeds the B24 reports)",
    jsonBody: true,
    body: {
      schema: { type: "array", minItems: 1, maxItems: 10_000, items: EVENT_SCHEMA },
      example: [
        { type: "flow_started", time: 1718000000000, endUserId: "user-42", flowId: "c_flow1", widget: "self_help", domain: "app.example.com", userName: "Ada" },
        { type: "selfhelp_search", time: 1718000005000, endUserId: "user-42", searchTerm: "invoice", resultCount: 3, contentId: "c_doc1" },
      ],
    },
    // Each event as sent: the EngagementEvent scalar checks it (a bad one fails alone).
    variables: (i) => ({ accountId: pathParam(i, "accountId"), events: unchecked(eventsBody(i.body)) }),
    names: { events: "body" },
    reply: reply.custom(
      {
        202: {
          json: {
            type: "object",
            required: ["accepted", "duplicates"],
            properties: {
              accepted: { type: "integer", description: "Events stored." },
              duplicates: { type: "integer", description: "Items whose `id` was seen before (not stored again)." },
            },
            example: { accepted: 2, duplicates: 0 },
          },
        },
        207: { json: EVENTS_MULTI_STATUS, example: EVENTS_MULTI_STATUS_EXAMPLE },
        400: "problem",
      },
      (data) => {
        const results = data.recordEvents.results;
        const stored = results.filter((r) => r.statusCode < 300);
        const duplicates = stored.filter((r) => r.duplicate).length;
        const counts = { accepted: stored.length - duplicates, duplicates };
        if (stored.length === results.length) return { status: 202, body: counts };
        const answer = bulkReply(results, null);
        if (answer.status !== 207) return answer;
        // A 207 says of each accepted item what the mutation's results say: whether its `id` was
        // seen before (accepted, not stored again), and counts them as the 202 does.
        const duplicate = new Map(stored.map((r) => [r.index, r.duplicate === true]));
        const body = answer.body as { success: { index: number }[]; failure: unknown[] };
        return {
          ...answer,
          body: { ...counts, success: body.success.map((s) => ({ ...s, duplicate: duplicate.get(s.index) ?? false })), failure: body.failure },
        };
      },
    ),
  }),
];

/** A JSON array of 1..10,000 items; each item is checked on its own (a bad one fails alone). */
function eventsBody(body: unknown): unknown[] {
  if (!Array.isArray(body)) throw new AppError(400, "body must be a JSON array of events", [{ path: "body", message: "not an array" }]);
  if (body.length === 0) throw new AppError(400, "body must hold at least one event", [{ path: "body", message: "empty" }]);
  if (body.length > MAX_BULK_ITEMS) throw new AppError(400, `body must hold at most ${MAX_BULK_ITEMS} events`, [{ path: "body", message: "too many" }]);
  return body;
}
