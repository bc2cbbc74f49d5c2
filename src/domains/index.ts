// The domains of the service. Each folder holds a domain's GraphQL types and resolvers (schema.ts),
// its REST rows (routes.ts) and their record mappers (records.ts). Adding a domain is a folder, a
// line here, and its migration.
import "./accounts/schema.js";
import { attributeRoutes } from "./attributes/routes.js";
import "./attributes/schema.js";
import { auditLogRoutes } from "./auditLogs/routes.js";
import "./auditLogs/schema.js";
import { contentRoutes } from "./content/routes.js";
import "./content/schema.js";
import { copyJobRoutes } from "./copyJobs/routes.js";
import "./copyJobs/schema.js";
import { endUserRoutes } from "./endUsers/routes.js";
import "./endUsers/schema.js";
import { fileRoutes } from "./files/routes.js";
import "./files/schema.js";
import type { RestRoute } from "../rest/contract.js";
import { segmentRoutes } from "./segments/routes.js";
import "./segments/schema.js";
import { eventRoutes } from "./events/routes.js";
import "./events/schema.js";
import { reportRoutes } from "./reports/routes.js";
import "./reports/schema.js";
import { tagRoutes } from "./tags/routes.js";
import "./tags/schema.js";
import { webhookRoutes } from "./webhooks/routes.js";
import { exportRoutes } from "./eventExport/routes.js";
import "./eventExport/schema.js";
import "./webhooks/schema.js";

/** Every REST row, in the order the OpenAPI document lists them. */
export const domainRoutes: readonly RestRoute[] = [
  ...contentRoutes,
  ...tagRoutes,
  ...endUserRoutes,
  ...segmentRoutes,
  ...attributeRoutes,
  ...fileRoutes,
  ...copyJobRoutes,
  ...eventRoutes,
  ...reportRoutes,
  ...auditLogRoutes,
  ...exportRoutes,
  ...webhookRoutes,
];
