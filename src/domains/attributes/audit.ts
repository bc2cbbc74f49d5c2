// Audit classification of integration attributes: secondary attributes are details of their
// record's entry (encrypted values never appear in clear).
import { audited, childOf } from "../../audit/classification.js";

export const attributesAudit = {
  AttributeField: audited({
    type: "integrationAttributeField",
    identity: ["accountId", "name"],
    resourceId: (r) => String(r.name),
    accountId: (r) => String(r.accountId),
  }),
  AttributeRecord: audited({
    type: "integrationAttribute",
    identity: ["id", "accountId", "attributeName", "attributeValue"],
    resourceId: (r) => `${String(r.attributeName)}__svc__${String(r.attributeValue)}`,
    accountId: (r) => String(r.accountId),
  }),
  AttributeRecordValue: childOf("AttributeRecord", "recordId", (r) => [
    "additionalAttributes",
    String(r.name),
    r.type === "encrypted_string" ? "[encrypted]" : (r.text ?? r.num ?? r.bool ?? r.time ?? null),
  ]),
};
