// Wire shape of content records and request items, from the GraphQL selections the content routes
// ask for. The two path styles differ only in how content refers to tags: style A by tag id, style B by name.
import { AppError } from "../../errors.js";
import type { Style } from "../../rest/contract.js";
import { EXAMPLE_TIME, exampleId } from "../../rest/examples.js";
import type { Selected } from "../../rest/operation.js";
import { readOnlyFields, wireRecord } from "../../rest/responses.js";
import { CONTENT_TYPES } from "./schema.js";

export const CONTENT_FIELDS = `id title type url source description descriptionMd state stage parentId creationTime lastUpdateTime tags { id name }`;

type ContentNode = Selected<"Content", typeof CONTENT_FIELDS>;

const nullable = (type: string, extra: object = {}) => ({ type: [type, "null"], ...extra });

/** A content on the wire; `tags` are ids in style A, names in style B. */
export function contentRecord(style: Style) {
  return wireRecord(
    {
      type: "object",
      required: [
        "id",
        "title",
        "type",
        "url",
        "source",
        "description",
        "description_md",
        "tags",
        "state",
        "stage",
        "parentId",
        "creationTime",
        "lastUpdateTime",
      ],
      properties: {
        id: { type: "string" },
        title: { type: "string" },
        type: { type: "string", enum: [...CONTENT_TYPES] },
        url: nullable("string", { description: "Links and videos." }),
        source: nullable("string", { enum: ["default", "knowledgebase", null], description: "Links only." }),
        description: nullable("string", { description: style === "A" ? "Not on videos." : "Links only (text content: description_md)." }),
        description_md: nullable("string", { description: "Markdown description, text content only." }),
        tags: { type: "array", items: { type: "string" }, description: style === "A" ? "Tag ids, by tag name." : "Tag names, sorted." },
        state: { type: "string", enum: ["draft", "ready", "production"] },
        stage: { type: "string", enum: ["design", "production"], description: "Follows the state: production content is in the production stage." },
        parentId: nullable("string", { description: "The folder holding it." }),
        creationTime: { type: "integer", description: "Epoch milliseconds." },
        lastUpdateTime: { type: "integer", description: "Epoch milliseconds." },
      },
    },
    (c: ContentNode) => ({
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
    }),
    {
      id: exampleId("c"),
      title: "Getting started",
      type: "link",
      url: "https://example.com/help/getting-started",
      source: "default",
      description: "Your first steps",
      description_md: null,
      tags: style === "A" ? [exampleId("t")] : ["onboarding"],
      state: "draft",
      stage: "design",
      parentId: null,
      creationTime: EXAMPLE_TIME,
      lastUpdateTime: EXAMPLE_TIME,
    },
  );
}

/** Fields of content records a write takes and ignores (a record from a GET may be sent back as it is). */
export const CONTENT_READ_ONLY = {
  A: readOnlyFields(contentRecord("A"), ["creationTime", "lastUpdateTime", "stage"]),
  B: readOnlyFields(contentRecord("B"), ["creationTime", "lastUpdateTime", "stage"]),
};

const GRAPHQL_ONLY_CONTENT_FIELDS = ["tagIds", "tagNames", "descriptionMd"] as const;
/**
 * Fields a style's writes do not take although its records may show them: the spec's variant A has
 * no `description_md` ("Does not exist"), so style A refuses it as any unknown field (style B writes it).
 */
const NOT_WRITTEN: Record<Style, readonly string[]> = { A: ["description_md"], B: [] };

/**
 * A content object of a request body → ContentInput. Spec field names map onto GraphQL ones;
 * read-only fields of records (round-tripped from a GET) are dropped; anything else passes through,
 * so GraphQL input coercion rejects unknown fields and wrong types with a 400 that names them.
 */
export function contentInput(style: Style) {
  return (item: Record<string, unknown>, index: number) => {
    // ContentInput's own names for `tags` / `description_md` are not REST fields: passed through they
    // would be accepted (style A taking tag names, say) instead of rejected as unknown.
    const leaked = [...GRAPHQL_ONLY_CONTENT_FIELDS, ...NOT_WRITTEN[style]].filter((k) => Object.hasOwn(item, k));
    if (leaked.length) {
      const message = `unknown field(s) ${leaked.join(", ")}`;
      throw new AppError(400, `body[${index}]: ${message}`, [{ path: `[${index}]`, message }]);
    }
    const { description_md, tags, ...rest } = CONTENT_READ_ONLY[style].without(item);
    // GraphQL would coerce a lone string into a one-item list; the spec's `tags` is an array.
    if (tags != null && !Array.isArray(tags)) {
      throw new AppError(400, `body[${index}].tags must be an array of strings`, [{ path: `[${index}].tags`, message: "must be an array of strings" }]);
    }
    return {
      ...rest,
      ...(description_md !== undefined ? { descriptionMd: description_md } : {}),
      ...(tags !== undefined ? { [style === "A" ? "tagIds" : "tagNames"]: tags } : {}),
    };
  };
}
