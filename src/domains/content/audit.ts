// Audit classification of content: a content's tag links are details of its own entry.
import { audited, childOf } from "../../audit/classification.js";

export const contentAudit = {
  Content: audited({ type: "content", identity: ["id", "accountId"], resourceId: (r) => String(r.id), accountId: (r) => String(r.accountId) }),
  ContentTag: childOf("Content", "contentId", (r) => ["tagIds", String(r.tagId), true], { list: "tagIds" }),
};
