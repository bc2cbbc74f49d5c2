// The content domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { contentAudit } from "./audit.js";
import { contentRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const content = defineDomain({
  name: "content",
  description: "Content of an account (links, videos, text, flows, widgets, folders) and its tags.",
  graphql,
  routes: contentRoutes,
  audit: contentAudit,
  fastInsert: ["Content", "ContentTag"],
  openApiTags: {
    content: "Content of the account: links, videos and text (created here), flows, widgets and folders.",
  },
});
