// Stores a checked Segment batch: track calls as engagement events (recordEvents, one transaction
// with their messageIds), identify calls as end-user upserts (each round in one transaction with
// its messageIds), page/screen/group/alias counted and not stored, without keeping their messageIds:
// a key is kept only where a repeat would store something twice, so a repeat of a call that stores
// nothing is simply accepted again (nothing to protect, and no row kept 8 days for it).
import { withTransaction } from "../db/index.js";
import { encodeValue, endUserSchema, type SchemaField } from "../domains/endUsers/fields.js";
import { upsertEndUsers } from "../domains/endUsers/schema.js";
import { recordEvents } from "../domains/events/schema.js";
import { claimMessages } from "./idempotency.js";
import { type CheckedCall, callTime, contextOf, endUserSource, isoTimeMs, trackToEvent, unstorableStoredText } from "./segment.js";

export interface BatchOutcome {
  accepted: number;
  duplicates: number;
  rejected: { index: number; errors: string[] }[];
  ignoredTraits: number;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

export async function storeCalls(
  accountId: string,
  calls: { index: number; call: CheckedCall }[],
  batch: { sentAt?: unknown; context?: unknown },
  receivedAt: number,
  initiallyRejected: { index: number; errors: string[] }[],
): Promise<BatchOutcome> {
  const out: BatchOutcome = { accepted: 0, duplicates: 0, rejected: [...initiallyRejected], ignoredTraits: 0 };
  const reject = (index: number, errors: string[]) => out.rejected.push({ index, errors });

  // ---- track → engagement events
  const tracks: { index: number; item: Obj; messageId: string | null; from: Record<string, string> }[] = [];
  for (const { index, call } of calls.filter((c) => c.call.type === "track")) {
    const time = callTime(call.call, batch.sentAt, receivedAt);
    if ("problem" in time) {
      reject(index, [time.problem]);
      continue;
    }
    const { event, from } = trackToEvent(call, time.time, contextOf(call.call, batch.context), time.from);
    const unstorable = unstorableStoredText({ ...event, messageId: call.messageId }, from);
    if (unstorable) reject(index, [unstorable]);
    else tracks.push({ index, item: event, messageId: call.messageId, from });
  }
  if (tracks.length) {
    const results = await recordEvents(
      accountId,
      tracks.map((t) => t.item),
      // The errors name the call's fields (`properties.step`, `timestamp`), not the event's.
      { messageIds: tracks.map((t) => t.messageId), fieldNames: tracks.map((t) => t.from) },
    );
    results.forEach((r, i) => {
      const index = tracks[i]!.index;
      if (r.statusCode >= 300) reject(index, r.errors);
      else if (r.duplicate) out.duplicates++;
      else out.accepted++;
    });
  }

  // ---- identify → end-user upserts (traits named like the account's fields; the rest ignored)
  const identifies = calls.filter((c) => c.call.type === "identify");
  if (identifies.length) {
    const schema = new Map<string, SchemaField>((await endUserSchema(accountId)).map((f) => [f.name, f]));
    const upserts: { index: number; id: string; custom: Obj; messageId: string | null }[] = [];
    for (const { index, call } of identifies) {
      const traits = isObject(call.call.traits) ? call.call.traits : {};
      const custom: Obj = {};
      const problems: string[] = [];
      const unstorable = unstorableStoredText({ endUserId: call.endUserId, messageId: call.messageId }, { endUserId: endUserSource(call) });
      if (unstorable) problems.push(unstorable);
      for (const [name, raw] of Object.entries(traits)) {
        const field = schema.get(name);
        if (!field) {
          out.ignoredTraits++;
          continue;
        }
        // Segment sends dates as ISO 8601 strings (UTC without an offset); timestamp fields hold epoch ms.
        const value = field.type === "timestamp" && typeof raw === "string" && Number.isFinite(isoTimeMs(raw)) ? isoTimeMs(raw) : raw;
        if (value !== null) {
          const enc = encodeValue(field, value, "traits");
          if ("problem" in enc) problems.push(enc.problem);
          const text = unstorableStoredText({ [name]: value }, { [name]: `traits.${name}` });
          if (text) problems.push(text);
        }
        custom[name] = value;
      }
      if (problems.length) reject(index, problems);
      else upserts.push({ index, id: call.endUserId, custom, messageId: call.messageId });
    }
    // Rounds in which each user appears once (an upsert names a user once); calls keep their order.
    while (upserts.length) {
      const seen = new Set<string>();
      const round = upserts.filter((u) => !seen.has(u.id) && seen.add(u.id));
      for (const u of round) upserts.splice(upserts.indexOf(u), 1);
      const outcome = await withTransaction(async (tx) => {
        const fresh = await claimMessages(
          tx,
          accountId,
          round.map((u) => u.messageId),
        );
        const todo = round.filter((_, i) => fresh[i]);
        const results = todo.length
          ? await upsertEndUsers(
              accountId,
              todo.map((u) => ({ id: u.id, custom: u.custom })),
            )
          : [];
        return { fresh, todo, results };
      });
      out.duplicates += outcome.fresh.filter((f) => !f).length;
      outcome.results.forEach((r, i) => {
        if (r.statusCode >= 300) reject(outcome.todo[i]!.index, r.errors);
        else out.accepted++;
      });
    }
  }

  // ---- page, screen, group, alias: accepted and counted; nothing stored, not even their messageIds
  out.accepted += calls.filter((c) => c.call.type !== "track" && c.call.type !== "identify").length;
  out.rejected.sort((a, b) => a.index - b.index);
  return out;
}
