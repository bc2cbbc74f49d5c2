// The per-request GraphQL context: request id, client IP, the caller's credentials, and the identity
// they resolve to (looked up once, on first use). REST routes run through the same factory.
import { randomUUID } from "node:crypto";
import type { Request as ExpressRequest, Response as ExpressResponse } from "express";
import { currentScope } from "./audit/requestScope.js";
import { authenticate, type Credentials, type Identity, KEY_HEADER, USER_HEADER } from "./auth/identity.js";
import type { RateDecision, RateLimiter } from "./ratelimit.js";

/** What a request costs (src/graphql/cost.ts), priced before it runs. */
export interface RequestCost {
  /** Cost units: objects and rows the operation may read. */
  units: number;
  /** Budget points charged for it: pointsOf(units). */
  points: number;
  /** The budget of the account charged first, after the charge; null while no account was charged. */
  throttle: RateDecision | null;
  /** The refusal (429 over the budget, 400 over the hard maximum, 403 for an account named past it) when it was refused. */
  refused?: Error;
}

export interface Context {
  requestId: string;
  ip: string | null;
  credentials: Credentials;
  identity(): Promise<Identity>;
  /** The HTTP response being built (absent in-process): rate-limit headers go on it. */
  res: ExpressResponse | undefined;
  rateLimiter: RateLimiter | undefined;
  /** Accounts whose budget this request has already been charged (once per request and account). */
  charged: Map<string, Promise<void>>;
  /** The request's price, set before its operation runs; unset: 1 point. */
  cost?: RequestCost;
  /** A REST route's raw body, already stored by the route (src/rest/contract.ts RawBody). */
  rawBody?: unknown;
}

/** Where the context reads the credentials and request id: a fetch Headers (Yoga) or an Express request (REST). */
export interface HeaderSource {
  get(name: string): string | null | undefined;
}

export function createContext(
  headers: HeaderSource,
  req?: ExpressRequest,
  res?: ExpressResponse,
  rateLimiter?: RateLimiter,
  resolved?: Promise<Identity>,
): Context {
  const credentials: Credentials = { key: headers.get(KEY_HEADER) ?? null, email: headers.get(USER_HEADER) ?? null };
  const scope = currentScope();
  let identity: Promise<Identity> | undefined;
  return {
    requestId: headers.get("x-request-id") ?? randomUUID(),
    ip: req?.ip ?? null,
    credentials,
    res,
    rateLimiter,
    charged: new Map(),
    identity: () =>
      (identity ??= (resolved ?? authenticate(credentials)).then((id) => {
        if (scope) scope.actor = id.email; // audit entries name the acting user
        return id;
      })),
  };
}
