// Declarative descriptions of what a REST row reads from the query string and body. The router
// ignores them; src/openapi turns them into the OpenAPI document, and test/openapi.test.ts checks
// them against what each row's variables() really reads, so they cannot drift from the code.

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1), kept loose on purpose. */
export type JsonSchema = { [keyword: string]: unknown };

export interface QueryParamDoc {
  description: string;
  schema: JsonSchema;
  required?: boolean;
  /** A valid value; the OpenAPI example, and the value the drift test feeds to variables(). */
  example?: unknown;
}

/**
 * The JSON body. `input` names a GraphQL input type: its fields become the body's properties (with
 * their descriptions and types), renamed where the wire name differs and minus `omit`. `schema` is
 * for bodies that are no GraphQL input type.
 */
export type BodyDoc = { description?: string; example?: unknown } & (
  | {
      input: string;
      array?: boolean;
      rename?: Record<string, string>;
      omit?: string[];
      required?: string[];
      /** Narrower schemas for some (wire-named) properties than their GraphQL types give, e.g. the types a route may write. */
      properties?: Record<string, JsonSchema>;
      /**
       * Fields of the route's records that an item may carry and the server drops unread (a record as
       * a GET answered it may be sent back): documented `readOnly` rather than left out, since left
       * out, `additionalProperties: false` would say they are refused.
       */
      readOnly?: Record<string, JsonSchema>;
    }
  | { schema: JsonSchema }
);

export const cursorQuery: QueryParamDoc = {
  description: "Opaque cursor of the next page, from the previous page's `cursor`; absent for the first page.",
  schema: { type: "string", pattern: "^[A-Za-z0-9_-]+$" },
  example: "WzE3MTgwMDAwMDAwMDAsImNfMSJd",
};

export function limitQuery(limits: { default: number; max: number }): QueryParamDoc {
  return {
    description: "Page size.",
    schema: { type: "integer", minimum: 1, maximum: limits.max, default: limits.default },
    example: Math.min(limits.default, 50),
  };
}

/** `limit` and `cursor`, the two parameters of every paginated list. */
export function pageQuery(limits: { default: number; max: number }): Record<string, QueryParamDoc> {
  return { limit: limitQuery(limits), cursor: cursorQuery };
}
