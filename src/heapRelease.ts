// Gives the heap back after a large request. A 10,000-item bulk write or list keeps what it built
// (the parsed body, rows, audit entries, the reply) until it answers, so V8 promotes all of it to
// the old generation, and then sets the next full collection at up to four times the live size:
// the request's garbage stays resident until the heap reaches that limit or the process has been
// idle for a while. A second bulk request right after the first grows on top of it (an update
// after a create peaked at 385–450 MB instead of 280–320). One full collection once the large
// answer has been handed to the socket (~30–70 ms at that size, after the reply, at most once per
// HEAP_RELEASE_MIN_INTERVAL_MS unless the heap has doubled since the last one) returns the process
// to its idle size. docs/performance.md, "Memory".

import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { NextFunction, Request, RequestHandler, Response } from "express";

/**
 * V8's full collection, without starting node with --expose-gc: the flag set for a moment exposes
 * `gc` in a new context only (the way Jest's leak detector gets it), and is set back at once, so no
 * code of ours or of a dependency sees a global `gc` it did not have.
 */
export function fullCollection(): () => void {
  if (collection) return collection;
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === "function") return (collection = exposed);
  setFlagsFromString("--expose-gc");
  try {
    collection = runInNewContext("gc") as () => void;
    return collection;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}
let collection: (() => void) | undefined;

export interface HeapReleaseOptions {
  /** request and response bytes on the wire (body and headers) from which a request counts as large; 0: never */
  afterBytes: number;
  /**
   * at most one collection in this many milliseconds, however many large requests end, unless the
   * heap in use has at least doubled since the last one ended: then its garbage is worth the pause
   * (a bulk update answered 0.9 s after the create's collection left its 100+ MB of garbage for the
   * next request to grow on: a 10,000-user list right after it peaked at 362 MB instead of 258)
   */
  minIntervalMs: number;
  /** the collection (tests count calls) */
  collect?: () => void;
  /** runs first: drops what a library keeps of past requests (Prisma's statement history) */
  beforeCollect?: () => void;
  now?: () => number;
  /** the bytes of V8's heap in use (tests set it) */
  heapUsed?: () => number;
}

/**
 * Express middleware: after a response whose request and answer together moved at least
 * `afterBytes` on the socket, one full collection on the next turn of the event loop. Counted on
 * the socket, so a chunked body, a streamed CSV and a compressed answer count as what they were.
 */
export function releaseHeapAfterLargeRequests(options: HeapReleaseOptions): RequestHandler {
  const pass: RequestHandler = (_req, _res, next) => next();
  if (options.afterBytes <= 0) return pass;
  const collect = options.collect ?? fullCollection();
  const now = options.now ?? Date.now;
  const heapUsed = options.heapUsed ?? (() => getHeapStatistics().used_heap_size);
  let scheduled = false;
  let last = Number.NEGATIVE_INFINITY;
  // What the last collection left in use: the live size, about.
  let liveAfterLast = Number.POSITIVE_INFINITY;
  const run = () => {
    scheduled = false;
    last = now();
    options.beforeCollect?.();
    collect();
    liveAfterLast = heapUsed();
  };
  const due = () => now() - last >= options.minIntervalMs || heapUsed() >= 2 * liveAfterLast;
  return (req: Request, res: Response, next: NextFunction) => {
    const socket = req.socket;
    const read = socket.bytesRead;
    const written = socket.bytesWritten;
    res.once("finish", () => {
      const moved = socket.bytesRead - read + (socket.bytesWritten - written);
      if (moved < options.afterBytes || scheduled || !due()) return;
      scheduled = true;
      setImmediate(run);
    });
    next();
  };
}
