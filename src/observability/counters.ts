// Events that other modules count without depending on the metrics library: the metrics module
// subscribes. Keeps the domain code free of Prometheus.
type Listener = (label: string) => void;

function counter() {
  const listeners = new Set<Listener>();
  return {
    inc(label: string) {
      for (const l of listeners) l(label);
    },
    subscribe(l: Listener) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
}

export const rateLimitRejections = counter();
