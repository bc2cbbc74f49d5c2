// Text both databases store as sent. PostgreSQL's text cannot hold NUL (U+0000): a value carrying
// one failed the statement (a 500). An unpaired surrogate (JSON `"\ud800"`) is not Unicode text:
// both drivers encode it as U+FFFD, so what is stored would differ from what was sent. Both are
// refused where JSON enters (REST bodies, GraphQL variables and string literals) with a 400 naming
// the place. Valid JSON rarely carries either, and only as `\u` escapes, so the full check runs
// only when the raw body has such an escape.
import type { DocumentNode } from "graphql";
import { Kind, visit } from "graphql";
import { AppError } from "./errors.js";

/** `\u0000` or a `\uD800`–`\uDFFF` escape: what a JSON or GraphQL text must contain to carry either. */
const SUSPECT_ESCAPE = /\\u(0000|[dD][89a-fA-F])/;
export const mayCarryUnstorableText = (raw: string): boolean => SUSPECT_ESCAPE.test(raw);

/** In a `u` regular expression a surrogate pair is one code point: `\p{Cs}` matches only unpaired halves. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;
const unstorable = (s: string) => s.includes("\u0000") || UNPAIRED_SURROGATE.test(s);

/** The path of the first string (value or key) in `value` that cannot be stored as sent, or null. */
export function findUnstorableText(value: unknown, path: string): string | null {
  if (typeof value === "string") return unstorable(value) ? path : null;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = findUnstorableText(v, `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (unstorable(k)) return `${path} (a key)`;
      const found = findUnstorableText(v, `${path}.${k}`);
      if (found) return found;
    }
  }
  return null;
}

export const unstorableTextError = (path: string): AppError =>
  new AppError(400, `${path}: text must not contain NUL (\\u0000) or unpaired surrogates (\\uD800–\\uDFFF without their pair)`, [
    { path, message: "contains NUL or an unpaired surrogate" },
  ]);

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
