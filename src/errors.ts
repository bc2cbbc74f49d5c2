// Expected failures carry their HTTP status and a stable code in one place: GraphQL errors'
// `extensions`. Yoga uses `extensions.http.status` for GraphQL over HTTP; the REST layer turns the
// same error into problem+json (src/rest/problem.ts). Anything else is unexpected and gets masked.
import { GraphQLError } from "graphql";

export interface FieldError { path: string; message: string }

const CODES: Record<number, string> = {
  400: "BAD_REQUEST",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  429: "RATE_LIMITED",
};

/** The HTTP status an error code stands for (Yoga strips `extensions.http` from responses). */
export function statusOfCode(code: unknown): number | undefined {
  const hit = Object.entries(CODES).find(([, c]) => c === code);
  return hit ? Number(hit[0]) : undefined;
}

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
