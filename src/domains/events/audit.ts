// Audit classification of engagement events. Events are telemetry the parent application reports,
// not changes anyone makes to the account's data: appended in bulk (up to 10,000 a request), never
// edited, and an audit entry per event would double every write. The end users they create are
// audited as end users (src/domains/endUsers/audit.ts).
import { exempt } from "../../audit/classification.js";

export const eventsAudit = {
  Event: exempt("engagement telemetry reported by the parent application: append-only, never edited; not a change to the account's data"),
  EventUserName: exempt("derived from events (the latest userName they reported), rewritten by every ingest"),
  EventRollup: exempt("derived from events (counts per hour and day), written by the rollup worker and by `rollups rebuild`"),
  EventUserRollup: exempt("derived from events (counts per end user and day), written by the rollup worker and by `rollups rebuild`"),
  EventUserLastSeen: exempt("derived from events (each end user's latest event per type and key), written by the rollup worker and by `rollups rebuild`"),
  EventLastSeenCount: exempt("derived from events (end users last seen per day), written by the rollup worker and by `rollups rebuild`"),
  EventActiveUserCount: exempt("derived from events (distinct end users per type and day), written by the rollup worker and by `rollups rebuild`"),
  RollupWatermark: exempt("bookkeeping of the rollup worker: how far the rollups count the events"),
};
