// Per-account rate limits (rate-limiter-flexible), counted for REST and GraphQL alike: a budget of
// points a minute, each request charged what its operation costs (src/graphql/cost.ts: a cheap read
// 1 point) before it runs (src/budget.ts). In memory by default; in
// Redis when REDIS_URL is set, so several instances share one budget per account (while Redis is
// out, each instance counts on its own, at once: RedisLink below). Segment-format
// ingestion has a second limiter of its own (another key prefix, INGEST_RATE_LIMIT_PER_MINUTE):
// write keys are public, so what they send must not spend the API's budget.
import { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "./errors.js";
import { logger } from "./logger.js";
import { redisLinks } from "./observability/counters.js";

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

/**
 * The longest one Redis command of a limiter may take. Redis answers in well under a millisecond;
 * past this the connection is taken for lost: the request is counted on this instance and the
 * connection is made again.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 250;

/**
 * A limiter's connection to Redis, and whether budgets are shared through it now. While it is not
 * ready (connecting, reconnecting, refused, a command that failed or timed out) every request is
 * counted in this instance's memory at once, never queued for Redis: an outage costs no latency, and
 * each instance limits on its own budget until Redis is back (N instances allow up to N× the budget).
 * The outage is logged once when it starts and once when it ends, and /metrics says which
 * (`ratelimit_redis_connected`); /readyz stays ready (an instance limiting alone still serves).
 */
class RedisLink {
  readonly client: Redis;
  /** In an outage (logged as started, not yet as ended). */
  private down = false;
  private closing = false;
  constructor(
    url: string,
    readonly budget: string,
  ) {
    this.client = new Redis(url, {
      // A command while not connected fails at once (the request is counted here), instead of
      // waiting in a queue for a connection that may not come.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      // Reconnect for as long as it takes, at most every 2 s.
      retryStrategy: (times) => Math.min(times * 100, 2_000),
    });
    this.client.on("error", (err: Error) => this.failed(err));
    this.client.on("close", () => this.failed(new Error("connection closed")));
    this.client.on("ready", () => {
      if (!this.down) return;
      this.down = false;
      logger.info({ budget: this.budget }, "Redis reachable again: rate-limit budgets are shared by the instances again");
    });
    redisLinks.add(this);
  }

  /** Whether budgets go through Redis now. */
  get connected(): boolean {
    return !this.down && this.client.status === "ready";
  }

  /** An outage begins (logged once), or goes on; a failing connection that still looks ready is made again. */
  failed(err: Error): void {
    if (this.closing) return;
    if (!this.down) {
      this.down = true;
      logger.warn(
        { budget: this.budget, err: err.message },
        "Redis unreachable: rate limits are counted by each instance on its own until it is back (N instances allow up to N× the budget)",
      );
    }
    if (this.client.status === "ready") this.client.disconnect(true);
  }

  close(): Promise<void> {
    this.closing = true;
    redisLinks.delete(this);
    if (this.client.status === "ready")
      return this.client.quit().then(
        () => undefined,
        () => this.client.disconnect(),
      );
    this.client.disconnect();
    return Promise.resolve();
  }
}

export function createRateLimiter(opts: {
  perMinute: number;
  redisUrl?: string | undefined;
  keyPrefix?: string;
  maxRequestPoints?: number;
  /** Which budget this is ("api", "ingest"): the label of its Redis link in logs and metrics. */
  budget?: string;
}): RateLimiter {
  const link = opts.redisUrl ? new RedisLink(opts.redisUrl, opts.budget ?? "api") : null;
  // Per budget size: the shared store (Redis) and this instance's own, which counts while Redis is out.
  const limiters = new Map<number, { shared: RateLimiterRedis | null; local: RateLimiterMemory }>();
  const limitersFor = (points: number) => {
    let l = limiters.get(points);
    if (!l) {
      const base = { points, duration: 60, keyPrefix: `${opts.keyPrefix ?? "gg:rl"}:${points}` };
      l = {
        shared: link ? new RateLimiterRedis({ ...base, storeClient: link.client, rejectIfRedisNotReady: true }) : null,
        local: new RateLimiterMemory(base),
      };
      limiters.set(points, l);
    }
    return l;
  };
  const consumeIn = async (limiter: RateLimiterAbstract, accountId: string, limit: number, charge: number): Promise<RateDecision> => {
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
  };
  return {
    maxRequestPoints: opts.maxRequestPoints ?? Number.POSITIVE_INFINITY,
    async consume(accountId, ownLimit, points = 1) {
      const limit = ownLimit ?? opts.perMinute;
      const charge = Math.min(points, limit);
      const { shared, local } = limitersFor(limit);
      if (shared && link?.connected) {
        try {
          return await consumeIn(shared, accountId, limit, charge);
        } catch (err) {
          // Redis failed this command (a timeout, a lost connection): counted here instead.
          link.failed(err instanceof Error ? err : new Error(String(err)));
        }
      }
      return consumeIn(local, accountId, limit, charge);
    },
    async close() {
      await link?.close();
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
