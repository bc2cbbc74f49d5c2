// Audit classification of uploaded files: each upload is a change of the account (its metadata;
// the bytes are in blob storage).
import { audited } from "../../audit/classification.js";

export const filesAudit = {
  StoredFile: audited({ type: "file", identity: ["id", "accountId"], resourceId: (r) => String(r.id), accountId: (r) => String(r.accountId) }),
};
