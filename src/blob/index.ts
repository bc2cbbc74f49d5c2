// Blob storage behind one small interface (./store.ts), with two back-ends: a directory (the
// embedded default) and any S3-compatible store (when S3_BUCKET is set). This module picks one
// from the configuration and holds the process's store.
import type { Config } from "../config.js";
import { loadConfig } from "../config.js";
import { DirectoryStore } from "./directory.js";
import type { S3Options } from "./s3.js";
import type { BlobStore } from "./store.js";

let store: BlobStore | undefined;

/** Picks the back-end from the configuration (replacing any earlier one). */
export function configureBlobStore(
  config: Pick<
    Config,
    "FILES_DIR" | "S3_BUCKET" | "S3_ENDPOINT" | "S3_REGION" | "S3_ACCESS_KEY_ID" | "S3_SECRET_ACCESS_KEY" | "S3_FORCE_PATH_STYLE" | "S3_PREFIX"
  >,
): BlobStore {
  store = config.S3_BUCKET
    ? lazyS3({
        bucket: config.S3_BUCKET,
        endpoint: config.S3_ENDPOINT,
        region: config.S3_REGION,
        accessKeyId: config.S3_ACCESS_KEY_ID,
        secretAccessKey: config.S3_SECRET_ACCESS_KEY,
        forcePathStyle: config.S3_FORCE_PATH_STYLE,
        prefix: config.S3_PREFIX,
      })
    : new DirectoryStore(config.FILES_DIR);
  return store;
}

/**
 * The S3 back-end, loaded on first use: the AWS SDK costs ~35 MB of memory, which a process on the
 * directory store (the default) should not pay.
 */
function lazyS3(options: S3Options): BlobStore {
  let real: Promise<BlobStore> | undefined;
  const s3 = () => (real ??= import("./s3.js").then((m) => new m.S3Store(options)));
  return {
    kind: "s3",
    put: async (key, body, contentType) => (await s3()).put(key, body, contentType),
    move: async (from, to) => (await s3()).move(from, to),
    get: async (key, range) => (await s3()).get(key, range),
    exists: async (key) => (await s3()).exists(key),
    delete: async (key) => (await s3()).delete(key),
    close: async () => {
      if (real) await (await real).close();
    },
  };
}

/** The process's blob store (from the environment on first use, unless configured). */
export function blobStore(): BlobStore {
  return store ?? configureBlobStore(loadConfig());
}
