// The GraphQL operation's span (with tracing on): named `<type> <name>` as OpenTelemetry's GraphQL
// conventions say, with the persisted document's id and the operation's static cost (./cost.ts).
// Operations run in three places: Yoga (the plugin below), the REST routes and the fast path of
// POST /graphql (both call inOperationSpan around their execution).
import { createHash } from "node:crypto";
import { getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import { tracing } from "../observability/tracing.js";
import { operationCost } from "./cost.js";
import type { PersistedDocuments } from "./persistedDocuments.js";

export interface TracedOperation {
  name: string | undefined;
  type: string;
  /** `sha256:<hex>` of a persisted document. */
  documentId?: string | undefined;
  /** The operation's static cost: computed only when tracing is on. */
  cost?: () => number;
  /** A REST route's name. */
  route?: string;
}

function costOf(cost: (() => number) | undefined): number | undefined {
  if (!cost) return undefined;
  try {
    return cost();
  } catch {
    // Variables of the wrong type: execution reports them; the span just has no cost.
    return undefined;
  }
}

/** Runs `fn` (the operation's execution) in its span; just `fn` when tracing is off. */
export function inOperationSpan<T>(op: TracedOperation, fn: () => T): T {
  const t = tracing;
  if (!t) return fn();
  return t.inSpan(
    `${op.type} ${op.name ?? "anonymous"}`,
    {
      "graphql.operation.type": op.type,
      "graphql.operation.name": op.name,
      "graphql.document.id": op.documentId,
      "guidegate.graphql.cost": costOf(op.cost),
      "guidegate.route": op.route,
    },
    fn,
  );
}

/**
 * The Yoga plugin (mounted only with tracing on, after every plugin that sets the execute
 * function): the execution, whichever function runs it, in the operation's span.
 */
export function traceOperations(persisted: PersistedDocuments): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const op = getOperationAST(args.document, args.operationName);
      // A persisted document's text is what the request's params hold once its id was resolved.
      const text = (args.contextValue as { params?: { query?: unknown } }).params?.query;
      const documentId =
        persisted.nodes.has(args.document) && typeof text === "string" ? `sha256:${createHash("sha256").update(text).digest("hex")}` : undefined;
      setExecuteFn((a) =>
        inOperationSpan(
          {
            name: op?.name?.value,
            type: op?.operation ?? "unknown",
            documentId,
            cost: () => operationCost(a.schema, a.document, a.operationName, (a.variableValues ?? {}) as Record<string, unknown>),
          },
          () => executeFn(a),
        ),
      );
    },
  };
}
