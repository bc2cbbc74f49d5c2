// Segment's call format → what this service stores: `track` calls become engagement events (the
// contract's shape, checked by the same rules as POST /events), `identify` calls end-user upserts.
// Pure functions: src/ingest/router.ts authenticates, reads and stores.
import { reservedEndUserIdProblem } from "../domains/events/erasure.js";
import { EVENT_TYPES } from "../domains/events/validate.js";
import { ownEntry } from "../lookup.js";
import { MAX_TIMESTAMP } from "../schema/builder.js";
import { checkListSafeName } from "../schema/bulk.js";
import { findUnstorableText, longerThan, unstorableTextError } from "../text.js";
import { messageIdProblem } from "./idempotency.js";

export const CALL_TYPES = ["track", "identify", "page", "screen", "group", "alias"] as const;
export type CallType = (typeof CALL_TYPES)[number];

/**
 * The paths Segment's browser library (analytics.js 2.0, `@segment/analytics-next`) posts to under
 * its `apiHost`: a call to the first letter of its type, a batch (its `batching` delivery strategy)
 * to `/b`; text/plain bodies, `writeKey` in each. Aliases of the paths named in full.
 */
export const BROWSER_PATHS = { b: "batch", t: "track", i: "identify", p: "page", g: "group", a: "alias", s: "screen" } as const satisfies Record<
  string,
  CallType | "batch"
>;

/** Limits of Segment's HTTP tracking API, as the contract takes them over. */
export const CALL_LIMIT_BYTES = 32 * 1024;
export const REQUEST_LIMIT_BYTES = 500 * 1024;
export const MAX_BATCH_CALLS = 2_500;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * An event name as an engagement type: lower case, with spaces, dashes and camelCase boundaries
 * turned into `_` (`Flow Completed`, `flow-completed`, `flowCompleted` → `flow_completed`).
 */
export function normalizeEventName(name: string): string {
  return name
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[\s-]+/g, "_")
    .replace(/_+/g, "_")
    .toLowerCase();
}

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** The contract's event fields read from `properties` (camelCase or snake_case). */
const PROPERTY_FIELDS = ["flowId", "widget", "step", "searchTerm", "resultCount", "contentId", "useful", "comment", "actionId"] as const;

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/**
 * An ISO 8601 date or date-time as epoch ms, or NaN. Without an offset it is UTC, as every time of
 * this API is: `Date.parse` reads "2024-06-01T10:00:00" in the machine's time zone (a Segment call
 * stored hours apart on two servers), and reads free text ("June 1, 2024") its own way.
 */
export function isoTimeMs(text: string): number {
  const m = ISO_8601.exec(text.trim());
  if (!m) return Number.NaN;
  const [, y, mo, d, h = "0", mi = "0", sec = "0", frac = "", , sign, oh = "0", om = "0"] = m;
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec)] as const;
  const ms = Date.UTC(...fields, Number(frac.padEnd(3, "0").slice(0, 3)));
  // Out-of-range parts (month 13, 30 February, 24:61) roll over in Date.UTC: they are refused instead.
  const back = new Date(ms);
  const same = [back.getUTCFullYear(), back.getUTCMonth(), back.getUTCDate(), back.getUTCHours(), back.getUTCMinutes(), back.getUTCSeconds()];
  if (same.some((v, i) => v !== fields[i]) || Number(oh) > 23 || Number(om) > 59) return Number.NaN;
  const offset = sign ? (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000 : 0;
  return ms - offset;
}

/** A date alone (`2026-11-01`): ISO 8601 text that names a day, not an instant. */
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** The first instant an event time can be: times are stored as epoch milliseconds, never negative. */
const EPOCH = "1970-01-01T00:00:00Z";
/** The last instant an event time can be (MAX_TIMESTAMP). */
const LAST = "9999-12-31T23:59:59.999Z";

