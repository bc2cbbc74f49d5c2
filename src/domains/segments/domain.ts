// The segments domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { segmentsAudit } from "./audit.js";
import { segmentRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const segments = defineDomain({
  name: "segments",
  description: "Segments of end users (rules) and their personalised content order.",
  graphql,
  routes: segmentRoutes,
  audit: segmentsAudit,
  fastInsert: ["SegmentContent"],
  openApiTags: {
    segments: "Segments of end users and their personalised content order (B16).",
  },
});
