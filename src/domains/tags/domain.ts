// The tags domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { tagsAudit } from "./audit.js";
import { tagRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const tags = defineDomain({
  name: "tags",
  description: "Content tags, unique by name within an account.",
  graphql,
  routes: tagRoutes,
  audit: tagsAudit,
  openApiTags: {
    tags: "Content tags, unique by name within an account.",
  },
});
