// The audit log itself: appended to in the transaction of each change, never updated or deleted.
import { auditLog } from "../../audit/classification.js";

export const auditLogsAudit = { AuditLog: auditLog };
