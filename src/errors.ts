// Expected failures carry their HTTP status and a stable code in one place: GraphQL errors'
// `extensions`. Yoga uses `extensions.http.status` for GraphQL over HTTP; the REST layer turns the
// same error into problem+json (src/rest/problem.ts). Anything else is unexpected and gets masked.
import { STATUS_CODES } from "node:http";
import { GraphQLError } from "graphql";
import { ZodError } from "zod";
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
  405: "METHOD_NOT_ALLOWED",
  406: "NOT_ACCEPTABLE",
  408: "REQUEST_TIMEOUT",
  409: "CONFLICT",
  411: "LENGTH_REQUIRED",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  422: "UNPROCESSABLE_CONTENT",
  429: "RATE_LIMITED",
  500: "INTERNAL_SERVER_ERROR",
  503: "SERVICE_UNAVAILABLE",
};

/**
 * The stable code of a status: ours above, else the status's own name (`GONE` for 410), so no
 * error a client can branch on is a bare "ERROR". (body-parser's exposed failures pass any 4xx.)
 */
export function codeOf(status: number): string {
  return CODES[status] ?? (STATUS_CODES[status] ?? `HTTP_${status}`).toUpperCase().replace(/[^A-Z0-9]+/g, "_");
}

/**
 * The one error type of expected failures: an HTTP status, a stable code, a message for the caller,
 * per-field or per-item errors, and response headers (Retry-After ...). It is a GraphQLError whose
 * `extensions` carry all of it (`http.status` is what Yoga answers with), and REST turns the same
 * object into problem+json (src/rest/problem.ts).
 */
export class AppError extends GraphQLError {
  readonly status: number;
  readonly fieldErrors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  /** `extensions`: more for GraphQL callers (a code of its own, the cost of a refused request). */
  constructor(status: number, message: string, fieldErrors?: FieldError[], headers?: Record<string, string>, extensions?: Record<string, unknown>) {
    super(message, {
      extensions: {
        code: codeOf(status),
        ...extensions,
        http: { status, ...(headers ? { headers } : {}) },
        ...(fieldErrors?.length ? { errors: fieldErrors } : {}),
      },
    });
    this.status = status;
    this.fieldErrors = fieldErrors;
    this.headers = headers;
  }
}

export const badRequest = (message: string, fieldErrors?: FieldError[]) => new AppError(400, message, fieldErrors);
export const unauthorized = (message: string) => new AppError(401, message);
export const forbidden = (message: string) => new AppError(403, message);
export const notFound = (message: string) => new AppError(404, message);

/** Seconds a client should wait before retrying a 503 caused by contention. */
export const RETRY_AFTER_SECONDS = 1;

const mebibytes = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/**
 * The one mapping of whatever was thrown to the expected failure it stands for: our AppErrors as
 * they are, body-parser failures (malformed JSON, too large), zod validation errors, and database
 * errors whichever way they arrive (src/db/errors.ts). Null when the error is unexpected: the
 * caller logs it and answers a masked 500.
 */
export function knownError(error: unknown): AppError | null {
  if (error instanceof AppError) return error;
  if (error instanceof ZodError) {
    const fieldErrors = error.issues.map((i) => ({ path: i.path.join(".") || "(root)", message: i.message }));
    return new AppError(400, fieldErrors.map((e) => `${e.path}: ${e.message}`).join("; "), fieldErrors);
  }
  const e = error as { type?: unknown; status?: unknown; expose?: unknown; limit?: unknown; message?: unknown; body?: unknown } | null;
  if (e?.type === "entity.parse.failed") {
    // body-parser's strict mode refuses valid JSON that is not an object or array (`null`, `5`, `"x"`)
    // with JSON.parse's words for a mangled copy ("\"null\" is not valid JSON"): say what is wrong.
    const text = typeof e.body === "string" ? e.body.trim() : "";
    if (text && !/^[[{]/.test(text) && validJson(text))
      return new AppError(400, `The JSON body must be an object or an array (it is ${text.length > 40 ? `${text.slice(0, 40)}…` : text}).`);
    return new AppError(400, `Malformed JSON body: ${String(e.message)}`);
  }
  if (e?.type === "entity.too.large") return new AppError(413, `Request body larger than the limit (${mebibytes(Number(e.limit))} for JSON).`);
  // Other body-parser failures (bad charset, aborted upload ...) say what went wrong themselves.
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500 && e.expose === true) return new AppError(e.status, String(e.message));
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

function validJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
