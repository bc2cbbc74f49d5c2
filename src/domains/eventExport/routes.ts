// REST row of the incremental export: GET /v1/accounts/{accountId}/events/export. The GraphQL
// operation authorises and fixes the page's bounds and cursor; the reply's ETag is a fingerprint of
// the page's rows (read.ts), and the body is then streamed a slice of rows at a time, as JSON or
// NDJSON, as it is read (src/rest/router.ts): never held whole, and no longer read once the client
// has gone.
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { badRequest } from "../../errors.js";
import { B, type RestRoute, route } from "../../rest/contract.js";
import { EXAMPLE_TIME } from "../../rest/examples.js";
import { graphql } from "../../rest/operation.js";
import { cursorParam, limitParam, pathParam, stringParam } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { EVENT_FIELDS, EVENT_TYPES } from "../events/validate.js";
import { EXPORT_LIMITS, type ExportBounds, exportFingerprint, exportRows } from "./read.js";

const DOC = graphql(`query EventExport($accountId: String!, $cursor: String, $limit: Int, $types: [String!]) {
  account(id: $accountId) { eventExport(cursor: $cursor, limit: $limit, types: $types) { cursor hasMore afterId upToId } } }`);

const EVENT_SCHEMA = {
  type: "object",
  required: ["id", ...EVENT_FIELDS, "receivedTime"],
  properties: {
    id: { type: "integer", description: "The service's id: increasing in ingestion order." },
    ...Object.fromEntries(EVENT_FIELDS.map((f) => [f, { description: `As sent to POST /events (null when absent).` }])),
    receivedTime: { type: "integer", description: "When the service stored it (epoch ms)." },
  },
};
/** An exported event as the export writes it: every field, null when the event has none. */
const EXAMPLE_EVENT = {
  id: 124,
  ...Object.fromEntries(EVENT_FIELDS.map((f) => [f, null])),
  type: "flow_started",
  time: EXAMPLE_TIME,
  endUserId: "user-42",
  flowId: "c_flow1",
  widget: "self_help",
  domain: "app.example.com",
  userName: "Ada",
  receivedTime: EXAMPLE_TIME + 1_250,
};
const PAGE_SCHEMA = {
  type: "object",
  required: ["data", "cursor", "hasMore"],
  // The cursor resumes after the page's last event.
  example: { data: [EXAMPLE_EVENT], cursor: Buffer.from(JSON.stringify({ after: 124 })).toString("base64url"), hasMore: false },
  properties: {
    data: { type: "array", items: EVENT_SCHEMA },
    cursor: { type: "string", description: "Resume from here (never null): later calls return events stored after this page." },
    hasMore: { type: "boolean", description: "More events exist now: call again at once." },
  },
};

/** `type`: comma-separated or repeated. */
function typesParam(query: Record<string, unknown>): string[] | undefined {
  const raw = query.type;
  if (raw === undefined || raw === "") return undefined;
  const list = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => (typeof v === "string" ? v.split(",") : [String(v)])).map((s) => s.trim());
  const types = list.filter(Boolean);
  // Given, but naming none (`type=,`, `type=%20`): not the same as not given. An empty list reached
  // the resolver as "no filter" and answered every event to a client that asked for a subset.
  if (!types.length) throw badRequest("type must list at least one event type", [{ path: "type", message: "names no type" }]);
  return types;
}

function body(b: ExportBounds, ndjson: boolean): Readable {
  return Readable.from(
    (async function* () {
      let n = 0;
      if (!ndjson) yield '{"data":[';
      for await (const slice of exportRows(b)) {
        let chunk = "";
        for (const e of slice) chunk += ndjson ? `${JSON.stringify(e)}\n` : (n++ ? "," : "") + JSON.stringify(e);
        yield chunk;
      }
      if (!ndjson) yield `],"cursor":${JSON.stringify(b.cursor)},"hasMore":${b.hasMore}}`;
    })(),
    { objectMode: false },
  );
}

/**
 * The page's weak tag: everything its answer shows (the format, the bounds and types, hasMore and
 * the cursor, which the JSON body and the headers carry) and the rows' fingerprint.
 */
function exportTag(b: ExportBounds, ndjson: boolean, fingerprint: string): string {
  const what = JSON.stringify([ndjson ? "ndjson" : "json", b.after, b.upTo, b.types, b.hasMore, b.cursor, fingerprint]);
  return `W/"ev-${createHash("sha1").update(what).digest("base64url").slice(0, 27)}"`;
}

export const exportRoutes: RestRoute[] = [
  route(DOC, {
    name: "exportEvents",
    method: "get",
    path: `${B}/events/export`,
    summary: "Incremental export of engagement events in ingestion order, resumable from a cursor (JSON or NDJSON, streamed)",
    query: {
      cursor: {
        description: "The cursor of the previous page (absent: from the first event). Never expires.",
        schema: { type: "string", pattern: "^[A-Za-z0-9_-]+$" },
        example: "eyJhZnRlciI6MTIzfQ",
      },
      limit: {
        description: "Events a page.",
        schema: { type: "integer", minimum: 1, maximum: EXPORT_LIMITS.max, default: EXPORT_LIMITS.default },
        example: 1000,
      },
      type: {
        description: "Only these event types (comma-separated or repeated).",
        schema: { type: "string", pattern: `^(${Object.keys(EVENT_TYPES).join("|")})(,(${Object.keys(EVENT_TYPES).join("|")}))*$` },
        example: "flow_completed,flow_started",
      },
      format: {
        description: "`json` (default): `{data, cursor, hasMore}`; `ndjson`: one event a line, the cursor in `X-Next-Cursor`, hasMore in `X-Has-More`.",
        schema: { type: "string", enum: ["json", "ndjson"], default: "json" },
        example: "json",
      },
    },
    variables: (i) => {
      stringParam(i.query, "format", { oneOf: ["json", "ndjson"] });
      return {
        accountId: pathParam(i, "accountId"),
        cursor: cursorParam(i.query),
        limit: limitParam(i.query, EXPORT_LIMITS),
        types: typesParam(i.query),
      };
    },
    reply: reply.custom(
      {
        200: {
          json: PAGE_SCHEMA,
          text: {
            "application/x-ndjson": { description: "One event a line (format=ndjson).", example: `${JSON.stringify(EXAMPLE_EVENT)}\n` },
          },
        },
        400: "problem",
      },
      (d, input) => {
        const e = d.account.eventExport;
        const ndjson = input.query.format === "ndjson";
        const bounds: ExportBounds = {
          accountId: input.params.accountId!,
          after: e.afterId,
          upTo: e.upToId,
          types: typesParam(input.query)?.length ? [...new Set(typesParam(input.query))].sort() : null,
          hasMore: e.hasMore,
          cursor: e.cursor,
        };
        return {
          status: 200,
          headers: {
            "Content-Type": ndjson ? "application/x-ndjson; charset=utf-8" : "application/json; charset=utf-8",
            "X-Next-Cursor": e.cursor,
            "X-Has-More": String(e.hasMore),
            "Cache-Control": "no-store",
          },
          // Tagged from a fingerprint of the page's rows, read before them: the body is then
          // streamed as it is read (a slice at a time), never held whole to be hashed.
          etag: async () => exportTag(bounds, ndjson, await exportFingerprint(bounds)),
          stream: async () => body(bounds, ndjson),
        };
      },
    ),
  }),
];
