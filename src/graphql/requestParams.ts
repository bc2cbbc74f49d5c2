// GraphQL over GET (and form-encoded POST) carries `variables` and `extensions` as JSON text in the
// query string. Yoga's parser hands them to JSON.parse and lets its SyntaxError escape, which the
// error masking can only report as an unexpected error: `GET /graphql?query={…}&variables=oops` was
// a 500. Text that is not JSON is the caller's mistake, so it is a 400 here, as Yoga answers a
// `variables` that is JSON but not an object.
// A POST in a media type no parser reads (text/plain) Yoga answers with a bare 415: no body, so no
// error saying what to send and no `extensions.cost`, which every /graphql answer carries. It is
// thrown as an error here instead, answered as the other request errors are (the 415 kept).
import { createGraphQLError, type Plugin } from "graphql-yoga";
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
