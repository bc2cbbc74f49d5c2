// What a blob back-end is (./directory.ts, ./s3.ts); ./index.ts picks one from the configuration.
// Knows no domain: keys are opaque strings. Writes stream: `put` consumes a Readable without
// holding it whole in memory.
import type { Readable } from "node:stream";

/** Inclusive byte positions of a ranged read, within the object (the caller checked them against its size). */
export interface BlobRange {
  start: number;
  end: number;
}

export interface BlobStore {
  readonly kind: "directory" | "s3";
  /** Streams `body` into the object `key` (replacing it). Rejects with the stream's error. */
  put(key: string, body: Readable, contentType: string): Promise<void>;
  /** Makes `from` available as `to` and removes `from`; if `to` exists already, `from` is just removed. */
  move(from: string, to: string): Promise<void>;
  /**
   * The object's bytes, or with `range` only those (read so from the store: never the whole object),
   * and the whole object's size; null when there is no such object.
   */
  get(key: string, range?: BlobRange): Promise<{ body: Readable; size: number } | null>;
  exists(key: string): Promise<boolean>;
  /** Removes the object; no error when it does not exist. */
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}
