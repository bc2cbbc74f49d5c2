// Copy jobs over REST: B6 (queue a copy, 202) and the job's status.
import { AppError } from "../../errors.js";
import { B, type RestRoute, route, type Unchecked, unchecked } from "../../rest/contract.js";
import { exampleId } from "../../rest/examples.js";
import { graphql } from "../../rest/operation.js";
import { pathParam } from "../../rest/params.js";
import { reply } from "../../rest/responses.js";
import { ACCEPTED_FIELDS, acceptedRecord, EXAMPLE_JOB_ID, JOB_FIELDS, jobRecord } from "./records.js";

const COPY = graphql(
  `mutation CopyContents($accountId: String!, $input: CopyRequest!, $idempotencyKey: String) { copyContents(accountId: $accountId, input: $input, idempotencyKey: $idempotencyKey) { ${ACCEPTED_FIELDS} } }`,
);

/** B6's request header that makes a retry safe (the IETF httpapi Idempotency-Key header). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
const JOB = graphql(`query CopyJob($accountId: String!, $id: String!) { account(id: $accountId) { copyJob(id: $id) { ${JOB_FIELDS} } } }`);

export const copyJobRoutes: RestRoute[] = [
  route(COPY, {
    name: "copyContent",
    method: "post",
    path: `${B}/content/copy`,
    summary: "B6: copy contents, folders and widgets to another account (asynchronous; e-mails the caller on completion)",
    jsonBody: true,
    body: {
      input: "CopyRequest",
      required: ["destinationAccountId", "destinationUserId", "contentIds"],
      properties: { contentIds: { minItems: 1, maxItems: 10_000 } },
      example: { destinationAccountId: "acme-eu", destinationUserId: "ops@acme.com", contentIds: [exampleId("c"), exampleId("c", 1)], copyUserTags: true },
    },
    headers: {
      [IDEMPOTENCY_HEADER]: {
        description:
          "Optional, a key of yours (1 to 255 visible ASCII characters, e.g. a UUID): sent again with the same request (a retry after a lost answer), it queues nothing and answers the job the first request queued; sent with another request it is a 422.",
        example: "0b1f6c4e-5d1a-4c9e-8f2b-3a7d9e6c1b20",
      },
    },
    variables: (i) => ({
      accountId: pathParam(i, "accountId"),
      input: copyInput(i.body),
      idempotencyKey: i.header?.(IDEMPOTENCY_HEADER.toLowerCase()),
    }),
    names: { idempotencyKey: IDEMPOTENCY_HEADER },
    reply: reply.custom({ 202: { json: acceptedRecord.schema }, 422: "problem" }, (d) => ({
      status: 202,
      body: acceptedRecord.map(d.copyContents),
    })),
  }),
  route(JOB, {
    name: "getJob",
    method: "get",
    path: `${B}/jobs/:jobId`,
    summary: "Status of a copy job: queued, running, completed or failed; counts, per-item outcomes and errors, times",
    params: { jobId: { description: "The `jobId` B6 answered with.", example: EXAMPLE_JOB_ID } },
    variables: (i) => ({ accountId: pathParam(i, "accountId"), id: pathParam(i, "jobId") }),
    reply: reply.one(
      (d) => d.account.copyJob,
      jobRecord,
      (i) => `No copy job '${i.params.jobId}' in this account.`,
    ),
  }),
];

const COPY_FIELDS = ["destinationAccountId", "destinationUserId", "contentIds", "copyUserTags"];

/** The body as the CopyRequest input; GraphQL checks the types of what is there. A field B6 does not take is a 400, as on every route. */
function copyInput(body: unknown): Unchecked {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return unchecked(body);
  const b = body as Record<string, unknown>;
  const extra = Object.keys(b).filter((k) => !COPY_FIELDS.includes(k));
  if (extra.length)
    throw new AppError(400, `body: unknown field(s) ${extra.map((k) => k.slice(0, 64)).join(", ")} (B6 takes ${COPY_FIELDS.join(", ")})`, [
      { path: extra[0]!.slice(0, 64), message: "unknown field" },
    ]);
  // GraphQL would coerce a lone string into a one-item list; the spec's contentIds is an array.
  if (b.contentIds != null && !Array.isArray(b.contentIds))
    throw new AppError(400, "body.contentIds must be an array of strings", [{ path: "contentIds", message: "must be an array of strings" }]);
  return unchecked({
    destinationAccountId: b.destinationAccountId,
    destinationUserId: b.destinationUserId,
    contentIds: b.contentIds,
    ...(b.copyUserTags !== undefined ? { copyUserTags: b.copyUserTags } : {}),
  });
}
