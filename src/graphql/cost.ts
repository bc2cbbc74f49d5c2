// The static cost of a GraphQL operation (issue 33 item 1), from its document and variables before
// anything runs, in the Shopify/GitHub style: an object costs 1, a scalar or enum 0, and a list costs
// its size times what one of its items costs. A list's size is the field's own `first`/`last`/`limit`
// argument (the variable's value, the operation's default for it, or the argument's default, and
// for a connection without `first` its own default page: `extensions.pageLimits`); the list children
// of a field that has one (a connection's `nodes` and `edges`) take its size; any other list counts
// DEFAULT_LIST_SIZE items. A field may declare its own cost instead of the 1 of an object
// (`extensions: { cost: (args) => units }`): the reports and the Explore questions weigh what they scan,
// and that weight prices the field's whole selection (its rows are aggregates of the scan); or a cost
// per field selected under it (`extensions: { costPerField }`: `reports`, whose fields are reports).
//
// Why our own walk rather than @pothos/plugin-complexity (not installed; it checks a limit during
// validation and keeps no per-request number for an answer's `extensions.cost`) or armor's cost
// rule (its weights, objects 2 and a ×1.5 per level, are a depth guard, not a count of rows): the
// number has to be the rows an operation may read, computed once per request from the variables,
// and the same function has to serve REST routes, which run their documents outside Yoga.
//
// The walk runs once per operation node (costPlan, kept in a WeakMap beside the document): it leaves
// a small function of the variables, and a constant when no variable can change the cost (most REST
// routes' documents, most dashboard queries). A request then pays a few additions, not a walk.
import {
  type ArgumentNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  getOperationAST,
  isInterfaceType,
  isLeafType,
  isListType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  valueFromAST,
  valueFromASTUntyped,
} from "graphql";
import { getArgumentValues } from "graphql/execution/values.js";
import { LIST_LIMITS, type PageLimits } from "../schema/pagination.js";

/** Items assumed of a list whose size nothing in the request bounds (a content's tags, a schema's fields). */
export const DEFAULT_LIST_SIZE = 10;
const SIZE_ARGS = ["first", "last", "limit"];
/** The largest page any list of the schema takes (its lists' `max`: src/schema/pagination.ts). */
const MAX_LIST_SIZE = Math.max(...Object.values(LIST_LIMITS).map((l) => l.max));

/**
 * Cost units per budget point: GitHub's scale (a call's nodes ÷ 100, rounded to the nearest whole
 * number, at least 1). Measured here, a cheap REST read spends about as much CPU on its fixed part
 * (HTTP, auth, GraphQL) as on 100 to 150 rows, so a read of up to 149 objects costs 1 point (a default
 * page of 10 contents with their tags is 113: RATE_LIMIT_PER_MINUTE keeps its meaning for it) and
 * every further 100 objects one more.
 */
export const UNITS_PER_POINT = 100;

/** The points a cost in units is charged: rounded, at least 1 (every request touching an account costs something). */
export const pointsOf = (units: number): number => Math.max(1, Math.round(units / UNITS_PER_POINT));

/** A field's own cost in units (replacing the 1 of an object), from its arguments: declared in the field's `extensions.cost`. */
export type FieldCost = (args: Record<string, unknown>) => number;

type Variables = Record<string, unknown>;
type Cost = (variables: Variables) => number;
/** A part of the cost: a constant, or a function of the variables. */
type Part = number | Cost;

/**
 * The variables without those set to undefined: a REST route's variables leave an optional one so
 * (`cursor: undefined`), which execution takes as not given, but getArgumentValues refuses ("invalid
 * value"): a declared cost would fall to its refusal's 1 unit (an export page of 5,000 cost 1 point).
 */
const defined = (v: Variables): Variables => {
  for (const k in v) if (v[k] === undefined) return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined));
  return v;
};
const at = (p: Part, v: Variables) => (typeof p === "number" ? p : p(v));
const sum = (parts: Part[]): Part => {
  let constant = 0;
  const dynamic: Cost[] = [];
  for (const p of parts) {
    if (typeof p === "number") constant += p;
    else dynamic.push(p);
  }
  if (!dynamic.length) return constant;
  return (v) => {
    let total = constant;
    for (const d of dynamic) total += d(v);
    return total;
  };
};
const times = (a: Part, b: Part): Part => (typeof a === "number" && typeof b === "number" ? a * b : (v) => at(a, v) * at(b, v));

