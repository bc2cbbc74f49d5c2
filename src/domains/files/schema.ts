// Files in blob storage: the File type, an account's file list and one file by id, and the upload
// mutation that records a PDF whose bytes the REST route (B8) has already streamed to the store.

import { blobStore } from "../../blob/index.js";
import type { BlobRange } from "../../blob/store.js";
import { prisma, withTransaction } from "../../db/index.js";
import { AppError, badRequest } from "../../errors.js";
import type { StoredFile as FileRow } from "../../generated/sqlite/client.js";
import { newId } from "../../ids.js";
import { ownEntry } from "../../lookup.js";
import { publicUrl } from "../../publicUrl.js";
import { builder, MAX_TIMESTAMP } from "../../schema/builder.js";
import { afterCursor, connectionFrom, LIST_LIMITS, pageExtensions, pageLimit, toPage } from "../../schema/pagination.js";
import { longerThan } from "../../text.js";
import { Account, requireAccount } from "../accounts/schema.js";
import { blobKeyOf, PDF_CONTENT_TYPE, type StagedPdf } from "./upload.js";

export const FILENAME_MAX = 255;
export const FLOW_ID_MAX = 128;

/** Where a file downloads from (style B). */
export const fileUrl = (accountId: string, id: string) => publicUrl(`/v1/accounts/${encodeURIComponent(accountId)}/files/${encodeURIComponent(id)}`);

export const File = builder.objectRef<FileRow>("File").implement({
  description: "A file uploaded to blob storage; its bytes download from `url`.",
  fields: (t) => ({
    id: t.exposeID("id"),
    filename: t.exposeString("filename", { description: "The sanitised file name given at upload." }),
    flowId: t.exposeString("flowId"),
    version: t.float({ description: "Integer (int64) version given at upload.", resolve: (f) => Number(f.version) }),
    timestamp: t.float({ description: "Integer (int64, epoch ms) timestamp given at upload.", resolve: (f) => Number(f.timestamp) }),
    contentType: t.exposeString("contentType"),
    size: t.exposeInt("size", { description: "Bytes." }),
    sha256: t.exposeString("sha256", { description: "Hex SHA-256 of the bytes (the download's ETag)." }),
    uploadTime: t.field({ type: "Timestamp", resolve: (f) => f.createdAt }),
    url: t.string({
      description: "URL that downloads the bytes (GET, same credentials): absolute when the server has a PUBLIC_URL, else a path.",
      resolve: (f) => fileUrl(f.accountId, f.id),
    }),
  }),
});

/**
 * The `contentType` filter's values (B9's, GraphQL's) and the media type each stands for. Only PDFs
 * are stored: a value that names no stored type would silently list nothing, so it is a 400
 * listing these instead.
 */
export const CONTENT_TYPES: Record<string, string> = { [PDF_CONTENT_TYPE]: PDF_CONTENT_TYPE, pdf: PDF_CONTENT_TYPE };

/** The stored media type a `contentType` filter value names (media types are case-insensitive); `path` names the input in a 400. */
export function mediaType(value: string, path: string): string {
  const type = ownEntry(CONTENT_TYPES, value.trim().toLowerCase());
  if (type) return type;
  throw bad(path, `must be one of ${Object.keys(CONTENT_TYPES).join(", ")}`);
}

const FileFilter = builder.inputType("FileFilter", {
  fields: (t) => ({
    contentType: t.string({
      required: false,
      description: `Only files of this media type: ${PDF_CONTENT_TYPE} or its short name pdf, in any letter case (the only type stored); anything else is a 400.`,
    }),
    fromTime: t.field({ type: "Timestamp", required: false, description: "Only files uploaded at or after this time." }),
  }),
});

builder.objectField(Account, "files", (t) =>
  t.connection({
    type: File,
    extensions: pageExtensions(LIST_LIMITS.files),
    description: `The account's uploaded files, oldest first (default ${LIST_LIMITS.files.default}, at most ${LIST_LIMITS.files.max} a page).`,
    args: { filter: t.arg({ type: FileFilter, required: false }) },
    resolve: async (account, args) => {
      const limit = pageLimit(args, LIST_LIMITS.files);
      const { contentType, fromTime } = args.filter ?? {};
      const rows = await prisma.storedFile.findMany({
        where: {
          AND: [
            { accountId: account.id },
            // Read as B9 reads it: GraphQL listed nothing for "pdf" or "Application/PDF", and for a type never stored.
            contentType != null ? { contentType: mediaType(contentType, "filter.contentType") } : {},
            fromTime ? { createdAt: { gte: fromTime } } : {},
            afterCursor("createdAt", args.after, true, account.id),
          ],
        },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        take: limit + 1,
      });
      return connectionFrom(toPage(rows, limit), account.id, (r) => r.createdAt);
    },
  }),
);

