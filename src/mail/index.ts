// Outgoing e-mail: over SMTP (nodemailer) when SMTP_URL is set; otherwise each message is written
// as an .eml file into OUTBOX_DIR and logged, so the embedded default works without a mail server.
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Config } from "../config.js";
import { loadConfig } from "../config.js";
import { logger } from "../logger.js";
import { tracing } from "../observability/tracing.js";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** Names the .eml file in the outbox (a job id, say). */
  id: string;
}

type MailConfig = Pick<Config, "SMTP_URL" | "MAIL_FROM" | "OUTBOX_DIR">;
let config: MailConfig | undefined;

export function configureMail(c: MailConfig): void {
  config = { SMTP_URL: c.SMTP_URL, MAIL_FROM: c.MAIL_FROM, OUTBOX_DIR: c.OUTBOX_DIR };
}

/** Sends the message; resolves with where it went (`smtp`, or the .eml file written). */
export async function sendMail(mail: Mail): Promise<{ via: "smtp" } | { via: "outbox"; file: string }> {
  const c = (config ??= loadConfig());
  // With tracing on, the message carries the trace it was sent in (a copy job's), as webhooks do.
  const traceparent = tracing?.traceparent();
  const message = { from: c.MAIL_FROM, to: mail.to, subject: mail.subject, text: mail.text, ...(traceparent ? { headers: { traceparent } } : {}) };
  // Loaded when the first message goes out: most processes never send one.
  const { default: nodemailer } = await import("nodemailer");
  if (c.SMTP_URL) {
    const transport = nodemailer.createTransport(c.SMTP_URL);
    try {
      await transport.sendMail(message);
    } finally {
      transport.close();
    }
    logger.info({ to: mail.to, subject: mail.subject }, "e-mail sent");
    return { via: "smtp" };
  }
  const built = await nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" }).sendMail(message);
  const dir = resolve(c.OUTBOX_DIR);
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, "-")}-${mail.id.replace(/[^A-Za-z0-9_-]/g, "_")}.eml`);
  await writeFile(file, built.message as Buffer);
  logger.info({ to: mail.to, subject: mail.subject, file }, "no SMTP_URL: e-mail written to the outbox");
  return { via: "outbox", file };
}
