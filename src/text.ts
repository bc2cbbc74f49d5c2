// Text both databases store as sent. PostgreSQL's text cannot hold NUL (U+0000): a value carrying
// one failed the statement (a 500). An unpaired surrogate (JSON `"\ud800"`) is not Unicode text:
// both drivers encode it as U+FFFD, so what is stored would differ from what was sent. Both are
// refused where JSON enters (REST bodies, GraphQL variables and string literals) with a 400 naming
// the place. Valid JSON rarely carries either, and only as `\u` escapes, so the full check runs
// only when the raw body has such an escape.
import type { DocumentNode } from "graphql";
import { Kind, visit } from "graphql";
import { AppError } from "./errors.js";

/**
 * `\u0000` or a `\uD800`–`\uDFFF` escape, or a NUL as it is: what a JSON or GraphQL text must
 * contain to carry either. (GraphQL allows U+0000 as it is in a string literal, and a GraphQL text
 * sent in JSON arrives decoded: `"query": "{ tag(name: \"a\u0000\") … }"` holds one. An unpaired
 * surrogate as it is is a syntax error there, and JSON text cannot hold a raw NUL.)
 */
const SUSPECT_ESCAPE = /\\u(0000|[dD][89a-fA-F])/;
export const mayCarryUnstorableText = (raw: string): boolean => raw.includes("\u0000") || SUSPECT_ESCAPE.test(raw);

/** In a `u` regular expression a surrogate pair is one code point: `\p{Cs}` matches only unpaired halves. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;
const unstorable = (s: string) => s.includes("\u0000") || UNPAIRED_SURROGATE.test(s);

/**
 * The path of the first string (value or key) in `value` that cannot be stored as sent, or null.
 * A loop over an explicit stack, not recursion: a body of 5,000 nested arrays (valid JSON, well
 * under the size limits) overflowed the call stack here, a 500.
 */
export function findUnstorableText(value: unknown, path: string): string | null {
  const stack: [unknown, string][] = [[value, path]];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === "string") {
      if (unstorable(v)) return at;
    } else if (Array.isArray(v)) {
      // Pushed last to first, so the first offender in document order is the one named.
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}[${i}]`]);
    } else if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      for (const [k] of entries) if (unstorable(k)) return `${at} (a key)`;
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], `${at}.${entries[i]![0]}`]);
    }
  }
  return null;
}

export const unstorableTextError = (path: string): AppError =>
  new AppError(400, `${path}: text must not contain NUL (\\u0000) or unpaired surrogates (\\uD800–\\uDFFF without their pair)`, [
    { path, message: "contains NUL or an unpaired surrogate" },
  ]);

/**
 * A JSON body whose bytes are not UTF-8 (RFC 8259's only encoding of JSON text), such as "café" sent
 * in Latin-1: decoded, it would hold U+FFFD where the client sent other text, and be stored so.
 */
export const notUtf8Error = (path: string): AppError =>
  new AppError(400, `${path} is not valid UTF-8: send JSON text encoded as UTF-8`, [{ path, message: "is not valid UTF-8" }]);

/** The first string literal of a GraphQL document that cannot be stored as sent, as an error; or null. */
export function unstorableLiteral(document: DocumentNode): AppError | null {
  let found: AppError | null = null;
  visit(document, {
    [Kind.STRING](node) {
      if (!found && unstorable(node.value)) found = unstorableTextError(`string literal at line ${node.loc?.startToken.line ?? "?"}`);
    },
  });
  return found;
}

/**
 * Orders strings by code point, as PostgreSQL's `COLLATE "C"` and SQLite's BINARY do on UTF-8 (the
 * order the service answers names and keys in). `<` on JavaScript strings compares UTF-16 code
 * units, which puts a character past U+FFFF (a surrogate pair, 0xD800-0xDFFF) before U+E000-U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}
/** A code unit's rank in code point order: surrogates (code points past U+FFFF) after U+E000-U+FFFF. */
const codePointRank = (unit: number) => (unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800);

/**
 * Whether `s` has more than `max` characters, counted as a person counts them: by code point (an
 * emoji outside the Basic Multilingual Plane is one character, though two UTF-16 units of
 * `s.length`). Every "at most N characters" limit counts this way. Free for a text within `max`
 * units (most are), a loop only for one longer than that.
 */
export function longerThan(s: string, max: number): boolean {
  if (s.length <= max) return false;
  if (s.length > 2 * max) return true;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    if (++n > max) return true;
  }
  return false;
}
