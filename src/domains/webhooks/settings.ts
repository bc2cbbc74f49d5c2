// Webhook settings of this process, from the configuration createApp() (or the worker) was given.
import type { Config } from "../../config.js";

export interface WebhookSettings {
  allowPrivate: boolean;
  /** Pause before each retry, in ms: attempts = 1 + its length. */
  schedule: number[];
  timeoutMs: number;
  pollMs: number;
  /** Attempts in flight at once, across instances, per endpoint and per account. */
  maxInFlightPerEndpoint: number;
  maxInFlightPerAccount: number;
  /** Pending deliveries an endpoint may have; more are stored as dropped. */
  maxPendingPerEndpoint: number;
}

const UNIT: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

export function parseSchedule(text: string): number[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = /^(\d+)(ms|s|m|h)?$/.exec(s);
      if (!m) throw new Error(`not a duration: ${s}`);
      return Number(m[1]) * UNIT[m[2] ?? "ms"]!;
    });
}

let settings: WebhookSettings = {
  allowPrivate: false,
  schedule: parseSchedule("5s,5m,30m,2h,5h,10h,10h"),
  timeoutMs: 5_000,
  pollMs: 1_000,
  maxInFlightPerEndpoint: 4,
  maxInFlightPerAccount: 16,
  maxPendingPerEndpoint: 10_000,
};

export function configureWebhooks(
  config: Pick<
    Config,
    | "WEBHOOKS_ALLOW_PRIVATE"
    | "WEBHOOK_RETRY_SCHEDULE"
    | "WEBHOOK_TIMEOUT_MS"
    | "WEBHOOK_POLL_MS"
    | "WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT"
    | "WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT"
    | "WEBHOOK_MAX_PENDING_PER_ENDPOINT"
  >,
): void {
  settings = {
    allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE,
    schedule: parseSchedule(config.WEBHOOK_RETRY_SCHEDULE),
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    pollMs: config.WEBHOOK_POLL_MS,
    maxInFlightPerEndpoint: config.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT,
    maxInFlightPerAccount: config.WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT,
    maxPendingPerEndpoint: config.WEBHOOK_MAX_PENDING_PER_ENDPOINT,
  };
}

export const webhookSettings = (): WebhookSettings => settings;
