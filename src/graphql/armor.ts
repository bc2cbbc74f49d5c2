// Limits on what one GraphQL document may ask for (graphql-armor): depth, cost, aliases, tokens and
// directives. A rejected document is the caller's fault, so it answers 400 with a message that names
// the limit, whatever the client's Accept header (Yoga would answer 200 for plain application/json).
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { GraphQLError, type ValidationContext } from "graphql";
import type { Plugin } from "graphql-yoga";

export const LIMIT_CODE = "QUERY_LIMIT_EXCEEDED";

export interface GraphQLLimits {
  maxDepth: number;
  maxCost: number;
  maxAliases: number;
  maxTokens: number;
  maxDirectives: number;
  /** Hide "Did you mean …?" hints; sensible when introspection is off, or they leak the schema. */
  blockFieldSuggestions: boolean;
}

function rejecter(limit: string) {
  return (ctx: ValidationContext | null, error: GraphQLError) => {
    // "Syntax Error:" (armor's prefix for the token limit) would send the client looking for a typo.
    const clear = new GraphQLError(error.message.replace(/^Syntax Error: /, ""), {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      extensions: { code: LIMIT_CODE, limit, http: { status: 400 } },
    });
    // Validation rules report into the context; the token limit runs inside the parser (no context).
    if (ctx) ctx.reportError(clear);
    else throw clear;
  };
}

/** The callbacks armor calls on rejection, replacing its own propagation so the error is ours. */
const on = (limit: string) => ({ propagateOnRejection: false, onReject: [rejecter(limit)] });

export function armorPlugins(limits: GraphQLLimits): Plugin[] {
  return [
    EnvelopArmorPlugin({
      maxDepth: { n: limits.maxDepth, ignoreIntrospection: true, flattenFragments: true, ...on("maxDepth") },
      costLimit: { maxCost: limits.maxCost, ignoreIntrospection: true, ...on("maxCost") },
      maxAliases: { n: limits.maxAliases, ...on("maxAliases") },
      maxTokens: { n: limits.maxTokens, ...on("maxTokens") },
      maxDirectives: { n: limits.maxDirectives, ...on("maxDirectives") },
      blockFieldSuggestion: { enabled: limits.blockFieldSuggestions },
    }) as Plugin,
    {
      // Parse errors are marked "GraphQL over HTTP spec" errors by Yoga, which answers them 200 to
      // application/json clients; a limit rejection is a client error and says so with a 400.
      onResultProcess({ result, setResult }) {
        if (Array.isArray(result) || Symbol.asyncIterator in result) return;
        if (!result.errors?.some((e) => (e as GraphQLError).extensions?.code === LIMIT_CODE)) return;
        setResult({ ...result, extensions: { ...result.extensions, http: { status: 400 } } });
      },
    },
  ];
}
