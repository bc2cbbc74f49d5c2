// The accounts domain: what it is, its GraphQL schema, its REST rows, how its models are audited.
import { defineDomain } from "../define.js";
import { accountsAudit } from "./audit.js";
import * as graphql from "./schema.js";

export const accounts = defineDomain({
  name: "accounts",
  description: "The tenancy and access: accounts, users, memberships and API keys; `account(id)` and requireAccount, where 401/403 are decided.",
  graphql,
  audit: accountsAudit,
});
