// The copyJobs domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { copyJobsAudit } from "./audit.js";
import { copyJobRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const copyJobs = defineDomain({
  name: "copyJobs",
  description: "Asynchronous copies of content between accounts: the jobs, their items and the worker.",
  graphql,
  routes: copyJobRoutes,
  audit: copyJobsAudit,
  openApiTags: {
    jobs: "Asynchronous jobs (copies between accounts, B6): status, counts and per-item errors.",
  },
});
