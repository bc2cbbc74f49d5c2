// Range requests (RFC 9110 §14): one byte range of a stored file (pdf.js fetches large PDFs so).
// Only a single range is served: a Range naming several is ignored, so the answer is the whole file
// with 200, as RFC 9110 §14.2 allows and as S3 answers one (no multipart/byteranges). Likewise a
// Range that does not parse (another unit, a malformed range) is ignored: 200 with the whole file.
// A satisfiable range is a 206 with Content-Range; one past the end a 416 with `bytes */size`.
// If-Range (§13.1.5) is compared strongly with the answer's ETag: a weak tag, another tag, or a date
// (the download sends no Last-Modified, so no date can validate it) means the whole file, 200.

/** Inclusive byte positions. */
interface ByteRange {
  start: number;
  end: number;
}

export type RangeAnswer =
  /** No Range, one ignored (several ranges, another unit, malformed, not GET, If-Range not current): the whole file. */
  { kind: "whole" } | { kind: "partial"; range: ByteRange } | { kind: "unsatisfiable" };

const DIGITS = /^\d+$/;

/** One range-spec against a representation of `size` bytes: the bytes it names, null when none of them exist, undefined when it does not parse. */
function rangeOf(spec: string, size: number): ByteRange | null | undefined {
  const dash = spec.indexOf("-");
  if (dash < 0) return undefined;
  const first = spec.slice(0, dash);
  const last = spec.slice(dash + 1);
  if (first === "") {
    // suffix-range: the last n bytes (all of them when n ≥ size); n = 0 names none.
    if (!DIGITS.test(last)) return undefined;
    const n = Number(last);
    return n === 0 || size === 0 ? null : { start: Math.max(0, size - n), end: size - 1 };
  }
  if (!DIGITS.test(first) || (last !== "" && !DIGITS.test(last))) return undefined;
  const start = Number(first);
  if (last !== "" && Number(last) < start) return undefined; // last-pos < first-pos: invalid (§14.1.1)
  if (start >= size) return null;
  return { start, end: last === "" ? size - 1 : Math.min(Number(last), size - 1) };
}

/**
 * What a request's Range (with its If-Range) asks of a representation of `size` bytes whose strong
 * ETag is `etag`. Ranges apply to GET only (§14.2): any other method gets the whole representation.
 */
export function requestedRange(h: { method?: string; range?: string | null; ifRange?: string | null }, size: number, etag: string): RangeAnswer {
  if (h.method !== "GET" || !h.range) return { kind: "whole" };
  // If-Range: only the same strong tag keeps the Range (W/"…" never matches; a date cannot either).
  if (h.ifRange != null && h.ifRange.trim() !== etag) return { kind: "whole" };
  const eq = h.range.indexOf("=");
  if (eq < 0 || h.range.slice(0, eq).trim().toLowerCase() !== "bytes") return { kind: "whole" };
  // (A list may carry empty elements, `bytes=0-99,`: they are no ranges, §5.6.1.)
  const specs = h.range
    .slice(eq + 1)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (specs.length !== 1) return { kind: "whole" };
  const range = rangeOf(specs[0]!, size);
  if (range === undefined) return { kind: "whole" };
  return range ? { kind: "partial", range } : { kind: "unsatisfiable" };
}
