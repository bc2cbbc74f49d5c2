// Administrative operations shared by the CLI, start-up seeding and tests: accounts, users,
// memberships, keys. Each is one transaction; keys are returned in clear exactly once.
import { generateKey, KEY_SCOPES, type KeyScope } from "./auth/keys.js";
import { clock } from "./clock.js";
import { prisma, withTransaction } from "./db/index.js";

export const ID_METHODS = ["app_user_id", "crm_user_id", "cookie"] as const;

export class AdminError extends Error {}

/** The longest TTL of a key and of an account's audit tokens: 10 years, in seconds. */
export const MAX_TTL_SECONDS = 10 * 365 * 86_400;
/** The default audit-token TTL of an account (the column's default): 30 days. */
export const DEFAULT_AUDIT_TOKEN_TTL_SECONDS = 30 * 86_400;
/** A per-account rate limit is stored in a 32-bit integer column: PostgreSQL's integer range. */
export const MAX_RATE_LIMIT_PER_MINUTE = 2_147_483_647;

const wholeIn = (v: number, min: number, max: number) => Number.isInteger(v) && v >= min && v <= max;

const ACCOUNT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export async function createAccount(id: string, opts: { name?: string; idMethod?: string } = {}) {
  if (!ACCOUNT_ID.test(id)) throw new AdminError(`account id '${id}' must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit`);
  const idMethod = opts.idMethod ?? "cookie";
  if (!(ID_METHODS as readonly string[]).includes(idMethod)) throw new AdminError(`--id-method must be one of ${ID_METHODS.join(", ")}`);
  if (await prisma.account.findUnique({ where: { id } })) throw new AdminError(`account '${id}' already exists`);
  return withTransaction((tx) => tx.account.create({ data: { id, name: opts.name ?? id, idMethod } }));
}

export async function setAccount(id: string, opts: { auditTokenTtl?: number; rateLimitPerMinute?: number | null; idMethod?: string }) {
  if (!(await prisma.account.findUnique({ where: { id } }))) throw new AdminError(`account '${id}' does not exist`);
  if (opts.auditTokenTtl !== undefined && !wholeIn(opts.auditTokenTtl, 1, MAX_TTL_SECONDS)) {
    throw new AdminError(`--audit-token-ttl must be a whole number of seconds from 1 to ${MAX_TTL_SECONDS} (10 years)`);
  }
  // null: back to the global default (RATE_LIMIT_PER_MINUTE). 0 is no "unlimited": it is refused, as
  // RATE_LIMIT_PER_MINUTE=0 is.
  if (opts.rateLimitPerMinute != null && !wholeIn(opts.rateLimitPerMinute, 1, MAX_RATE_LIMIT_PER_MINUTE)) {
    throw new AdminError(`--rate-limit must be a whole number from 1 to ${MAX_RATE_LIMIT_PER_MINUTE} (points a minute), or 'default'`);
  }
  if (opts.idMethod !== undefined && !(ID_METHODS as readonly string[]).includes(opts.idMethod))
    throw new AdminError(`--id-method must be one of ${ID_METHODS.join(", ")}`);
  return withTransaction((tx) =>
    tx.account.update({
      where: { id },
      data: {
        ...(opts.auditTokenTtl !== undefined ? { auditTokenTtlSeconds: opts.auditTokenTtl } : {}),
        ...(opts.rateLimitPerMinute !== undefined ? { rateLimitPerMinute: opts.rateLimitPerMinute } : {}),
        ...(opts.idMethod !== undefined ? { idMethod: opts.idMethod } : {}),
      },
    }),
  );
}

const EMAIL = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/;

/** Creates the user if needed and grants access to the accounts (granting again is harmless). */
export async function createUser(email: string, accountIds: string[]) {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL.test(normalized)) throw new AdminError(`'${email}' is not an e-mail address`);
  if (accountIds.length === 0) throw new AdminError("--account names at least one account");
  const accounts = await prisma.account.findMany({ where: { id: { in: accountIds } }, select: { id: true } });
  const missing = accountIds.filter((a) => !accounts.some((x) => x.id === a));
  if (missing.length) throw new AdminError(`unknown account(s): ${missing.join(", ")}`);
  return withTransaction(async (tx) => {
    const user = await tx.user.upsert({ where: { email: normalized }, create: { email: normalized }, update: {} });
    for (const accountId of accountIds) {
      await tx.membership.upsert({
        where: { userId_accountId: { userId: user.id, accountId } },
        create: { userId: user.id, accountId },
        update: {},
      });
    }
    return user;
  });
}

/**
 * A new key for the user. `auditlogs` keys expire after the shortest audit-token TTL of the user's
 * accounts (the administrator's setting, 30 days unless set) unless a shorter --ttl is given.
 */
