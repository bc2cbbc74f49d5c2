// Audit classification of persisted documents: what a client team registered is account
// configuration (it decides what a persisted-only key may run), so each stored document is audited.
import { audited } from "../../audit/classification.js";

export const persistedDocumentsAudit = {
  PersistedDocument: audited({
    type: "persistedDocument",
    identity: ["accountId", "hash"],
    resourceId: (r) => `sha256:${String(r.hash)}`,
    accountId: (r) => String(r.accountId),
  }),
};
