// Time buckets in an IANA time zone. SQLite knows no time zones, so the zone's offsets over the
// window are worked out here (offsetsOf: a few segments, split at its DST transitions) and the SQL
// shifts each event's time by its segment's offset to the zone's wall clock, from which the bucket
// key is plain arithmetic (hours, days, Monday-weeks) or the calendar month: the same in both
// dialects, and no range join (a join of every event against a bucket list cost 10 to 80 times
// more on SQLite). The bucket list itself (bucketsOf) gives the labels and the zero-filled rows.
// Boundaries are local wall-clock starts (00:00 of a day, Monday for weeks, the 1st for months, the
// full hour) converted to instants with the zone's offset at that moment, so DST days are 23 or 25
// hours long. A local start that does not exist (a spring-forward gap) begins at the first instant
// after the gap; one that exists twice (fall back) begins at its first occurrence, so the repeated
// hour belongs to one `hour` bucket of two real hours.
import { badRequest } from "../../errors.js";

export type Interval = "hour" | "day" | "week" | "month";
export const INTERVALS: readonly Interval[] = ["hour", "day", "week", "month"];
export const MAX_BUCKETS = 1_000;

export interface Bucket {
  /** epoch ms, inclusive */
  s: number;
  /** epoch ms, exclusive */
  e: number;
  /** the start in the zone: YYYY-MM-DD, or YYYY-MM-DDTHH:00 for hours */
  l: string;
  /** its key, as the SQL computes it (bucketKeySql) */
  k: number;
}

const HOUR = 3_600_000;

/** A bucket's key from its local start (as UTC ms): hours or days since the epoch, the Monday's day, or year × 12 + month. */
export function keyOf(local: number, interval: Interval): number {
  switch (interval) {
    case "hour":
      return Math.floor(local / HOUR);
    case "day":
    case "week":
      return Math.floor(local / DAY);
    case "month": {
      const d = new Date(local);
      return d.getUTCFullYear() * 12 + d.getUTCMonth();
    }
  }
}

/** A key's label (the inverse of keyOf on bucket starts). */
export function labelOfKey(key: number, interval: Interval): string {
  if (interval === "hour") return labelOf(key * HOUR, interval);
  if (interval === "month") return labelOf(monthStart(key), interval);
  return labelOf(key * DAY, interval);
}

/**
 * Date.UTC with the year as given (month and day may overflow, as there): Date.UTC reads the years
 * 0 to 99 as 1900 to 1999, so a window in the year 50 got its wall clock, its buckets and their
 * labels in 1950 (none listed).
 */
function utc(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const d = new Date(Date.UTC(2000, 0, 1, hour, minute, second));
  d.setUTCFullYear(year, month, day);
  return d.getTime();
}

/** A month key's first day (the inverse of keyOf on month starts). */
export const monthStart = (key: number): number => utc(Math.floor(key / 12), key - 12 * Math.floor(key / 12), 1);

/** The zone's offset (ms) at instant t. */
const offsetAt = (t: number, timeZone: string) => wall(t, timeZone) - Math.floor(t / 1000) * 1000 - (t % 1000);

/**
 * The zone's offsets over [from, to): segments `[until, offset]`, the last one's `until` at or past
 * `to`. Transitions are found by a daily walk and a binary search inside the day they happen in.
 */
export function offsetsOf(from: number, to: number, timeZone: string): { until: number; offset: number }[] {
  const out: { until: number; offset: number }[] = [];
  let current = offsetAt(from, timeZone);
  let t = from;
  while (t < to) {
    const next = Math.min(t + DAY, to);
    const o = offsetAt(next, timeZone);
    if (o !== current || next === to) {
      if (o !== current) {
        let lo = t;
        let hi = next;
        while (hi - lo > 1) {
          const mid = Math.floor((lo + hi) / 2);
          if (offsetAt(mid, timeZone) === current) lo = mid;
          else hi = mid;
        }
        out.push({ until: hi, offset: current });
        current = o;
        t = hi;
        continue;
      }
    }
    t = next;
  }
  out.push({ until: Number.MAX_SAFE_INTEGER, offset: current });
  return out;
}

// One formatter per zone, keyed by the zone's canonical name (canonicalZone): the runtime takes zone
// names in any letter case, so keying by what a client sent let each spelling keep a formatter
// (about 25 KB outside the JS heap) for good. Canonical names are a few hundred; the bound is a
// guard all the same.
const FORMATTERS_MAX = 1_000;
const formatters = new Map<string, Intl.DateTimeFormat>();
const formatterOf = (timeZone: string) =>
  new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    // The era too: the year alone counts the years before 1 AD as 1 BC, 2 BC… (wall()).
    era: "short",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = formatterOf(timeZone);
    if (formatters.size >= FORMATTERS_MAX) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** How many zones have a formatter (tests: spellings of one zone share it). */
