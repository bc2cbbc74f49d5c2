// RFC 9457 problem+json: the one error body of the REST layer, built from AppErrors (whatever was
// thrown goes through knownError() in src/errors.ts first) and from the GraphQL errors of a routed
// operation. 5xx bodies never carry internals.
import { STATUS_CODES } from "node:http";
import type { Response } from "express";
import type { GraphQLFormattedError } from "graphql";
import type { AppError, FieldError } from "../errors.js";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
}

export function problem(status: number, detail: string, errors?: FieldError[]): Problem {
  return { type: "about:blank", title: STATUS_CODES[status] ?? "Error", status, detail, ...(errors?.length ? { errors } : {}) };
}

export function sendProblem(res: Response, p: Problem, headers?: Record<string, string>): void {
  if (headers) res.set(headers);
  res.status(p.status).type("application/problem+json").send(JSON.stringify(p));
}

type ErrorExtensions = { code?: string; http?: { status?: number; headers?: Record<string, string> }; errors?: FieldError[] };

/**
 * The status a GraphQL error of an in-process execution stands for: its own `http.status` (our
 * AppErrors carry one), 500 when masked, otherwise 400 (document and variable errors).
 */
export function statusOf(error: GraphQLFormattedError): number {
  const ext = error.extensions as ErrorExtensions | undefined;
  if (ext?.http?.status) return ext.http.status;
  if (ext?.code === "INTERNAL_SERVER_ERROR") return 500;
  return 400;
}

/** One problem (and its headers, e.g. Retry-After) for the errors of a routed GraphQL operation: the most severe status wins. */
export function problemFromGraphQL(errors: readonly GraphQLFormattedError[]): [Problem, Record<string, string> | undefined] {
  const worst = [...errors].sort((a, b) => statusOf(b) - statusOf(a))[0]!;
  const status = statusOf(worst);
  const ext = worst.extensions as ErrorExtensions | undefined;
  // Only 500s are masked; a 503 says what happened and when to retry.
  const detail = status === 500 ? "Unexpected error; the request may succeed on retry." : restMessage(worst.message);
  return [problem(status, detail, status === 500 ? undefined : ext?.errors), ext?.http?.headers];
}

// GraphQL variable errors name GraphQL variables; REST callers know the request body.
function restMessage(message: string): string {
  return (
    message
      .replace(/^Variable "\$input" got invalid value .*? at "input(\[\d+\])((?:\.\w+|\[\d+\])*)"; /s, "body$1$2: ")
      .replace(/^Variable "\$input" got invalid value .*?; /s, "body: ")
      .replace(/^Variable "\$(\w+)" got invalid value .*?; /s, "$1: ")
      // ContentInput's field names → the REST names the caller sent.
      .replace(/^(body\[\d+\])\.(?:tagIds|tagNames)\b/, "$1.tags")
      .replace(/^(body\[\d+\])\.descriptionMd\b/, "$1.description_md")
  );
}

/** An expected failure as problem+json, with its headers (Retry-After, Allow ...). */
export function problemOf(err: AppError): [Problem, Record<string, string> | undefined] {
  return [problem(err.status, err.message, err.fieldErrors), err.headers];
}
