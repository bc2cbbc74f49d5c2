// Write keys of Segment-format sources: a key of scope `ingest`, bound to one account, sent as the
// user name of HTTP Basic auth (or `writeKey` in the body), without the owner's e-mail (Segment
// clients send only the key). Missing or unknown: 401; a valid key of another scope, or one whose
// owner lost access to its account: 403.

import { KEY_PREFIX_LENGTH, keyMatches } from "../auth/keys.js";
import { recordKeyUse } from "../auth/keyUsage.js";
import { clock } from "../clock.js";
import { prisma } from "../db/index.js";
import { forbidden, unauthorized } from "../errors.js";

export interface WriteKeyIdentity {
  keyId: string;
  accountId: string;
  email: string;
}

/** The write key of a request: Basic auth's user name, else the body's `writeKey`. */
export function writeKeyOf(authorization: string | undefined, body: unknown): string | null {
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization ?? "");
  if (m) {
    const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
    const user = decoded.includes(":") ? decoded.slice(0, decoded.indexOf(":")) : decoded;
    if (user) return user;
  }
  const fromBody = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>).writeKey : undefined;
  return typeof fromBody === "string" && fromBody ? fromBody : null;
}

export async function authenticateWriteKey(key: string | null, now = clock.now()): Promise<WriteKeyIdentity> {
  if (!key) throw unauthorized("Send the write key as the user name of HTTP Basic auth (Authorization: Basic base64(<writeKey>:)) or as writeKey in the body.");
  const row = await prisma.apiKey.findUnique({
    where: { prefix: key.slice(0, KEY_PREFIX_LENGTH) },
    select: {
      id: true,
      hash: true,
      scope: true,
      accountId: true,
      expiresAt: true,
      revokedAt: true,
      user: { select: { email: true, memberships: { select: { accountId: true } } } },
    },
  });
  if (!row || !keyMatches(key, row.hash)) throw unauthorized("The write key is not valid.");
  if (row.revokedAt) throw unauthorized("The write key has been revoked.");
  if (row.expiresAt && row.expiresAt <= now) throw unauthorized("The write key has expired.");
  if (row.scope !== "ingest" || !row.accountId) {
    throw forbidden(
      `A key of scope '${row.scope}' cannot send events here: create a write key with 'key create <email> --scope ingest --account <accountId>'.`,
    );
  }
  const accountId = row.accountId;
  if (!row.user.memberships.some((m) => m.accountId === accountId)) throw forbidden(`The write key's owner has no access to account '${accountId}' any more.`);
  recordKeyUse(row.id, now);
  return { keyId: row.id, accountId, email: row.user.email };
}
