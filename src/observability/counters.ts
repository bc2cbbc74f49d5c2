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
