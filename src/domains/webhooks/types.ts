// The event types a webhook can subscribe to (the contract's list; anything else is a 400).
import { EVENT_TYPES } from "../events/validate.js";

export const WEBHOOK_EVENT_TYPES: readonly string[] = [
  ...Object.keys(EVENT_TYPES).map((t) => `engagement.${t}`),
  "content.created",
  "content.updated",
  "content.deleted",
  "end_user.deleted",
  "copy_job.completed",
  "copy_job.failed",
];
const KNOWN = new Set(WEBHOOK_EVENT_TYPES);

/** Problems with a subscription list: `["*"]` or known types, at least one. */
export function eventsProblem(events: unknown): string | null {
  if (!Array.isArray(events) || events.length === 0 || events.some((e) => typeof e !== "string"))
    return 'events must be a non-empty array of event types (or ["*"])';
  if (events.includes("*")) return events.length === 1 ? null : 'events: "*" stands alone (it means every type)';
  const unknown = events.filter((e) => !KNOWN.has(e));
  // (Each named at most 80 characters long: a problem does not echo a client's megabyte back.)
  if (unknown.length)
    return `unknown event type(s): ${unknown
      .slice(0, 5)
      .map((e) => e.slice(0, 80))
      .join(", ")} (known: ${WEBHOOK_EVENT_TYPES.join(", ")}, or "*")`;
  // A repeat would be stored and listed back as sent: refused, as a bulk write's repeated item is.
  const repeated = events.find((e, i) => events.indexOf(e) !== i);
  return repeated === undefined ? null : `events lists '${repeated.slice(0, 80)}' more than once`;
}

export const subscribes = (events: readonly string[], type: string) => events.includes("*") || events.includes(type);
