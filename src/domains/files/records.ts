// Wire shape of file records (B8's answer, B9's list): the GraphQL selection, sent as it is.

import { EXAMPLE_TIME, exampleId } from "../../rest/examples.js";
import type { Selected } from "../../rest/operation.js";
import { wireRecord } from "../../rest/responses.js";

export const FILE_FIELDS = `id filename flowId version timestamp contentType size sha256 uploadTime url`;

export const fileRecord = wireRecord(
  {
    type: "object",
    required: ["id", "filename", "flowId", "version", "timestamp", "contentType", "size", "sha256", "uploadTime", "url"],
    properties: {
      id: { type: "string" },
      filename: { type: "string", description: "The sanitised file name." },
      flowId: { type: "string" },
      version: { type: "integer" },
      timestamp: { type: "integer", description: "The `timestamp` given at upload (epoch ms)." },
      contentType: { type: "string", example: "application/pdf" },
      size: { type: "integer", minimum: 1, description: "Bytes." },
      sha256: {
        type: "string",
        pattern: "^[0-9a-f]{64}$",
        description: "Hex SHA-256 of the bytes; the download's ETag.",
        example: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      },
      uploadTime: { type: "integer", description: "Epoch milliseconds." },
      url: { type: "string", description: "URL of the download (GET, same credentials): absolute when the server has a PUBLIC_URL, else a path." },
    },
  },
  (f: Selected<"File", typeof FILE_FIELDS>) => f,
  {
    id: exampleId("f"),
    // The upload's example path: .../pdf/flow-1/3/1718000000000/guide.pdf
    filename: "guide.pdf",
    flowId: "flow-1",
    version: 3,
    timestamp: EXAMPLE_TIME,
    contentType: "application/pdf",
    size: 48_213,
    sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    uploadTime: EXAMPLE_TIME + 2_000,
    // Without PUBLIC_URL the download is a path (absolute under PUBLIC_URL when it is set).
    url: `/v1/accounts/demo/files/${exampleId("f")}`,
  },
);
