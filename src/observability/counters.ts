// Events that other modules count without depending on the metrics library: the metrics module
// subscribes. Keeps the domain code free of Prometheus.
type Listener = (label: string, by: number) => void;

function counter() {
  const listeners = new Set<Listener>();
  return {
    inc(label: string, by = 1) {
      for (const l of listeners) l(label, by);
    },
    subscribe(l: Listener) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
}

export const rateLimitRejections = counter();
/** Webhook deliveries stored as dropped (their endpoint had WEBHOOK_MAX_PENDING_PER_ENDPOINT pending), by account. */
export const webhookDeliveriesDropped = counter();

/**
 * The rate limiters' connections to Redis (with REDIS_URL), by budget ("api", "ingest"): whether
 * budgets are shared through each now. src/ratelimit.ts adds and removes them; the metrics module
 * reads them when scraped (`ratelimit_redis_connected`).
 */
export const redisLinks = new Set<{ readonly budget: string; readonly connected: boolean }>();
