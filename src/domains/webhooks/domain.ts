// The webhooks domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { webhooksAudit } from "./audit.js";
import { webhookRoutes } from "./routes.js";
import * as graphql from "./schema.js";

export const webhooks = defineDomain({
  name: "webhooks",
  description: "Webhook endpoints, their signed deliveries, the delivery log and replay.",
  graphql,
  routes: webhookRoutes,
  audit: webhooksAudit,
  openApiTags: {
    webhooks:
      "Webhook endpoints: engagement, content, end-user and copy-job events POSTed to the customer's URL, signed per Standard Webhooks; the delivery log and replay.",
  },
});
