// The reports domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { reportRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const reports = defineDomain({
  name: "reports",
  description: "Analytics reports aggregated from the engagement events, as JSON or CSV.",
  graphql,
  routes: reportRoutes,
  openApiTags: {
    reports: "Analytics reports (B24) aggregated from the engagement events, as JSON or CSV.",
  },
});
