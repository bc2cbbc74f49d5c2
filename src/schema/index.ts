// Builds the GraphQL schema: the builder's configuration (builder.ts) plus every domain's types,
// queries and mutations (src/domains/index.ts registers them).
import { lexicographicSortSchema } from "graphql";
import { builder } from "./builder.js";
import "../domains/index.js";

export const schema = builder.toSchema();
export const sortedSchema = () => lexicographicSortSchema(schema);
