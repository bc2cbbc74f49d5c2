// Wire shapes of REST records, from the GraphQL selections the routes ask for. The two path styles
// differ only in how content refers to tags: style A by tag id, style B by tag name.
export type Style = "A" | "B";

export const CONTENT_FIELDS = `id title type url source description descriptionMd state stage parentId creationTime lastUpdateTime tags { id name }`;
export const TAG_FIELDS = `id name description type`;

interface ContentNode {
  id: string; title: string; type: string; url: string | null; source: string | null;
  description: string | null; descriptionMd: string | null; state: string; stage: string;
  parentId: string | null; creationTime: number; lastUpdateTime: number; tags: { id: string; name: string }[];
}

export function contentRecord(style: Style) {
  return (c: ContentNode) => ({
    id: c.id,
    title: c.title,
    type: c.type,
    url: c.url,
    source: c.source,
    description: c.description,
    description_md: c.descriptionMd,
    tags: c.tags.map((t) => (style === "A" ? t.id : t.name)),
    state: c.state,
    stage: c.stage,
    parentId: c.parentId,
    creationTime: c.creationTime,
    lastUpdateTime: c.lastUpdateTime,
  });
}

export const tagRecord = (t: { id: string; name: string; description: string | null; type: string }) => t;

/**
 * A content object of a request body → ContentInput. Spec field names map onto GraphQL ones;
 * read-only fields of records (round-tripped from a GET) are dropped; anything else passes through,
 * so GraphQL input coercion rejects unknown fields and wrong types with a 400 that names them.
 */
export function contentInput(style: Style) {
  return (item: Record<string, unknown>) => {
    const { description_md, tags, creationTime: _c, lastUpdateTime: _u, stage: _s, ...rest } = item;
    return {
      ...rest,
      ...(description_md !== undefined ? { descriptionMd: description_md } : {}),
      ...(tags !== undefined ? { [style === "A" ? "tagIds" : "tagNames"]: tags } : {}),
    };
  };
}

export const SCHEMA_FIELD_FIELDS = `name type description default`;
export const END_USER_FIELDS = `id creationTime lastUpdateTime custom @include(if: $custom) userActionCount @include(if: $actions) userActions @include(if: $actions)`;

interface EndUserNode { id: string; creationTime: number; lastUpdateTime: number; custom?: object; userActionCount?: object; userActions?: object }

/** End users: style A has no user-action maps; fields not fetched are not sent. */
export function endUserRecord(style: Style) {
  return (u: EndUserNode) => ({
    id: u.id,
    creationTime: u.creationTime,
    lastUpdateTime: u.lastUpdateTime,
    ...(u.custom !== undefined ? { custom: u.custom } : {}),
    ...(style === "B" && u.userActionCount !== undefined ? { userActionCount: u.userActionCount, userActions: u.userActions } : {}),
  });
}

export const schemaFieldRecord = (f: { name: string; type: string; description: string | null; default: boolean }) => f;
