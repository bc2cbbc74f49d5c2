// The explore domain: ad hoc questions over the engagement events (query, funnel, retention), in
// GraphQL under account(id:) { analytics } and as REST rows under /analytics.
import { defineDomain } from "../define.js";
import { exploreRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const explore = defineDomain({
  name: "explore",
  description: "Ad hoc questions over the engagement events: metrics by dimensions and time, funnels and retention.",
  graphql,
  routes: exploreRoutes,
  openApiTags: {
    analytics: "Explore: ad hoc questions over the engagement events (metrics by dimensions and time buckets, funnels, retention), as JSON or CSV.",
  },
});
