// Every model's audit classification, from the domains that own them (pure data: importing it
// builds no schema and opens no database). Adding a domain adds its audit.ts here.
import type { AuditClassification } from "../audit/classification.js";
import { accountsAudit } from "./accounts/audit.js";
import { auditLogsAudit } from "./auditLogs/audit.js";
import { contentAudit } from "./content/audit.js";
import { endUsersAudit } from "./endUsers/audit.js";
import { eventsAudit } from "./events/audit.js";
import { tagsAudit } from "./tags/audit.js";

export const auditClassification: AuditClassification = {
  ...accountsAudit,
  ...contentAudit,
  ...tagsAudit,
  ...endUsersAudit,
  ...auditLogsAudit,
  ...eventsAudit,
};
