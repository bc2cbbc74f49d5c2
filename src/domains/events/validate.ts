// What an engagement event is: its types, the fields each type needs, and the per-item check that
// turns a request item into a row of "Event" (or the reasons it cannot be one).

import { domainToASCII, domainToUnicode } from "node:url";
import { ownEntry } from "../../lookup.js";
import { MAX_TIMESTAMP } from "../../schema/builder.js";
import { checkListSafeName } from "../../schema/bulk.js";
import { longerThan } from "../../text.js";
import { reservedEndUserIdProblem } from "./erasure.js";

export const WIDGETS = ["self_help", "task_list", "beacon", "guided_popup", "smart_tip", "popup", "direct"] as const;

/** The fields of an event on the wire, in the contract's order. */
export const EVENT_FIELDS = [
  "type",
  "time",
  "endUserId",
  "flowId",
  "contentId",
  "widget",
  "step",
  "searchTerm",
  "resultCount",
  "useful",
  "comment",
  "actionId",
  "domain",
  "userName",
] as const;
type Field = (typeof EVENT_FIELDS)[number];

const FLOW_PLAY = ["flowId", "widget"] as const;
/** Every type and the fields it needs (besides `type` and `time`). */
export const EVENT_TYPES: Record<string, readonly Field[]> = {
  flow_started: FLOW_PLAY,
  flow_completed: FLOW_PLAY,
  flow_exited: FLOW_PLAY,
  flow_failed: FLOW_PLAY,
  flow_step: ["flowId", "step"],
  flow_feedback: ["flowId", "useful"],
  selfhelp_search: ["searchTerm", "resultCount"],
  selfhelp_content_viewed: ["contentId"],
  task_started: ["flowId"],
  task_completed: ["flowId"],
  guided_popup_shown: ["contentId"],
  popup_shown: ["contentId"],
  popup_clicked: ["contentId"],
  smart_popup_shown: ["contentId"],
  smarttip_shown: ["contentId"],
  smarttip_played: ["contentId"],
  beacon_shown: ["contentId"],
  beacon_clicked: ["contentId"],
  user_action: ["actionId"],
};

/** An event more than this far ahead of the server's clock is refused (clock skew allowance). */
export const MAX_FUTURE_MS = 5 * 60_000;

const ID_MAX = 256;
const TEXT_MAX: Partial<Record<Field, number>> = { searchTerm: 500, comment: 4_000, userName: 256, domain: 253 };
const STRINGS = ["endUserId", "flowId", "contentId", "searchTerm", "comment", "actionId", "domain", "userName"] as const;
const INT_MAX = 2_147_483_647;
/**
 * The strings that end up in B-tree keys (the event indexes and the rollups' primary keys, several
 * of them in one key): each also at most this many bytes of UTF-8. A PostgreSQL index entry holds
 * at most 2,704 bytes; 256 characters can be 1 KB, and an end user, a domain, a flow and a content
 * id of that size in one rollup key failed the insert (a 500 on ingest, or a rollup batch that
 * failed on every try). With these caps the widest key (a per-user rollup row: end user, domain and
 * one id; a day row: domain, flow and content, or domain and search term) stays under 2 KB.
 * Text of one-byte characters meets them at its character limit; only text of wider characters is
 * refused earlier, with both limits named.
 */
const BYTES_MAX: Partial<Record<Field, number>> = { endUserId: 512, flowId: 512, contentId: 512, actionId: 512, domain: 512, searchTerm: 1_000 };

/** A row of the "Event" table (without its generated id). */
export interface EventRow {
  accountId: string;
  type: string;
  time: number;
  endUserId: string | null;
  flowId: string | null;
  contentId: string | null;
  widget: string | null;
  step: number | null;
  searchTerm: string | null;
  resultCount: number | null;
  useful: boolean | null;
  comment: string | null;
  actionId: string | null;
  domain: string | null;
  userName: string | null;
}

const known = new Set<string>(EVENT_FIELDS);

/**
 * Checks one request item; the row to store, or every reason it cannot be stored. `names`: what the
 * caller calls each field, where the item was made from something else (a Segment call's
 * `properties.step`, `timestamp`, `userId`): its messages name what the caller sent.
 */
