// Graceful shutdown. On SIGTERM: readiness turns false (GET /readyz answers 503) so the load balancer
// stops sending traffic, then the server stops accepting connections, in-flight requests and
// registered work (e.g. running job items) finish, and only then are resources (the database) closed.
import type { Server } from "node:http";
import type { RequestHandler } from "express";
import { prisma } from "./db/index.js";

export interface Lifecycle {
  /** True from the start of a shutdown on. */
  readonly draining: boolean;
  /** Registers work that must finish before resources close (the job runner's running items). */
  onDrain(fn: () => Promise<void> | void): void;
  beginDrain(): void;
  /** Runs the onDrain hooks once, in parallel. */
  drain(): Promise<void>;
}

export function createLifecycle(): Lifecycle {
  let draining = false;
  let drained: Promise<void> | undefined;
  const hooks: (() => Promise<void> | void)[] = [];
  return {
    get draining() {
      return draining;
    },
    onDrain: (fn) => void hooks.push(fn),
    beginDrain: () => void (draining = true),
    drain: () => (drained ??= Promise.all(hooks.map(async (fn) => fn())).then(() => undefined)),
  };
}

/** While draining, answers tell keep-alive clients to reconnect, so they land on another instance. */
export function closeConnectionsWhileDraining(lifecycle: Lifecycle): RequestHandler {
  return (_req, res, next) => {
    if (lifecycle.draining) res.set("Connection", "close");
    next();
  };
}

export interface ShutdownOptions {
  server: Server;
  lifecycle: Lifecycle;
  /** Time between readiness turning false and closing the listener (load balancers poll readiness). */
  delayMs: number;
  /** Past this, remaining connections are cut and the shutdown reports failure. */
  timeoutMs: number;
  /** Closes resources after everything drained (database, rate-limit store). */
  closeResources: () => Promise<void>;
  log: (msg: string, details?: object) => void;
}

/** Drains and closes; resolves true when everything finished in time. */
export async function gracefulShutdown(o: ShutdownOptions): Promise<boolean> {
  o.lifecycle.beginDrain();
  o.log("draining: readiness is now false", { delayMs: o.delayMs, timeoutMs: o.timeoutMs });
  const deadline = Date.now() + o.timeoutMs;
  if (o.delayMs > 0) await sleep(Math.min(o.delayMs, o.timeoutMs));

  const closed = new Promise<void>((resolve) => o.server.close(() => resolve()));
  // server.close() only closes connections idle at that moment; keep-alive connections that finish
  // their request later would hold the server open until their idle timeout.
  o.server.closeIdleConnections();
  const sweeper = setInterval(() => o.server.closeIdleConnections(), 100);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), Math.max(0, deadline - Date.now()));
  });
  const outcome = await Promise.race([Promise.all([closed, o.lifecycle.drain()]).then(() => "drained" as const), timedOut]);
  clearInterval(sweeper);
  clearTimeout(timer);
  if (outcome === "timeout") {
    o.log("shutdown timed out: closing the remaining connections");
    o.server.closeAllConnections();
  } else {
    o.log("in-flight requests finished");
  }
  try {
    await o.closeResources();
  } catch (err) {
    o.log("closing resources failed", { err });
    return false;
  }
  return outcome === "drained";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * GET /__test/slow, mounted only when TEST_SLOW_ROUTE_MS is set: a request that takes that long and
 * then uses the database, so a test can prove a shutdown lets it finish before the database closes.
 */
export function slowTestRoute(ms: number): RequestHandler {
  return async (_req, res) => {
    await sleep(ms);
    await prisma.$queryRawUnsafe("SELECT 1");
    res.json({ ok: true, waitedMs: ms });
  };
}
