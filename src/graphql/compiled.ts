// Compiled execution of the documents the service knows at start-up (every REST route's operation):
// each is compiled once by graphql-jit into a function, and a request runs that function with its
// context and variables instead of graphql-js walking the document and completing every field of
// every row through the generic machinery.
//
// Variables are coerced first by graphql-js's own getVariableValues, so coercion, defaults and the
// error messages are exactly graphql-js's (graphql-jit coerces again; for values graphql-js already
// coerced that is the identity: our one non-idempotent scalar, Timestamp, accepts the Date it
// produced). `@include`/`@skip` run with graphql-jit's path-based evaluation, which handles them on
// fields and fragments alike. test/compiled-execution.test.ts runs every route's document through
// this path and through graphql-js's execute on the same data and compares the results byte for byte.
import { type DocumentNode, type ExecutionResult, type GraphQLError, type GraphQLSchema, getOperationAST, type OperationTypeNode } from "graphql";
import { getVariableValues } from "graphql/execution/values.js";
import { compileQuery, isCompiledQuery } from "graphql-jit";
import type { Plugin } from "graphql-yoga";

export interface CompiledOperation {
  readonly name: string | undefined;
  readonly type: OperationTypeNode;
  /** Runs the operation; variable errors come back as `errors`, as graphql-js reports them. */
  execute(contextValue: object, inputs: Record<string, unknown>): ExecutionResult | Promise<ExecutionResult>;
}

export function compileOperation(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): CompiledOperation {
  const operation = getOperationAST(document, operationName);
  if (!operation) throw new Error("a document to compile must name one of its operations");
  const compiled = compileQuery(schema, document, operation.name?.value, { useExperimentalPathBasedSkipInclude: true });
  if (!isCompiledQuery(compiled))
    throw new Error(`cannot compile ${operation.name?.value ?? "the operation"}: ${compiled.errors?.map((e) => e.message).join("; ")}`);
  const definitions = operation.variableDefinitions ?? [];
  return {
    name: operation.name?.value,
    type: operation.operation,
    execute(contextValue, inputs) {
      const coerced = getVariableValues(schema, definitions, inputs, { maxErrors: 50 });
      if (coerced.errors) return { errors: coerced.errors.map(requestError) };
      const result = compiled.query(undefined, contextValue, coerced.coerced) as ExecutionResult | Promise<ExecutionResult>;
      return result instanceof Promise ? result.then(inGraphqlJsOrder) : inGraphqlJsOrder(result);
    },
  };
}

/** graphql-js answers `{errors, data}` when there are errors; graphql-jit `{data, errors}`: serialise alike. */
const inGraphqlJsOrder = (r: ExecutionResult): ExecutionResult => (r.errors ? { errors: r.errors, data: r.data } : r);

/**
 * Compiled operations per parsed document and operation name, for POST /graphql: a dashboard or a
 * segmentation service sends the same few documents over and over. Kept per DocumentNode (Yoga's
 * parse cache hands out the same node for the same text and bounds how many it keeps; the fast
 * path's accepted queries are bounded too): an entry lives only as long as its document. null: a
 * document graphql-jit cannot compile, or a subscription, which runs on graphql-js as before.
 */
export class CompiledDocuments {
  private readonly byDocument = new WeakMap<DocumentNode, Map<string, CompiledOperation | null>>();
  constructor(private readonly schema: GraphQLSchema) {}

  get(document: DocumentNode, operationName: string | null | undefined): CompiledOperation | null {
    let byName = this.byDocument.get(document);
    if (!byName) this.byDocument.set(document, (byName = new Map()));
    const key = operationName ?? "";
    let op = byName.get(key);
    if (op === undefined) {
      try {
        op = getOperationAST(document, operationName)?.operation === "subscription" ? null : compileOperation(this.schema, document, operationName);
      } catch {
        op = null;
      }
      byName.set(key, op);
    }
    return op;
  }
}

/** The Yoga plugin that runs POST /graphql's operations compiled (src/graphql/fastPath.ts runs the repeated ones before Yoga). */
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
