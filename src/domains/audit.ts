// Every model's audit classification, from the domains that own them (pure data: importing it
// builds no schema and opens no database). Adding a domain adds its audit.ts here.
import type { AuditClassification } from "../audit/classification.js";
import { accountsAudit } from "./accounts/audit.js";
import { attributesAudit } from "./attributes/audit.js";
import { auditLogsAudit } from "./auditLogs/audit.js";
import { contentAudit } from "./content/audit.js";
import { copyJobsAudit } from "./copyJobs/audit.js";
import { endUsersAudit } from "./endUsers/audit.js";
import { segmentsAudit } from "./segments/audit.js";
import { filesAudit } from "./files/audit.js";
import { eventsAudit } from "./events/audit.js";
import { tagsAudit } from "./tags/audit.js";
import { webhooksAudit } from "./webhooks/audit.js";
import { ingestAudit } from "../ingest/audit.js";

export const auditClassification: AuditClassification = {
  ...accountsAudit,
  ...contentAudit,
  ...tagsAudit,
  ...endUsersAudit,
  ...attributesAudit,
  ...segmentsAudit,
  ...filesAudit,
  ...copyJobsAudit,
  ...auditLogsAudit,
  ...eventsAudit,
  ...ingestAudit,
  ...webhooksAudit,
};