/**
 * A call's time (epoch ms): `timestamp`, else `originalTimestamp` corrected by receivedAt − sentAt,
 * else receipt. Each of the three is an instant (Segment's spec: "when the datapoint occurred",
 * "when the message was sent"), so a date alone is refused, not read as midnight UTC: a client
 * that sends one has lost the time of day, and a guess would misplace the event by up to a day.
 * (Identify traits of timestamp fields still take a date alone: src/ingest/store.ts.) A time
 * before 1970 is refused naming the field the call sent, not the event's `time` it never saw.
 */
export function callTime(
  call: Obj,
  batchSentAt: unknown,
  receivedAt: number,
): { time: number; from: "timestamp" | "originalTimestamp" | null } | { problem: string } {
  const parse = (v: unknown, name: string): number | null | { problem: string } => {
    if (v === undefined || v === null) return null;
    if (typeof v === "string" && DATE_ONLY.test(v.trim()))
      return { problem: `${name} must be an ISO 8601 date-time with a time of day (e.g. ${v.trim()}T00:00:00Z), not a date alone` };
    const t = typeof v === "string" ? isoTimeMs(v) : Number.NaN;
    if (!Number.isFinite(t)) return { problem: `${name} must be an ISO 8601 date-time` };
    // (A year-9999 time with a negative offset lands past the last instant an event time can be.)
    if (t > MAX_TIMESTAMP) return { problem: `${name} must not be after ${LAST}` };
    return t < 0 ? { problem: `${name} must not be before ${EPOCH}` } : t;
  };
  const timestamp = parse(call.timestamp, "timestamp");
  const original = parse(call.originalTimestamp, "originalTimestamp");
  const sentAt = parse(call.sentAt ?? batchSentAt, "sentAt");
  for (const v of [timestamp, original, sentAt]) if (v !== null && typeof v === "object") return v;
  if (typeof timestamp === "number") return { time: timestamp, from: "timestamp" };
  // The client's clock may be off: what it measured between the call and sending it is kept,
  // anchored on our clock at receipt (Segment's own correction).
  if (typeof original === "number") {
    const time = typeof sentAt === "number" ? original + (receivedAt - sentAt) : original;
    if (time < 0) return { problem: `originalTimestamp corrected by the client's clock skew (receipt − sentAt) falls before ${EPOCH}` };
    if (time > MAX_TIMESTAMP) return { problem: `originalTimestamp corrected by the client's clock skew (receipt − sentAt) falls after ${LAST}` };
    return { time, from: "originalTimestamp" };
  }
  return { time: receivedAt, from: null };
}

export interface CheckedCall {
  type: CallType;
  messageId: string | null;
  /** userId, else anonymousId */
  endUserId: string;
  call: Obj;
}

/** The shape every call must have: its type, who it is about, a usable messageId. */
export function checkCall(raw: unknown, pathType: CallType | null): CheckedCall | { problems: string[] } {
  if (!isObject(raw)) return { problems: ["a call must be a JSON object"] };
  const problems: string[] = [];
  let type = raw.type;
  if (pathType) type ??= pathType;
  if (typeof type !== "string" || !(CALL_TYPES as readonly string[]).includes(type)) problems.push(`type must be one of ${CALL_TYPES.join(", ")}`);
  else if (pathType && type !== pathType) problems.push(`type '${type}' does not match the path /${pathType}`);
  const who = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? String(v) : v);
  const userId = who(raw.userId);
  const anonymousId = who(raw.anonymousId);
  const endUserId = (typeof userId === "string" && userId.trim() !== "" ? userId : undefined) ?? anonymousId;
  const named = endUserId === userId ? "userId" : "anonymousId";
  if (typeof endUserId !== "string" || endUserId.trim() === "") problems.push("userId or anonymousId is required");
  else if (longerThan(endUserId, 256)) problems.push(`${named} must be at most 256 characters`);
  else {
    // The id of an end user, as end-user writes take it (no comma, no white space at either end):
    // an id a track call could store but no REST route could name again would be a user nobody can erase.
    const listSafe = checkListSafeName(endUserId, named);
    if (listSafe) problems.push(listSafe);
    // Nor a pseudonym of an erased end user (a track call would name it, an identify give it values).
    const reserved = reservedEndUserIdProblem(endUserId, named);
    if (reserved) problems.push(reserved);
  }
  const idProblem = messageIdProblem(raw.messageId, "messageId");
  if (idProblem) problems.push(idProblem);
  if (type === "track" && (typeof raw.event !== "string" || raw.event.trim() === "")) problems.push("event is required on track calls");
  for (const f of ["properties", "traits", "context"]) if (raw[f] != null && !isObject(raw[f])) problems.push(`${f} must be an object`);
  if (problems.length) return { problems };
  return { type: type as CallType, messageId: (raw.messageId as string | undefined) ?? null, endUserId: endUserId as string, call: raw };
}

