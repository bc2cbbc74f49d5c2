// Encryption at rest of `encrypted_string` custom values: AES-256-GCM, a fresh IV per value.
// The key comes from ENCRYPTION_KEY (32 bytes, base64 or hex). PostgreSQL deployments must set it
// (several instances must share it); the embedded SQLite default generates one into data/.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isPostgresUrl } from "./config.js";
import { sqliteFile } from "./db/migrate.js";
import { poolRandomBytes } from "./ids.js";

let key: Buffer | undefined;

function parseKey(raw: string): Buffer {
  const trimmed = raw.trim();
  const buf = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (buf.length !== 32) throw new Error("ENCRYPTION_KEY must be 32 bytes, given as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)");
  return buf;
}

/** Loads (or, for embedded SQLite, creates) the key; throws an error naming what to set. */
export function initEncryption(env: { DATABASE_URL: string; ENCRYPTION_KEY?: string | undefined }): void {
  if (env.ENCRYPTION_KEY) {
    key = parseKey(env.ENCRYPTION_KEY);
    return;
  }
  if (isPostgresUrl(env.DATABASE_URL)) {
    throw new Error(
      "ENCRYPTION_KEY is not set. On PostgreSQL every instance needs the same 32-byte key for encrypted_string fields: set ENCRYPTION_KEY (e.g. `openssl rand -base64 32`).",
    );
  }
  const file = join(dirname(sqliteFile(env.DATABASE_URL)), "encryption.key");
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err; // another process made it first
    }
  }
  key = parseKey(readFileSync(file, "utf8"));
}

function currentKey(): Buffer {
  if (!key) initEncryption({ DATABASE_URL: process.env.DATABASE_URL ?? "file:./data/guidegate.db", ENCRYPTION_KEY: process.env.ENCRYPTION_KEY });
  return key!;
}

export function encrypt(plain: string): string {
  const iv = poolRandomBytes(12); // unique per value, as GCM needs: pool bytes are never handed out twice
  const cipher = createCipheriv("aes-256-gcm", currentKey(), iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `v1:${iv.toString("base64")}:${cipher.getAuthTag().toString("base64")}:${body.toString("base64")}`;
}

export function decrypt(blob: string): string {
  const [version, iv, tag, body] = blob.split(":");
  if (version !== "v1" || !iv || !tag || body === undefined) throw new Error("not an encrypted value");
  const decipher = createDecipheriv("aes-256-gcm", currentKey(), Buffer.from(iv, "base64"));
  decipher.setAuthTag(Buffer.from(tag, "base64"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8");
}
