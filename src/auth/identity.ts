// Who is calling: resolved from the two auth headers, once per request, for REST and GraphQL alike.
// 401 when the key is missing, unknown, expired, revoked, or not owned by x-service-user;
// 403 (in requireAccount) when the key's owner has no access to the account asked for.
import { clock } from "../clock.js";
import { prisma } from "../db/index.js";
import { forbidden, unauthorized } from "../errors.js";
import { recordKeyUse } from "./keyUsage.js";
import { KEY_PREFIX_LENGTH, keyMatches, type KeyScope } from "./keys.js";

export const KEY_HEADER = "x-service-integration-key";
export const USER_HEADER = "x-service-user";

export interface Identity {
  userId: string;
  email: string;
  keyId: string;
  scope: KeyScope;
  accountIds: ReadonlySet<string>;
}

export interface Credentials { key: string | null; email: string | null }

export async function authenticate({ key, email }: Credentials, now = clock.now()): Promise<Identity> {
  if (!key || !email) {
    throw unauthorized(`Send the API key in ${KEY_HEADER} and its owner's e-mail in ${USER_HEADER}.`);
  }
  const row = await prisma.apiKey.findUnique({
    where: { prefix: key.slice(0, KEY_PREFIX_LENGTH) },
    select: {
      id: true, hash: true, scope: true, expiresAt: true, revokedAt: true,
      user: { select: { id: true, email: true, memberships: { select: { accountId: true } } } },
    },
  });
  if (!row || !keyMatches(key, row.hash)) throw unauthorized("The API key is not valid.");
  if (row.revokedAt) throw unauthorized("The API key has been revoked.");
  if (row.expiresAt && row.expiresAt <= now) throw unauthorized("The API key has expired.");
  if (row.user.email.toLowerCase() !== email.trim().toLowerCase()) {
    throw unauthorized(`${USER_HEADER} does not match the API key's owner.`);
  }
  recordKeyUse(row.id, now);
  return {
    userId: row.user.id,
    email: row.user.email,
    keyId: row.id,
    scope: row.scope as KeyScope,
    accountIds: new Set(row.user.memberships.map((m) => m.accountId)),
  };
}

/** The caller's identity, checked for access to `accountId` with a key of one of `scopes`. */
export function authorize(identity: Identity, accountId: string, scopes: readonly KeyScope[] = ["integration"]): Identity {
  if (!identity.accountIds.has(accountId)) {
    throw forbidden(`The API key has no access to account '${accountId}'.`);
  }
  if (!scopes.includes(identity.scope)) {
    throw forbidden(`An API key of scope '${identity.scope}' cannot be used here (it needs scope ${scopes.map((s) => `'${s}'`).join(" or ")}).`);
  }
  return identity;
}
