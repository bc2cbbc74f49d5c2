// Files over REST: B8 (upload a PDF, streamed), B9 (list), and the download by id.
import { noneMatchHas } from "../../rest/conditional.js";
import { B, type RestInput, type RestReply, type RestRoute, route } from "../../rest/contract.js";
import { pageQuery } from "../../rest/docs.js";
import { EXAMPLE_TIME, exampleId } from "../../rest/examples.js";
import { graphql } from "../../rest/operation.js";
import { cursorParam, intParam, limitParam, pathParam, stringParam } from "../../rest/params.js";
import { problem } from "../../rest/problem.js";
import { requestedRange } from "../../rest/ranges.js";
import { reply } from "../../rest/responses.js";
import { MAX_TIMESTAMP } from "../../schema/builder.js";
import { LIST_LIMITS } from "../../schema/pagination.js";
import { FILE_FIELDS, fileRecord } from "./records.js";
import { CONTENT_TYPES, checkFileParams, mediaType, openFile } from "./schema.js";
import { PDF_CONTENT_TYPE, PDF_LIMIT_BYTES, receivePdf } from "./upload.js";

const UPLOAD = graphql(`mutation UploadPdf($accountId: String!, $flowId: String!, $version: Float!, $timestamp: Float!, $filename: String!) {
  uploadPdf(accountId: $accountId, flowId: $flowId, version: $version, timestamp: $timestamp, filename: $filename) { ${FILE_FIELDS} } }`);

const LIST = graphql(`query FileList($accountId: String!, $first: Int, $after: String, $filter: FileFilter) {
  account(id: $accountId) { files(first: $first, after: $after, filter: $filter) { nodes { ${FILE_FIELDS} } pageInfo { hasNextPage endCursor } } } }`);

const DOWNLOAD = graphql(`query FileDownload($accountId: String!, $id: String!) {
  account(id: $accountId) { file(id: $id) { id filename contentType size sha256 } } }`);

/** A path value that must be a whole integer. */
function pathInt(input: RestInput, name: string, max: number): number {
  return intParam(input.params, name, { required: true, min: 0, max }) as number;
}

