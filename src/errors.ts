// Expected failures carry their HTTP status and a stable code in one place: GraphQL errors'
// `extensions`. Yoga uses `extensions.http.status` for GraphQL over HTTP; the REST layer turns the
// same error into problem+json (src/rest/problem.ts). Anything else is unexpected and gets masked.
import { GraphQLError } from "graphql";
import { dbErrorKind } from "./db/errors.js";

export interface FieldError {
  path: string;
  message: string;
}

const CODES: Record<number, string> = {
  400: "BAD_REQUEST",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  429: "RATE_LIMITED",
  503: "SERVICE_UNAVAILABLE",
};

export class AppError extends GraphQLError {
  readonly status: number;
  readonly fieldErrors: FieldError[] | undefined;
  constructor(status: number, message: string, fieldErrors?: FieldError[], headers?: Record<string, string>) {
    super(message, {
      extensions: {
        code: CODES[status] ?? "ERROR",
        http: { status, ...(headers ? { headers } : {}) },
        ...(fieldErrors?.length ? { errors: fieldErrors } : {}),
      },
    });
    this.status = status;
    this.fieldErrors = fieldErrors;
  }
}

export const badRequest = (message: string, fieldErrors?: FieldError[]) => new AppError(400, message, fieldErrors);
export const unauthorized = (message: string) => new AppError(401, message);
export const forbidden = (message: string) => new AppError(403, message);
export const notFound = (message: string) => new AppError(404, message);

/** Seconds a client should wait before retrying a 503 caused by contention. */
export const RETRY_AFTER_SECONDS = 1;

/**
 * The one mapping of expected failures that are not AppErrors (database errors, whichever way they
 * arrive) to the AppError they stand for; null when the error is unexpected (masked as a 500).
 */
export function knownError(error: unknown): AppError | null {
  if (error instanceof AppError) return error;
  switch (dbErrorKind(error)) {
    case "unique":
      return new AppError(409, "A record with the same unique value already exists (a concurrent change?); retry.");
    case "foreignKey":
      return new AppError(409, "A referenced record was deleted meanwhile (a concurrent change?); retry.");
    case "notFound":
      return new AppError(404, "The record was not found (it may have just been deleted).");
    case "conflict":
      return new AppError(
        503,
        `The change kept conflicting with concurrent changes to the same records and was not applied; retry after ${RETRY_AFTER_SECONDS} s.`,
        undefined,
        { "Retry-After": String(RETRY_AFTER_SECONDS) },
      );
    case "unavailable":
      return new AppError(
        503,
        `The database is busy (no connection or transaction slot in time); nothing was changed. Retry after ${RETRY_AFTER_SECONDS} s.`,
        undefined,
        { "Retry-After": String(RETRY_AFTER_SECONDS) },
      );
    default:
      return null;
  }
}
