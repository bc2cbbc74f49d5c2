// Storing a client's manifest of persisted documents: the REST route's mutation and the CLI's
// `documents push` both come here. Every entry is checked before anything is written (its id is
// the SHA-256 of its text, the text parses and validates against the schema): one bad entry is a
// 400 naming it, and nothing of the manifest is stored. Texts past the GraphQL limits POST /graphql
// holds every text to are refused like invalid ones.
import { type GraphQLSchema, parse } from "graphql";
import { createRows } from "../../audit/recorder.js";
import { withTransaction } from "../../db/index.js";
import { AppError, type FieldError } from "../../errors.js";
import { documentLimitsNow, storedDocumentProblem } from "../../graphql/armor.js";
import { documentHash, sha256Hex } from "../../graphql/persistedDocuments.js";
import { findUnstorableText } from "../../text.js";

/** Entries of one manifest, at most (a client's whole app fits; the body limit bounds the text). */
export const MANIFEST_MAX_DOCUMENTS = 5_000;

export interface ManifestEntry {
  id: string;
  text: string;
}

/** A manifest body (`{"<id>": "<text>", …}`) as entries; a 400 when it is not that shape. */
export function manifestEntries(body: unknown): ManifestEntry[] {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new AppError(400, 'body must be a JSON object mapping document ids to document texts ({"sha256:<hex>": "query …"})');
  const entries = Object.entries(body as Record<string, unknown>);
  if (entries.length === 0) throw new AppError(400, "body must hold at least one document");
  if (entries.length > MANIFEST_MAX_DOCUMENTS) throw new AppError(400, `body must hold at most ${MANIFEST_MAX_DOCUMENTS} documents`);
  const bad = entries.filter(([, text]) => typeof text !== "string").map(([id]) => ({ path: id, message: "must be the document's text (a string)" }));
  if (bad.length) throw manifestError(bad);
  return entries.map(([id, text]) => ({ id, text: text as string }));
}

function manifestError(errors: FieldError[]): AppError {
  const first = errors[0]!;
  const detail =
    errors.length === 1
      ? `document ${first.path}: ${first.message}`
      : `${errors.length} documents are refused; see errors (first: ${first.path}: ${first.message})`;
  return new AppError(400, detail, errors);
}

/** Checks every entry, then stores those the account does not have yet. Returns how many the manifest holds. */
export async function storeManifest(accountId: string, entries: readonly ManifestEntry[], schema: GraphQLSchema): Promise<number> {
  const errors: FieldError[] = [];
  const byHash = new Map<string, string>();
  for (const { id, text } of entries) {
    const hash = documentHash(id);
    if (!hash) {
      errors.push({ path: id, message: "is not a document id: `sha256:` followed by 64 hex digits, or the 64 hex digits alone" });
      continue;
    }
    if (sha256Hex(text) !== hash) {
      errors.push({ path: id, message: `is not the SHA-256 of its text (that is sha256:${sha256Hex(text)})` });
      continue;
    }
    // A text PostgreSQL cannot store (a NUL; the CLI reads files no JSON check saw).
    if (findUnstorableText(text, id)) {
      errors.push({ path: id, message: "must not contain NUL (\\u0000) or unpaired surrogates" });
      continue;
    }
    // Within the token limit from the first parse (a text past it is not parsed whole).
    const { maxTokens } = documentLimitsNow();
    let problem: string | null;
    try {
      problem = storedDocumentProblem(text, parse(text, { maxTokens }), schema);
    } catch (err) {
      const message = (err as Error).message;
      problem = /Parsing aborted/.test(message)
        ? `is past this API's limits on a GraphQL document: Token limit of ${maxTokens} exceeded.`
        : `is not valid for this API: ${message}`;
    }
    if (problem) errors.push({ path: id, message: problem });
    else byHash.set(hash, text);
  }
  if (errors.length) throw manifestError(errors);
  // A document's text is fixed by its id: one already stored is stored, whoever stored it (a push of
  // the same manifest at the same moment, an endpoint saved from the same text): ON CONFLICT DO
  // NOTHING, and only the documents written here get an audit entry.
  const rows = [...byHash].map(([hash, text]) => ({ accountId, hash, text }));
  await withTransaction(() => createRows("PersistedDocument", rows, { skipDuplicates: true }));
  return entries.length;
}
