// Conditional GETs (RFC 9110 §13.1.2): an answer's ETag, and whether a request's If-None-Match
// names it. GET compares weakly: `W/"x"` and `"x"` are the same tag.
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import type { Request, Response } from "express";

/** The weak tag of a body, in Express's own format (its `etag` package): its length and SHA-1. */
export function weakETag(body: string | Buffer): string {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return `W/"${bytes.length.toString(16)}-${createHash("sha1").update(bytes).digest("base64").slice(0, 27)}"`;
}

const opaque = (tag: string) => tag.trim().replace(/^W\//, "");

/** `If-None-Match` names this ETag (or is `*`). */
export function noneMatchHas(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const mine = opaque(etag);
  return ifNoneMatch.split(",").some((s) => s.trim() === "*" || opaque(s) === mine);
}

/** GET, and HEAD (Express serves it with the GET route). */
export const isRead = (req: Request) => req.method === "GET" || req.method === "HEAD";

/**
 * A stream's bytes, whole; null, with the stream destroyed (its producer stops), once the client
 * of `res` has gone: nobody is left to send them to.
 */
export async function collect(body: Readable, res?: Response): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) {
    // (Leaving the loop destroys the stream.)
    if (res && (res.destroyed || res.socket?.destroyed)) return null;
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : (chunk as Buffer));
  }
  return Buffer.concat(chunks);
}

/**
 * A read's answer with its weak ETag (Express's own format, as res.json's answers get): a 304 with
 * no body when the request's If-None-Match names it (req.fresh: Express's rule, as for res.json).
 */
export function sendTagged(req: Request, res: Response, status: number, body: Buffer): void {
  res.status(status);
  if (!res.get("ETag")) res.set("ETag", weakETag(body));
  if (status === 200 && req.fresh) return void res.status(304).end();
  res.set("Content-Length", String(body.length)).end(body);
}
