// Per-account rate limits (rate-limiter-flexible), counted for REST and GraphQL alike: a budget of
// points a minute, each request charged what its operation costs (src/graphql/cost.ts: a cheap read
// 1 point) before it runs (src/budget.ts). In memory by default; in
// Redis when REDIS_URL is set, so several instances share one budget per account. Segment-format
// ingestion has a second limiter of its own (another key prefix, INGEST_RATE_LIMIT_PER_MINUTE):
// write keys are public, so what they send must not spend the API's budget.
import { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "./errors.js";
import { logger } from "./logger.js";

export interface RateDecision {
  limit: number;
  /** Points left in the window after this request (refused: what is left for a cheaper one). */
  remaining: number;
  resetSeconds: number;
  allowed: boolean;
}
export interface RateLimiter {
  /**
   * Charges `points` (default 1) to the account's budget, or refuses and charges nothing.
   * `ownLimit`: the account's own limit (`account set --rate-limit`), null for the default. A request
   * costing more than the whole budget is charged the whole budget: it runs when the budget is full.
   */
  consume(accountId: string, ownLimit: number | null, points?: number): Promise<RateDecision>;
  /** The most one request may cost, in points (RATE_LIMIT_MAX_REQUEST_POINTS): more is a 400. */
  readonly maxRequestPoints: number;
  close(): Promise<void>;
}

export function createRateLimiter(opts: { perMinute: number; redisUrl?: string | undefined; keyPrefix?: string; maxRequestPoints?: number }): RateLimiter {
  const redis = opts.redisUrl ? new Redis(opts.redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: 2, lazyConnect: false }) : null;
  redis?.on("error", (err) => logger.warn({ err: err.message }, "redis error (rate limits)"));
  const limiters = new Map<number, RateLimiterAbstract>();
  const limiterFor = (points: number) => {
    let l = limiters.get(points);
    if (!l) {
      const base = { points, duration: 60, keyPrefix: `${opts.keyPrefix ?? "gg:rl"}:${points}` };
      // insuranceLimiter keeps serving (per instance) if Redis goes away, instead of failing requests.
      l = redis ? new RateLimiterRedis({ ...base, storeClient: redis, insuranceLimiter: new RateLimiterMemory(base) }) : new RateLimiterMemory(base);
      limiters.set(points, l);
    }
    return l;
  };
  return {
    maxRequestPoints: opts.maxRequestPoints ?? Number.POSITIVE_INFINITY,
    async consume(accountId, ownLimit, points = 1) {
      const limit = ownLimit ?? opts.perMinute;
      const charge = Math.min(points, limit);
      const limiter = limiterFor(limit);
      try {
        const r = await limiter.consume(accountId, charge);
        return { limit, remaining: r.remainingPoints, resetSeconds: Math.ceil(r.msBeforeNext / 1000), allowed: true };
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        // The store counted the refused points too: give them back, so that a refused costly request
        // leaves its points to cheaper ones (two steps, not atomic: a race only errs towards refusing).
        await limiter.reward(accountId, charge).catch(() => {});
        const remaining = Math.max(0, limit - (err.consumedPoints - charge));
        return { limit, remaining, resetSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)), allowed: false };
      }
    },
    async close() {
      await redis?.quit().catch(() => {});
    },
  };
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    "RateLimit-Limit": String(d.limit),
    "RateLimit-Remaining": String(d.remaining),
    "RateLimit-Reset": String(d.resetSeconds),
    ...(d.allowed ? {} : { "Retry-After": String(d.resetSeconds) }),
  };
}

/** `what`: which budget, named in the detail ("Rate limit", "Ingest rate limit"); `points`: what the request costs, when it is priced. */
export function rateLimited(accountId: string, d: RateDecision, what = "Rate limit", points?: number, extensions?: Record<string, unknown>): AppError {
  const detail =
    points === undefined
      ? `${what} of ${d.limit} requests a minute exceeded for account '${accountId}'; retry after ${d.resetSeconds} s.`
      : `${what} of ${d.limit} points a minute exceeded for account '${accountId}': this request costs ${points} point${points === 1 ? "" : "s"} and ${d.remaining} ${d.remaining === 1 ? "is" : "are"} left; retry after ${d.resetSeconds} s.`;
  return new AppError(429, detail, undefined, rateLimitHeaders(d), extensions);
}
