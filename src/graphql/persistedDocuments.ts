// Persisted documents (the GraphQL over HTTP form: `documentId` in place of `query`). A client team
// registers the documents its code sends (the manifest GraphQL Codegen's client preset and gql.tada
// emit) per account, POST /v1/accounts/{accountId}/graphql/documents (src/domains/
// persistedDocuments/); its requests then send `{"documentId":"sha256:<hex>","variables":…}`, by
// POST or GET. A key made `--persisted-only` may send nothing else.
//
// A stored document is read, parsed and marked for compilation once per process (a bounded LRU
// keyed by account and hash): every request for it hands Yoga the same DocumentNode, so Yoga's
// validation cache (keyed by the node, armor's limits included) validates it once and
// CompiledDocuments compiles its operation on first use. Validation against the schema also ran
// when it was stored.
//
// Why not @graphql-yoga/plugin-persisted-operations: its lookup runs before our context exists and
// would need the identity threaded in anyway, Yoga's GET parser drops `documentId` (so its
// extractor would be ours too), and its placeholder query text would be recorded as an accepted
// text by the fast path (src/graphql/fastPath.ts). What is left of it is the few lines below.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { type DocumentNode, GraphQLError, parse, visit } from "graphql";
import type { Plugin } from "graphql-yoga";
import { LRUCache } from "lru-cache";
import { prisma } from "../db/index.js";
import { AppError } from "../errors.js";
import { noneMatchHas, weakETag } from "../rest/conditional.js";
import { MAX_CACHED_TEXT_BYTES } from "../textCache.js";
import { documentLimitsNow } from "./armor.js";
import type { CompiledDocuments } from "./compiled.js";
import { preauthenticated } from "./requireCredentials.js";

const HEX_ID = /^(?:sha256:)?([0-9a-fA-F]{64})$/;

/** The lowercase hex SHA-256 a document id (`sha256:<hex>` or bare `<hex>`) names; null if it is neither form. */
export function documentHash(id: string): string | null {
  return HEX_ID.exec(id)?.[1]?.toLowerCase() ?? null;
}

export const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

interface Loaded {
  text: string;
  document: DocumentNode;
}

/** How many parsed persisted documents a process keeps (across accounts), and the most bytes of their texts. */
const LOADED_MAX = 2_000;
const LOADED_MAX_BYTES = 4 * 1024 * 1024;

export class PersistedDocuments {
  // Bounded by the texts' bytes too (a parsed document takes ~100× its text in heap, see
  // src/textCache.ts); a text over MAX_CACHED_TEXT_BYTES is parsed on each run instead. Documents
  // stored before the limits applied at storing (documentPastLimits) are refused on the way in.
  private readonly loaded = new LRUCache<string, Loaded>({
    max: LOADED_MAX,
    maxSize: LOADED_MAX_BYTES,
    maxEntrySize: MAX_CACHED_TEXT_BYTES,
    sizeCalculation: (entry) => Math.max(1, Buffer.byteLength(entry.text)),
  });
  /** The nodes handed out: executions of them are persisted documents'. */
  readonly nodes = new WeakSet<DocumentNode>();

  /** The document `hash` of one of `accountIds`, parsed once; null when none of them stored it. */
  async get(accountIds: Iterable<string>, hash: string): Promise<Loaded | null> {
    const ids = [...accountIds].sort();
    for (const accountId of ids) {
      const hit = this.loaded.get(`${accountId}:${hash}`);
      if (hit) return hit;
    }
    if (!ids.length) return null;
    const row = await prisma.persistedDocument.findFirst({ where: { accountId: { in: ids }, hash }, select: { accountId: true, text: true } });
    if (!row) return null;
    // A stored text validated against the schema when it was stored; a parse failure here means a
    // schema or data problem of ours, not the caller's: it surfaces as a 500.
    // (Within the token limit Yoga's parser holds texts to: one stored before the limits applied at
    // storing is refused here rather than parsed whole.)
    let document: DocumentNode;
    try {
      document = parse(row.text, { maxTokens: documentLimitsNow().maxTokens });
    } catch (err) {
      if (!(err instanceof GraphQLError) || !/Parsing aborted/.test(err.message)) throw err;
      throw new AppError(400, `the stored document is past this API's limits on a GraphQL document: ${err.message.replace(/^Syntax Error: /, "")}`, [
        { path: "documentId", message: "past the GraphQL document limits" },
      ]);
    }
    const entry = { text: row.text, document };
    this.loaded.set(`${row.accountId}:${hash}`, entry);
    this.nodes.add(entry.document);
    return entry;
  }
}

type Params = { query?: unknown; documentId?: unknown; variables?: unknown; operationName?: unknown; extensions?: unknown };

/** `documentId` of a request: the JSON body's member, or GET's query parameter (Yoga's GET parser keeps only the standard four). */
function documentIdOf(params: Params, request: Request): unknown {
  if (params.documentId != null) return params.documentId;
  if (request.method !== "GET") return undefined;
  const at = request.url.indexOf("?");
  return at < 0 ? undefined : (new URLSearchParams(request.url.slice(at + 1)).get("documentId") ?? undefined);
}

