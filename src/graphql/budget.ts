// Cost budgets on POST/GET /graphql (issue 33 item 1): every operation is priced from its document
// and variables before it runs (src/graphql/cost.ts, the plan made once per document) and the
// accounts its root fields name are charged then: over an account's remaining points the answer is a
// 429 and nothing runs; over the hard maximum a 400. Every answer carries `extensions.cost` in
// Shopify's shape. The fast path (src/graphql/fastPath.ts) prices its requests through the same
// function; a request it hands over keeps its price (the context's `cost`), never charged twice.
import type { DocumentNode, ExecutionResult, GraphQLSchema } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { KeyScope } from "../auth/keys.js";
import type { Context } from "../context.js";
import { accountsOf, costPlan } from "./cost.js";

/** Charges `units` to the accounts named, before anything runs (throws the refusal: 429, 400). */
export type ChargeRequest = (ctx: Context, units: number, accountIds: readonly string[], scopes?: readonly KeyScope[]) => Promise<void>;
/** The `extensions.cost` of an answer, from the request's price. */
export type CostExtension = (cost: Context["cost"]) => unknown;

export interface OperationBudget {
  /** Prices the operation and charges it; throws (and records on ctx.cost) its refusal. */
  charge(ctx: Context, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | null | undefined): Promise<void>;
  /** A result with the answer's `extensions.cost` added. */
  withCost(ctx: Context, result: ExecutionResult): ExecutionResult;
  /** The `extensions.cost` of an answer refused before it was priced. */
  readonly unpriced: unknown;
}

export function operationBudget(schema: GraphQLSchema, chargeRequest: ChargeRequest, extension: CostExtension): OperationBudget {
  return {
    charge(ctx, document, operationName, variables) {
      const v = variables ?? {};
      const units = costPlan(schema, document, operationName)(v);
      return chargeRequest(ctx, units, accountsOf(schema, document, operationName, v));
    },
    withCost(ctx, result) {
      return { ...result, extensions: { ...result.extensions, cost: extension(ctx.cost) } };
    },
    unpriced: extension({ units: 0, points: 0, throttle: null }),
  };
}

/**
 * The Yoga plugin: prices and charges each operation before it executes (after parsing, validation
 * and armor's limits), stops a refused one with its error, and adds `extensions.cost` to every
 * answer of an executed operation. Place it before the plugins that set the execute function.
 */
export function useCostBudget(budget: OperationBudget): Plugin {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as unknown as Context;
      // A request the fast path handed over was priced (and perhaps refused) there.
      if (!ctx.cost) {
        try {
          await budget.charge(ctx, args.document, args.operationName, args.variableValues as Record<string, unknown> | undefined);
        } catch (err) {
          // A refusal is recorded on ctx.cost and answered below; anything else is Yoga's to mask.
          if (!refusalOf(ctx)) throw err;
        }
      }
      const refused = refusalOf(ctx);
      if (refused) return setResultAndStopExecution(budget.withCost(ctx, { errors: [refused as never] }));
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          setResult(budget.withCost(ctx, result));
        },
      };
    },
    // An answer refused before anything was priced (a body or text that does not parse, a document
    // that does not validate or is past a limit, an unknown documentId, a text from a persisted-only
    // key) carries the cost too, as every answer does: nothing priced, nothing charged.
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result || (result.extensions as { cost?: unknown } | undefined)?.cost) return;
      setResult({ ...result, extensions: { ...result.extensions, cost: budget.unpriced } });
    },
  };
}

/** (A function: TypeScript would keep `ctx.cost` narrowed to undefined across the await above.) */
const refusalOf = (ctx: Context): Error | undefined => ctx.cost?.refused;
