// GraphQL over GET (and form-encoded POST) carries `variables` and `extensions` as JSON text in the
// query string. Yoga's parser hands them to JSON.parse and lets its SyntaxError escape, which the
// error masking can only report as an unexpected error: `GET /graphql?query={…}&variables=oops` was
// a 500. Text that is not JSON is the caller's mistake, so it is a 400 here, as Yoga answers a
// `variables` that is JSON but not an object.
// A POST in a media type no parser reads (text/plain) Yoga answers with a bare 415: no body, so no
// error saying what to send and no `extensions.cost`, which every /graphql answer carries. It is
// thrown as an error here instead, answered as the other request errors are (the 415 kept).
import { createGraphQLError, type Plugin, processRegularResult } from "graphql-yoga";
import { AppError } from "../errors.js";

export function jsonRequestParams(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) {
        setRequestParser(() => {
          throw new AppError(415, "Send the body as JSON with Content-Type: application/json.");
        });
        return;
      }
      setRequestParser(async (request) => {
        try {
          return await requestParser(request);
        } catch (err) {
          if (!(err instanceof SyntaxError)) throw err;
          throw createGraphQLError(`"variables" and "extensions" must be JSON: ${err.message}`, { extensions: { http: { status: 400 }, code: "BAD_REQUEST" } });
        }
      });
    },
  };
}

/**
 * The media types Yoga answers a result in (its result processors: src/graphql/fastPath.ts
 * regularMediaType for the regular ones), in its reading of Accept: utf-8 only, wildcards match.
 */
const ANSWERED = ["application/graphql-response+json", "application/json", "multipart/mixed", "text/event-stream"];

/** Whether an Accept header lets Yoga answer in one of its media types (no header: any). */
export function acceptsAnAnswer(accept: string | null): boolean {
  for (const entry of (accept || "*/*").replace(/\s/g, "").toLowerCase().split(",")) {
    const [type, ...params] = entry.split(";");
    if (!type || (params.find((p) => p.includes("charset=")) ?? "charset=utf-8") !== "charset=utf-8") continue;
    const [pre, suf] = type.split("/");
    if (ANSWERED.some((offered) => (pre === "*" || offered.startsWith(`${pre}/`)) && (suf === "*" || offered.endsWith(`/${suf}`)))) return true;
  }
  return false;
}

/**
 * A request whose Accept names no media type Yoga answers in (`Accept: application/xml`): Yoga ran
 * it, mutations included, and then answered a bare 406 (no body, no `extensions.cost`). GraphQL over
 * HTTP recommends a 406 that stops processing: it is refused here before anything runs (after the
 * credentials' 401 and the body's 415, which the parser it wraps throws first), and any answer no
 * processor takes (this 406, a 401 to the same Accept) is written as JSON, the errors of the other
 * early refusals, so the client has a body saying what to send.
 */
export function acceptableAnswers(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (acceptsAnAnswer(request.headers.get("accept"))) return;
      setRequestParser(async (r) => {
        await requestParser?.(r);
        throw new AppError(
          406,
          `GraphQL answers in application/graphql-response+json or application/json (or text/event-stream, multipart/mixed); the Accept header (${request.headers.get("accept")}) takes none of them. Nothing was run.`,
        );
      });
    },
    onResultProcess({ resultProcessor, setResultProcessor }) {
      if (!resultProcessor) setResultProcessor(processRegularResult, "application/json");
    },
  };
}

/**
 * A request with nothing to run (`{}`, `{"query": null}`, params that are not an object): Yoga marks
 * its error a GraphQL-over-HTTP request error and answers it 200 to `application/json` clients, as it
 * answers a document that does not parse; but such a request is not well-formed (GraphQL over HTTP
 * allows a 400 for it), and a `query` of the wrong type already gets one. So 400 in every media type.
 * (Parse, validation and coercion errors of a well-formed request keep the spec's 200 there.)
 */
export function malformedRequestsAre400(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result || !result.errors?.length) return;
      const malformed = result.errors.some((e) => {
        const ext = (e as { extensions?: { code?: unknown; http?: { spec?: unknown } } }).extensions;
        return ext?.code === "BAD_REQUEST" && ext.http?.spec === true;
      });
      if (malformed) setResult({ ...result, extensions: { ...result.extensions, http: { status: 400 } } });
    },
  };
}
