// The audit log itself: appended to in the transaction of each change, never updated or deleted.
import { auditLog, type AuditClassification } from "../../audit/classification.js";

export const auditLogsAudit = { AuditLog: auditLog } satisfies AuditClassification;
