// Key use updates ApiKey.lastUsedAt, but not with a write per request: uses are collected in
// memory and written in one batch every few seconds (and at shutdown).
import { prisma } from "../db/index.js";
import { logger } from "../logger.js";

const pending = new Map<string, Date>();
const FLUSH_MS = 10_000;
let timer: NodeJS.Timeout | undefined;

export function recordKeyUse(keyId: string, at = new Date()): void {
  pending.set(keyId, at);
  timer ??= setTimeout(() => void flushKeyUsage(), FLUSH_MS).unref();
}

export async function flushKeyUsage(): Promise<number> {
  if (timer) clearTimeout(timer);
  timer = undefined;
  const batch = [...pending.entries()];
  pending.clear();
  try {
    // Bookkeeping, not a change: exempt from the audit log (see src/audit/recorder.ts).
    for (const [id, at] of batch) await prisma.apiKey.updateMany({ where: { id }, data: { lastUsedAt: at } });
  } catch (err) {
    logger.warn({ err }, "could not record API key use");
  }
  return batch.length;
}
