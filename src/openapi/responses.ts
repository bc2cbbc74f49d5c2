// Response schemas are derived, not written. For each route we synthesise GraphQL results for its
// document (what the schema says its selection returns) under a few scenarios (all succeeded, some
// failed, all failed, not found), run the route's own reply() on them, and describe what comes out.
// In the "marker" pass every leaf value is unique, so each value of the REST body can be traced back
// to the GraphQL field it came from, giving its type, enum, nullability and description; the
// "example" pass uses plausible values and yields the documented examples.
import {
  GraphQLEnumType,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLObjectType,
  type GraphQLScalarType,
  Kind,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isObjectType,
  valueFromAST,
  type DirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import type { JsonSchema } from "../rest/docs.js";
import type { Problem } from "../rest/problem.js";
import type { RestInput, RestRoute } from "../rest/routes.js";
import { OBJECT_SCALARS, outputLeafSchema } from "./graphqlSchemas.js";

export type DerivedResponse = { kind: "json"; schema: JsonSchema; example: unknown } | { kind: "problem"; example: Problem } | { kind: "empty" };

interface Scenario {
  /** statusCode of each item of a bulk result list (a single result object takes the first). */
  statuses: number[];
  /** Nullable objects come back null (a lookup that found nothing). */
  missing?: boolean;
}

interface Item {
  status: number;
  index: number;
}

const FAILURE_MESSAGE = "title is required";

/** Builds one synthetic `data` for a document. */
class Synthesizer {
  readonly markers = new Map<unknown, JsonSchema>();
  /** Whether the document selects per-item outcomes (bulk results). */
  sawStatusCode = false;
  private n = 0;
  private readonly fragments: Map<string, FragmentDefinitionNode>;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly document: DocumentNode,
    private readonly mode: "marker" | "example",
    private readonly scenario: Scenario,
    private readonly variables: Record<string, unknown>,
  ) {
    this.fragments = new Map(
      document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
    );
  }

  data(): Record<string, unknown> {
    const op = getOperationAST(this.document);
    if (!op) throw new Error("document has no single operation");
    const root = op.operation === "mutation" ? this.schema.getMutationType() : this.schema.getQueryType();
    if (!root) throw new Error(`schema has no ${op.operation} type`);
    return this.object(root, op.selectionSet, null);
  }

  private object(type: GraphQLObjectType, set: SelectionSetNode, item: Item | null): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const fields = type.getFields();
    if (item === null && fields.statusCode) {
      item = { status: this.scenario.statuses[0] ?? 200, index: 0 };
    }
    for (const sel of set.selections) {
      if (!this.included(sel.directives)) continue;
      if (sel.kind === Kind.FIELD) {
        const key = sel.alias?.value ?? sel.name.value;
        if (sel.name.value === "__typename") {
          out[key] = type.name;
          continue;
        }
        const field = fields[sel.name.value];
        if (!field) throw new Error(`${type.name} has no field ${sel.name.value}`);
        out[key] = this.value(field.type, field, sel.selectionSet, item, false);
      } else {
        const frag = sel.kind === Kind.INLINE_FRAGMENT ? sel : this.fragments.get(sel.name.value);
        if (!frag) continue;
        const cond = frag.typeCondition?.name.value;
        if (cond && cond !== type.name && !this.implementsType(type, cond)) continue;
        Object.assign(out, this.object(type, frag.selectionSet, item));
      }
    }
    return out;
  }

  private implementsType(type: GraphQLObjectType, name: string): boolean {
    return type.getInterfaces().some((i) => i.name === name);
  }

  private value(
    type: GraphQLOutputType,
    field: GraphQLField<unknown, unknown>,
    set: SelectionSetNode | undefined,
    item: Item | null,
    nonNull: boolean,
  ): unknown {
    if (type instanceof GraphQLNonNull) return this.value(type.ofType, field, set, item, true);
    const named = getNamedType(type);
    const composite = isObjectType(named) || isAbstractType(named);
    if (!nonNull && composite && !(type instanceof GraphQLList)) {
      // A failed item carries no record; a lookup that found nothing returns null.
      if (this.scenario.missing || (item && item.status >= 300)) return null;
    }
    if (type instanceof GraphQLList) {
      const inner = type.ofType;
      const bulk = isObjectType(named) && Boolean(named.getFields().statusCode);
      let list: unknown[];
      if (bulk) {
        list = this.scenario.statuses.map((status, index) => this.value(inner, field, set, { status, index }, false));
      } else if (field.name === "errors" && item) {
        list = item.status >= 300 ? [this.leaf(getNamedType(inner) as GraphQLScalarType, field, FAILURE_MESSAGE)] : [];
      } else {
        list = [this.value(inner, field, set, composite ? null : item, false)];
      }
      if (!composite && this.mode === "marker") this.markers.set(list, outputLeafSchema(field.type, field.description));
      return list;
    }
    if (composite) {
      const concrete = isObjectType(named) ? named : this.schema.getPossibleTypes(named)[0];
      if (!concrete || !set) return {};
      return this.object(concrete, set, item);
    }
    if (item) {
      if (field.name === "statusCode") {
        this.sawStatusCode = true;
        return item.status;
      }
      if (field.name === "index") return item.index;
      if (field.name === "ok") return item.status < 300;
    }
    const leaf = this.leaf(named as GraphQLScalarType | GraphQLEnumType, field);
    if (this.mode === "marker" && typeof leaf !== "boolean") this.markers.set(leaf, outputLeafSchema(field.type, field.description));
    return leaf;
  }

  private leaf(type: GraphQLScalarType | GraphQLEnumType, field: GraphQLField<unknown, unknown>, text?: string): unknown {
    const n = ++this.n;
    if (this.mode === "marker") {
      if (type.name === "Boolean") return true;
      if (OBJECT_SCALARS.has(type.name)) return {}; // traced by identity
      if (type.name === "Timestamp") return 1_700_000_000_000 + n;
      if (type.name === "Int" || type.name === "Float") return 900_000_000 + n;
      return `\u2063m${n}\u2063`;
    }
    if (text !== undefined) return text;
    if (type instanceof GraphQLEnumType) return type.getValues()[0]?.value;
    switch (type.name) {
      case "Boolean":
        return true;
      case "Timestamp":
        return 1_718_000_000_000 + n * 60_000;
      case "Int":
        return field.name === "index" ? 0 : 3;
      case "Float":
        return 1.5;
      case "JSON":
      case "CustomValues":
      case "UserActionCounts":
      case "UserActionValues":
        return field.name === "custom" ? { plan: "gold", signupDate: 1718000000000 } : { "action-1": 2 };
      default:
        return exampleString(field.name, n);
    }
  }

  private included(directives: readonly DirectiveNode[] | undefined): boolean {
    for (const d of directives ?? []) {
      if (d.name.value !== "include" && d.name.value !== "skip") continue;
      const arg = d.arguments?.find((a) => a.name.value === "if");
      if (!arg) continue;
      let v: unknown;
      if (arg.value.kind === Kind.VARIABLE) {
        const name = arg.value.name.value;
        const def = getOperationAST(this.document)?.variableDefinitions?.find((x) => x.variable.name.value === name);
        v = this.variables[name] ?? (def?.defaultValue ? valueFromAST(def.defaultValue, this.schema.getType("Boolean") as GraphQLScalarType) : false);
      } else {
        v = arg.value.kind === Kind.BOOLEAN ? arg.value.value : false;
      }
      if ((d.name.value === "include") !== Boolean(v)) return false;
    }
    return true;
  }
}

