// The one error masking of GraphQL execution, for POST /graphql (Yoga's maskedErrors) and for the
// REST routes' compiled executions alike: an expected failure (our AppError, however it was wrapped)
// is answered as it is; anything else is logged once with its stack and masked.
import { GraphQLError } from "graphql";
import { maskError as defaultMaskError } from "graphql-yoga";
import { knownError } from "../errors.js";
import { logger } from "../logger.js";

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
  errors.map((e) => {
    const masked = maskError(e, "Unexpected error.");
    return masked instanceof GraphQLError ? masked : new GraphQLError(masked.message, { originalError: masked });
  });
