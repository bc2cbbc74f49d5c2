// GraphQL types → JSON Schema (2020-12, OpenAPI 3.1's dialect). REST records and bodies are GraphQL
// results and inputs on the wire, so their types, enums, nullability and descriptions come from here.
import { GraphQLEnumType, GraphQLInputObjectType, type GraphQLInputType, GraphQLList, GraphQLNonNull, GraphQLScalarType } from "graphql";
import type { JsonSchema } from "../rest/docs.js";

const SCALARS: Record<string, JsonSchema> = {
  String: { type: "string" },
  ID: { type: "string" },
  Int: { type: "integer" },
  Float: { type: "number" },
  Boolean: { type: "boolean" },
  Timestamp: { type: "integer", minimum: 0, description: "Epoch milliseconds (UTC)." },
  EventId: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
  JSON: {},
  CustomValues: { type: "object", additionalProperties: { type: ["string", "number", "boolean", "null"] } },
  UserActionCounts: { type: "object", additionalProperties: { type: "integer", minimum: 0 } },
  UserActionValues: { type: "object", additionalProperties: { type: "integer" } },
};

/** Allows null in a schema (OpenAPI 3.1 spells it as a type union, not `nullable`). */
export function orNull(schema: JsonSchema): JsonSchema {
  if (Object.keys(schema).filter((k) => k !== "description").length === 0) return schema; // `{}` already allows null
  const out: JsonSchema = { ...schema };
  if (typeof out.type === "string") out.type = [out.type, "null"];
  if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  return out;
}

/** The schema of a leaf (scalar or enum) type, without nullability. */
export function leafSchema(type: GraphQLScalarType | GraphQLEnumType): JsonSchema {
  if (type instanceof GraphQLEnumType) return { type: "string", enum: type.getValues().map((v) => v.value as string) };
  const known = SCALARS[type.name];
  if (known) return { ...known };
  return type.description ? { description: type.description } : {};
}

/** Input type → schema; `field` descriptions are merged by the caller. */
export function inputSchema(type: GraphQLInputType): JsonSchema {
  if (type instanceof GraphQLNonNull) return nonNullInput(type.ofType);
  return orNull(nonNullInput(type));
}

function nonNullInput(type: GraphQLInputType): JsonSchema {
  if (type instanceof GraphQLList) return { type: "array", items: inputSchema(type.ofType) };
  if (type instanceof GraphQLInputObjectType) return inputObjectSchema(type);
  if (type instanceof GraphQLScalarType || type instanceof GraphQLEnumType) return leafSchema(type);
  return {};
}

export interface InputObjectOptions {
  rename?: Record<string, string>;
  omit?: string[];
  /** Wire names that are required although GraphQL allows them to be absent (checked in resolvers). */
  required?: string[];
}

export function inputObjectSchema(type: GraphQLInputObjectType, opts: InputObjectOptions = {}): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [...(opts.required ?? [])];
  for (const field of Object.values(type.getFields())) {
    if (opts.omit?.includes(field.name)) continue;
    const name = opts.rename?.[field.name] ?? field.name;
    const schema = inputSchema(field.type);
    properties[name] = field.description ? { ...schema, description: field.description } : schema;
    if (field.type instanceof GraphQLNonNull && field.defaultValue === undefined && !required.includes(name)) required.push(name);
  }
  return {
    type: "object",
    ...(type.description ? { description: type.description } : {}),
    properties,
    ...(required.length ? { required } : {}),
    // GraphQL input coercion rejects unknown fields, so the REST body does too.
    additionalProperties: false,
  };
}
