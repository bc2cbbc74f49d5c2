// Audit classification of tags.
import { audited } from "../../audit/classification.js";

export const tagsAudit = {
  Tag: audited({ type: "tag", identity: ["id", "accountId"], resourceId: (r) => String(r.id), accountId: (r) => String(r.accountId) }),
};
