// The one error masking of GraphQL execution, for POST /graphql (Yoga's maskedErrors) and for the
// REST routes' compiled executions alike: an expected failure (our AppError, however it was wrapped)
// is answered as it is; anything else is logged once with its stack and masked.
import { type ExecutionResult, GraphQLError } from "graphql";
import { maskError as defaultMaskError, type Plugin } from "graphql-yoga";
import { knownError } from "../errors.js";
import { logger } from "../logger.js";
import { documentLimitsNow, hideSuggestions } from "./armor.js";

export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  const known = knownError(original);
  // Where it happened stays (the spec: a field error carries its path), with our message and
  // extensions: an AppError thrown in a resolver comes wrapped in a located error. (The path only:
  // the compiled fast path's errors have no source locations, and both answer alike.)
  if (known && known !== error && error instanceof GraphQLError && error.path)
    return new GraphQLError(known.message, { path: error.path, originalError: known, extensions: known.extensions });
  if (known) return known;
  // A GraphQLError of its own (a variable or document error) is the client's and passes unmasked.
  if (!(original instanceof GraphQLError) && !(error instanceof GraphQLError && !error.originalError)) {
    logger.error({ err: original ?? error }, "unexpected error in GraphQL execution");
  }
  return defaultMaskError(error, message, isDev);
}

/** The errors of a result as POST /graphql would answer them. */
export const maskErrors = (errors: readonly GraphQLError[]): GraphQLError[] =>
  // With introspection off, no "Did you mean …?" (a saved endpoint's variables are the caller's).
  (documentLimitsNow().blockFieldSuggestions ? hideSuggestions(errors) : errors).map((e) => {
    const masked = maskError(e, "Unexpected error.");
    return masked instanceof GraphQLError ? masked : new GraphQLError(masked.message, { originalError: masked });
  });

/**
 * GraphQL over HTTP: a response with data (some fields failed, others answered) is a 2xx with the
 * errors in its body; `application/graphql-response+json` requires it, and clients such as Apollo's
 * drop a non-2xx answer's data. So the statuses our errors carry (400, 403, 404, 429) pick the
 * response's status only when there is no data (a refusal before execution, an error that nulled
 * the whole result); their headers (Retry-After) stay.
 */
export function partialResultsAre2xx(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      const r = result as ExecutionResult;
      if (r.data == null || !r.errors?.length) return;
      setResult({ ...r, errors: r.errors.map(withoutStatus) });
    },
  };
}

function withoutStatus(e: GraphQLError): GraphQLError {
  const http = e.extensions?.http as { status?: number; headers?: Record<string, string> } | undefined;
  if (http?.status === undefined) return e;
  const { status: _status, ...rest } = http;
  return new GraphQLError(e.message, {
    nodes: e.nodes,
    source: e.source,
    positions: e.positions,
    path: e.path,
    originalError: e.originalError,
    extensions: { ...e.extensions, http: rest },
  });
}
