// GraphQL requests over HTTP carry text in variables and in string literals: both are checked as
// REST bodies are (src/text.ts), before the operation runs. (REST executes its documents in process
// with variables built from a body already checked, so this plugin does not see those.)
import { parse } from "graphql";
import type { Plugin } from "graphql-yoga";
import { findUnstorableText, mayCarryUnstorableText, unstorableLiteral, unstorableTextError } from "../text.js";

export function storableText(): Plugin {
  return {
    onParams({ params, setResult }) {
      const path = params.variables ? findUnstorableText(params.variables, "variables") : null;
      if (path) return setResult({ errors: [unstorableTextError(path)] });
      // Only a text: a `query` of another JSON type is Yoga's 400 to give (it was a TypeError here, a 500).
      if (typeof params.query === "string" && mayCarryUnstorableText(params.query)) {
        let error = null;
        try {
          error = unstorableLiteral(parse(params.query));
        } catch {
          // Not a valid document: Yoga reports the syntax error itself.
        }
        if (error) setResult({ errors: [error] });
      }
    },
  };
}