/**
 * The Yoga plugin: a request with `documentId` runs that stored document of the caller's accounts
 * (400 when unknown); a request with `query` text is refused (403) for a persisted-only key.
 * Credentials were checked before (requireCredentials): a request they did not authenticate never
 * gets here. Place it before useCompiledExecution.
 */
export function usePersistedDocuments(store: PersistedDocuments, compiled: CompiledDocuments): Plugin<Record<string, never>, { req?: IncomingMessage }> {
  // The document each request runs, by Yoga's per-request context (the same object from onParams to onParse).
  const documents = new WeakMap<object, DocumentNode>();
  return {
    async onParams({ params, request, setParams, context }) {
      const p = params as Params;
      const id = documentIdOf(p, request);
      const identity = await preauthenticated(request);
      if (!identity) return;
      if (p.query != null && identity.persistedOnly) throw persistedOnlyError();
      if (id == null) return;
      if (p.query != null) throw new AppError(400, "Send either `query` or `documentId`, not both.");
      const hash = typeof id === "string" ? documentHash(id) : null;
      if (!hash) throw new AppError(400, "`documentId` must be `sha256:` followed by the 64 hex digits of the document's SHA-256.");
      const entry = await store.get(identity.accountIds, hash);
      if (!entry)
        throw new AppError(
          400,
          `Unknown documentId 'sha256:${hash}': no document with this id is stored for the key's accounts (register it with POST /v1/accounts/{accountId}/graphql/documents).`,
        );
      setParams({ query: entry.text, variables: p.variables as never, operationName: p.operationName as never, extensions: p.extensions as never });
      documents.set(context, entry.document);
    },
    onParse({ context, setParsedDocument }) {
      const document = documents.get(context);
      if (document) setParsedDocument(document);
    },
    onExecute({ args }) {
      // Run the persisted document compiled from its first use (its text was registered to be sent again and again).
      if (store.nodes.has(args.document)) compiled.eager(args.document);
    },
  };
}

export function persistedOnlyError(): AppError {
  return new AppError(403, "This API key runs persisted documents only: send `documentId` (a registered document's id) instead of `query`.");
}

/**
 * GET /graphql answers carry a weak ETag over their body and honour If-None-Match with a 304 and
 * no body: a dashboard polling `GET /graphql?documentId=…&variables=…` is told "unchanged" without
 * the JSON. (The operation still runs: the tag is of what it answers.) The budget left after the
 * request (`extensions.cost.throttleStatus.currentlyAvailable`) changes on every call and says
 * nothing of the data: the tag leaves `extensions.cost` out (graphqlETag), and the
 * RateLimit-Remaining header of a 304 has the budget.
 */
export function conditionalGets(): Plugin {
  // Requests whose operation reads the audit log: their answers are never stored (B25 answers POST
  // with no-store so that the personal data it holds is not cached; a GET must not undo that).
  const auditReads = new WeakSet<object>();
  return {
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (request?.method === "GET" && selectsAuditLog(args.document)) auditReads.add(request);
    },
    async onResponse({ request, response, setResponse, fetchAPI }) {
      if (request.method !== "GET" || response.status !== 200 || !response.body) return;
      const body = Buffer.from(await response.arrayBuffer());
      const etag = graphqlETag(body);
      const headers = new fetchAPI.Headers(response.headers);
      headers.set("ETag", etag);
      if (auditReads.has(request)) headers.set("Cache-Control", "no-store");
      // As Express decides for REST reads (req.fresh): `Cache-Control: no-cache` asks for the answer itself.
      const revalidate = /(?:^|,)\s*no-cache\s*(?:,|$)/i.test(request.headers.get("cache-control") ?? "");
      if (!revalidate && noneMatchHas(request.headers.get("if-none-match"), etag)) {
        headers.delete("content-length");
        headers.delete("content-type");
        return setResponse(new fetchAPI.Response(null, { status: 304, headers }));
      }
      setResponse(new fetchAPI.Response(body, { status: 200, headers }));
    },
  };
}

/**
 * The tag of a GET /graphql answer: over the answer without its `extensions.cost` (the budget left,
 * which every call changes, and the price; the RateLimit-* headers carry the budget), so any change
 * to the data or the errors changes it, whatever their field names. Weak, Express's format.
 */
export function graphqlETag(body: Buffer): string {
  const answer = parsedAnswer(body);
  const extensions = answer?.extensions;
  if (!answer || !extensions || typeof extensions !== "object" || !("cost" in extensions)) return weakETag(body);
  const { cost: _cost, ...others } = extensions as Record<string, unknown>;
  return weakETag(Buffer.from(JSON.stringify({ ...answer, extensions: Object.keys(others).length ? others : undefined }), "utf8"));
}

function parsedAnswer(body: Buffer): { extensions?: unknown } | null {
  try {
    const v = JSON.parse(body.toString("utf8")) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    // Not JSON (a GraphQL answer always is): tagged as it is.
    return null;
  }
}

/** Whether the document selects an `auditLogs` field anywhere (aliased or in a fragment); once per parsed document. */
const readsAuditLog = new WeakMap<DocumentNode, boolean>();
export function selectsAuditLog(document: DocumentNode): boolean {
  let found = readsAuditLog.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Field(node) {
        if (node.name.value === "auditLogs") found = true;
      },
    });
    readsAuditLog.set(document, found);
  }
  return found;
}
