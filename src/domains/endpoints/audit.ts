// Audit classification of saved endpoints: account configuration, every save and delete audited.
import { audited } from "../../audit/classification.js";

export const endpointsAudit = {
  SavedEndpoint: audited({
    type: "endpoint",
    identity: ["id", "accountId", "name"],
    resourceId: (r) => String(r.name),
    accountId: (r) => String(r.accountId),
  }),
};
