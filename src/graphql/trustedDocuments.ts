// Trusted documents: the REST routes' GraphQL operations are parsed and validated once, when the app
// is built, and every request that sends one of them (every REST call) reuses that DocumentNode and
// skips validation. A route document that does not validate stops start-up, naming the route.
// The armor limits guard what clients write; these documents are ours, so they are not re-checked.
// Each is also compiled once (src/graphql/compiled.ts): REST routes run the compiled function.
import { type DocumentNode, type GraphQLSchema, parse, validate } from "graphql";
import type { Plugin } from "graphql-yoga";
import { type CompiledOperation, compileOperation } from "./compiled.js";
import { type CostPlan, costPlan } from "./cost.js";

export interface TrustedDocuments {
  /** Source text → the document parsed at start-up. */
  readonly documents: ReadonlyMap<string, DocumentNode>;
  /** Source text → the document compiled at start-up (what REST routes execute). */
  readonly operations: ReadonlyMap<string, CompiledOperation>;
  /** Source text → its cost plan, made at start-up (a constant unless a variable sizes a list). */
  readonly costs: ReadonlyMap<string, CostPlan>;
  /** Parses done at start-up (one per distinct document). */
  readonly parsedAtStartup: number;
  /** Requests served the pre-parsed document instead of a parse. */
  hits: number;
  /** Executions whose document was one of the pre-parsed nodes (by identity). */
  trustedExecutions: number;
  plugin: Plugin;
}

export function trustDocuments(sources: Iterable<{ name: string; document: string }>, schema: GraphQLSchema): TrustedDocuments {
  const documents = new Map<string, DocumentNode>();
  const nodes = new WeakSet<DocumentNode>();
  for (const { name, document } of sources) {
    if (documents.has(document)) continue;
    let doc: DocumentNode;
    try {
      doc = parse(document);
    } catch (err) {
      throw new Error(`REST route ${name}: its GraphQL document does not parse: ${(err as Error).message}`);
    }
    const errors = validate(schema, doc);
    if (errors.length) throw new Error(`REST route ${name}: its GraphQL document is invalid: ${errors.map((e) => e.message).join("; ")}`);
    documents.set(document, doc);
    nodes.add(doc);
  }

  const operations = new Map<string, CompiledOperation>();
  const costs = new Map<string, CostPlan>();
  for (const [source, doc] of documents) {
    costs.set(source, costPlan(schema, doc));
    const op = compileOperation(schema, doc);
    operations.set(source, {
      name: op.name,
      type: op.type,
      cost: op.cost,
      execute(contextValue, inputs) {
        trusted.trustedExecutions++;
        return op.execute(contextValue, inputs);
      },
    });
  }

  const trusted: TrustedDocuments = {
    documents,
    operations,
    costs,
    parsedAtStartup: documents.size,
    hits: 0,
    trustedExecutions: 0,
    plugin: {
      onParse({ params, setParsedDocument }) {
        const doc = documents.get(typeof params.source === "string" ? params.source : params.source.body);
        if (doc) {
          trusted.hits++;
          setParsedDocument(doc);
        }
      },
      onValidate({ params, setResult }) {
        // Validated at start-up against the same schema: skip the rules (armor's included).
        if (nodes.has(params.documentAST)) setResult([]);
      },
      onExecute({ args }) {
        if (nodes.has(args.document)) trusted.trustedExecutions++;
      },
    },
  };
  return trusted;
}
