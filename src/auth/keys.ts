// API keys: high-entropy random strings shown once. Only a SHA-256 hash is stored (a slow KDF adds
// nothing for 256-bit random secrets); the first 12 characters are kept in clear to find the row.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export const KEY_PREFIX_LENGTH = 12;
export const KEY_SCOPES = ["integration", "auditlogs", "ingest"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

export function generateKey(): { key: string; prefix: string; hash: string } {
  const key = `ggk_${randomBytes(32).toString("base64url")}`;
  return { key, prefix: key.slice(0, KEY_PREFIX_LENGTH), hash: hashKey(key) };
}

export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export function keyMatches(key: string, storedHash: string): boolean {
  const a = Buffer.from(hashKey(key), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
