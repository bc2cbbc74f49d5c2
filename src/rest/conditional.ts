// Conditional GETs (RFC 9110 §13.1.2): an answer's ETag, and whether a request's If-None-Match
// names it. GET compares weakly: `W/"x"` and `"x"` are the same tag.
import { createHash } from "node:crypto";

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
