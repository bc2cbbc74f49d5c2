// GraphQL over GET (and form-encoded POST) carries `variables` and `extensions` as JSON text in the
// query string. Yoga's parser hands them to JSON.parse and lets its SyntaxError escape, which the
// error masking can only report as an unexpected error: `GET /graphql?query={…}&variables=oops` was
// a 500. Text that is not JSON is the caller's mistake, so it is a 400 here, as Yoga answers a
// `variables` that is JSON but not an object.
import { createGraphQLError, type Plugin } from "graphql-yoga";

export function jsonRequestParams(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
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
