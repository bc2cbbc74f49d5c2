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
import { type DocumentNode, type ExecutionResult, type GraphQLSchema, getOperationAST, type OperationTypeNode } from "graphql";
import { getVariableValues } from "graphql/execution/values.js";
import { compileQuery, isCompiledQuery } from "graphql-jit";

export interface CompiledOperation {
  readonly name: string | undefined;
  readonly type: OperationTypeNode;
  /** Runs the operation; variable errors come back as `errors`, as graphql-js reports them. */
  execute(contextValue: object, inputs: Record<string, unknown>): ExecutionResult | Promise<ExecutionResult>;
}

export function compileOperation(schema: GraphQLSchema, document: DocumentNode): CompiledOperation {
  const operation = getOperationAST(document);
  if (!operation) throw new Error("a document to compile must hold exactly one operation");
  const compiled = compileQuery(schema, document, operation.name?.value, { useExperimentalPathBasedSkipInclude: true });
  if (!isCompiledQuery(compiled))
    throw new Error(`cannot compile ${operation.name?.value ?? "the operation"}: ${compiled.errors?.map((e) => e.message).join("; ")}`);
  const definitions = operation.variableDefinitions ?? [];
  return {
    name: operation.name?.value,
    type: operation.operation,
    execute(contextValue, inputs) {
      const coerced = getVariableValues(schema, definitions, inputs, { maxErrors: 50 });
      if (coerced.errors) return { errors: coerced.errors };
      const result = compiled.query(undefined, contextValue, coerced.coerced) as ExecutionResult | Promise<ExecutionResult>;
      return result instanceof Promise ? result.then(inGraphqlJsOrder) : inGraphqlJsOrder(result);
    },
  };
}

/** graphql-js answers `{errors, data}` when there are errors; graphql-jit `{data, errors}`: serialise alike. */
const inGraphqlJsOrder = (r: ExecutionResult): ExecutionResult => (r.errors ? { errors: r.errors, data: r.data } : r);
