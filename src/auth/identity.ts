// Who is calling: resolved from the two auth headers, once per request, for REST and GraphQL alike.
// 401 when the key is missing, unknown, expired, revoked, or not owned by x-service-user;
// 403 (in requireAccount) when the key's owner has no access to the account asked for.

import { onCommit } from "../audit/recorder.js";
import { clock } from "../clock.js";
import { prisma } from "../db/index.js";
import { forbidden, unauthorized } from "../errors.js";
import { tracing } from "../observability/tracing.js";
import { type AuthChangeWatcher, watchAuthChanges } from "./changes.js";
import { hashKey, KEY_PREFIX_LENGTH, type KeyScope, keyMatches } from "./keys.js";
import { recordKeyUse } from "./keyUsage.js";

export const KEY_HEADER = "x-service-integration-key";
export const USER_HEADER = "x-service-user";

/** What the auth lookup reads of each account the caller may access (the GraphQL `account` needs no query of its own). */
export interface AccountRow {
  id: string;
  name: string;
  idMethod: string;
  auditTokenTtlSeconds: number;
  rateLimitPerMinute: number | null;
  createdAt: Date;
}

export interface Identity {
  userId: string;
  email: string;
  keyId: string;
  scope: KeyScope;
  /** The key runs persisted documents only (`documentId`): any GraphQL text it sends is refused. */
  persistedOnly: boolean;
  accountIds: ReadonlySet<string>;
  accounts: ReadonlyMap<string, AccountRow>;
}

export interface Credentials {
  key: string | null;
  email: string | null;
}

// ---- identity cache ----------------------------------------------------------------------------
// A resolved identity (key → user, scope, expiry, memberships, the accounts' settings) is kept for
// IDENTITY_CACHE_MS (default 5 s), keyed by the key's hash and the e-mail sent with it. Any change to
// keys, users, memberships or account settings, by this process, another instance or the CLI, drops
// the whole cache within milliseconds (PostgreSQL LISTEN/NOTIFY) or 250 ms (SQLite's change counter):
// see src/auth/changes.ts. The TTL only bounds the damage of a lost notification; while the watcher
// cannot see changes the cache is not used. The key's own expiry is checked on every request.
// 0 turns the cache off.

interface Cached {
  identity: Identity;
  keyExpiresAt: Date | null;
  until: number;
}
const cache = new Map<string, Cached>();
const CACHE_MAX = 10_000;
let cacheMs = 5_000;
let watcher: AuthChangeWatcher | undefined;
let holders = 0;
/** Bumped by every clear: an identity looked up before a change is not cached after it. */
let generation = 0;
/** Caches that live by the same signal (a saved endpoint's definition: src/domains/endpoints/run.ts). */
const clearListeners: (() => void)[] = [];
function clearCache() {
  generation++;
  cache.clear();
  for (const listener of clearListeners) listener();
}

/**
 * For another per-process cache of what the auth-change signal covers: `clear` runs whenever the
 * identity cache is dropped, and usable() says whether such a cache may be read now (the identity
 * cache is on and its watcher can see changes) and for how many milliseconds an entry may live.
 */
export function followAuthChanges(clear: () => void): { usable(): number } {
  clearListeners.push(clear);
  return { usable: () => (cacheMs > 0 && watcher !== undefined && watcher.check() ? cacheMs : 0) };
}
const AUTH_MODELS = ["ApiKey", "User", "Membership", "Account"];
// This process's own changes apply to its very next request, without waiting for the signal.
onCommit((models) => {
  if (AUTH_MODELS.some((m) => models.has(m))) clearCache();
});

/**
 * Sets how long resolved identities are reused (createApp passes IDENTITY_CACHE_MS) and starts
 * watching for auth changes in the database. Returns the release function (the app's close): the
 * watcher stops when the last app of the process is closed.
 */
