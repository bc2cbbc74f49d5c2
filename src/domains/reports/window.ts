// The parameters every report takes: the date window (half-open, UTC) and the domain filters.
import { clock } from "../../clock.js";
import { badRequest } from "../../errors.js";
import { parseUtcDate } from "../auditLogs/schema.js";
import { foldDomain } from "../events/validate.js";

const DAY = 86_400_000;
export const DEFAULT_REPORT_DAYS = 30;

/**
 * `[from, to)`: neither date → the last 30 days up to now; only startDate → from it up to now (an
 * empty window when it starts later); only endDate → the 30 days ending then; a date-only endDate
 * includes that whole day. An endDate before the startDate is the caller's error.
 */
export function reportWindow(startDate: string | null | undefined, endDate: string | null | undefined, now = clock.now()): { from: Date; to: Date } {
  const start = startDate ? parseUtcDate(startDate, "startDate").at : null;
  const endParsed = endDate ? parseUtcDate(endDate, "endDate") : null;
  const end = endParsed ? new Date(endParsed.at.getTime() + (endParsed.dateOnly ? DAY : 0)) : null;
  if (start && end && (start > end || (endParsed?.dateOnly && start >= end))) {
    throw badRequest("endDate must not be before startDate", [{ path: "endDate", message: "before startDate" }]);
  }
  if (start && end) return { from: start, to: end };
  if (start) return { from: start, to: start > now ? start : now };
  if (end) return { from: new Date(end.getTime() - DEFAULT_REPORT_DAYS * DAY), to: end };
  return { from: new Date(now.getTime() - DEFAULT_REPORT_DAYS * DAY), to: now };
}

/** Cost units (src/graphql/cost.ts; 100 a budget point) per day of a report's window. */
export const REPORT_UNITS_PER_DAY = 2;

/**
 * What reading a report costs before it runs, in the budget's cost units: it reads the daily
 * rollups of its window (about a row a day for each thing it counts, a fraction of the raw events
 * Explore reads), so 2 units a day: the default 30 days cost 1 point, a year 7. A window that does
 * not parse costs 1 unit: it is refused (400) before any read.
 */
export function reportWindowCost(args: { startDate?: unknown; endDate?: unknown }): number {
  try {
    const { from, to } = reportWindow(args.startDate as string | null | undefined, args.endDate as string | null | undefined);
    return Math.max(1, Math.ceil((to.getTime() - from.getTime()) / DAY)) * REPORT_UNITS_PER_DAY;
  } catch {
    return 1;
  }
}

/** Domain lists: comma-separated, repeated, or both; folded as stored domains are (foldDomain), empty entries dropped. */
export function domainList(value: unknown, name: string): string[] {
  if (value === undefined || value === null) return [];
  const parts = Array.isArray(value) ? value : [value];
  if (!parts.every((p) => typeof p === "string"))
    throw badRequest(`${name} must be a comma-separated list of domains`, [{ path: name, message: "not a list" }]);
  const list = [
    ...new Set(
      (parts as string[])
        .flatMap((p) => p.split(","))
        .map(foldDomain)
        .filter(Boolean),
    ),
  ];
  if (list.length > 1_000) throw badRequest(`${name} must list at most 1000 domains`, [{ path: name, message: "too many" }]);
  // Given, but naming none (`includeDomains=` or `,,`): not the same as not given (no filter).
  if (!list.length && parts.length) throw badRequest(`${name} must list at least one domain`, [{ path: name, message: "empty" }]);
  return list;
}
