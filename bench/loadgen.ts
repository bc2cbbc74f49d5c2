// The load generator: autocannon, driven from a worker thread. The servers under test share the main
// thread's event loop; keeping the client's own work (sockets, response parsing, bookkeeping) off
// that loop stops it from inflating the latencies it measures.
//
// This file is both sides: `LoadGenerator` (used by the main thread) starts a worker on this same
// file, and the worker branch at the bottom runs each request it is sent.
import { performance } from "node:perf_hooks";
import { isMainThread, parentPort, Worker } from "node:worker_threads";
import autocannon from "autocannon";

export interface LoadSpec {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  connections: number;
  /** The run ends after `maxRequests` responses, or at this time limit if that comes first. */
  durationSeconds: number;
  maxRequests: number;
}

export interface LoadResult {
  /** Responses received (any status). */
  completed: number;
  /** Responses outside 2xx plus connection errors and timeouts: should be 0. */
  failures: number;
  /**
   * Whether the time limit ended the run. autocannon then drops the requests in flight, which the
   * server still finishes: work that spills into whatever runs next.
   */
  cutOff: boolean;
  /** From the first request sent to the last response received. */
  elapsedMs: number;
  requestsPerSecond: number;
  /** Latency percentiles of 2xx responses, in milliseconds (exact, from every sample). */
  p50: number;
  p99: number;
  /** Mean response size (headers and body), in bytes. */
  meanBytes: number;
}

type ToWorker = { id: number; spec: LoadSpec };
type FromWorker = { id: number; result: LoadResult } | { id: number; error: string };

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const maxRequests = Math.max(spec.maxRequests, spec.connections);
  return new Promise((resolve, reject) => {
    // autocannon's own histogram has 1 ms resolution, too coarse for small pages; keep every sample.
    const latencies: number[] = [];
    let bytes = 0;
    let completed = 0;
    let lastResponseAt = 0;
    const startedAt = performance.now();
    const instance = autocannon(
      {
        url: spec.url,
        method: spec.method,
        headers: spec.headers,
        body: spec.body,
        connections: spec.connections,
        duration: spec.durationSeconds,
        // Unlike `amount`, this cap leaves the duration timer running: whichever comes first ends the run.
        maxOverallRequests: maxRequests,
        // The run only ends on a sampling tick; a short interval keeps that idle tail short.
        sampleInt: 100,
      },
      (err, result) => {
        if (err) return reject(err instanceof Error ? err : new Error(String(err)));
        const elapsedMs = (lastResponseAt || performance.now()) - startedAt;
        const sorted = Float64Array.from(latencies).sort();
        resolve({
          completed,
          failures: result.non2xx + result.errors,
          cutOff: completed < maxRequests,
          elapsedMs,
          requestsPerSecond: elapsedMs > 0 ? (completed * 1000) / elapsedMs : 0,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          meanBytes: completed ? bytes / completed : 0,
        });
      },
    );
    instance.on("response", (_client, statusCode, resBytes, responseTime) => {
      completed++;
      bytes += resBytes;
      lastResponseAt = performance.now();
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

/** Main-thread handle on the worker: one run at a time, in order. */
export class LoadGenerator {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(r: LoadResult): void; reject(e: Error): void }>();
  private nextId = 0;

  constructor() {
    // tsx's loader hooks do not reach worker threads on Node 20, so a worker cannot be started on a
    // .ts file directly; a tiny JavaScript entry loads this file through tsx's API instead.
    const self = import.meta.url;
    const tsxApi = import.meta.resolve("tsx/esm/api");
    this.worker = new Worker(`import(${JSON.stringify(tsxApi)}).then((tsx) => tsx.tsImport(${JSON.stringify(self)}, ${JSON.stringify(self)}))`, {
      eval: true,
    });
    this.worker.on("message", (msg: FromWorker) => {
      const waiter = this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id);
      if ("error" in msg) waiter.reject(new Error(`load generator: ${msg.error}`));
      else waiter.resolve(msg.result);
    });
    this.worker.on("error", (err) => {
      for (const waiter of this.pending.values()) waiter.reject(err);
      this.pending.clear();
    });
  }

  run(spec: LoadSpec): Promise<LoadResult> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, spec } satisfies ToWorker);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.on("message", (msg: ToWorker) => {
    runLoad(msg.spec).then(
      (result) => port.postMessage({ id: msg.id, result } satisfies FromWorker),
      (err: unknown) => port.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) } satisfies FromWorker),
    );
  });
}
