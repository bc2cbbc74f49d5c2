// Parsing of REST inputs that GraphQL cannot check for us because they arrive as strings: query
// parameters, comma-separated path lists, and the overall shape of JSON bodies.
import type { FieldError } from "../errors.js";
import { AppError } from "../errors.js";
import { MAX_BULK_ITEMS } from "../schema/bulk.js";
import { LIST_LIMITS, pageSize } from "../schema/pagination.js";
import type { RestInput } from "./contract.js";

const bad = (path: string, message: string) => new AppError(400, `${path} ${message}`, [{ path, message }] as FieldError[]);

/** What a parameter sent without a value is told (`?limit=`): it is refused, never read as absent. */
const EMPTY = "must not be empty (leave the parameter out instead)";

/**
 * The route's query parameters (those it declares: others are ignored, whatever their value) that
 * were sent without a value (`?startDate=`, `?limit=`, `?fields=&fields=custom`): a 400 naming the
 * first, as Stripe and GitHub answer, rather than the parameter's absence (a default, the whole
 * list). The router checks every route's parameters here, before its variables() reads them.
 */
export function refuseEmptyQuery(query: Record<string, unknown>, names: Iterable<string>): void {
  for (const name of names) {
    const raw = query[name];
    if (raw === "" || (Array.isArray(raw) && raw.includes(""))) throw bad(name, EMPTY);
  }
}

export function intParam(query: Record<string, unknown>, name: string, opts: { min?: number; max?: number; required?: boolean } = {}): number | undefined {
  const raw = query[name];
  if (raw === undefined) {
    if (opts.required) throw bad(name, "is required");
    return undefined;
  }
  if (raw === "") throw bad(name, EMPTY);
  if (typeof raw !== "string" || !/^-?\d+$/.test(raw)) throw bad(name, "must be an integer");
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw bad(name, "is out of range");
  if ((opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max)) {
    throw bad(name, opts.max !== undefined ? `must be between ${opts.min ?? 0} and ${opts.max}` : `must be at least ${opts.min}`);
  }
  return n;
}

export function stringParam(query: Record<string, unknown>, name: string, opts: { required?: boolean; oneOf?: readonly string[] } = {}): string | undefined {
  const raw = query[name];
  if (raw === undefined) {
    if (opts.required) throw bad(name, "is required");
    return undefined;
  }
  if (raw === "") throw bad(name, EMPTY);
  if (typeof raw !== "string") throw bad(name, "must be given once");
  if (opts.oneOf && !opts.oneOf.includes(raw)) throw bad(name, `must be one of ${opts.oneOf.join(", ")}`);
  return raw;
}

/**
 * `limit` within the list's bounds, defaulted. The bounds are checked here too, not only by the
 * resolver (pageSize, one check, one message): the router reads a long page in slices, and the
 * resolver sees only the slices.
 */
export function limitParam(query: Record<string, unknown>, limits: { default: number; max: number }): number {
  const limit = intParam(query, "limit");
  return limit === undefined ? limits.default : pageSize(limit, limits);
}

export function cursorParam(query: Record<string, unknown>): string | undefined {
  return stringParam(query, "cursor");
}

/** A comma-separated path segment: trimmed, no empty entries, at most MAX_BULK_ITEMS. */
export function commaList(value: string | undefined, name: string): string[] {
  const items = (value ?? "").split(",").map((s) => s.trim());
  if (items.some((s) => s === "")) throw bad(name, "must be a comma-separated list without empty entries");
  if (items.length > MAX_BULK_ITEMS) throw bad(name, `must list at most ${MAX_BULK_ITEMS} entries`);
  return items;
}

/** A JSON body that must be an array of 1..MAX_BULK_ITEMS objects. */
export function objectArrayBody(body: unknown): Record<string, unknown>[] {
  if (!Array.isArray(body)) throw bad("body", "must be a JSON array of objects (send Content-Type: application/json)");
  if (body.length === 0) throw bad("body", "must hold at least one item");
  if (body.length > MAX_BULK_ITEMS) throw bad("body", `must hold at most ${MAX_BULK_ITEMS} items`);
  body.forEach((item, i) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) throw bad(`body[${i}]`, "must be an object");
  });
  return body as Record<string, unknown>[];
}

/** A parameter of the route's path (Express sets every one its path names; a missing one is a bug of the row). */
export function pathParam(input: RestInput, name: string): string {
  const value = input.params[name];
  if (value === undefined) throw new Error(`the route's path has no :${name}`);
  return value;
}

/** The variables of a page of an account's list: `accountId`, `first` from `limit`, `after` from `cursor`. */
export function pageVariables(input: RestInput, limits: { default: number; max: number } = LIST_LIMITS.standard) {
  return { accountId: pathParam(input, "accountId"), first: limitParam(input.query, limits), after: cursorParam(input.query) };
}