export function configureIdentityCache(ms: number, databaseUrl: string): () => Promise<void> {
  cacheMs = ms;
  clearCache();
  if (ms > 0 && !watcher) watcher = watchAuthChanges(databaseUrl, clearCache);
  holders++;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    if (--holders > 0 || !watcher) return;
    const w = watcher;
    watcher = undefined;
    await w.close();
  };
}

export async function authenticate(credentials: Credentials, now = clock.now()): Promise<Identity> {
  const { key, email } = credentials;
  if (!key || !email) {
    throw unauthorized(`Send the API key in ${KEY_HEADER} and its owner's e-mail in ${USER_HEADER}.`);
  }
  const cacheKey = `${hashKey(key)}\u0000${email.trim().toLowerCase()}`;
  const useCache = cacheMs > 0 && watcher !== undefined && watcher.check();
  const hit = useCache ? cache.get(cacheKey) : undefined;
  if (hit && hit.until > now.getTime()) {
    if (hit.keyExpiresAt && hit.keyExpiresAt <= now) throw unauthorized("The API key has expired.");
    recordKeyUse(hit.identity.keyId, now);
    return hit.identity;
  }
  const before = generation;
  // With tracing on, the lookup (not a cache hit) is a span of its own.
  const { identity, keyExpiresAt } = await (tracing ? tracing.inSpan("identity lookup", {}, () => lookUp(key, email, now)) : lookUp(key, email, now));
  if (useCache && generation === before) {
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(cacheKey, { identity, keyExpiresAt, until: now.getTime() + cacheMs });
  }
  return identity;
}

async function lookUp(key: string, email: string, now: Date): Promise<{ identity: Identity; keyExpiresAt: Date | null }> {
  const row = await prisma.apiKey.findUnique({
    where: { prefix: key.slice(0, KEY_PREFIX_LENGTH) },
    select: {
      id: true,
      hash: true,
      scope: true,
      persistedOnly: true,
      expiresAt: true,
      revokedAt: true,
      user: {
        select: {
          id: true,
          email: true,
          memberships: {
            select: { account: { select: { id: true, name: true, idMethod: true, auditTokenTtlSeconds: true, rateLimitPerMinute: true, createdAt: true } } },
          },
        },
      },
    },
  });
  if (!row || !keyMatches(key, row.hash)) throw unauthorized("The API key is not valid.");
  if (row.revokedAt) throw unauthorized("The API key has been revoked.");
  if (row.expiresAt && row.expiresAt <= now) throw unauthorized("The API key has expired.");
  if (row.user.email.toLowerCase() !== email.trim().toLowerCase()) {
    throw unauthorized(`${USER_HEADER} does not match the API key's owner.`);
  }
  recordKeyUse(row.id, now);
  const accounts = new Map(row.user.memberships.map((m) => [m.account.id, m.account]));
  return {
    keyExpiresAt: row.expiresAt,
    identity: {
      userId: row.user.id,
      email: row.user.email,
      keyId: row.id,
      scope: row.scope as KeyScope,
      persistedOnly: row.persistedOnly,
      accountIds: new Set(accounts.keys()),
      accounts,
    },
  };
}

/** The caller's identity, checked for access to `accountId` with a key of one of `scopes`. */
export function authorize(identity: Identity, accountId: string, scopes: readonly KeyScope[] = ["integration"]): Identity {
  if (!identity.accountIds.has(accountId)) {
    throw forbidden(`The API key has no access to account '${accountId}'.`);
  }
  return authorizeScope(identity, scopes);
}

/** The caller's identity, checked for a key of one of `scopes` (403 otherwise). */
export function authorizeScope(identity: Identity, scopes: readonly KeyScope[] = ["integration"]): Identity {
  if (!scopes.includes(identity.scope)) {
    throw forbidden(`An API key of scope '${identity.scope}' cannot be used here (it needs scope ${scopes.map((s) => `'${s}'`).join(" or ")}).`);
  }
  return identity;
}
