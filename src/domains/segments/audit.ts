// Audit classification of segments: the content order is a detail of the segment's entry.
import { audited, childOf } from "../../audit/classification.js";

export const segmentsAudit = {
  Segment: audited({ type: "segment", identity: ["id", "accountId"], resourceId: (r) => String(r.id), accountId: (r) => String(r.accountId) }),
  SegmentContent: childOf("Segment", "segmentId", (r) => ["contents", String(r.contentId), r.position]),
};
