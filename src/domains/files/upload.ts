// Receiving a PDF: the request body streams through a checker (size limit, sha256, the `%PDF-`
// header and the `%%EOF` trailer) into a temporary blob; only the first bytes and a short tail are
// ever held, so a 25 MiB upload never sits whole in memory. The resolver then moves the temporary
// blob to its content address (src/domains/files/schema.ts).
import { createHash, randomUUID } from "node:crypto";
import { type Readable, Transform, type TransformCallback } from "node:stream";
import { blobStore } from "../../blob/index.js";
import { AppError } from "../../errors.js";
import type { StagedBody } from "../../rest/contract.js";

export const PDF_CONTENT_TYPE = "application/pdf";
export const PDF_LIMIT_BYTES = 25 * 1024 * 1024;
/** PDF readers look for the end-of-file marker within the last 1,024 bytes. */
const TAIL_BYTES = 1024;

/** The blob key of bytes with this sha256 (content-addressed: equal uploads share one object). */
export const blobKeyOf = (sha256: string) => `sha256/${sha256.slice(0, 2)}/${sha256}`;

export interface StagedPdf extends StagedBody {
  sha256: string;
  size: number;
  /** Moves the bytes to their content address; afterwards discard() leaves them alone. */
  commit(): Promise<string>;
}

class PdfChecker extends Transform {
  readonly hash = createHash("sha256");
  /** Bytes seen (not `size`: lib-storage reads a body's `size` as its length). */
  bytes = 0;
  private head = Buffer.alloc(0);
  private tail = Buffer.alloc(0);

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) return done(new AppError(413, `Request body larger than the limit (${this.limit / 1024 / 1024} MiB for PDF uploads).`));
    if (this.head.length < 5) this.head = Buffer.concat([this.head, chunk.subarray(0, 5)]).subarray(0, 5);
    this.tail = Buffer.concat([this.tail, chunk.subarray(-TAIL_BYTES)]).subarray(-TAIL_BYTES);
    this.hash.update(chunk);
    done(null, chunk);
  }

  /** What is wrong with the bytes as a PDF, or null. */
  problem(): string | null {
    if (this.bytes === 0) return "The body is empty; send the PDF's bytes.";
    if (this.head.toString("latin1") !== "%PDF-") return "The body is not a PDF: it does not start with %PDF-.";
    if (!this.tail.toString("latin1").includes("%%EOF")) return "The body is not a complete PDF: there is no %%EOF marker at its end.";
    return null;
  }
}

/** Streams the body into a temporary blob, checking it on the way; a 400/413 leaves nothing behind. */
export async function receivePdf(body: Readable): Promise<StagedPdf> {
  const store = blobStore();
  const tempKey = `tmp/${randomUUID()}`;
  const checker = new PdfChecker(PDF_LIMIT_BYTES);
  // The first failure of the body (it may report more than one) ends the checker, and is what the
  // upload answers. The store may listen to the checker only once it has begun (S3's upload does):
  // an error before then would be one nobody hears, which stops the process, so the checker always
  // has a listener, and the failure is kept here.
  let failure: Error | null = null;
  const fail = (err: Error) => {
    failure ??= err;
    checker.destroy(err);
  };
  checker.on("error", () => undefined);
  body.on("error", fail);
  body.once("aborted", () => fail(new AppError(400, "The upload was interrupted before the body ended.")));
  body.pipe(checker);
  try {
    await store.put(tempKey, checker, PDF_CONTENT_TYPE);
  } catch (thrown) {
    await store.delete(tempKey).catch(() => undefined);
    const err = failure ?? thrown;
    if (err instanceof AppError) throw err;
    if ((err as NodeJS.ErrnoException).code === "ECONNRESET" || (body as { aborted?: boolean }).aborted) {
      throw new AppError(400, "The upload was interrupted before the body ended.");
    }
    throw err;
  }
  const problem = checker.problem();
  if (problem) {
    await store.delete(tempKey);
    throw new AppError(400, problem, [{ path: "body", message: problem }]);
  }
  const sha256 = checker.hash.digest("hex");
  let committed = false;
  return {
    sha256,
    size: checker.bytes,
    async commit() {
      const key = blobKeyOf(sha256);
      await store.move(tempKey, key);
      committed = true;
      return key;
    },
    async discard() {
      if (!committed) await store.delete(tempKey).catch(() => undefined);
    },
  };
}
