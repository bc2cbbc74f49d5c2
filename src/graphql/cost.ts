// The static cost of a GraphQL operation (issue 33 item 1, first step: computed, not yet charged),
// from its document and variables before anything runs, in the Shopify/GitHub style the issue asks
// for: an object costs 1, a scalar or enum 0, and a list costs its size times what one of its items
// costs. A list's size is the field's own `first`/`last`/`limit` argument (the variable's value or
// the argument's default); the list children of a field that has one (a connection's `nodes` and
// `edges`) take its size; any other list counts DEFAULT_LIST_SIZE items.
//
// Why our own walk rather than @pothos/plugin-complexity (not installed; it checks a limit during
// validation and keeps no per-request number for an answer's `extensions.cost`) or armor's cost
// rule (its weights, objects 2 and a ×1.5 per level, are a depth guard, not a count of rows): the
// number has to be the rows an operation may read, computed once per request from the variables,
// and the same function has to serve REST routes, which run their documents outside Yoga.
import {
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
  type SelectionSetNode,
  valueFromAST,
} from "graphql";

/** Items assumed of a list whose size nothing in the request bounds (a content's tags, a schema's fields). */
export const DEFAULT_LIST_SIZE = 10;
const SIZE_ARGS = ["first", "last", "limit"];

/** The cost of the named (or only) operation of `document` with `variables`; 0 when it names none. */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> = {},
): number {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  const sizeOf = (node: FieldNode, field: GraphQLField<unknown, unknown>): number | null => {
    for (const name of SIZE_ARGS) {
      const arg = field.args.find((a) => a.name === name);
      if (!arg) continue;
      const given = node.arguments?.find((a) => a.name.value === name);
      const value = given ? valueFromAST(given.value, arg.type, variables) : undefined;
      const size = value ?? arg.defaultValue;
      if (typeof size === "number" && Number.isFinite(size) && size >= 0) return size;
    }
    return null;
  };

  const fieldCost = (node: FieldNode, field: GraphQLField<unknown, unknown>, inherited: number | null): number => {
    const named = getNamedType(field.type);
    if (isLeafType(named) || !node.selectionSet) return 0;
    const size = sizeOf(node, field);
    if (isListType(getNullableType(field.type))) return (size ?? inherited ?? DEFAULT_LIST_SIZE) * (1 + selectionCost(node.selectionSet, named, null, []));
    return 1 + selectionCost(node.selectionSet, named, size, []);
  };

  // Fragments are inlined; every branch of an abstract type counts (an upper bound); a spread
  // already being walked is not walked again (validation refuses cycles; this only guards).
  const selectionCost = (set: SelectionSetNode, parent: GraphQLNamedType | undefined | null, inherited: number | null, walking: string[]): number => {
    let total = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
        const field = parent.getFields()[s.name.value];
        if (field) total += fieldCost(s, field, inherited);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        total += selectionCost(s.selectionSet, s.typeCondition ? schema.getType(s.typeCondition.name.value) : parent, inherited, walking);
      } else {
        const fragment = fragments.get(s.name.value);
        if (!fragment || walking.includes(s.name.value)) continue;
        total += selectionCost(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value), inherited, [...walking, s.name.value]);
      }
    }
    return total;
  };

  return selectionCost(operation.selectionSet, root, null, []);
}
