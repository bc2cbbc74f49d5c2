// Request bodies are held to their size limit however they are framed: a declared length past it
// is refused before anything is read, and a chunked body (no Content-Length) is counted as it
// arrives and refused as soon as it passes the limit. Nothing past the limit is kept, and the
// answer closes the connection instead of waiting for the body's end. (body-parser, left to
// itself, stops keeping a body at its limit but then reads it to its end before it reports the
// 413: a client sending a chunked body that never ends would never be answered, and be read all
// along.)
// Compressed bodies (Content-Encoding gzip, deflate, br) are decoded here too, for every route that
// takes a body, as they arrive: the limit holds for the decoded bytes as well, and decoding stops as
// soon as they pass it (decodedStream, readBounded).
import type { IncomingMessage } from "node:http";
import { PassThrough, Readable } from "node:stream";
import zlib from "node:zlib";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { AppError } from "../errors.js";

/** The error body-parser raises past its limit, so that knownError (src/errors.ts) maps both alike. */
function tooLarge(limit: number): Error {
  return Object.assign(new Error("request entity too large"), { type: "entity.too.large", limit, status: 413, expose: true });
}

/**
 * A refused body: the answer closes the connection (the rest is never parsed as a next request),
 * and what still arrives until then is discarded, not kept.
 */
function refuse(req: IncomingMessage, res: Response, err?: unknown): void {
  res.set("Connection", "close");
  // A 415 for the coding carries Accept-Encoding, on REST too, where the problem is answered later.
  if (err instanceof AppError && err.headers) res.set(err.headers);
  req.resume();
}

const declaredPast = (req: IncomingMessage, limit: number) => Number(req.headers["content-length"] ?? 0) > limit;

/**
 * A body-parser middleware (express.json, express.raw) whose limit holds however the body is framed
 * and encoded: past `limit` bytes as received it continues with the parser's own too-large error at
 * once. A compressed body (Content-Encoding) is read and decoded by readBounded, as POST /graphql's
 * is (its limit on the decoded bytes too, 415 for another coding, 400 for bytes that do not
 * decode), and the parser parses the decoded bytes: body-parser's own decompression is never used.
 */
export function bounded(parser: RequestHandler, limit: number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    // An empty body is the same in every coding (body-parser would try to decode it).
    if (declaredEmpty(req)) delete req.headers["content-encoding"];
    if (codingOf(req.headers["content-encoding"]) !== "identity") {
      return void readBounded(req, res, limit).then((body) => {
        // The decoded bytes as a request of their own: the request's headers less those of the
        // encoded bytes (their coding and length), and the decoded length.
        const decoded = Object.assign(Readable.from([body], { objectMode: false }), {
          headers: { ...withoutEncoding(req.headers), "content-length": String(body.length) },
        }) as unknown as Request;
        void parser(decoded, res, (err?: unknown) => {
          req.body = decoded.body;
          next(err);
        });
      }, next);
    }
    if (declaredPast(req, limit)) {
      refuse(req, res);
      return next(tooLarge(limit));
    }
    let received = 0;
    let done = false;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limit) return;
      refuse(req, res);
      finish(tooLarge(limit));
    };
    // Whichever comes first: the parser's end (a body within the limit, or a failure of its own) or
    // the limit passed. The parser calls back once more when the connection is gone: ignored.
    const finish = (err?: unknown) => {
      if (done) return;
      done = true;
      req.off("data", count);
      next(err);
    };
    void parser(req, res, finish);
    // Counted beside the parser, which started listening just now: no chunk has arrived in between.
    if (!done) req.on("data", count);
  };
}

/** Request headers without those describing the encoded bytes (their coding and length). */
function withoutEncoding(headers: IncomingMessage["headers"]): IncomingMessage["headers"] {
  const { "content-encoding": _coding, "content-length": _length, ...rest } = headers;
  return rest;
}

/**
 * Reads a whole body (POST /graphql's) in the plain bytes its Content-Encoding stands for
 * (decodedStream), up to `limit` bytes received and `limit` bytes decoded: past either it rejects
 * at once with the too-large error, keeps nothing and stops decoding (a few KB of gzip that would
 * inflate to gigabytes are never inflated past the limit and a chunk). Another coding is a 415,
 * bytes that do not decode a 400.
 */