/** `attachment` with an ASCII fallback name and the exact one in RFC 5987 form. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  const exact = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

export const fileRoutes: RestRoute[] = [
  route(UPLOAD, {
    name: "uploadPdf",
    method: "post",
    path: `${B}/content/upload/cloud/pdf/:flowId/:version/:timestamp/:filename`,
    summary: "B8: upload a PDF to blob storage (raw application/pdf body, at most 25 MiB)",
    rawBody: {
      contentType: PDF_CONTENT_TYPE,
      limitBytes: PDF_LIMIT_BYTES,
      description: "The PDF's bytes as they are (it must start with `%PDF-` and end with `%%EOF`), at most 25 MiB.",
      receive: (body) => receivePdf(body),
    },
    params: {
      flowId: { description: "The flow the file belongs to: letters, digits, `.`, `_`, `:`, `-`; at most 128.", example: "flow-1" },
      version: { description: "Integer version (int64, ≥ 0).", example: "3" },
      timestamp: { description: "Integer timestamp (int64 epoch ms, ≥ 0).", example: "1718000000000" },
      filename: {
        description: "File name (URL-encoded): 1–255 characters without `/`, `\\`, NUL, control or bidirectional formatting characters; not `.` or `..`.",
        example: "guide.pdf",
      },
    },
    variables: (i) => ({
      accountId: pathParam(i, "accountId"),
      ...checkFileParams({
        flowId: i.params.flowId ?? "",
        version: pathInt(i, "version", Number.MAX_SAFE_INTEGER),
        timestamp: pathInt(i, "timestamp", MAX_TIMESTAMP),
        filename: i.params.filename ?? "",
      }),
    }),
    reply: reply.custom({ 201: { json: fileRecord.schema } }, (d) => ({ status: 201, body: fileRecord.map(d.uploadPdf) })),
  }),
  route(LIST, {
    name: "listFiles",
    method: "get",
    path: `${B}/content/upload/cloud/pdf/listS3DirContent`,
    summary: "B9: files uploaded to blob storage, oldest first",
    query: {
      ...pageQuery(LIST_LIMITS.files),
      contentType: {
        description: `Only files of this media type: \`${PDF_CONTENT_TYPE}\` or its short name \`pdf\` (the only type stored); anything else is a 400.`,
        required: true,
        schema: { type: "string", enum: Object.keys(CONTENT_TYPES) },
        example: PDF_CONTENT_TYPE,
      },
      fromTime: {
        description: "Only files uploaded at or after this time (epoch ms).",
        schema: { type: "integer", minimum: 0, default: 1 },
        example: EXAMPLE_TIME - 86_400_000,
      },
    },
    variables: (i) => ({
      accountId: pathParam(i, "accountId"),
      first: limitParam(i.query, LIST_LIMITS.files),
      after: cursorParam(i.query),
      filter: {
        contentType: mediaType(stringParam(i.query, "contentType", { required: true })!, "contentType"),
        fromTime: intParam(i.query, "fromTime", { min: 0, max: MAX_TIMESTAMP }) ?? 1,
      },
    }),
    reply: reply.page((d) => d.account.files, fileRecord),
  }),
  route(DOWNLOAD, {
    name: "downloadFile",
    method: "get",
    path: `${B}/files/:fileId`,
    summary: "Download an uploaded file (ETag: its sha256; If-None-Match → 304; one byte range: Range → 206, If-Range)",
    params: { fileId: { description: "The file's id (from the upload or the list).", example: exampleId("f") } },
    headers: {
      Range: {
        description:
          "One byte range (RFC 9110 §14.2): `bytes=first-last`, `bytes=first-` or `bytes=-suffixLength` → 206 with those bytes and `Content-Range`; " +
          "a range starting at or past the end (or `bytes=-0`) → 416 with `Content-Range: bytes */size`. " +
          "Several ranges (`bytes=0-9,20-29`), another unit or a malformed value are ignored: 200 with the whole file. Ignored on HEAD.",
        example: "bytes=0-65535",
      },
      "If-Range": {
        description:
          "The file's ETag (strong, as sent): the Range applies while it is current; any other value (a weak or other tag, a date: no Last-Modified is sent) → 200 with the whole file.",
        example: '"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
      },
    },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "fileId") }),
    reply: reply.custom(
      {
        200: {
          binary: PDF_CONTENT_TYPE,
          headers: {
            ETag: "The file's sha256, quoted.",
            "Accept-Ranges": "`bytes`: one byte range may be asked for with Range.",
            "Content-Disposition": "attachment, with the file name.",
            "Content-Length": "The file's size in bytes.",
          },
        },
        206: {
          binary: PDF_CONTENT_TYPE,
          headers: {
            ETag: "The file's sha256, quoted.",
            "Accept-Ranges": "`bytes`.",
            "Content-Range": "`bytes first-last/size`: the inclusive positions of the bytes sent, and the file's size.",
            "Content-Disposition": "attachment, with the file name.",
            "Content-Length": "The number of bytes sent (last - first + 1).",
          },
        },
        304: "empty",
        404: "problem",
        416: "problem",
      },
      (d, input): RestReply => {
        const f = d.account.file;
        if (!f) return { status: 404, problem: problem(404, `No file '${input.params.fileId}' in this account.`) };
        const etag = `"${f.sha256}"`;
        const cache = { ETag: etag, "Cache-Control": "private, no-cache" };
        // If-None-Match comes before Range (RFC 9110 §13.2.2): a current tag is a 304 whatever the Range.
        if (noneMatchHas(input.header?.("if-none-match"), etag)) return { status: 304, headers: cache };
        const headers = {
          ...cache,
          "Accept-Ranges": "bytes",
          "Content-Type": f.contentType,
          "Content-Disposition": contentDisposition(f.filename),
          "X-Content-Type-Options": "nosniff",
        };
        const asked = requestedRange({ method: input.method, range: input.header?.("range"), ifRange: input.header?.("if-range") }, f.size, etag);
        if (asked.kind === "unsatisfiable") {
          const message = `must name bytes of the file, which has ${f.size}: the first position must be below ${f.size}, a suffix length above 0`;
          return {
            status: 416,
            headers: { "Content-Range": `bytes */${f.size}`, "Accept-Ranges": "bytes" },
            problem: problem(416, `Range ${message}.`, [{ path: "Range", message }]),
          };
        }
        if (asked.kind === "partial") {
          const { start, end } = asked.range;
          return {
            status: 206,
            headers: { ...headers, "Content-Range": `bytes ${start}-${end}/${f.size}`, "Content-Length": String(end - start + 1) },
            stream: () => openFile(f.sha256, asked.range),
          };
        }
        return { status: 200, headers: { ...headers, "Content-Length": String(f.size) }, stream: () => openFile(f.sha256) };
      },
    ),
  }),
];
