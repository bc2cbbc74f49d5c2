// A route's GraphQL document, typed: gql.tada reads its text at type level against the schema
// (src/generated/graphql-env.d.ts, made from schema.graphql by `npm run generate`, which npm install
// runs) and gives the result and variables types. At run time it is the text alone, parsed,
// validated and compiled once at start-up (src/graphql/trustedDocuments.ts): typing costs nothing
// per request, and the text the OpenAPI document shows is the one that runs.
import { initGraphQLTada, type ResultOf as TadaResultOf, type VariablesOf as TadaVariablesOf } from "gql.tada";
import type { introspection } from "../generated/graphql-env.js";

const tada = initGraphQLTada<{
  introspection: introspection;
  // What the REST layer receives: executed results, before JSON (src/schema/builder.ts's scalars).
  scalars: {
    Timestamp: number;
    EventId: number;
    JSON: unknown;
    CustomValues: Record<string, unknown>;
    UserActionCounts: Record<string, number>;
    UserActionValues: Record<string, unknown>;
    EngagementEvent: Record<string, unknown>;
  };
}>();
// Only its type is used: the document node gql.tada's graphql() gives for the text.
const tadaDocument = <const Text extends string>(text: Text) => tada(text);
type Typed<Text extends string> = ReturnType<typeof tadaDocument<Text>>;

/** A GraphQL document's text with what executing it takes and gives (types only: `types` is never set). */
export interface Operation<Result, Variables> {
  readonly text: string;
  readonly types?: { result: Result; variables: Variables };
}

/** A route's document (write the text inline or from `const` parts, so that its type is its text). */
export function graphql<const Text extends string>(text: Text): Operation<TadaResultOf<Typed<Text>>, TadaVariablesOf<Typed<Text>>> {
  return { text };
}

/**
 * What selecting `Fields` on the GraphQL type `Type` gives: a record's node type from the selection
 * its routes ask for, so the selection text is the one place the shape is written.
 */
export type Selected<Type extends string, Fields extends string> = TadaResultOf<Typed<`fragment Selected on ${Type} { ${Fields} }`>>;

/** What executing a document gives: the `data` a row's reply picks from (for a reply written apart from its route() row). */
export type ResultOf<O> = O extends Operation<infer R, unknown> ? R : never;

/** The values of the GraphQL enum `Name`: what a route may pass to a variable of that enum. */
export type EnumValue<Name extends EnumName> = Types[Name] extends { enumValues: infer E } ? E : never;
type Types = introspection["types"];
type EnumName = { [K in keyof Types]: Types[K] extends { enumValues: unknown } ? K : never }[keyof Types];
