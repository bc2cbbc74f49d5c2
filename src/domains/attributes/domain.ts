// The attributes domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { attributesAudit } from "./audit.js";
import { attributeRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const attributes = defineDomain({
  name: "attributes",
  description: "Integration attributes: their schema and records keyed by primary name and value, with secondary attributes.",
  graphql,
  routes: attributeRoutes,
  audit: attributesAudit,
  fastInsert: ["AttributeRecord", "AttributeRecordValue"],
  openApiTags: {
    integrationAttributeSchema: "The integration-attribute schema: up to 50 typed attributes (B17–B19).",
    integrationAttributes: "Integration-attribute records keyed by primary name and value, with secondary attributes; search (B20–B23).",
  },
});
