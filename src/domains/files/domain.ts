// The files domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { filesAudit } from "./audit.js";
import { fileRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const files = defineDomain({
  name: "files",
  description: "Files uploaded to blob storage (PDFs), their metadata and downloads.",
  graphql,
  routes: fileRoutes,
  audit: filesAudit,
  openApiTags: {
    files: "Files uploaded to blob storage (B8), downloaded by id.",
  },
});
