// The auditLogs domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { auditLogsAudit } from "./audit.js";
import { auditLogRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const auditLogs = defineDomain({
  name: "auditLogs",
  description: "The audit log: one entry per change, read newest first.",
  graphql,
  routes: auditLogRoutes,
  audit: auditLogsAudit,
  fastInsert: ["AuditLog"],
  openApiTags: {
    auditlogs: "The audit log: one entry per change, newest first.",
  },
});
