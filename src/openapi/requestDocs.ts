// Request-side schemas and sample inputs of a route, from its declarative docs (query, body, params)
// and the GraphQL input types they name. The same sample input feeds response derivation, the
// documented examples, and the drift test.
import { GraphQLInputObjectType, type GraphQLSchema } from "graphql";
import type { BodyDoc, JsonSchema } from "../rest/docs.js";
import type { RestInput, RestRoute } from "../rest/routes.js";
import { inputObjectSchema } from "./graphqlSchemas.js";

/** `/v1/accounts/:accountId/tags/:names` → `/v1/accounts/{accountId}/tags/{names}`, and the names. */
export function openApiPath(expressPath: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  if (/[*?()]/.test(path)) throw new Error(`Route path ${expressPath} uses Express syntax the OpenAPI generator does not translate`);
  return { path, params };
}

export function bodySchema(doc: BodyDoc | undefined, schema: GraphQLSchema): JsonSchema | undefined {
  if (!doc) return undefined;
  let s: JsonSchema;
  if ("schema" in doc) {
    s = doc.schema;
  } else {
    const type = schema.getType(doc.input);
    if (!(type instanceof GraphQLInputObjectType)) throw new Error(`Body doc names ${doc.input}, which is no GraphQL input type`);
    s = inputObjectSchema(type, doc);
    if (doc.properties) {
      const props = { ...(s.properties as Record<string, JsonSchema>) };
      for (const [name, narrower] of Object.entries(doc.properties)) {
        if (!props[name]) throw new Error(`Body doc of ${doc.input} narrows '${name}', which is not one of its properties`);
        props[name] = { ...props[name], ...narrower };
      }
      s = { ...s, properties: props };
    }
    if (doc.readOnly) {
      const props = { ...(s.properties as Record<string, JsonSchema>) };
      for (const [name, field] of Object.entries(doc.readOnly)) {
        if (props[name]) throw new Error(`Body doc of ${doc.input} marks '${name}' read-only, which is one of its inputs`);
        const { example: _e, ...rest } = field;
        props[name] = {
          ...rest,
          readOnly: true,
          description: `Read-only: accepted and ignored (as a record shows it).${rest.description ? ` ${rest.description}` : ""}`,
        };
      }
      s = { ...s, properties: props };
    }
    if (doc.array) s = { type: "array", items: s, minItems: 1, maxItems: 10_000 };
  }
  return doc.description ? { ...s, description: doc.description } : s;
}

/** A value that satisfies a (simple) schema: its example or default, else built from its type. */
export function exampleOf(s: JsonSchema, name = "value"): unknown {
  if ("example" in s) return s.example;
  if ("default" in s) return s.default;
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== null);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "object": {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, exampleOf(v, k)]));
    }
    case "array":
      return [exampleOf((s.items ?? {}) as JsonSchema, name)];
    case "integer":
      return typeof s.minimum === "number" ? Math.max(s.minimum, 1) : 1;
    case "number":
      return 1.5;
    case "boolean":
      return true;
    case "string":
      return name === "id" ? "c_1" : `${name}-1`;
    default:
      return {};
  }
}

export function bodyExample(doc: BodyDoc | undefined, schema: GraphQLSchema): unknown {
  if (!doc) return undefined;
  if (doc.example !== undefined) return doc.example;
  const s = bodySchema(doc, schema);
  return s ? exampleOf(s, "body") : undefined;
}

/** A request input made of the documented examples: what a caller following the docs would send. */
export function sampleInput(route: RestRoute, schema: GraphQLSchema): RestInput {
  const { params } = openApiPath(route.path);
  return {
    params: Object.fromEntries(params.map((p) => [p, route.params?.[p]?.example ?? (p === "accountId" ? "demo" : `${p}-1`)])),
    query: Object.fromEntries(Object.entries(route.query ?? {}).map(([name, q]) => [name, String(q.example ?? exampleOf(q.schema, name))])),
    body: bodyExample(route.body, schema),
  };
}
