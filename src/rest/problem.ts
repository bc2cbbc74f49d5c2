// RFC 9457 problem+json: the one error body of the REST layer, built from AppErrors (whatever was
// thrown goes through knownError() in src/errors.ts first) and from the GraphQL errors of a routed
// operation, whose variable errors name what the caller sent (the body and its wire field names),
// not GraphQL variables. 5xx bodies never carry internals.
import { STATUS_CODES } from "node:http";
import type { Request, Response } from "express";
import type { GraphQLFormattedError } from "graphql";
import { printPathArray } from "graphql/jsutils/printPathArray.js";
import type { AppError, FieldError } from "../errors.js";
import { VariableValueError } from "../graphql/compiled.js";
import type { BodyDoc } from "./docs.js";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
  /** A bulk write none of whose items succeeded: each item's outcome, as a 207's `failure` lists it. */
  failure?: { index: number; id: string | null; statusCode: number; errors: string[] }[];
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

/** The `Allow` header of a path served with these methods (HEAD comes with GET; OPTIONS is CORS's). */
export function allowHeader(methods: readonly string[]): string {
  const upper = [...new Set(methods.map((m) => m.toUpperCase()))];
  return [...upper, ...(upper.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ");
}

/** The answer to a method a known path does not serve: 405 naming the ones it does, in `Allow`. */
export function methodNotAllowed(methods: readonly string[]): (req: Request, res: Response) => void {
  const allow = allowHeader(methods);
  return (req, res) => {
    res.set("Allow", allow);
    sendProblem(res, problem(405, `${req.method} is not allowed on ${req.path}; allowed: ${allow}.`));
  };
}

/**
 * One problem (and its headers, e.g. Retry-After) for the errors of a routed GraphQL operation: the
 * most severe status wins. `body` is the route's body doc: its `rename`s name the fields of a value
 * that did not coerce as the caller sent them.
 */
export function problemFromGraphQL(errors: readonly GraphQLFormattedError[], body?: BodyDoc): [Problem, Record<string, string> | undefined] {
  const worst = [...errors].sort((a, b) => statusOf(b) - statusOf(a))[0]!;
  const status = statusOf(worst);
  const ext = worst.extensions as ErrorExtensions | undefined;
  // A value that did not coerce is named as the caller sent it, in the detail and in `errors`.
  const invalid =
    worst instanceof VariableValueError ? { path: restName(worst, body && "input" in body ? body.rename : undefined), message: worst.reason } : null;
  // Only 500s are masked; a 503 says what happened and when to retry.
  const detail = status === 500 ? "Unexpected error; the request may succeed on retry." : invalid ? `${invalid.path}: ${invalid.message}` : worst.message;
  return [problem(status, detail, status === 500 ? undefined : (ext?.errors ?? (invalid ? [invalid] : undefined))), ext?.http?.headers];
}

/**
 * A value that did not coerce, named for a REST caller instead of by its GraphQL variable: a route's
 * JSON body is its operation's `$input`, so that is `body`, and inside an item of an array body
 * `body[2].tags[0]` (the item's field under its wire name); any other variable by its name.
 */
function restName(error: VariableValueError, rename: Readonly<Record<string, string>> = {}): string {
  if (error.variable !== "input") return error.variable;
  const [index, field, ...rest] = error.valuePath;
  if (typeof index !== "number") return "body";
  if (field === undefined) return `body[${index}]`;
  const wireField = typeof field === "string" ? (rename[field] ?? field) : field;
  return `body${printPathArray([index, wireField, ...rest])}`;
}

/** An expected failure as problem+json, with its headers (Retry-After, Allow ...). */
export function problemOf(err: AppError): [Problem, Record<string, string> | undefined] {
  return [problem(err.status, err.message, err.fieldErrors), err.headers];
}
