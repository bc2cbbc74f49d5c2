// Schema builder configuration only: plugins, context, scalars, root types. Domain types live in
// one file per domain next to this one.
import SchemaBuilder from "@pothos/core";
import DataloaderPlugin from "@pothos/plugin-dataloader";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import ZodPlugin from "@pothos/plugin-zod";
import { GraphQLError } from "graphql";
import type { Context } from "../context.js";
import { prisma } from "../db/index.js";
import { badRequest } from "../errors.js";
import type PrismaTypes from "../generated/pothos-types.js";
import { getDatamodel } from "../generated/pothos-types.js";

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  Scalars: {
    /** Epoch milliseconds */
    Timestamp: { Input: Date; Output: Date };
    /** An event's id: 64-bit in the database, exact as a JavaScript number up to 2^53 − 1 */
    EventId: { Input: number; Output: number };
    JSON: { Input: unknown; Output: unknown };
    CustomValues: { Input: unknown; Output: unknown };
    UserActionCounts: { Input: unknown; Output: unknown };
    UserActionValues: { Input: unknown; Output: unknown };
    /** src/domains/events: checked per item by its resolver */
    EngagementEvent: { Input: unknown; Output: unknown };
  };
}>({
  defaultFieldNullability: false,
  plugins: [PrismaPlugin, RelayPlugin, DataloaderPlugin, ZodPlugin],
  prisma: {
    client: prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: true,
    filterConnectionTotalCount: true,
    // Every prisma field must spread its `query`, or selections silently stop folding into SQL.
    onUnusedQuery: process.env.NODE_ENV === "production" ? null : "error",
  },
  relay: {
    clientMutationId: "omit",
    cursorType: "String",
    nodesOnConnection: true,
  },
  zod: {
    // Argument validation failures are the caller's fault: 400 with one entry per bad argument.
    validationError: (error) =>
      badRequest(
        error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; "),
        error.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
      ),
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});

/** 9999-12-31T23:59:59.999Z, the last instant both databases store. */
export const MAX_TIMESTAMP = 253_402_300_799_999;

builder.scalarType("Timestamp", {
  description: "A point in time, as integer milliseconds since the Unix epoch (UTC).",
  serialize: (value) => (value instanceof Date ? value.getTime() : Number(value)),
  parseValue: (value) => {
    // Already parsed (a Date is never JSON): compiled execution coerces variables graphql-js coerced.
    if (value instanceof Date) return value;
    // Past year 9999 neither database stores a time (and Prisma throws): the caller's error, not ours.
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_TIMESTAMP) {
      throw new GraphQLError(`Timestamp must be an integer of epoch milliseconds from 0 to ${MAX_TIMESTAMP} (9999-12-31)`);
    }
    return new Date(value);
  },
});

// Event ids come from one sequence shared by every account and pass 2^31 (GraphQL's Int) in a
// service's life: a scalar of their own, a JSON integer up to 2^53 − 1.
builder.scalarType("EventId", {
  description: "An event's id: an integer that increases in ingestion order, from 0 to 2^53 − 1 (9007199254740991).",
  serialize: (value) => Number(value),
  parseValue: (value) => {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new GraphQLError("EventId must be an integer from 0 to 9007199254740991");
    return value;
  },
});

builder.scalarType("JSON", {
  description: "Any JSON value.",
  serialize: (value) => value,
  parseValue: (value) => value,
});

// JSON objects of a known shape. Their values are checked per item by the resolvers (a bad item
// fails alone, with its index), so parsing accepts any JSON; the names and descriptions (and the
// OpenAPI schemas derived from them) say what a valid value is.
for (const [name, description] of [
  ["CustomValues", "Custom field name → value: a string, number, boolean, or null (to clear it), of the field's type in the schema."],
  ["UserActionCounts", "User-action id → how often it happened (a non-negative integer)."],
  ["UserActionValues", "User-action id → the integer last reported with it (e.g. a time in epoch ms)."],
] as const) {
  builder.scalarType(name, { description, serialize: (value) => value, parseValue: (value) => value });
}
