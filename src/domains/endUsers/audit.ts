// Audit classification of end users and their schema: values and actions are details of the end
// user's entry (encrypted values never appear in clear).
import { audited, childOf } from "../../audit/classification.js";

export const endUsersAudit = {
  EndUser: audited({
    type: "endUser",
    identity: ["id", "accountId", "externalId"],
    resourceId: (r) => String(r.externalId),
    accountId: (r) => String(r.accountId),
  }),
  EndUserValue: childOf("EndUser", "endUserId", (r) => [
    "custom",
    String(r.field),
    r.type === "encrypted_string" ? "[encrypted]" : (r.text ?? r.num ?? r.bool ?? r.time ?? null),
  ]),
  EndUserAction: childOf("EndUser", "endUserId", (r) => ["userActions", String(r.actionId), { count: r.count, value: r.value }]),
  EndUserField: audited({ type: "endUserField", identity: ["accountId", "name"], resourceId: (r) => String(r.name), accountId: (r) => String(r.accountId) }),
};