/** The cost of one operation as a function of the request's variables (raw, as the client sent them). */
export interface CostPlan {
  (variables?: Variables): number;
  /** Whether variables can change it (false: every request of this operation costs the same). */
  readonly dynamic: boolean;
}

const plans = new WeakMap<OperationDefinitionNode, CostPlan>();
const NONE: CostPlan = Object.assign(() => 0, { dynamic: false });

/** The cost plan of the named (or only) operation of `document`, made on first use and kept with the operation node. */
export function costPlan(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): CostPlan {
  const operation = getOperationAST(document, operationName);
  if (!operation) return NONE;
  let plan = plans.get(operation);
  if (!plan) {
    plan = makePlan(schema, document, operation);
    plans.set(operation, plan);
  }
  return plan;
}

/** The cost of the named (or only) operation of `document` with `variables`; 0 when it names none. */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Variables = {}): number {
  return costPlan(schema, document, operationName)(variables);
}

function makePlan(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): CostPlan {
  const root = schema.getRootType(operation.operation);
  if (!root) return NONE;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  // The operation's own defaults of its variables (`$n: Int = 50`): what a variable the request leaves out stands for.
  const defaults = new Map<string, unknown>();
  for (const def of operation.variableDefinitions ?? []) if (def.defaultValue) defaults.set(def.variable.name.value, valueFromASTUntyped(def.defaultValue));
  const withDefaults = (v: Variables): Variables => {
    if (!defaults.size) return v;
    let out: Variables | undefined;
    for (const [name, value] of defaults) if (v[name] === undefined) (out ??= { ...v })[name] = value;
    return out ?? v;
  };

  /**
   * The page a forward-only connection serves, by its own limits (declared on the field:
   * src/schema/pagination.ts pageExtensions; its resolver checks the same with pageLimit): `first`,
   * or without it the list's default page (the audit log's 100 entries, files' 50). A page it refuses
   * before reading anything (a `first` below 1 or past the list's own maximum, the audit log's 500;
   * any `last` or `before`) reads nothing and is priced so: the request costs the minimum point, as
   * a REST request refused for its limit does, not the size it asked for.
   */
  const pageOf = (node: FieldNode, limits: PageLimits): Part => {
    const given = (name: string) => node.arguments?.find((a) => a.name.value === name)?.value;
    const first = given("first");
    const backwards = [given("last"), given("before")].filter((a) => a !== undefined);
    const read = (value: ValueNode | undefined, v: Variables): unknown =>
      value === undefined ? undefined : value.kind === Kind.VARIABLE ? withDefaults(v)[value.name.value] : valueFromASTUntyped(value);
    const size = (v: Variables): number => {
      if (backwards.some((a) => read(a, v) != null)) return 0;
      const n = read(first, v);
      // (A value that is no number does not coerce: refused too; priced at the default as before.)
      if (typeof n !== "number") return limits.default;
      return Number.isInteger(n) && n >= 1 && n <= limits.max ? n : 0;
    };
    return [first, ...backwards].some((a) => a?.kind === Kind.VARIABLE) ? size : size({});
  };

  /** A list field's size: a constant, a function of the variables, or null when nothing bounds it. */
  const sizeOf = (node: FieldNode, field: GraphQLField<unknown, unknown>): Part | null => {
    const limits = field.extensions?.pageLimits as PageLimits | undefined;
    if (limits) return pageOf(node, limits);
    for (const name of SIZE_ARGS) {
      const arg = field.args.find((a) => a.name === name);
      if (!arg) continue;
      const given: ArgumentNode | undefined = node.arguments?.find((a) => a.name.value === name);
      const valid = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;
      const fallback = valid(arg.defaultValue) ? arg.defaultValue : null;
      // A size no list takes is refused before anything is read (`first must be between 1 and …`):
      // it reads nothing, so it is priced so; the request costs the minimum, as a REST request
      // refused for a bad limit does (a price of 200 points for first: 20000 spent the budget on a 400).
      const size = (x: number) => (Number.isInteger(x) && x >= 1 && x <= MAX_LIST_SIZE ? x : 0);
      if (!given) {
        if (fallback !== null) return fallback;
        continue;
      }
      if (given.value.kind !== Kind.VARIABLE) {
        const value = valueFromAST(given.value, arg.type, {});
        if (typeof value === "number") return size(value);
        if (fallback !== null) return fallback;
        continue;
      }
      const variable = given.value.name.value;
      const otherwise = fallback ?? DEFAULT_LIST_SIZE;
      return (v) => {
        const value = withDefaults(v)[variable];
        return typeof value === "number" ? size(value) : otherwise;
      };
    }
    return null;
  };

  /** A field's own cost: what it declares (from its arguments), else 1 for an object. */
  const ownCost = (node: FieldNode, field: GraphQLField<unknown, unknown>, declared = field.extensions?.cost as FieldCost | undefined): Part => {
    if (!declared) return 1;
    return (v) => {
      try {
        return declared(getArgumentValues(field, node, withDefaults(defined(v))));
      } catch {
        // Arguments that do not coerce: execution answers them with an error, before any scan.
        return 1;
      }
    };
  };

  const fieldCost = (node: FieldNode, field: GraphQLField<unknown, unknown>, inherited: Part | null): Part => {
    const named = getNamedType(field.type);
    if (isLeafType(named) || !node.selectionSet) return 0;
    // A field that weighs what it scans (a report, an Explore question) is priced by that alone: the
    // rows it answers are aggregates of that scan, so its `limit` is a page size, not a read bound
    // (a report asked with limit=10000 reads the same rollups as with limit=10).
    if (field.extensions?.cost) return ownCost(node, field);
    // A field whose fields each run a scan of their own over what its arguments name (`reports`:
    // each report selected reads the window's rollups on its own) weighs its declared cost once per
    // field selected, as many separate requests would (an alias is one more; __typename is none).
    const each = field.extensions?.costPerField as FieldCost | undefined;
    if (each) {
      const fields = responseKeys(node.selectionSet, []).size;
      return fields ? times(fields, ownCost(node, field, each)) : 1;
    }
    const size = sizeOf(node, field);
    if (isListType(getNullableType(field.type)))
      return times(size ?? inherited ?? DEFAULT_LIST_SIZE, sum([ownCost(node, field), selectionCost(node.selectionSet, named, null, [])]));
    return sum([ownCost(node, field), selectionCost(node.selectionSet, named, size, [])]);
  };

  // Fragments are inlined; every branch of an abstract type counts (an upper bound); a spread
  // already being walked is not walked again (validation refuses cycles; this only guards).
  const selectionCost = (set: SelectionSetNode, parent: GraphQLNamedType | undefined | null, inherited: Part | null, walking: string[]): Part => {
    const parts: Part[] = [];
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
        const field = parent.getFields()[s.name.value];
        if (field) parts.push(fieldCost(s, field, inherited));
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        parts.push(selectionCost(s.selectionSet, s.typeCondition ? schema.getType(s.typeCondition.name.value) : parent, inherited, walking));
      } else {
        const fragment = fragments.get(s.name.value);
        if (!fragment || walking.includes(s.name.value)) continue;
        parts.push(selectionCost(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value), inherited, [...walking, s.name.value]));
      }
    }
    return sum(parts);
  };

  // The fields a selection set runs: one per response key (fields of one key are merged into one), fragments inlined.
  const responseKeys = (set: SelectionSetNode, walking: string[], keys = new Set<string>()): Set<string> => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        if (s.name.value !== "__typename") keys.add(s.alias?.value ?? s.name.value);
      } else if (s.kind === Kind.INLINE_FRAGMENT) responseKeys(s.selectionSet, walking, keys);
      else {
        const fragment = fragments.get(s.name.value);
        if (fragment && !walking.includes(s.name.value)) responseKeys(fragment.selectionSet, [...walking, s.name.value], keys);
      }
    }
    return keys;
  };

  const total = selectionCost(operation.selectionSet, root, null, []);
  if (typeof total === "number") return Object.assign(() => total, { dynamic: false });
  return Object.assign((v: Variables = {}) => total(v ?? {}), { dynamic: true });
}

/**
 * The accounts an operation's root fields name, from their arguments (`accountId`, or the field's
 * declared `extensions.accountArg`: `account(id:)`): the budgets a request is charged before it runs.
 */
export function accountsOf(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Variables): string[] {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return [];
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const found = new Set<string>();
  const walk = (set: SelectionSetNode, walking: string[]) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const field = root.getFields()[s.name.value];
        const argName = (field?.extensions?.accountArg as string | undefined) ?? "accountId";
        const arg = field?.args.find((a) => a.name === argName);
        const given = s.arguments?.find((a) => a.name.value === argName);
        const value = arg && given ? valueFromAST(given.value, arg.type, variables) : undefined;
        if (typeof value === "string") found.add(value);
      } else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet, walking);
      else {
        const fragment = fragments.get(s.name.value);
        if (fragment && !walking.includes(s.name.value)) walk(fragment.selectionSet, [...walking, s.name.value]);
      }
    }
  };
  walk(operation.selectionSet, []);
  return [...found];
}
