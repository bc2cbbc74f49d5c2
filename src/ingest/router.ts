// Segment-format ingestion over HTTP: POST /segment/v1/batch and the single-call paths. Not a row
// of the REST table: Segment sources authenticate with a write key (HTTP Basic, or `writeKey` in
// the body) instead of the two service headers, and their answers are Segment's, not GraphQL's.
// Order of checks as elsewhere: the key (401/403) and the account's ingest budget (429) first, then
// the body (400, 413), except that a request without a key in its Authorization header whose body
// cannot be read gets the body's 400 or 413 (its key, if any, was in that body). The ingest budget is
// not the API's (INGEST_RATE_LIMIT_PER_MINUTE, its own limiter): write keys are public, and a request
// they send, accepted or not, is charged to it alone.
import { isUtf8 } from "node:buffer";
import express, { type Request, type Response, type Router } from "express";
import { currentScope } from "../audit/requestScope.js";
import { clock } from "../clock.js";
import { AppError, knownError } from "../errors.js";
import { logger } from "../logger.js";
import { type RateLimiter, rateLimited, rateLimitHeaders } from "../ratelimit.js";
import { bounded } from "../rest/bodyLimit.js";
import { nestedPast, tooDeepError } from "../rest/jsonDepth.js";
import { problem, problemOf, sendProblem } from "../rest/problem.js";
import { notUtf8Error } from "../text.js";
import { authenticateWriteKey, writeKeyOf } from "./auth.js";
import { BROWSER_PATHS, CALL_LIMIT_BYTES, CALL_TYPES, type CallType, type CheckedCall, checkCall, MAX_BATCH_CALLS, REQUEST_LIMIT_BYTES } from "./segment.js";
import { storeCalls } from "./store.js";

export const SEGMENT_PREFIX = "/segment/v1";

/** `empty`: no body at all (so no key in it either). */
type Parsed = { ok: true; body: unknown } | { ok: false; error: AppError; empty?: true };

/** `rateLimiter`: the ingest budget (not the API's). */
export function segmentRouter(rateLimiter: RateLimiter | undefined): Router {
  const router = express.Router({ strict: true });
  // Any media type: Segment's browser and mobile libraries send JSON as text/plain too. Compressed bodies (gzip, deflate,
  // br) are decoded, and the limit holds however the body is framed (chunked too) and for the
  // decoded bytes: src/rest/bodyLimit.ts.
  const raw = bounded(express.raw({ type: () => true, limit: REQUEST_LIMIT_BYTES }), REQUEST_LIMIT_BYTES);
  // Each path named in full, and as Segment's browser library names it (`/t`, `/b`, …).
  const paths: [string, CallType | "batch"][] = [["batch", "batch"], ...CALL_TYPES.map((t) => [t, t] as [string, CallType]), ...Object.entries(BROWSER_PATHS)];
  for (const [path, kind] of paths) {
    router.post(`${SEGMENT_PREFIX}/${path}`, (req: Request, res: Response) => {
      raw(req, res, (err?: unknown) => {
        const parsed = parse(req, err);
        void handle(kind === "batch" ? null : kind, parsed, req, res, rateLimiter).catch((e) => {
          const known = knownError(e);
          if (known) return sendProblem(res, ...problemOf(known));
          logger.error({ err: e, requestId: req.get("x-request-id") }, "segment ingest failed");
          sendProblem(res, problem(500, "Unexpected error; the request may succeed on retry."));
        });
      });
    });
    router.all(`${SEGMENT_PREFIX}/${path}`, (req, res) => {
      res.set("Allow", "POST, OPTIONS");
      sendProblem(res, problem(405, `${req.method} is not allowed on ${req.path}; allowed: POST, OPTIONS.`));
    });
  }
  return router;
}

