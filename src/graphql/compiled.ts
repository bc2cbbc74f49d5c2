// Compiled execution of the documents the service knows at start-up (every REST route's operation):
// each is compiled once by graphql-jit into a function, and a request runs that function with its
// context and variables instead of graphql-js walking the document and completing every field of
// every row through the generic machinery.
//
// Variables are coerced first, by graphql-js's own coerceInputValue with the steps and messages of
// its getVariableValues (variableCoercion below), so coercion, defaults and the error messages are
// exactly graphql-js's; each error also keeps where it happened (VariableValueError), for callers
// that name the value their own way (REST names `$input` the body). graphql-jit coerces again; for
// values graphql-js already coerced that is the identity: our one non-idempotent scalar, Timestamp,
// accepts the Date it produced. `@include`/`@skip` run with graphql-jit's path-based evaluation,
// which handles them on fields and fragments alike. test/compiled-execution.test.ts runs every
// route's document through this path and through graphql-js's execute on the same data and
// compares the results byte for byte.
import {
  coerceInputValue,
  type DocumentNode,
  type ExecutionResult,
  GraphQLError,
  type GraphQLErrorOptions,
  type GraphQLSchema,
  getOperationAST,
  isInputType,
  isNonNullType,
  isScalarType,
  Kind,
  type OperationDefinitionNode,
  type OperationTypeNode,
  type TypeNode,
  typeFromAST,
  type VariableDefinitionNode,
  valueFromAST,
} from "graphql";
import { inspect } from "graphql/jsutils/inspect.js";
import { printPathArray } from "graphql/jsutils/printPathArray.js";
import { printForError } from "graphql/language/printer.js";
import { compileQuery, isCompiledQuery } from "graphql-jit";
import type { Plugin } from "graphql-yoga";
import { operationCost } from "./cost.js";

export interface CompiledOperation {
  readonly name: string | undefined;
  readonly type: OperationTypeNode;
  /** `sha256:<hex>` of a persisted document's text (a saved endpoint's): the operation's span shows it. */
  readonly documentId?: string;
  /** Its static cost (./cost.ts) for these variables (the operation's span shows it). */
  cost(inputs: Record<string, unknown>): number;
  /** Runs the operation; variable errors come back as `errors`, as graphql-js reports them. */
  execute(contextValue: object, inputs: Record<string, unknown>): ExecutionResult | Promise<ExecutionResult>;
}

export function compileOperation(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): CompiledOperation {
  const operation = getOperationAST(document, operationName);
  if (!operation) throw new Error("a document to compile must name one of its operations");
  const compiled = compileQuery(schema, passThroughVariables(schema, document, operation), operation.name?.value, {
    useExperimentalPathBasedSkipInclude: true,
  });
  if (!isCompiledQuery(compiled))
    throw new Error(`cannot compile ${operation.name?.value ?? "the operation"}: ${compiled.errors?.map((e) => e.message).join("; ")}`);
  const coerce = variableCoercion(schema, operation.variableDefinitions ?? []);
  return {
    name: operation.name?.value,
    type: operation.operation,
    cost: (inputs) => operationCost(schema, document, operation.name?.value, inputs),
    execute(contextValue, inputs) {
      const coerced = coerce(inputs);
      if (coerced.errors) return { errors: coerced.errors.map(requestError) };
      const result = compiled.query(undefined, contextValue, coerced.values) as ExecutionResult | Promise<ExecutionResult>;
      return result instanceof Promise ? result.then(inGraphqlJsOrder) : inGraphqlJsOrder(result);
    },
  };
}

/**
 * graphql-jit writes a coercion function per variable, unrolled through every nested input type: for
 * the Explore inputs (filters within filters) that was 3–10 MB of source per operation, held for the
 * life of the process (~25 MB of an idle server's heap, more while compiling). Variables reach it
 * already coerced by graphql-js (variableCoercion), so it is handed a copy of the operation whose
 * variables are the schema's JSON scalar (identity) without defaults: its coercion is then a copy.
 * Boolean variables stay as written: graphql-jit checks their type where `@skip`/`@include` use them.
 */
function passThroughVariables(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): DocumentNode {
  const json = schema.getType("JSON");
  if (!isScalarType(json) || !operation.variableDefinitions?.length) return document;
  const isBoolean = (t: TypeNode): boolean => (t.kind === Kind.NON_NULL_TYPE ? isBoolean(t.type) : t.kind === Kind.NAMED_TYPE && t.name.value === "Boolean");
  const variableDefinitions = operation.variableDefinitions.map((v) =>
    isBoolean(v.type) ? v : { ...v, type: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: json.name } } as const, defaultValue: undefined },
  );
  return { ...document, definitions: document.definitions.map((d) => (d === operation ? { ...operation, variableDefinitions } : d)) };
}

/** graphql-js answers `{errors, data}` when there are errors; graphql-jit `{data, errors}`: serialise alike. */
const inGraphqlJsOrder = (r: ExecutionResult): ExecutionResult => (r.errors ? { errors: r.errors, data: r.data } : r);

/** An operation used once: compiled if it is used again. */
const SEEN = Symbol("seen once");

/**
 * Compiled operations of POST /graphql's documents: a dashboard or a segmentation service sends the
 * same few documents over and over. An operation is compiled on its second use; its first runs on
 * graphql-js, since compiling costs several plain executions and most texts a client makes up are
 * sent once. Kept per operation node of a parsed document (a WeakMap): an entry lives only as long
 * as its document, and only the bounded text caches keep documents across requests (Yoga's parse
 * cache and the fast path's accepted queries, src/textCache.ts); a text too big to cache is parsed
 * into a new document each time, so it is never compiled. An operation name that names nothing in
 * the document keeps nothing. null: a document graphql-jit cannot compile, or a subscription, which
 * runs on graphql-js as before.
 */