export function checkEvent(
  accountId: string,
  item: unknown,
  now: number,
  names: Readonly<Record<string, string>> = {},
): { row: EventRow } | { problems: string[] } {
  if (item === null || typeof item !== "object" || Array.isArray(item)) return { problems: ["an event must be a JSON object"] };
  const it = item as Record<string, unknown>;
  const n = (field: string) => ownEntry(names, field) ?? field;
  const problems: string[] = [];
  const unknown = Object.keys(it).filter((k) => !known.has(k));
  // (`id`, the optional idempotency key, is taken off the item before this check: src/domains/events/schema.ts.)
  if (unknown.length) problems.push(`unknown field(s): ${unknown.slice(0, 5).join(", ")} (allowed: ${[...EVENT_FIELDS, "id"].join(", ")})`);

  const type = it.type;
  const needs = typeof type === "string" ? ownEntry(EVENT_TYPES, type) : undefined;
  if (type === undefined || type === null) problems.push(`${n("type")} is required`);
  else if (!needs) problems.push(`${n("type")} must be one of ${Object.keys(EVENT_TYPES).join(", ")}`);

  const time = it.time;
  if (time === undefined || time === null) problems.push(`${n("time")} is required (epoch milliseconds)`);
  else if (typeof time !== "number" || !Number.isSafeInteger(time) || time < 0 || time > MAX_TIMESTAMP)
    problems.push(`${n("time")} must be an integer of epoch milliseconds`);
  else if (time > now + MAX_FUTURE_MS) problems.push(`${n("time")} is more than 5 minutes in the future`);

  for (const f of STRINGS) {
    const v = it[f];
    if (v === undefined || v === null) continue;
    const max = TEXT_MAX[f] ?? ID_MAX;
    if (typeof v !== "string" || v.trim() === "") problems.push(`${n(f)} must be a non-empty string`);
    else if (longerThan(v, max)) problems.push(`${n(f)} must be at most ${max} characters`);
    else if (tooManyBytes(storedForm(f, v), BYTES_MAX[f])) problems.push(`${n(f)} must be at most ${BYTES_MAX[f]} bytes of UTF-8 (and ${max} characters)`);
  }
  // End users are created from events: their ids obey the end-user rules (no comma, no white space
  // at either end: ids appear in the comma lists of deletes, which trim their entries), or a user
  // created here could never be updated or erased over REST.
  if (typeof it.endUserId === "string" && it.endUserId.trim() !== "") {
    const listSafe = checkListSafeName(it.endUserId, n("endUserId"));
    if (listSafe) problems.push(listSafe);
    const reserved = reservedEndUserIdProblem(it.endUserId, n("endUserId"));
    if (reserved) problems.push(reserved);
  }
  // A name is personal data kept for its end user (the "with user name" reports) and erased with
  // them: on an event without one it would be shown by no report and erasable by no request.
  if (it.userName != null && (it.endUserId === undefined || it.endUserId === null))
    problems.push(`${n("userName")} needs ${n("endUserId")}: a name is kept for its end user, and erased with them`);
  if (it.widget != null && !(WIDGETS as readonly unknown[]).includes(it.widget)) problems.push(`${n("widget")} must be one of ${WIDGETS.join(", ")}`);
  // Both are stored as 32-bit integers: the message gives the whole range, not only its lower end.
  if (it.step != null && (typeof it.step !== "number" || !Number.isInteger(it.step) || it.step < 1 || it.step > INT_MAX))
    problems.push(`${n("step")} must be an integer from 1 to ${INT_MAX}`);
  if (it.resultCount != null && (typeof it.resultCount !== "number" || !Number.isInteger(it.resultCount) || it.resultCount < 0 || it.resultCount > INT_MAX))
    problems.push(`${n("resultCount")} must be an integer from 0 to ${INT_MAX}`);
  if (it.useful != null && typeof it.useful !== "boolean") problems.push(`${n("useful")} must be true or false`);
  for (const f of needs ?? []) if (it[f] === undefined || it[f] === null) problems.push(`${n(f)} is required for ${String(type)} events`);
  // A clicked result implies there were results: the three search outcomes stay a partition.
  if (type === "selfhelp_search" && it.contentId != null && it.resultCount === 0)
    problems.push(`a search with a clicked ${n("contentId")} must have ${n("resultCount")} ≥ 1`);
  if (problems.length) return { problems };

  const s = (f: (typeof STRINGS)[number]) => (it[f] == null ? null : (it[f] as string));
  return {
    row: {
      accountId,
      type: type as string,
      time: time as number,
      endUserId: s("endUserId"),
      flowId: s("flowId"),
      contentId: s("contentId"),
      widget: (it.widget as string | undefined) ?? null,
      step: (it.step as number | undefined) ?? null,
      searchTerm: it.searchTerm == null ? null : storedForm("searchTerm", it.searchTerm as string),
      resultCount: (it.resultCount as number | undefined) ?? null,
      useful: (it.useful as boolean | undefined) ?? null,
      comment: s("comment"),
      actionId: s("actionId"),
      domain: it.domain == null ? null : storedForm("domain", it.domain as string),
      userName: s("userName"),
    },
  };
}

/**
 * A host name as it is stored, so that one site is one domain in the reports and their domain
 * filters (which fold the same way) find it: trimmed and lower-cased (host names are
 * case-insensitive, and Segment's page URLs arrive lower-cased by URL parsing), without a final
 * dot, and an internationalized name in Unicode, however it was sent: Segment's page URLs give it in punycode
 * (`xn--bcher-kva.example`, what URL parsing yields), a client of POST /events more often as typed
 * (`bücher.example`). A value that is not a valid host name is kept as sent (trimmed, lower-cased).
 */
export function foldDomain(value: string): string {
  // A fully qualified name's final dot (`example.com.`) names the same host.
  const folded = value
    .trim()
    .toLowerCase()
    .replace(/(?<=.)\.$/, "");
  if (!/(^|\.)xn--/.test(folded)) return folded;
  // Only a name that encodes back to what was sent: a malformed label stays as sent.
  const unicode = domainToUnicode(folded);
  return unicode && domainToASCII(unicode) === folded ? unicode : folded;
}

/**
 * A string as it is stored: a search term trimmed and lower-cased, a domain folded (foldDomain).
 * The byte caps hold for this form, which can be longer than what was sent (lower-casing U+023A
 * takes 2 bytes to 3; a punycode label decodes to Unicode).
 */
function storedForm(f: Field, v: string): string {
  return f === "searchTerm" ? v.trim().toLowerCase() : f === "domain" ? foldDomain(v) : v;
}

/** Whether `v` takes more than `max` bytes in UTF-8 (never for `max` undefined; counted only when a UTF-16 unit's 3 bytes could pass it). */
function tooManyBytes(v: string, max: number | undefined): boolean {
  return max !== undefined && v.length * 3 > max && Buffer.byteLength(v, "utf8") > max;
}
