// Wire shapes of copy jobs: B6's acceptance and the status record of GET /jobs/{jobId}.

import { EXAMPLE_TIME, exampleId } from "../../rest/examples.js";
import type { Selected } from "../../rest/operation.js";
import { wireRecord } from "../../rest/responses.js";
import { JOB_STATUSES } from "./schema.js";

export const JOB_FIELDS = `id status sourceAccountId destinationAccountId destinationUserId copyUserTags requestedBy total copied failed pending attempts error
  items { sourceId status targetId created attempts error } createdAt startedAt finishedAt notifiedAt`;

export const ACCEPTED_FIELDS = `jobId message`;

/** Jobs are identified by a UUID (newJobId). */
export const EXAMPLE_JOB_ID = "5b1f8c9e-2f57-4c8e-9a43-8d1d3c2b7a10";

export const acceptedRecord = wireRecord(
  {
    type: "object",
    required: ["jobId", "message"],
    properties: {
      jobId: { type: "string", description: "Identifies the job: GET /v1/accounts/{accountId}/jobs/{jobId}." },
      message: { type: "string" },
    },
  },
  (a: Selected<"CopyAccepted", typeof ACCEPTED_FIELDS>) => a,
  {
    jobId: EXAMPLE_JOB_ID,
    message: `Copy of 2 item(s) to account 'acme-eu' queued; ops@acme.com is e-mailed when it completes. Status: GET /v1/accounts/demo/jobs/${EXAMPLE_JOB_ID}`,
  },
);

const time = (description: string) => ({ type: ["integer", "null"], description: `${description} (epoch ms); null until then.` });

export const jobRecord = wireRecord(
  {
    type: "object",
    required: ["jobId", "status", "sourceAccountId", "destinationAccountId", "destinationUserId", "copyUserTags", "counts", "errors", "items", "creationTime"],
    properties: {
      jobId: { type: "string" },
      status: {
        type: "string",
        enum: [...JOB_STATUSES],
        description: "completed: every item was tried (see counts.failed); failed: none could be copied, or the job was given up.",
      },
      sourceAccountId: { type: "string" },
      destinationAccountId: { type: "string" },
      destinationUserId: { type: "string", description: "User id of the copies' owner." },
      copyUserTags: { type: "boolean" },
      requestedBy: { type: "string", description: "E-mail of the user who asked; notified on completion." },
      counts: {
        type: "object",
        required: ["total", "copied", "failed", "pending"],
        properties: { total: { type: "integer" }, copied: { type: "integer" }, failed: { type: "integer" }, pending: { type: "integer" } },
      },
      attempts: { type: "integer", description: "How many times a worker took the job." },
      error: { type: ["string", "null"], description: "Why the whole job failed, if it did." },
      errors: {
        type: "array",
        description: "The items that failed, with why.",
        items: { type: "object", required: ["sourceId", "message"], properties: { sourceId: { type: "string" }, message: { type: "string" } } },
      },
      items: {
        type: "array",
        description: "Every requested id in request order, with its outcome.",
        items: {
          type: "object",
          required: ["sourceId", "status", "targetId"],
          properties: {
            sourceId: { type: "string" },
            status: { type: "string", enum: ["pending", "copied", "failed"] },
            targetId: { type: ["string", "null"], description: "The copy's id in the destination account." },
            created: { type: "integer", description: "Contents created (a folder counts its tree)." },
          },
        },
      },
      creationTime: { type: "integer", description: "Epoch ms." },
      startTime: time("When a worker first took it"),
      finishTime: time("When it completed or failed"),
      notificationTime: time("When the completion e-mail went out"),
    },
  },
  (j: Selected<"CopyJob", typeof JOB_FIELDS>) => ({
    jobId: j.id,
    status: j.status,
    sourceAccountId: j.sourceAccountId,
    destinationAccountId: j.destinationAccountId,
    destinationUserId: j.destinationUserId,
    copyUserTags: j.copyUserTags,
    requestedBy: j.requestedBy,
    counts: { total: j.total, copied: j.copied, failed: j.failed, pending: j.pending },
    attempts: j.attempts,
    error: j.error,
    errors: j.items.filter((i) => i.status === "failed").map((i) => ({ sourceId: i.sourceId, message: i.error ?? "failed" })),
    items: j.items.map((i) => ({ sourceId: i.sourceId, status: i.status, targetId: i.targetId, created: i.created })),
    creationTime: j.createdAt,
    startTime: j.startedAt,
    finishTime: j.finishedAt,
    notificationTime: j.notifiedAt,
  }),
  {
    jobId: EXAMPLE_JOB_ID,
    status: "completed",
    sourceAccountId: "demo",
    destinationAccountId: "acme-eu",
    destinationUserId: "ops@acme.com",
    copyUserTags: true,
    requestedBy: "admin@example.com",
    counts: { total: 2, copied: 1, failed: 1, pending: 0 },
    attempts: 1,
    error: null,
    errors: [{ sourceId: exampleId("c", 1), message: `content '${exampleId("c", 1)}' no longer exists in account 'demo'` }],
    items: [
      { sourceId: exampleId("c"), status: "copied", targetId: exampleId("c", 7), created: 1 },
      { sourceId: exampleId("c", 1), status: "failed", targetId: null, created: 0 },
    ],
    creationTime: EXAMPLE_TIME,
    startTime: EXAMPLE_TIME + 400,
    finishTime: EXAMPLE_TIME + 1_900,
    notificationTime: EXAMPLE_TIME + 2_300,
  },
);
