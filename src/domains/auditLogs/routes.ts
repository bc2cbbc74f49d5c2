// The audit log over REST: B25 (POST, so personal data is not cached and long filters fit).

import { AppError } from "../../errors.js";
import { B, type RestRoute, route } from "../../rest/contract.js";
import { pageQuery } from "../../rest/docs.js";
import { EXAMPLE_TIME, exampleId } from "../../rest/examples.js";
import { graphql, type Selected } from "../../rest/operation.js";
import { cursorParam, limitParam, pathParam } from "../../rest/params.js";
import { reply, wireRecord } from "../../rest/responses.js";
import { LIST_LIMITS } from "../../schema/pagination.js";

const AUDIT_LOG_FIELDS = `id timestamp accountId userId action resourceType resourceId sourceIp details`;
const AUDIT_LOGS = graphql(`query AuditLogs($accountId: String!, $first: Int, $after: String, $filter: AuditLogFilter) {
      auditLogs(accountId: $accountId, first: $first, after: $after, filter: $filter) {
        nodes { ${AUDIT_LOG_FIELDS} } pageInfo { hasNextPage endCursor } } }`);

const auditLogRecord = wireRecord(
  {
    type: "object",
    required: ["id", "timestamp", "accountId", "userId", "action", "resourceType", "resourceId", "sourceIp", "details"],
    properties: {
      id: { type: "string" },
      timestamp: { type: "integer", description: "Epoch milliseconds." },
      accountId: { type: ["string", "null"] },
      userId: { type: ["string", "null"], description: "The acting user's e-mail, `cli:<user>` or `system`." },
      action: { type: "string", enum: ["create", "update", "delete"] },
      resourceType: { type: "string" },
      resourceId: { type: "string" },
      sourceIp: { type: ["string", "null"] },
      details: { type: "object", description: "What changed; secrets and encrypted values never appear." },
    },
  },
  (e: Selected<"AuditLogEntry", typeof AUDIT_LOG_FIELDS>) => e,
  {
    id: exampleId("a"),
    timestamp: EXAMPLE_TIME,
    accountId: "demo",
    userId: "admin@example.com",
    action: "create",
    resourceType: "tag",
    resourceId: exampleId("t"),
    sourceIp: "203.0.113.7",
    details: { name: "onboarding", description: "For new users", type: "USER" },
  },
);

export const auditLogRoutes: RestRoute[] = [
  route(AUDIT_LOGS, {
    name: "auditLogs",
    method: "post",
    path: `${B}/auditlogs`,
    summary: "B25: audit-log entries of the account (newest first; 90-day default window)",
    jsonBody: true,
    optionalBody: true,
    scopes: ["integration", "auditlogs"],
    query: pageQuery(LIST_LIMITS.auditLogs),
    body: {
      schema: {
        type: "object",
        additionalProperties: false,
        properties: {
          startDate: { type: "string", description: "`YYYY-MM-DD HH:MM` or `YYYY-MM-DD`, UTC." },
          endDate: { type: "string", description: "`YYYY-MM-DD HH:MM` or `YYYY-MM-DD`, UTC." },
          userId: { type: "string", description: "Only entries of this user." },
        },
      },
      example: { startDate: "2024-06-01", endDate: "2024-06-30" },
    },
    variables: (i) => ({
      accountId: pathParam(i, "accountId"),
      first: limitParam(i.query, LIST_LIMITS.auditLogs),
      after: cursorParam(i.query),
      filter: auditFilterBody(i.body),
    }),
    reply: reply.page((d) => d.auditLogs, auditLogRecord, { headers: { "Cache-Control": "no-store" } }),
  }),
];

function auditFilterBody(body: unknown) {
  if (body === undefined || body === null || (typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0)) return {};
  if (typeof body !== "object" || Array.isArray(body)) throw new AppError(400, "body must be a JSON object {startDate, endDate, userId}");
  const { startDate, endDate, userId, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) throw new AppError(400, `unknown body field(s): ${unknown.join(", ")} (allowed: startDate, endDate, userId)`);
  return { startDate: optionalString("startDate", startDate), endDate: optionalString("endDate", endDate), userId: optionalString("userId", userId) };
}

function optionalString(k: string, v: unknown): string | null | undefined {
  if (v !== undefined && v !== null && typeof v !== "string") throw new AppError(400, `${k} must be a string`, [{ path: k, message: "must be a string" }]);
  return v;
}
