// Audit classification of copy jobs. Asking for a copy is a change of the source account (one
// entry when the job is created); the worker's own updates of the job (its claim, progress
// counts, status) are bookkeeping. The copies themselves are audited as content, in the
// destination account, in each item's transaction.
import { audited, exempt } from "../../audit/classification.js";

export const copyJobsAudit = {
  CopyJob: audited({
    type: "copyJob",
    identity: ["id", "accountId"],
    resourceId: (r) => String(r.id),
    accountId: (r) => String(r.accountId),
    // Only creation carries the id; every later write is the worker's progress.
    bookkeeping: (args) => args.data !== undefined && !("id" in args.data),
  }),
  CopyJobItem: exempt("per-item outcome of a copy job (the copies are audited as content, the job itself at creation)"),
};
