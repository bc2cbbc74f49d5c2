// What a document selects below a field, for resolvers that read more in the same statement when a
// child field is asked for (a content page with its tags): a walk of the field's selection set,
// following fragments. Directives are not evaluated: a child under `@include(if: false)` counts as
// selected, which costs only the read of what nobody shows.
import type { FieldNode, GraphQLResolveInfo, SelectionSetNode } from "graphql";

/** The fields named `name` directly in a selection set, through inline fragments and fragment spreads. */
function fieldsNamed(set: SelectionSetNode | undefined, name: string, info: GraphQLResolveInfo, out: FieldNode[] = []): FieldNode[] {
  for (const s of set?.selections ?? []) {
    if (s.kind === "Field") {
      if (s.name.value === name) out.push(s);
    } else if (s.kind === "InlineFragment") fieldsNamed(s.selectionSet, name, info, out);
    else fieldsNamed(info.fragments[s.name.value]?.selectionSet, name, info, out);
  }
  return out;
}

// The answer depends only on the document: kept per operation's field nodes (the same array for
// every run of a compiled or cached document), so a page of 1,000 rows asks once, not per request.
const answers = new WeakMap<readonly FieldNode[], Map<string, boolean>>();

/**
 * Whether the current field selects `child` at the end of any of `paths` (each a list of field names
 * below the current field, e.g. `[["nodes"], ["edges", "node"]]` for a connection's records).
 */
export function selectsChild(info: GraphQLResolveInfo, paths: readonly (readonly string[])[], child: string): boolean {
  const key = `${paths.map((p) => p.join(".")).join("|")}>${child}`;
  let known = answers.get(info.fieldNodes);
  if (!known) answers.set(info.fieldNodes, (known = new Map()));
  let answer = known.get(key);
  if (answer === undefined) {
    answer = paths.some((path) => {
      let level: FieldNode[] = [...info.fieldNodes];
      for (const name of [...path, child]) level = level.flatMap((f) => fieldsNamed(f.selectionSet, name, info));
      return level.length > 0;
    });
    known.set(key, answer);
  }
  return answer;
}
