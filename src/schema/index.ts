// Builds the GraphQL schema from the domain files.
import { lexicographicSortSchema } from "graphql";
import { builder } from "./builder.js";
import "./account.js";
import "./tags.js";
import "./content.js";
import "./endUserSchema.js";
import "./endUsers.js";
import "./auditLogs.js";

export const schema = builder.toSchema();
export const sortedSchema = () => lexicographicSortSchema(schema);