function exampleString(field: string, n: number): string {
  const known: Record<string, string> = {
    id: `c_${(n * 7919).toString(36)}`,
    title: "Getting started",
    name: "onboarding",
    url: "https://example.com/help/getting-started",
    description: "A short description.",
    descriptionMd: "A **short** description.",
    endCursor: "WzE3MTgwMDAwMDAwMDAsImNfMDEiXQ",
    startCursor: "WzE3MTgwMDAwMDAwMDAsImNfMDAiXQ",
    parentId: "folder_1",
    email: "admin@example.com",
  };
  return known[field] ?? `${field} ${n}`;
}

/** Describes a REST value, tracing leaves back to the GraphQL fields they came from. */
export function describeValue(value: unknown, markers: Map<unknown, JsonSchema>): JsonSchema {
  if (value !== null && value !== undefined && typeof value !== "boolean" && markers.has(value)) return { ...markers.get(value)! };
  if (value === null) return { type: "null" };
  if (Array.isArray(value)) return { type: "array", items: value.length ? describeValue(value[0], markers) : {} };
  switch (typeof value) {
    case "string":
      return { type: "string" };
    case "number":
      return { type: Number.isInteger(value) ? "integer" : "number" };
    case "boolean":
      return { type: "boolean" };
    case "object": {
      const entries = Object.entries(value as object).filter(([, v]) => v !== undefined);
      return {
        type: "object",
        properties: Object.fromEntries(entries.map(([k, v]) => [k, describeValue(v, markers)])),
        required: entries.map(([k]) => k),
      };
    }
    default:
      return {};
  }
}

const successStatus = (method: RestRoute["method"]) => ({ post: 201, put: 200, delete: 204, get: 200 })[method];

/** What a route answers, per status, as far as its reply() decides (input errors are added by the caller). */
export function deriveResponses(route: RestRoute, schema: GraphQLSchema, document: DocumentNode, input: RestInput): Map<number, DerivedResponse> {
  let variables: Record<string, unknown> = {};
  try {
    variables = route.variables(input);
  } catch {
    // The sample input is wrong for this row: the drift test reports it; describe with defaults.
  }
  const ok = successStatus(route.method);
  const scenarios: Scenario[] = [{ statuses: [ok] }, { statuses: [201] }, { statuses: [ok, 400] }, { statuses: [400, 400] }, { statuses: [ok], missing: true }];
  const out = new Map<number, DerivedResponse>();
  let bulk = true;
  for (const [i, scenario] of scenarios.entries()) {
    if (i > 0 && i < 4 && !bulk) continue; // created / mixed / failed only mean something for per-item outcomes
    const marked = new Synthesizer(schema, document, "marker", scenario, variables);
    const example = new Synthesizer(schema, document, "example", scenario, variables);
    let markedReply: ReturnType<RestRoute["reply"]>;
    let exampleReply: ReturnType<RestRoute["reply"]>;
    try {
      markedReply = route.reply(marked.data(), input);
      exampleReply = route.reply(example.data(), input);
    } catch {
      continue; // a reply() that cannot make sense of synthetic data: that scenario stays undocumented
    }
    if (i === 0) bulk = marked.sawStatusCode;
    const status = exampleReply.problem?.status ?? exampleReply.status;
    if (out.has(status)) continue;
    if (exampleReply.problem) out.set(status, { kind: "problem", example: exampleReply.problem });
    else if (exampleReply.body === undefined) out.set(status, { kind: "empty" });
    else out.set(status, { kind: "json", schema: describeValue(markedReply.body, marked.markers), example: exampleReply.body });
  }
  return out;
}