export async function createKey(email: string, opts: { ttlSeconds?: number; scope?: string; accountId?: string; persistedOnly?: boolean } = {}) {
  const scope = (opts.scope ?? "integration") as KeyScope;
  if (!(KEY_SCOPES as readonly string[]).includes(scope)) throw new AdminError(`--scope must be one of ${KEY_SCOPES.join(", ")}`);
  // An ingest (write) key is bound to the one account it writes events to; other keys follow their user's memberships.
  if (scope === "ingest" && !opts.accountId) throw new AdminError("--scope ingest needs --account <accountId> (the account the key writes events to)");
  if (scope !== "ingest" && opts.accountId) throw new AdminError("--account is only for --scope ingest keys");
  // Persisted documents are GraphQL's: only integration keys send GraphQL.
  if (opts.persistedOnly && scope !== "integration") throw new AdminError("--persisted-only is only for --scope integration keys");
  if (opts.ttlSeconds !== undefined && !wholeIn(opts.ttlSeconds, 1, MAX_TTL_SECONDS))
    throw new AdminError(`--ttl must be a whole number of seconds from 1 to ${MAX_TTL_SECONDS} (10 years)`);
  const user = await prisma.user.findUnique({
    where: { email: email.trim().toLowerCase() },
    include: { memberships: { include: { account: { select: { auditTokenTtlSeconds: true } } } } },
  });
  if (!user) throw new AdminError(`no user '${email}': create it with 'user create ${email} --account <id>'`);
  if (opts.accountId && !user.memberships.some((m) => m.accountId === opts.accountId))
    throw new AdminError(
      `user '${user.email}' has no access to account '${opts.accountId}' (grant it with 'user create ${user.email} --account ${opts.accountId}')`,
    );
  let ttl = opts.ttlSeconds;
  if (scope === "auditlogs") {
    // The accounts' own TTLs, however long (the 30-day default is only what an account starts with).
    const ttls = user.memberships.map((m) => m.account.auditTokenTtlSeconds);
    const accountTtl = ttls.length ? Math.min(...ttls) : DEFAULT_AUDIT_TOKEN_TTL_SECONDS;
    ttl = Math.min(ttl ?? accountTtl, accountTtl);
  }
  const { key, prefix, hash } = generateKey();
  const row = await withTransaction((tx) =>
    tx.apiKey.create({
      data: {
        prefix,
        hash,
        userId: user.id,
        scope,
        accountId: opts.accountId ?? null,
        persistedOnly: opts.persistedOnly ?? false,
        expiresAt: ttl ? new Date(clock.now().getTime() + ttl * 1000) : null,
      },
    }),
  );
  return { key, prefix, scope, accountId: row.accountId, persistedOnly: row.persistedOnly, expiresAt: row.expiresAt };
}

export async function listKeys(email?: string) {
  return prisma.apiKey.findMany({
    where: email ? { user: { email: email.trim().toLowerCase() } } : {},
    select: {
      prefix: true,
      scope: true,
      accountId: true,
      persistedOnly: true,
      expiresAt: true,
      revokedAt: true,
      lastUsedAt: true,
      createdAt: true,
      user: { select: { email: true } },
    },
    orderBy: { createdAt: "asc" },
  });
}

/** What `key list` shows of a key's state: revoked (and when), expired, or active. */
export function keyStatus(k: { revokedAt: Date | null; expiresAt: Date | null }, now: Date = clock.now()): string {
  if (k.revokedAt) return `revoked ${k.revokedAt.toISOString()}`;
  if (k.expiresAt && k.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}

/**
 * Revokes the keys of these prefixes, all or none: an unknown prefix revokes nothing. A key revoked
 * before keeps its time of revocation and comes back with `alreadyRevoked`.
 */
export async function revokeKeys(prefixes: string[]): Promise<{ prefix: string; revokedAt: Date; alreadyRevoked: boolean }[]> {
  if (!prefixes.length) throw new AdminError("name at least one key prefix (see 'key list')");
  return withTransaction(async (tx) => {
    const rows = await tx.apiKey.findMany({ where: { prefix: { in: prefixes } }, select: { prefix: true, revokedAt: true } });
    const missing = prefixes.filter((p) => !rows.some((r) => r.prefix === p));
    if (missing.length) throw new AdminError(`no key with prefix ${missing.map((p) => `'${p}'`).join(", ")} (see 'key list'); nothing revoked`);
    const now = clock.now();
    const out: { prefix: string; revokedAt: Date; alreadyRevoked: boolean }[] = [];
    for (const prefix of new Set(prefixes)) {
      const row = rows.find((r) => r.prefix === prefix)!;
      if (row.revokedAt) out.push({ prefix, revokedAt: row.revokedAt, alreadyRevoked: true });
      else {
        await tx.apiKey.update({ where: { prefix }, data: { revokedAt: now } });
        out.push({ prefix, revokedAt: now, alreadyRevoked: false });
      }
    }
    return out;
  });
}

/** Revokes one key (see revokeKeys). */
export async function revokeKey(prefix: string) {
  return (await revokeKeys([prefix]))[0]!;
}

/** Refuses an account id that names no account (before a command would fail on a foreign key). */
export async function requireAccount(id: string): Promise<void> {
  if (!(await prisma.account.findUnique({ where: { id }, select: { id: true } }))) throw new AdminError(`no account '${id}'`);
}
