// Request bodies are held to their size limit however they are framed: a declared length past it
// is refused before anything is read, and a chunked body (no Content-Length) is counted as it
// arrives and refused as soon as it passes the limit. Nothing past the limit is kept, and the
// answer closes the connection instead of waiting for the body's end. (body-parser, left to
// itself, stops keeping a body at its limit but then reads it to its end before it reports the
// 413: a client sending a chunked body that never ends would never be answered, and be read all
// along.)
import type { IncomingMessage } from "node:http";
import { PassThrough, type Readable } from "node:stream";
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
function refuse(req: IncomingMessage, res: Response): void {
  res.set("Connection", "close");
  req.resume();
}

const declaredPast = (req: IncomingMessage, limit: number) => Number(req.headers["content-length"] ?? 0) > limit;

/**
 * A body-parser middleware (express.json, express.raw) whose limit holds however the body is framed:
 * past `limit` bytes as received (before any decompression: the parser limits the decompressed
 * bytes itself) it continues with the parser's own too-large error at once.
 */
export function bounded(parser: RequestHandler, limit: number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
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

/**
 * Reads a whole body as sent (a compressed one stays compressed), up to `limit` bytes; past them it
 * rejects at once with the too-large error and keeps nothing.
 */
export function readBounded(req: IncomingMessage, res: Response, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredPast(req, limit)) {
      refuse(req, res);
      return reject(tooLarge(limit));
    }
    let chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off("data", onData).off("end", onEnd).off("error", onError);
      chunks = [];
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      refuse(req, res);
      reject(tooLarge(limit));
    };
    const onEnd = () => {
      const body = Buffer.concat(chunks, size);
      stop();
      resolve(body);
    };
    // The client went away before the body's end (nobody reads the answer; body-parser calls it a 400 too).
    const onError = () => {
      stop();
      reject(Object.assign(new Error("request aborted"), { type: "request.aborted", status: 400, expose: true }));
    };
    req.on("data", onData).on("end", onEnd).on("error", onError);
  });
}

/** The content codings body-parser inflates for the REST routes (and Segment's): the same on POST /graphql. */
const DECODERS: Record<string, (buf: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions, cb: (err: Error | null, out: Buffer) => void) => void> = {
  gzip: zlib.gunzip,
  deflate: zlib.inflate,
  br: zlib.brotliDecompress,
};

/**
 * A body read whole as sent (readBounded) in the plain bytes its Content-Encoding stands for, as
 * body-parser gives the REST routes theirs: gzip, deflate and br are decoded, up to `limit` bytes
 * decoded (a small body that inflates past it is the same 413 as a large one); another coding is a
 * 415, bytes that do not decode a 400. `identity` or no header: the body as it is.
 */
export function decodeContent(body: Buffer, contentEncoding: string | undefined, limit: number): Promise<Buffer> {
  const coding = (contentEncoding ?? "identity").trim().toLowerCase();
  if (coding === "identity") return Promise.resolve(body);
  const decode = Object.hasOwn(DECODERS, coding) ? DECODERS[coding] : undefined;
  if (!decode)
    return Promise.reject(
      Object.assign(new Error(`unsupported content encoding "${coding}": send gzip, deflate, br or identity`), {
        type: "encoding.unsupported",
        status: 415,
        expose: true,
      }),
    );
  return new Promise((resolve, reject) => {
    decode(body, { maxOutputLength: limit }, (err, out) => {
      if (!err) return resolve(out);
      if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") return reject(tooLarge(limit));
      reject(Object.assign(new Error(`The ${coding} body does not decode: ${err.message}`), { type: "encoding.invalid", status: 400, expose: true }));
    });
  });
}

const STREAM_DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: zlib.createGunzip,
  deflate: zlib.createInflate,
  br: zlib.createBrotliDecompress,
};

/**
 * A raw body (a PDF upload) as a stream of the plain bytes its Content-Encoding stands for, decoded
 * as they arrive (the route's own counting then limits the decoded bytes), as decodeContent does for
 * bodies read whole: another coding is a 415 (thrown), bytes that do not decode a 400 (the stream's
 * error). `identity` or no header: the request itself.
 */
export function decodedStream(req: IncomingMessage, contentEncoding: string | undefined): Readable {
  const coding = (contentEncoding ?? "identity").trim().toLowerCase();
  if (coding === "identity") return req;
  const make = Object.hasOwn(STREAM_DECODERS, coding) ? STREAM_DECODERS[coding] : undefined;
  if (!make)
    throw Object.assign(new Error(`unsupported content encoding "${coding}": send gzip, deflate, br or identity`), {
      type: "encoding.unsupported",
      status: 415,
      expose: true,
    });
  const out = new PassThrough();
  const decoder = make();
  // Wired by hand, not with pipeline(): that destroys the request (and its socket) when the bytes
  // do not decode, and the 400 could no longer be answered; the router drains what is left of a
  // refused raw body. `out` ends with one error at most: the decoding failure, or the request's.
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    req.unpipe(decoder);
    decoder.unpipe(out);
    out.destroy(err);
  };
  decoder.on("error", (err) => fail(new AppError(400, `The ${coding} body does not decode: ${err.message}`, [{ path: "body", message: "does not decode" }])));
  req.on("error", fail);
  req.once("aborted", () => {
    if (!failed) out.emit("aborted");
  });
  req.pipe(decoder).pipe(out);
  return out;
}
