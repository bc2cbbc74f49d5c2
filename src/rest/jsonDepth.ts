// JSON bodies nested deeper than any route reads are refused where they enter (REST bodies, Segment
// calls, GraphQL requests), before anything walks them. JSON.parse takes any depth, but recursive
// code after it does not: a body of 5,000 nested arrays (20 KB, well under the size limits)
// overflowed the call stack of the unstorable-text check (a 500), and V8's own JSON.stringify
// throws past about 10,000 levels. No route's input nests beyond a handful of levels; Segment
// properties and segment rules are the deepest, and 64 leaves them room.
import { AppError } from "../errors.js";

export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether the JSON text in `raw` opens more than `max` arrays or objects inside one another. A scan
 * of the bytes (strings skipped, escapes included), not a parse: a malformed text is the parser's
 * to report, and whatever it holds is counted alike.
 */
export function nestedPast(raw: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === QUOTE) {
      // On to the closing quote: the next quote not escaped by an odd run of backslashes (UTF-8
      // continuation bytes are never ASCII). indexOf is native: strings are most of a body's bytes.
      let end = i;
      for (;;) {
        end = raw.indexOf(QUOTE, end + 1);
        if (end < 0) return false;
        let backslashes = 0;
        while (raw[end - 1 - backslashes] === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      i = end;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

export const tooDeepError = (where: string): AppError =>
  new AppError(400, `${where} nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`, [
    { path: where, message: `nested deeper than ${MAX_JSON_DEPTH} levels` },
  ]);
