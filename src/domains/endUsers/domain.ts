// The endUsers domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { endUsersAudit } from "./audit.js";
import { endUserRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const endUsers = defineDomain({
  name: "endUsers",
  description: "End users of the parent application, their custom values and user actions, and the end-user schema.",
  graphql,
  routes: endUserRoutes,
  audit: endUsersAudit,
  fastInsert: ["EndUser", "EndUserValue", "EndUserAction"],
  openApiTags: {
    endUsers: "End users of the parent application and their custom field values (style B: and user actions).",
    endUserSchema: "The end-user schema: the default fields and up to 50 typed custom fields.",
  },
});
