// The S3 back-end (AWS S3, MinIO, or any S3-compatible store). Uploads stream through
// @aws-sdk/lib-storage's multipart Upload, which holds at most queueSize parts of partSize bytes
// in memory whatever the object's size.

import type { Readable } from "node:stream";
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { AppError } from "../errors.js";
import { logger } from "../logger.js";
import type { BlobRange, BlobStore } from "./store.js";

export interface S3Options {
  bucket: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  prefix: string;
}

const PART_SIZE = 5 * 1024 * 1024; // S3's minimum part size

export class S3Store implements BlobStore {
  readonly kind = "s3";
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(opts: S3Options) {
    this.bucket = opts.bucket;
    this.prefix = opts.prefix;
    this.client = new S3Client({
      region: opts.region,
      endpoint: opts.endpoint,
      forcePathStyle: opts.forcePathStyle,
      ...(opts.accessKeyId && opts.secretAccessKey ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } } : {}),
    });
  }

  private key(key: string): string {
    return this.prefix + key;
  }

  async put(key: string, body: Readable, contentType: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.key(key), Body: body, ContentType: contentType },
      partSize: PART_SIZE,
      queueSize: 2,
      leavePartsOnError: false, // a failed upload aborts its multipart upload (no parts left behind)
    });
    // A failing source stream (too large, not the expected content) aborts the upload.
    const failed = new Promise<never>((_, reject) => body.once("error", reject));
    failed.catch(() => undefined); // an error after the upload settled is nobody's business
    try {
      await Promise.race([upload.done(), failed]);
    } catch (err) {
      await upload.abort().catch(() => undefined);
      throw unavailable(err);
    }
  }

  async move(from: string, to: string): Promise<void> {
    if (!(await this.exists(to))) {
      await this.client
        .send(
          new CopyObjectCommand({
            Bucket: this.bucket,
            Key: this.key(to),
            CopySource: `${this.bucket}/${encodeURIComponent(this.key(from)).replace(/%2F/g, "/")}`,
          }),
        )
        .catch((err: unknown) => {
          throw unavailable(err);
        });
    }
    await this.delete(from);
  }

  async get(key: string, range?: BlobRange): Promise<{ body: Readable; size: number } | null> {
    try {
      // A ranged read is GetObject's own Range: only those bytes leave the store.
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      // A ranged answer's ContentLength is the range's; the object's size is Content-Range's `/size`.
      const whole = /\/(\d+)$/.exec(out.ContentRange ?? "")?.[1];
      return { body: out.Body as Readable, size: Number(whole ?? out.ContentLength ?? 0) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw unavailable(err);
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw unavailable(err);
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(key) })).catch((err: unknown) => {
      throw unavailable(err);
    });
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}

const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "EPIPE"]);

/**
 * The store not answering (refused or lost connections, timeouts, its own 5xx) is a 503 with
 * Retry-After: the request may succeed later, and it is no fault of the caller's. Anything else
 * (our own errors from the body's stream, a store's 4xx) is thrown as it is.
 */
function unavailable(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = err as { code?: string; name?: string; $metadata?: { httpStatusCode?: number }; cause?: { code?: string } };
  const down =
    UNREACHABLE.has(e?.code ?? "") || UNREACHABLE.has(e?.cause?.code ?? "") || e?.name === "TimeoutError" || (e?.$metadata?.httpStatusCode ?? 0) >= 500;
  if (!down) return err;
  logger.warn({ err }, "the S3 store did not answer");
  return new AppError(503, "File storage is unavailable at the moment; retry later.", undefined, { "Retry-After": "5" });
}
