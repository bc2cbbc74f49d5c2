// The events domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { eventsAudit } from "./audit.js";
import { eventRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const events = defineDomain({
  name: "events",
  description: "Engagement events reported by the parent application, their rollups, retention and erasure.",
  graphql,
  routes: eventRoutes,
  audit: eventsAudit,
  openApiTags: {
    events: "Engagement events reported by the parent application (flows played, searches, popups, ...); the source of the reports; their incremental export.",
  },
});
