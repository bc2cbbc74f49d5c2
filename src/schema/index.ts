// Builds the GraphQL schema: the builder's configuration (builder.ts) plus every domain's types,
// queries and mutations (each domain object of src/domains/index.ts holds its schema module, whose
// import registers them).
import { lexicographicSortSchema } from "graphql";
import { builder } from "./builder.js";
import "../domains/index.js";

export const schema = builder.toSchema();
export const sortedSchema = () => lexicographicSortSchema(schema);