builder.objectField(Account, "file", (t) =>
  t.field({
    type: File,
    nullable: true,
    description: "One uploaded file by id (null when the account has none with that id).",
    args: { id: t.arg.string({ required: true }) },
    resolve: (account, { id }) => prisma.storedFile.findFirst({ where: { id, accountId: account.id } }),
  }),
);

// ---- upload -------------------------------------------------------------------------------------

export interface FileParams {
  flowId: string;
  version: number;
  timestamp: number;
  filename: string;
}

const bad = (path: string, message: string) => badRequest(`${path} ${message}`, [{ path, message }]);
/** C0 and C1 controls (NUL included) and path separators: nothing a file name may carry into a path or a header. */
const unsafe = (name: string) =>
  [...name].some((ch) => ch === "/" || ch === "\\" || ch.charCodeAt(0) < 0x20 || (ch.charCodeAt(0) >= 0x7f && ch.charCodeAt(0) <= 0x9f));

const BIDI_CONTROL = /\p{Bidi_Control}/u;

/** A file name as stored: NFC, trimmed, 1–255 characters, no separators or control characters, not `.`/`..`. */
export function sanitiseFilename(raw: string): string {
  const name = raw.normalize("NFC").trim();
  if (name === "") throw bad("filename", "must not be empty");
  if (unsafe(name)) throw bad("filename", "must not contain '/', '\\', NUL or other control characters");
  // U+202E and the other bidirectional controls reorder what is shown: "<U+202E>fdp.exe" reads
  // "exe.pdf" in a browser's download bar or a file manager, and is saved as a `.exe`.
  if (BIDI_CONTROL.test(name))
    throw bad("filename", "must not contain bidirectional formatting characters (such as U+202E), which can disguise a name's extension");
  if (name === "." || name === "..") throw bad("filename", "must not be a relative path");
  if (longerThan(name, FILENAME_MAX)) throw bad("filename", `must be at most ${FILENAME_MAX} characters`);
  return name;
}

/** Checks the upload's path values (REST checks them before reading the body). */
export function checkFileParams(p: { flowId: string; version: number; timestamp: number; filename: string }): FileParams {
  if (!/^[A-Za-z0-9._:-]+$/.test(p.flowId) || p.flowId === "." || p.flowId === "..") {
    throw bad("flowId", "must be letters, digits, '.', '_', ':' or '-'");
  }
  if (longerThan(p.flowId, FLOW_ID_MAX)) throw bad("flowId", `must be at most ${FLOW_ID_MAX} characters`);
  if (!Number.isSafeInteger(p.version) || p.version < 0) throw bad("version", "must be a non-negative integer");
  if (!Number.isSafeInteger(p.timestamp) || p.timestamp < 0 || p.timestamp > MAX_TIMESTAMP)
    throw bad("timestamp", "must be epoch milliseconds (a non-negative integer)");
  return { ...p, filename: sanitiseFilename(p.filename) };
}

builder.mutationField("uploadPdf", (t) =>
  t.field({
    type: File,
    description:
      "Records a PDF upload. The bytes travel over REST only (POST /v1/accounts/{accountId}/content/upload/cloud/pdf/{flowId}/{version}/{timestamp}/{filename} " +
      "with Content-Type: application/pdf); called over /graphql it answers 400.",
    args: {
      accountId: t.arg.string({ required: true }),
      flowId: t.arg.string({ required: true }),
      version: t.arg.float({ required: true }),
      timestamp: t.arg.float({ required: true }),
      filename: t.arg.string({ required: true }),
    },
    resolve: async (_root, args, ctx) => {
      await requireAccount(ctx, args.accountId);
      const p = checkFileParams(args);
      const staged = ctx.rawBody as StagedPdf | undefined;
      if (!staged?.commit)
        throw new AppError(400, "Upload the PDF's bytes through the REST route (POST .../content/upload/cloud/pdf/...); GraphQL carries no files.");
      // The bytes reach their content address before the row that names them is written: a row
      // never points at missing bytes (a failed write leaves an unreferenced blob, harmless).
      await staged.commit();
      return withTransaction((tx) =>
        tx.storedFile.create({
          data: {
            id: newId("f"),
            accountId: args.accountId,
            filename: p.filename,
            flowId: p.flowId,
            version: BigInt(p.version),
            timestamp: BigInt(p.timestamp),
            contentType: PDF_CONTENT_TYPE,
            size: staged.size,
            sha256: staged.sha256,
          },
        }),
      );
    },
  }),
);

/** For the download route: the store's bytes of a file, or of one range of them (inclusive positions, read so from the store). */
export async function openFile(sha256: string, range?: BlobRange) {
  const found = await blobStore().get(blobKeyOf(sha256), range);
  // The record exists: missing bytes are the service's fault (a store that lost them, or instances
  // with FILES_DIRs of their own, docs/production.md), not an unknown file.
  if (!found) throw new AppError(500, "The file's bytes are missing from storage: several instances need one store (S3_BUCKET, or a shared FILES_DIR).");
  return found.body;
}