/** Which of a call's ids names its end user: `userId` when it is given (not blank), else `anonymousId`, as checkCall chose. */
export function endUserSource(c: CheckedCall): "userId" | "anonymousId" {
  const userId = c.call.userId;
  if (typeof userId === "number" && Number.isFinite(userId)) return "userId";
  return typeof userId === "string" && userId.trim() !== "" ? "userId" : "anonymousId";
}

/**
 * A track call as a POST /events item (checked afterwards by the same rules), and where in the call
 * each of the item's fields came from (`from.comment` = "properties.comment"): the item's errors
 * name what the caller sent, not our field (`properties.step`, `timestamp`). A property field the
 * call lacks is named where it would be read from (`properties.widget is required …`).
 * `timeFrom`: the call's field that gave `time` (callTime), null for the time of receipt.
 */
export function trackToEvent(c: CheckedCall, time: number, context: Obj, timeFrom: string | null): { event: Obj; from: Record<string, string> } {
  const props = isObject(c.call.properties) ? c.call.properties : {};
  const name = c.call.event as string;
  const normalized = normalizeEventName(name);
  const known = ownEntry(EVENT_TYPES, normalized) !== undefined;
  const propName = (f: string) => (props[f] != null ? f : snake(f));
  const prop = (f: string) => props[f] ?? props[snake(f)];
  const event: Obj = { type: known ? normalized : "user_action", time, endUserId: c.endUserId };
  const from: Record<string, string> = { type: "event", endUserId: endUserSource(c) };
  if (timeFrom) from.time = timeFrom;
  if (known) {
    for (const f of PROPERTY_FIELDS) {
      from[f] = `properties.${propName(f)}`;
      if (prop(f) === undefined || prop(f) === null) continue;
      event[f] = prop(f);
    }
  } else {
    event.actionId = name;
    from.actionId = "event";
  }
  const traits = isObject(context.traits) ? context.traits : {};
  const userName = traits.name ?? prop("userName");
  if (userName != null) {
    event.userName = userName;
    from.userName = traits.name != null ? "context.traits.name" : `properties.${propName("userName")}`;
  }
  const host = hostOf(isObject(context.page) ? context.page.url : undefined);
  const domain = host ?? prop("domain");
  if (domain != null) {
    event.domain = domain;
    from.domain = host != null ? "context.page.url" : `properties.${propName("domain")}`;
  }
  return { event, from };
}

/**
 * The first text of `stored` (what a call stores, named by its place in the call in `from`) that
 * cannot be stored as sent (NUL, an unpaired surrogate: src/text.ts), as a call's rejection; or
 * null. Only what is stored counts: such text elsewhere in a call (a page title, the user agent, a
 * property no field reads) is never written, so it does not refuse the call.
 */
export function unstorableStoredText(stored: Obj, from: Record<string, string>): string | null {
  for (const [field, value] of Object.entries(stored)) {
    const at = findUnstorableText(value, from[field] ?? field);
    if (at) return unstorableTextError(at).message;
  }
  return null;
}

function hostOf(url: unknown): string | null {
  if (typeof url !== "string") return null;
  try {
    return new URL(url).hostname || null;
  } catch {
    return null;
  }
}

/** The call's context: the batch's, overridden by the call's own. */
export function contextOf(call: Obj, batchContext: unknown): Obj {
  return { ...(isObject(batchContext) ? batchContext : {}), ...(isObject(call.context) ? call.context : {}) };
}
