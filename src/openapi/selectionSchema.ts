// The JSON Schema of what an operation answers: its `data` object, from its selection over the
// schema's types (aliases, fragments, nullability, lists, enums and scalars as graphqlSchemas.ts
// renders them for the main document). A saved endpoint's 200 schema (src/domains/endpoints/).
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  isAbstractType,
  isEnumType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { JsonSchema } from "../rest/docs.js";
import { leafSchema, orNull } from "./graphqlSchemas.js";

/** The schema of the operation's `data` (an object: a successful answer never has it null). */
export function selectionSchema(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): JsonSchema {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const root = schema.getRootType(operation.operation);
  if (!root) throw new Error(`the schema has no ${operation.operation} type`);

  const conditional = (node: { directives?: readonly { name: { value: string } }[] | undefined }) =>
    Boolean(node.directives?.some((d) => d.name.value === "include" || d.name.value === "skip"));

  /** Fields of a selection set on `parent`: by response key, each with whether it is always there. */
  const collect = (set: SelectionSetNode, parent: GraphQLNamedType, always: boolean, out: Map<string, { nodes: FieldNode[]; always: boolean }>) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const key = s.alias?.value ?? s.name.value;
        const entry = out.get(key) ?? { nodes: [], always: false };
        entry.nodes.push(s);
        entry.always ||= always && !conditional(s);
        out.set(key, entry);
        continue;
      }
      const fragment = s.kind === Kind.INLINE_FRAGMENT ? s : fragments.get(s.name.value);
      if (!fragment) continue;
      const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : parent;
      // A fragment on another type than the parent's (a member of a union or interface) applies to some objects only.
      const applies = condition === parent && !isAbstractType(parent);
      collect(fragment.selectionSet, condition ?? parent, always && applies && !conditional(s), out);
    }
  };

  const objectSchema = (set: SelectionSetNode | readonly SelectionSetNode[], parent: GraphQLNamedType): JsonSchema => {
    const fields = new Map<string, { nodes: FieldNode[]; always: boolean }>();
    for (const s of Array.isArray(set) ? set : [set]) collect(s as SelectionSetNode, parent, true, fields);
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const [key, { nodes, always }] of fields) {
      properties[key] = fieldSchema(nodes, parent);
      if (always) required.push(key);
    }
    return { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false };
  };

  const fieldSchema = (nodes: FieldNode[], parent: GraphQLNamedType): JsonSchema => {
    const name = nodes[0]!.name.value;
    if (name === "__typename") return { type: "string" };
    // A field selected under a fragment on a member type: look it up on the type that has it.
    const owner = [parent, ...(isAbstractType(parent) ? schema.getPossibleTypes(parent) : [])].find(
      (t) => (isObjectType(t) || isInterfaceType(t)) && t.getFields()[name],
    );
    const field = owner && (isObjectType(owner) || isInterfaceType(owner)) ? owner.getFields()[name] : undefined;
    if (!field) return {};
    const described = (s: JsonSchema) => (field.description && !("$ref" in s) ? { ...s, description: field.description } : s);
    return described(
      typeSchema(
        field.type,
        nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : [])),
      ),
    );
  };

  const typeSchema = (type: GraphQLOutputType, sets: SelectionSetNode[]): JsonSchema => {
    if (isNonNullType(type)) return nonNull(type.ofType, sets);
    return orNull(nonNull(type, sets));
  };

  const nonNull = (type: GraphQLOutputType, sets: SelectionSetNode[]): JsonSchema => {
    if (isListType(type)) return { type: "array", items: typeSchema(type.ofType, sets) };
    const named = getNamedType(type);
    if (isScalarType(named) || isEnumType(named)) return leafSchema(named);
    return objectSchema(sets, named);
  };

  return objectSchema(operation.selectionSet, root);
}
