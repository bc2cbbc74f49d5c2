// Audit classification of the tenancy and access models.
import { audited } from "../../audit/classification.js";

export const accountsAudit = {
  Account: audited({ type: "account", identity: ["id"], resourceId: (r) => String(r.id), accountId: (r) => String(r.id) }),
  User: audited({ type: "user", identity: ["id", "email"], resourceId: (r) => String(r.email ?? r.id), accountId: () => null }),
  Membership: audited({
    type: "membership",
    identity: ["userId", "accountId"],
    resourceId: (r) => `${r.userId}:${r.accountId}`,
    accountId: (r) => String(r.accountId),
  }),
  ApiKey: audited({
    type: "apiKey",
    identity: ["id", "prefix"],
    resourceId: (r) => String(r.prefix ?? r.id),
    accountId: () => null,
    redact: ["hash"],
    // Key use is recorded in batches as lastUsedAt (src/auth/keyUsage.ts): bookkeeping, not a change.
    bookkeeping: (args) => args.data !== undefined && Object.keys(args.data).every((k) => k === "lastUsedAt"),
  }),
};
