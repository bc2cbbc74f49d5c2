// Reading the audit log (B25). Entries are written only by src/audit/recorder.ts and are never
// edited or deleted: no mutation exists, and the shared client refuses such writes.
import { queryFromInfo } from "@pothos/plugin-prisma";
import { clock } from "../../clock.js";
import { prisma } from "../../db/index.js";
import { badRequest } from "../../errors.js";
import { builder } from "../../schema/builder.js";
import { afterCursor, CONNECTION_RECORDS, connectionFrom, LIST_LIMITS, pageExtensions, pageLimit, toPage } from "../../schema/pagination.js";
import { requireAccount } from "../accounts/schema.js";

const DAY = 86_400_000;
export const DEFAULT_WINDOW_DAYS = 90;

export const AuditLogEntry = builder.prismaObject("AuditLog", {
  name: "AuditLogEntry",
  fields: (t) => ({
    id: t.exposeID("id"),
    timestamp: t.expose("timestamp", { type: "Timestamp" }),
    accountId: t.exposeString("accountId", { nullable: true }),
    userId: t.exposeString("userId", { nullable: true, description: "E-mail of the acting user; cli:<name> or system:<what> otherwise." }),
    action: t.exposeString("action", { description: "create, update or delete" }),
    resourceType: t.exposeString("resourceType"),
    resourceId: t.exposeString("resourceId"),
    sourceIp: t.exposeString("sourceIp", { nullable: true }),
    requestId: t.exposeString("requestId", { nullable: true }),
    details: t.field({ type: "JSON", resolve: (e) => JSON.parse(e.details) as unknown }),
  }),
});

/** `YYYY-MM-DD HH:MM` or `YYYY-MM-DD`, UTC; real calendar dates only. */
export function parseUtcDate(value: string, name: string): { at: Date; dateOnly: boolean } {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}))?$/.exec(value);
  const fail = () =>
    badRequest(`${name} must be a UTC date as YYYY-MM-DD HH:MM or YYYY-MM-DD (got '${value.slice(0, 40)}')`, [{ path: name, message: "invalid date" }]);
  if (!m) throw fail();
  const [y, mo, d, h = "0", mi = "0"] = m.slice(1).map((x) => x ?? undefined) as string[];
  // (Date.UTC reads years 0–99 as 1900–1999: the year is set on its own.)
  const at = new Date(Date.UTC(2000, Number(mo) - 1, Number(d), Number(h), Number(mi)));
  at.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  if (at.getUTCFullYear() !== Number(y) || at.getUTCMonth() !== Number(mo) - 1 || at.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59)
    throw fail();
  return { at, dateOnly: m[4] === undefined };
}

/**
 * The spec's window rules (B25): neither date → the last 90 days; only startDate → from it up to
 * yesterday midnight (today 00:00 UTC), an empty window when it starts later; only endDate → the
 * 90 days ending then; both → between (an endDate before the startDate is the caller's error).
 * A date-only endDate includes that whole day. The window is [from, to).
 */
export function auditWindow(startDate: string | null | undefined, endDate: string | null | undefined, now = clock.now()): { from: Date; to: Date } {
  const start = startDate ? parseUtcDate(startDate, "startDate").at : null;
  const endParsed = endDate ? parseUtcDate(endDate, "endDate") : null;
  const end = endParsed ? new Date(endParsed.at.getTime() + (endParsed.dateOnly ? DAY : 0)) : null;
  const todayMidnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const window =
    start && end
      ? { from: start, to: end }
      : start
        ? { from: start, to: start > todayMidnight ? start : todayMidnight }
        : end
          ? { from: new Date(end.getTime() - DEFAULT_WINDOW_DAYS * DAY), to: end }
          : { from: new Date(now.getTime() - DEFAULT_WINDOW_DAYS * DAY), to: now };
  // A date-only endDate covers its whole day: a startDate on a later day is after it, although it
  // equals the window's (exclusive) end.
  const inverted = window.from > window.to || (start !== null && endParsed?.dateOnly === true && window.from >= window.to);
  if (inverted) throw badRequest("startDate must not be after endDate", [{ path: "startDate", message: "after endDate" }]);
  // No entry is older than 1970: a window reaching further back (endDate 0001-01-01 less 90 days,
  // year 0) is cut there, and PostgreSQL is never asked for a timestamp it cannot hold (a 500).
  const clamp = (d: Date) => (d.getTime() < 0 ? new Date(0) : d);
  return { from: clamp(window.from), to: clamp(window.to) };
}

const AuditLogFilter = builder.inputType("AuditLogFilter", {
  fields: (t) => ({
    startDate: t.string({ required: false, description: "UTC, YYYY-MM-DD HH:MM or YYYY-MM-DD" }),
    endDate: t.string({ required: false, description: "UTC, YYYY-MM-DD HH:MM or YYYY-MM-DD (a date alone includes that day)" }),
    userId: t.string({ required: false, description: "Only this user's entries (their e-mail)." }),
  }),
});

builder.queryField("auditLogs", (t) =>
  t.connection({
    type: AuditLogEntry,
    extensions: pageExtensions(LIST_LIMITS.auditLogs),
    description: "An account's audit log, newest first. Window rules as in B25. Readable with integration or auditlogs keys.",
    args: { accountId: t.arg.string({ required: true }), filter: t.arg({ type: AuditLogFilter, required: false }) },
    resolve: async (_root, args, ctx, info) => {
      await requireAccount(ctx, args.accountId, ["integration", "auditlogs"]);
      const limit = pageLimit(args, LIST_LIMITS.auditLogs);
      const { from, to } = auditWindow(args.filter?.startDate, args.filter?.endDate);
      const query = queryFromInfo({ context: ctx, info, paths: CONNECTION_RECORDS });
      const rows = await prisma.auditLog.findMany({
        ...(query as object),
        where: {
          AND: [
            { accountId: args.accountId, timestamp: { gte: from, lt: to } },
            // E-mails are stored lower-cased (as the auth header is compared); other actors as they are.
            args.filter?.userId ? { userId: args.filter.userId.includes("@") ? args.filter.userId.trim().toLowerCase() : args.filter.userId } : {},
            afterCursor("timestamp", args.after, true, args.accountId, "desc"),
          ],
        },
        orderBy: [{ timestamp: "desc" }, { id: "desc" }],
        take: limit + 1,
      });
      return connectionFrom(toPage(rows, limit), args.accountId, (r) => r.timestamp);
    },
  }),
);
