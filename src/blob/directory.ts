// The directory back-end: one file per key under a root directory. Writes go to the key's path
// through a temporary file and a rename, so a reader never sees half an object.
import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { BlobRange, BlobStore } from "./store.js";

export class DirectoryStore implements BlobStore {
  readonly kind = "directory";
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The file of a key; keys are ours, but a key that would leave the root is refused all the same. */
  private path(key: string): string {
    const p = resolve(this.root, ...key.split("/"));
    if (!p.startsWith(this.root + sep)) throw new Error(`blob key ${JSON.stringify(key)} leaves the store's directory`);
    return p;
  }

  async put(key: string, body: Readable): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const partial = `${target}.${randomUUID()}.partial`;
    try {
      await pipeline(body, createWriteStream(partial, { flags: "wx" }));
      await rename(partial, target);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  async move(from: string, to: string): Promise<void> {
    const source = this.path(from);
    const target = this.path(to);
    if (await this.exists(to)) return void (await rm(source, { force: true }));
    await mkdir(dirname(target), { recursive: true });
    await rename(source, target);
  }

  async get(key: string, range?: BlobRange): Promise<{ body: Readable; size: number } | null> {
    const p = this.path(key);
    try {
      const s = await stat(p);
      // (start and end are inclusive, as createReadStream takes them.)
      return { body: createReadStream(p, range ? { start: range.start, end: range.end } : undefined), size: s.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.path(key))).isFile();
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async close(): Promise<void> {}

  /** For tests and tooling: where a key lives. */
  fileOf(key: string): string {
    return join(this.path(key));
  }
}
