// Per-account rate limits (rate-limiter-flexible), counted for REST and GraphQL alike: the budget is
// consumed where a request first touches an account (requireAccount). In memory by default; in
// Redis when REDIS_URL is set, so several instances share one budget per account. Segment-format
// ingestion has a second limiter of its own (another key prefix, INGEST_RATE_LIMIT_PER_MINUTE):
// write keys are public, so what they send must not spend the API's budget.
import { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "./errors.js";
import { logger } from "./logger.js";

export interface RateDecision {
  limit: number;
  remaining: number;
  resetSeconds: number;
  allowed: boolean;
}
export interface RateLimiter {
  /** `ownLimit`: the account's own limit (`account set --rate-limit`), null for the default. */
  consume(accountId: string, ownLimit: number | null): Promise<RateDecision>;
  close(): Promise<void>;
}

export function createRateLimiter(opts: { perMinute: number; redisUrl?: string | undefined; keyPrefix?: string }): RateLimiter {
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
    async consume(accountId, ownLimit) {
      const limit = ownLimit ?? opts.perMinute;
      try {
        const r = await limiterFor(limit).consume(accountId, 1);
        return { limit, remaining: r.remainingPoints, resetSeconds: Math.ceil(r.msBeforeNext / 1000), allowed: true };
      } catch (err) {
        if (err instanceof RateLimiterRes) return { limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)), allowed: false };
        throw err;
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

/** `what`: which budget, named in the detail ("Rate limit", "Ingest rate limit"). */
export function rateLimited(accountId: string, d: RateDecision, what = "Rate limit"): AppError {
  return new AppError(
    429,
    `${what} of ${d.limit} requests a minute exceeded for account '${accountId}'; retry after ${d.resetSeconds} s.`,
    undefined,
    rateLimitHeaders(d),
  );
}
