// Caches keyed by text a client sent (GraphQL documents and their parse errors): any client can send
// texts without end, so each such cache is an LRU bounded both by entries and by the total size of
// its texts, and a text over MAX_CACHED_TEXT_BYTES is never kept. The size counted is the text's,
// but what an entry holds is larger: a parsed document keeps its token chain for locations, about
// 100 times its text in heap, so the byte bound (GRAPHQL_CACHE_BYTES) is the one that matters.
import { LRUCache } from "lru-cache";

export interface TextCacheLimits {
  /** Most entries kept (GRAPHQL_CACHE_ENTRIES). */
  entries: number;
  /** Most bytes of texts kept, all entries together (GRAPHQL_CACHE_BYTES). */
  bytes: number;
}

/** A text longer than this is never cached: it is parsed (and run) anew each time it is sent. */
export const MAX_CACHED_TEXT_BYTES = 64 * 1024;

export function textCache<V extends {}>(limits: TextCacheLimits): LRUCache<string, V> {
  const maxEntrySize = Math.min(MAX_CACHED_TEXT_BYTES, limits.bytes);
  return new LRUCache<string, V>({
    max: limits.entries,
    maxSize: limits.bytes,
    maxEntrySize,
    // A text whose characters alone exceed the cap is not measured (it can be megabytes).
    sizeCalculation: (_value, text) => (text.length > maxEntrySize ? maxEntrySize + 1 : Math.max(1, Buffer.byteLength(text))),
  });
}