export const zoneFormatters = () => formatters.size;

/**
 * The canonical name of an IANA zone the runtime knows (`america/new_york` → `America/New_York`),
 * or null. Nothing is cached for a name that is not canonical.
 */
export function canonicalZone(tz: string): string | null {
  // A zone with a formatter is a canonical name already (the common case: no formatter made).
  if (formatters.has(tz)) return tz;
  try {
    return formatterOf(tz).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** The zone's wall clock at instant `t`, as if it were UTC (epoch ms of the local date and time). */
function wall(t: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  let bc = false;
  for (const p of formatter(timeZone).formatToParts(new Date(t))) {
    if (p.type === "era") bc = p.value === "BC";
    else if (p.type !== "literal") parts[p.type] = Number(p.value);
  }
  const second = Math.floor(t / 1000) * 1000;
  // (1 BC is the year 0.)
  return utc(bc ? 1 - parts.year! : parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) + (t - second);
}

/** The first instant whose wall clock in the zone is at or after the local time `local` (as UTC ms). */
export function instantOf(local: number, timeZone: string): number {
  const candidates = [local - (wall(local, timeZone) - local)];
  candidates.push(local - (wall(candidates[0]!, timeZone) - candidates[0]!));
  // Exact matches, earliest first (the first occurrence of a repeated hour).
  const exact = candidates.filter((x) => wall(x, timeZone) === local).sort((a, b) => a - b);
  if (exact.length) return exact[0]!;
  // In a gap: the transition instant, the earliest one whose wall clock is past `local`.
  let lo = Math.min(...candidates) - 3 * 3_600_000;
  let hi = Math.max(...candidates) + 3 * 3_600_000;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (wall(mid, timeZone) >= local) hi = mid;
    else lo = mid;
  }
  return hi;
}

const DAY = 86_400_000;

/** The local start (as UTC ms) of the bucket holding the local time `local`. */
function floorLocal(local: number, interval: Interval): number {
  const d = new Date(local);
  switch (interval) {
    case "hour":
      return utc(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours());
    case "day":
      return utc(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case "week": {
      const day = utc(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      return day - ((d.getUTCDay() + 6) % 7) * DAY; // weeks start on Monday
    }
    case "month":
      return utc(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
}

/** The next bucket's local start after the local start `local`. */
export function nextLocal(local: number, interval: Interval, k = 1): number {
  const d = new Date(local);
  switch (interval) {
    case "hour":
      return local + k * 3_600_000;
    case "day":
      return utc(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + k);
    case "week":
      return utc(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 7 * k);
    case "month":
      return utc(d.getUTCFullYear(), d.getUTCMonth() + k, 1);
  }
}

export const labelOf = (local: number, interval: Interval): string => {
  // Cut at the "T", not at a fixed length: a year outside 0000 to 9999 (a local start before
  // 0000-01-01, a default start 30 days before an endDate early in the year 0, or past 9999-12-31
  // in a zone east of UTC) is written in ISO 8601's expanded form, `-000001-12-03`, `+010000-01-01`,
  // which fixed-length slices cut to `-000001-12` (every hour of the day labelled alike).
  const iso = new Date(local).toISOString();
  const t = iso.indexOf("T");
  return interval === "hour" ? `${iso.slice(0, t + 3)}:00` : iso.slice(0, t);
};

/** The local start (as UTC ms) of the bucket holding instant `t`. */
export const bucketLocalStart = (t: number, interval: Interval, timeZone: string): number => floorLocal(wall(t, timeZone), interval);

/**
 * Every bucket that meets [from, to), in order; a 400 naming `path` past `max` buckets. Buckets are
 * whole (the first may start before `from`, the last end after `to`).
 */
export function bucketsOf(from: number, to: number, interval: Interval, timeZone: string, path: string, max = MAX_BUCKETS): Bucket[] {
  const out: Bucket[] = [];
  if (from >= to) return out;
  let local = bucketLocalStart(from, interval, timeZone);
  let start = instantOf(local, timeZone);
  while (start < to) {
    const nl = nextLocal(local, interval);
    const end = instantOf(nl, timeZone);
    if (end > start) {
      if (out.length === max)
        throw badRequest(`${path}: the window holds more than ${max} ${interval} buckets; narrow the window or use a longer interval`, [
          { path, message: `more than ${max} buckets` },
        ]);
      out.push({ s: start, e: end, l: labelOf(local, interval), k: keyOf(local, interval) });
    }
    local = nl;
    start = end;
  }
  return out;
}
