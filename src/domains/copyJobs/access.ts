// Whether a copy job may still run. B6 checks that the caller has access to both accounts when the
// copy is asked for; the job runs later (queued behind others, retried, resumed after a restart), and
// whatever changed in between must count: a job must not copy out of an account, or into one, with a
// key that has been revoked or a membership that has been removed since. The worker asks before
// the first item of each run and again every ACCESS_CHECK_ITEMS items.
import { clock } from "../../clock.js";
import { prisma } from "../../db/index.js";
import type { CopyJob } from "../../generated/sqlite/client.js";

/** A running job re-checks access after this many items (one small query each time). */
export const ACCESS_CHECK_ITEMS = 100;

/** Why the job's user may no longer copy (a sentence for its status and e-mail), or null when they may. */
export async function accessLost(
  job: Pick<CopyJob, "accountId" | "destinationAccountId" | "destinationUserId" | "requestedBy" | "requestedKeyId">,
): Promise<string | null> {
  const accounts = [job.accountId, job.destinationAccountId];
  const userSelect = { id: true, email: true, memberships: { where: { accountId: { in: accounts } }, select: { accountId: true } } } as const;
  let user: { id: string; email: string; memberships: { accountId: string }[] } | null;
  if (job.requestedKeyId) {
    const key = await prisma.apiKey.findUnique({
      where: { id: job.requestedKeyId },
      select: { revokedAt: true, expiresAt: true, user: { select: userSelect } },
    });
    if (!key) return `access lost: the API key ${job.requestedBy} asked for the copy with no longer exists`;
    if (key.revokedAt) return `access lost: the API key ${job.requestedBy} asked for the copy with has been revoked`;
    if (key.expiresAt && key.expiresAt <= clock.now()) return `access lost: the API key ${job.requestedBy} asked for the copy with has expired`;
    user = key.user;
  } else {
    // (A job queued before jobs recorded their key: its user's memberships are all there is to check.)
    user = await prisma.user.findUnique({ where: { email: job.requestedBy }, select: userSelect });
    if (!user) return `access lost: the user ${job.requestedBy} no longer exists`;
  }
  const member = new Set(user.memberships.map((m) => m.accountId));
  for (const [accountId, role] of [
    [job.accountId, "source"],
    [job.destinationAccountId, "destination"],
  ] as const) {
    if (!member.has(accountId)) return `access lost: ${job.requestedBy} no longer has access to the ${role} account '${accountId}'`;
  }
  // The copies' owner must still be a user of the destination account, as B6 required.
  const owner = await prisma.membership.findUnique({ where: { userId_accountId: { userId: job.destinationUserId, accountId: job.destinationAccountId } } });
  if (!owner) return `access lost: the destination user '${job.destinationUserId}' is no longer a user of account '${job.destinationAccountId}'`;
  return null;
}
