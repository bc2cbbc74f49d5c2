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
  /** A /graphql answer's own member (`{"cost": …}`), which every answer there carries, problems included. */
  extensions?: Record<string, unknown>;
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

/** What of a route names its inputs: its body doc (whose `rename`s name body fields) and its `names`. */
export interface RestNames {
  body?: BodyDoc;
  names?: Readonly<Record<string, string>>;
}

/**
 * One problem (and its headers, e.g. Retry-After) for the errors of a routed GraphQL operation: the
 * most severe status wins. Every place it names is the REST input the caller sent (`route`: its body
 * doc and `names`), never a GraphQL variable or argument the caller did not.
 */
export function problemFromGraphQL(errors: readonly GraphQLFormattedError[], route: RestNames = {}): [Problem, Record<string, string> | undefined] {
  const worst = [...errors].sort((a, b) => statusOf(b) - statusOf(a))[0]!;
  const status = statusOf(worst);
  const ext = worst.extensions as ErrorExtensions | undefined;
  // A value that did not coerce is named as the caller sent it, in the detail and in `errors`.
  const invalid = worst instanceof VariableValueError ? { path: restName(worst, route), message: worst.reason } : null;
  // A resolver's field errors name its arguments: renamed to what the route took them from.
  const fieldErrors = ext?.errors?.map((e) => ({ ...e, path: renamed(e.path, route.names) }));
  // Only 500s are masked; a 503 says what happened and when to retry.
  const detail = status === 500 ? "Unexpected error; the request may succeed on retry." : invalid ? `${invalid.path}: ${invalid.message}` : worst.message;
  return [problem(status, detail, status === 500 ? undefined : (fieldErrors ?? (invalid ? [invalid] : undefined))), ext?.http?.headers];
}

/** `path` (a variable or argument, with a place inside it) under the longest prefix `names` renames, else as it is. */
function renamed(path: string, names: Readonly<Record<string, string>> = {}): string {
  for (const [from, to] of Object.entries(names).sort(([a], [b]) => b.length - a.length)) {
    if (path === from) return to;
    if (path.startsWith(from) && (path[from.length] === "." || path[from.length] === "[")) return to + path.slice(from.length);
  }
  return path;
}

/**
 * A value that did not coerce, named for a REST caller instead of by its GraphQL variable: as the
 * route's `names` say (`filter.type` → the query parameter `type`), and a route's JSON body, its
 * operation's `$input`, as `body`: inside an item of an array body `body[2].tags[0]`, inside an
 * object body `body.url` (fields under their wire names).
 */
function restName(error: VariableValueError, route: RestNames): string {
  const path = error.variable + printPathArray(error.valuePath);
  if (error.variable !== "input") return renamed(path, route.names);
  const rename = (route.body && "input" in route.body ? route.body.rename : undefined) ?? {};
  const wire = (field: string | number | undefined) => (typeof field === "string" ? (rename[field] ?? field) : field);
  const [first, second, ...rest] = error.valuePath;
  if (first === undefined) return "body";
  if (typeof first === "string") return `body${printPathArray([wire(first)!, ...(second === undefined ? [] : [second]), ...rest])}`;
  if (second === undefined) return `body[${first}]`;
  return `body${printPathArray([first, wire(second)!, ...rest])}`;
}

/** An expected failure as problem+json, with its headers (Retry-After, Allow ...). */
export function problemOf(err: AppError): [Problem, Record<string, string> | undefined] {
  return [problem(err.status, err.message, err.fieldErrors), err.headers];
}