export class CompiledDocuments {
  private readonly byOperation = new WeakMap<OperationDefinitionNode, CompiledOperation | null | typeof SEEN>();
  /** Operations compiled so far: for the operator's and the tests' eyes. */
  compilations = 0;
  constructor(private readonly schema: GraphQLSchema) {}

  /** The document's operations compile on their first use (a persisted document: registered to be sent again and again). */
  eager(document: DocumentNode): void {
    this.eagerDocuments.add(document);
  }
  private readonly eagerDocuments = new WeakSet<DocumentNode>();

  get(document: DocumentNode, operationName: string | null | undefined): CompiledOperation | null {
    const operation = getOperationAST(document, operationName);
    if (!operation || operation.operation === "subscription") return null;
    const known = this.byOperation.get(operation);
    if (known === undefined && !this.eagerDocuments.has(document)) {
      this.byOperation.set(operation, SEEN);
      return null;
    }
    if (known !== undefined && known !== SEEN) return known;
    let op: CompiledOperation | null;
    try {
      op = compileOperation(this.schema, document, operationName);
      this.compilations++;
    } catch {
      op = null;
    }
    this.byOperation.set(operation, op);
    return op;
  }
}

/** The Yoga plugin that runs POST /graphql's operations compiled from their second use (src/graphql/fastPath.ts runs the repeated ones before Yoga). */
export function useCompiledExecution(documents: CompiledDocuments): Plugin {
  return {
    onExecute({ args, setExecuteFn }) {
      const run = documents.get(args.document, args.operationName);
      if (run) setExecuteFn((a) => run.execute(a.contextValue as object, (a.variableValues ?? {}) as Record<string, unknown>));
    },
  };
}

/**
 * Variables that do not coerce are the request's fault, before anything ran: a 400, as the executor
 * Yoga runs (@graphql-tools/executor) marks them.
 */
function requestError(e: GraphQLError): GraphQLError {
  const http = (e.extensions?.http ?? {}) as object;
  Object.defineProperty(e, "extensions", { value: { ...e.extensions, http: { ...http, status: 400 } }, enumerable: true });
  return e;
}

/**
 * A variable value that does not coerce, with where: `variable` (without `$`), the `valuePath` inside its
 * value and graphql-js's `reason`. Its message is graphql-js's, word for word (what POST /graphql
 * answers); the parts let the REST layer name the value as its caller sent it.
 */
export class VariableValueError extends GraphQLError {
  constructor(
    message: string,
    options: GraphQLErrorOptions,
    readonly variable: string,
    readonly valuePath: readonly (string | number)[],
    /** Why it did not coerce; its hints are hidden with the message's (hideSuggestions, src/graphql/armor.ts). */
    public reason: string,
  ) {
    super(message, options);
  }
}

/** Past this many variable errors coercion stops (graphql-js's getVariableValues with `maxErrors`). */
const MAX_VARIABLE_ERRORS = 50;

type Coerced = { values: Record<string, unknown>; errors?: undefined } | { errors: GraphQLError[] };

/**
 * graphql-js's getVariableValues (graphql/execution/values.js, 16.x) step for step and message for
 * message, with each definition's type resolved once here rather than on every request, and the
 * coercion errors of values kept as VariableValueErrors.
 */
function variableCoercion(schema: GraphQLSchema, definitions: readonly VariableDefinitionNode[]): (inputs: Record<string, unknown>) => Coerced {
  const variables = definitions.map((node) => ({ node, name: node.variable.name.value, type: typeFromAST(schema, node.type) }));
  return (inputs) => {
    const errors: GraphQLError[] = [];
    const onError = (error: GraphQLError) => {
      if (errors.length >= MAX_VARIABLE_ERRORS) throw new GraphQLError("Too many errors processing variables, error limit reached. Execution aborted.");
      errors.push(error);
    };
    const values: Record<string, unknown> = Object.create(null);
    try {
      for (const { node, name, type } of variables) {
        if (!isInputType(type)) {
          onError(
            new GraphQLError(`Variable "$${name}" expected value of type "${printForError(node.type)}" which cannot be used as an input type.`, {
              nodes: node.type,
            }),
          );
          continue;
        }
        if (!Object.hasOwn(inputs, name)) {
          if (node.defaultValue) values[name] = valueFromAST(node.defaultValue, type);
          else if (isNonNullType(type)) onError(new GraphQLError(`Variable "$${name}" of required type "${inspect(type)}" was not provided.`, { nodes: node }));
          continue;
        }
        const value = inputs[name];
        if (value === null && isNonNullType(type)) {
          onError(new GraphQLError(`Variable "$${name}" of non-null type "${inspect(type)}" must not be null.`, { nodes: node }));
          continue;
        }
        values[name] = coerceInputValue(value, type, (path, invalidValue, error) => {
          const at = path.length > 0 ? ` at "${name}${printPathArray(path)}"` : "";
          const message = `Variable "$${name}" got invalid value ${inspect(invalidValue)}${at}; ${error.message}`;
          onError(new VariableValueError(message, { nodes: node, originalError: error }, name, path, error.message));
        });
      }
    } catch (error) {
      errors.push(error as GraphQLError);
    }
    return errors.length ? { errors } : { values: { ...values } };
  };
}