export function readBounded(req: IncomingMessage, res: Response, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredPast(req, limit)) {
      refuse(req, res);
      return reject(tooLarge(limit));
    }
    let body: Readable;
    try {
      body = decodedStream(req, req.headers["content-encoding"]);
    } catch (err) {
      refuse(req, res, err);
      return reject(err);
    }
    let chunks: Buffer[] = [];
    let size = 0;
    let received = 0;
    let settled = false;
    const settle = (err: unknown, value?: Buffer) => {
      if (settled) return;
      settled = true;
      req.off("data", onReceived);
      body.off("data", onData).off("end", onEnd).off("error", onError);
      chunks = [];
      if (!err) return resolve(value!);
      // Decoding stops here (the decoder is unpiped and destroyed); what still arrives is discarded.
      if (body !== req) body.destroy();
      refuse(req, res);
      reject(err);
    };
    // The bytes as received (compressed): the limit holds for them as for the decoded ones.
    const onReceived = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) settle(tooLarge(limit));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return settle(tooLarge(limit));
      chunks.push(chunk);
    };
    const onEnd = () => settle(null, Buffer.concat(chunks, size));
    // Bytes that do not decode (an AppError, 400), or the client went away before the body's end
    // (nobody reads the answer; body-parser calls it a 400 too).
    const onError = (err: unknown) =>
      settle(err instanceof AppError ? err : Object.assign(new Error("request aborted"), { type: "request.aborted", status: 400, expose: true }));
    if (body !== req) req.on("data", onReceived);
    body.on("data", onData).on("end", onEnd).on("error", onError);
  });
}

/**
 * The content codings a body may be sent in (Content-Encoding), on every route that takes one:
 * the REST JSON routes, POST /graphql, the Segment routes and the PDF upload. `x-gzip` is gzip
 * (RFC 9110 §8.4.1.3); `deflate` is the zlib format (RFC 1950), as HTTP defines it.
 */
const DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: zlib.createGunzip,
  "x-gzip": zlib.createGunzip,
  deflate: zlib.createInflate,
  br: zlib.createBrotliDecompress,
};
export const CONTENT_CODINGS = "gzip, deflate, br or identity";
const ACCEPT_ENCODING = "gzip, deflate, br";

/** A Content-Encoding header's coding, lower case: `identity` without one. */
function codingOf(contentEncoding: string | undefined): string {
  return (contentEncoding ?? "").trim().toLowerCase() || "identity";
}

/** Whether the request declares a body that is empty (`Content-Length: 0`): nothing to decode. */
const declaredEmpty = (req: IncomingMessage) => req.headers["content-length"] === "0" && !req.headers["transfer-encoding"];

/**
 * A body as a stream of the plain bytes its Content-Encoding stands for, decoded as they arrive
 * (whoever reads it counts the decoded bytes against the limit and stops there: destroying the
 * stream stops the decoding): gzip, deflate and br; another coding is a 415 (thrown), bytes that do
 * not decode a 400 (the stream's error). `identity`, no header or an empty body: the request itself.
 */
export function decodedStream(req: IncomingMessage, contentEncoding: string | undefined): Readable {
  const coding = codingOf(contentEncoding);
  if (coding === "identity" || declaredEmpty(req)) return req;
  const make = Object.hasOwn(DECODERS, coding) ? DECODERS[coding] : undefined;
  if (!make)
    throw new AppError(
      415,
      `Content-Encoding "${coding}" is not supported: send the body as ${CONTENT_CODINGS} (uncompressed).`,
      [{ path: "Content-Encoding", message: `not one of ${CONTENT_CODINGS}` }],
      // RFC 9110 §15.5.16: a 415 for a content coding names those that would have been accepted.
      { "Accept-Encoding": ACCEPT_ENCODING },
    );
  const decoder = make();
  // Wired by hand, not with pipeline(): that destroys the request (and its socket) when the bytes
  // do not decode, and the 400 could no longer be answered; whoever reads drains what is left of a
  // refused body. `out` ends with one error at most: the decoding failure, or the request's. Once
  // `out` is destroyed (a reader past its limit, or a failure), the request is unpiped and the
  // decoder destroyed at once: nothing more is inflated.
  const out = new PassThrough({
    destroy(err, cb) {
      req.unpipe(decoder);
      decoder.unpipe(out);
      decoder.destroy();
      cb(err);
    },
  });
  const fail = (err: Error) => {
    if (!out.destroyed) out.destroy(err);
  };
  decoder.on("error", (err) =>
    fail(
      new AppError(400, `The request body could not be decompressed (${coding}): ${err.message}.`, [{ path: "body", message: "could not be decompressed" }]),
    ),
  );
  req.on("error", fail);
  req.once("aborted", () => {
    if (!out.destroyed) out.emit("aborted");
  });
  req.pipe(decoder).pipe(out);
  return out;
}
