// The eventExport domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { exportRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const eventExport = defineDomain({
  name: "eventExport",
  description: "The incremental export of engagement events, in ingestion order with a resumable cursor.",
  graphql,
  routes: exportRoutes,
});
