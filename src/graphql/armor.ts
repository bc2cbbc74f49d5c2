// Limits on what one GraphQL document may ask for (graphql-armor): depth, cost, aliases, tokens and
// directives. A rejected document is the caller's fault, so it answers 400 with a message that names
// the limit, whatever the client's Accept header (Yoga would answer 200 for plain application/json).
import { ApolloArmor, EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  type ValidationContext,
  type ValidationRule,
  validate,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { type Config, loadConfig } from "../config.js";
import { unstorableLiteral } from "../text.js";
import { VariableValueError } from "./compiled.js";

export const LIMIT_CODE = "QUERY_LIMIT_EXCEEDED";

export interface GraphQLLimits {
  maxDepth: number;
  maxCost: number;
  maxAliases: number;
  maxTokens: number;
  maxDirectives: number;
  /** Hide "Did you mean …?" hints; sensible when introspection is off, or they leak the schema. */
  blockFieldSuggestions: boolean;
  /** Whether `__schema` and `__type` may be asked (INTROSPECTION). */
  introspection: boolean;
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

/** The limits as configured (GRAPHQL_MAX_*; suggestions hidden when introspection is off). */
export function limitsOf(config: Config): GraphQLLimits {
  return {
    maxDepth: config.GRAPHQL_MAX_DEPTH,
    maxCost: config.GRAPHQL_MAX_COST,
    maxAliases: config.GRAPHQL_MAX_ALIASES,
    maxTokens: config.GRAPHQL_MAX_TOKENS,
    maxDirectives: config.GRAPHQL_MAX_DIRECTIVES,
    blockFieldSuggestions: !config.INTROSPECTION,
    introspection: config.INTROSPECTION,
  };
}

/**
 * A document text held to the same limits outside Yoga (a saved endpoint's, which runs without
 * Yoga's plugins): parsed within the token limit, then validated with armor's rules for depth,
 * cost, aliases and directives. The messages of what is past a limit; none when within them.
 */
export function limitErrors(schema: GraphQLSchema, text: string, limits: GraphQLLimits): string[] {
  let document: DocumentNode;
  try {
    document = parse(text, { maxTokens: limits.maxTokens });
  } catch (err) {
    // In armor's words, as POST /graphql answers the same text.
    const message = (err as Error).message;
    return [/more (than|that) \d+ tokens/.test(message) ? `Token limit of ${limits.maxTokens} exceeded.` : message.replace(/^Syntax Error: /, "")];
  }
  // (armor prefixes its messages with "Syntax Error: ", which would send the reader looking for a typo.)
  return validate(schema, document, limitRules(limits)).map((e) => e.message.replace(/^Syntax Error: /, ""));
}

const rulesOf = new WeakMap<GraphQLLimits, ValidationRule[]>();
/** armor's validation rules for these limits, made once per limits object. */
function limitRules(limits: GraphQLLimits): ValidationRule[] {
  let rules = rulesOf.get(limits);
  if (!rules) {
    rules = new ApolloArmor({
      maxDepth: { n: limits.maxDepth, ignoreIntrospection: true, flattenFragments: true },
      costLimit: { maxCost: limits.maxCost, ignoreIntrospection: true },
      maxAliases: { n: limits.maxAliases },
      maxDirectives: { n: limits.maxDirectives },
      maxTokens: { enabled: false },
      blockFieldSuggestion: { enabled: false },
    }).protect().validationRules;
    rulesOf.set(limits, rules);
  }
  return rules;
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
      // Ours instead (suggestionsHidden): armor's mask misses enum values and variables.
      blockFieldSuggestion: { enabled: false },
    }) as Plugin,
    ...(limits.blockFieldSuggestions ? [suggestionsHidden()] : []),
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

let documentLimits: GraphQLLimits | null = null;
/** The limits stored documents are held to: the app's (src/app.ts), else the environment's. */
export function configureDocumentLimits(configured: GraphQLLimits): void {
  documentLimits = configured;
}

/**
 * A stored document's breaches of the GraphQL limits (depth, cost, aliases, tokens, directives) that
 * every text sent to POST /graphql is held to. Saved endpoints and persisted documents are parsed
 * outside Yoga's plugins: without this, a text refused there could be stored, then parsed and
 * cached by id (a megabyte of aliases kept ~60 MB of heap).
 */
export function documentPastLimits(text: string, schema: GraphQLSchema): string[] {
  return limitErrors(schema, text, documentLimitsNow());
}

/** The limits stored documents are held to now. */
export const documentLimitsNow = (): GraphQLLimits => (documentLimits ??= limitsOf(loadConfig()));

/** graphql-js's rules, and the one refusing `__schema`/`__type` when introspection is off (as Yoga's useDisableIntrospection adds). */
const closedRules = [...specifiedRules, NoSchemaIntrospectionCustomRule];

/**
 * A stored document's errors against the schema, as POST /graphql would report them with the
 * configuration now: introspection refused when it is off, and "Did you mean …?" hints hidden then
 * (armor's mask), since a saved endpoint or a manifest answers these messages outside Yoga.
 */
export function documentValidationErrors(schema: GraphQLSchema, document: DocumentNode): string[] {
  const limits = documentLimitsNow();
  const errors = validate(schema, document, limits.introspection ? specifiedRules : closedRules);
  const messages = errors.map((e) => e.message);
  return limits.blockFieldSuggestions ? messages.map(withoutSuggestions) : messages;
}

/**
 * graphql-js's hints, each up to its question mark: a field, argument, type or input field name
 * (`Did you mean "email"?`), an enum value (`Did you mean the enum value "week"?`, in validation and
 * in a variable's coercion alike) or an abstract type's members (`Did you mean to use an inline
 * fragment on "Flow"?`). Names hold no `?`. (armor's own mask matches only the first form.)
 */
const SUGGESTION = /Did you mean [^?]*\?/g;

/** A message with its "Did you mean …?" hints hidden, as armor hides them. */
export const withoutSuggestions = (message: string): string => message.replace(SUGGESTION, "[Suggestion hidden]").trim();

/** Hides the hints of these errors in place (a cached validation result stays hidden too). */
export function hideSuggestions<E extends Error>(errors: readonly E[]): readonly E[] {
  for (const e of errors) {
    if (!e.message.includes("Did you mean")) continue;
    e.message = withoutSuggestions(e.message);
    // A REST caller reads the reason alone, under the parameter's name (src/rest/problem.ts).
    if (e instanceof VariableValueError) e.reason = withoutSuggestions(e.reason);
  }
  return errors;
}

/**
 * With introspection off, hints would name what the schema hides: hidden in validation errors (a
 * typo in the text) and in execution results (a variable's coercion: a wrong enum value or input
 * field name is reported by execute, which armor's mask never sees).
 */
function suggestionsHidden(): Plugin {
  return {
    onValidate:
      () =>
      ({ valid, result, setResult }) => {
        if (!valid) setResult([...hideSuggestions(result)]);
      },
    onExecute: () => ({
      onExecuteDone({ result }) {
        if (!(Symbol.asyncIterator in result) && result.errors) hideSuggestions(result.errors);
      },
    }),
  };
}

/**
 * Why a document cannot be stored to run later (a saved endpoint, a persisted document), as the rest
 * of a sentence naming it; null when it can. POST /graphql's checks, in its order: the limits first,
 * as Yoga checks them (a text past them is not worth validating, and graphql-js gives up on one with
 * many errors: "Validation aborted."); then validation; then a string literal holding NUL, which
 * would reach the database at each call, where PostgreSQL refuses it (a 500).
 */
export function storedDocumentProblem(text: string, document: DocumentNode, schema: GraphQLSchema): string | null {
  const past = documentPastLimits(text, schema);
  if (past.length) return `is past this API's limits on a GraphQL document: ${past.join("; ")}`;
  const errors = documentValidationErrors(schema, document);
  if (errors.length) return `is not valid for this API: ${errors.join("; ")}`;
  const literal = unstorableLiteral(document);
  return literal ? `has a ${literal.message}` : null;
}
