// Standard Webhooks signatures (https://www.standardwebhooks.com): secrets `whsec_<base64>`, and
// `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the secret's
// decoded bytes. Receivers verify with the `standardwebhooks` or `svix` libraries unmodified.
import { createHmac, randomBytes } from "node:crypto";

export const newSecret = (): string => `whsec_${randomBytes(24).toString("base64")}`;

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/** The three headers of a delivery attempt. */
export function signedHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": sign(secret, id, timestamp, body) };
}