function parse(req: Request, err: unknown): Parsed {
  if (err) {
    const e = err as { type?: string };
    if (e.type === "entity.too.large") return { ok: false, error: new AppError(413, `Request body larger than ${REQUEST_LIMIT_BYTES / 1024} KB.`) };
    return { ok: false, error: knownError(err) ?? new AppError(400, "The request body could not be read.") };
  }
  const buf = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  if (!buf.length) return { ok: false, error: new AppError(400, "The body is empty: send a JSON object."), empty: true };
  if (nestedPast(buf)) return { ok: false, error: tooDeepError("body") };
  // Read as UTF-8 whatever the Content-Type says; bytes that are not would be stored as U+FFFD (src/text.ts).
  if (!isUtf8(buf)) return { ok: false, error: notUtf8Error("body") };
  try {
    return { ok: true, body: JSON.parse(buf.toString("utf8")) };
  } catch (e) {
    return { ok: false, error: new AppError(400, `Malformed JSON body: ${(e as Error).message}`) };
  }
}

async function handle(pathType: CallType | null, parsed: Parsed, req: Request, res: Response, rateLimiter: RateLimiter | undefined) {
  const receivedAt = clock.now().getTime();
  const headerKey = writeKeyOf(req.get("authorization"), undefined);
  // Without a key in the header the key can only be in the body (the browser libraries' way): a
  // body that cannot be read (past the limit, not JSON) is answered as such, not as a missing key.
  if (!headerKey && !parsed.ok && !parsed.empty) throw parsed.error;
  const identity = await authenticateWriteKey(headerKey ?? writeKeyOf(undefined, parsed.ok ? parsed.body : undefined));
  // Audit entries of what this request changes (end users created or updated) name the key's owner.
  const scope = currentScope();
  if (scope) scope.actor = identity.email;
  if (rateLimiter) {
    // Charged before the body is read: a rejected or empty batch costs a point too (of this budget only).
    const d = await rateLimiter.consume(identity.accountId, null);
    res.set(rateLimitHeaders(d));
    if (!d.allowed) throw rateLimited(identity.accountId, d, "Ingest rate limit");
  }
  if (!parsed.ok) throw parsed.error;
  const body = parsed.body;
  // Text that cannot be stored (NUL, unpaired surrogates) is refused per call, and only in what a
  // call stores (src/ingest/store.ts): one such string must not cost a whole batch, which Segment's
  // libraries drop for good on a 400.
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new AppError(400, "The body must be a JSON object.");
  const b = body as Record<string, unknown>;

  let rawCalls: unknown[];
  if (pathType === null) {
    if (!Array.isArray(b.batch)) throw new AppError(400, "batch must be an array of calls", [{ path: "batch", message: "not an array" }]);
    if (b.batch.length > MAX_BATCH_CALLS)
      throw new AppError(400, `batch must hold at most ${MAX_BATCH_CALLS} calls`, [{ path: "batch", message: "too many calls" }]);
    rawCalls = b.batch;
  } else {
    rawCalls = [b];
  }
  // Segment's per-call limit: one oversized call refuses the request, as the whole request would be past Segment's.
  rawCalls.forEach((c, i) => {
    if (Buffer.byteLength(JSON.stringify(c) ?? "") > CALL_LIMIT_BYTES) {
      throw new AppError(413, `A call is larger than ${CALL_LIMIT_BYTES / 1024} KB (${pathType ? "the body" : `batch[${i}]`}).`, [
        { path: pathType ? "body" : `batch[${i}]`, message: "larger than 32 KB" },
      ]);
    }
  });
  const rejected: { index: number; errors: string[] }[] = [];
  const calls: { index: number; call: CheckedCall }[] = [];
  rawCalls.forEach((c, index) => {
    const checked = checkCall(c, pathType);
    if ("problems" in checked) rejected.push({ index, errors: checked.problems });
    else calls.push({ index, call: checked });
  });
  // A single call that is not valid is the request's failure (there is no batch to report it in).
  if (pathType && rejected.length)
    throw new AppError(
      400,
      rejected[0]!.errors.join("; "),
      rejected[0]!.errors.map((message) => ({ path: "body", message })),
    );
  const outcome = await storeCalls(identity.accountId, calls, { sentAt: b.sentAt, context: b.context }, receivedAt, rejected);
  if (pathType && outcome.rejected.length) {
    const errors = outcome.rejected[0]!.errors;
    throw new AppError(
      400,
      errors.join("; "),
      errors.map((message) => ({ path: "body", message })),
    );
  }
  res.status(200).json({ success: true, ...outcome });
}
