// Saved endpoints as account data: what a document must be to become one (checked once, when it is
// saved), how it is stored (its text as one of the account's persisted documents, the endpoint
// naming it by hash), and the variables a caller gives. The GraphQL mutations (schema.ts) and so
// the REST rows (routes.ts) come here.
import { type DocumentNode, type GraphQLSchema, Kind, type OperationDefinitionNode, parse, print, type TypeNode } from "graphql";
import { createRows } from "../../audit/recorder.js";
import { clock } from "../../clock.js";
import { withTransaction } from "../../db/index.js";
import { lockAccountFor } from "../../db/locks.js";
import { AppError, badRequest, type FieldError } from "../../errors.js";
import { storedDocumentProblem } from "../../graphql/armor.js";
import { documentHash, sha256Hex } from "../../graphql/persistedDocuments.js";
import { newId } from "../../ids.js";
import { longerThan } from "../../text.js";

/** `name`: what a path segment can hold without escaping, and short enough for a metrics label. */
export const ENDPOINT_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Endpoints an account may have: its OpenAPI document lists them all in one answer. */
export const MAX_ENDPOINTS = 500;
/** The longest `Cache-Control: max-age` an endpoint may ask for (one year, RFC 9111's usual ceiling). */
export const MAX_AGE_SECONDS = 31_536_000;
const DESCRIPTION_MAX = 1_000;
/** The variable that takes the path's account: a caller never gives it. */
export const ACCOUNT_VARIABLE = "accountId";

export type EndpointMethod = "GET" | "POST";

export interface EndpointVariable {
  name: string;
  /** as the operation declares it, e.g. `[String!]`, `Int!` */
  type: string;
  /** non-null without a default: a call must give it */
  required: boolean;
}

export interface EndpointInput {
  document?: string | null;
  documentId?: string | null;
  method?: EndpointMethod | null;
  description?: string | null;
  maxAgeSeconds?: number | null;
}

const bad = (path: string, message: string) => badRequest(`${path} ${message}`, [{ path, message }]);

function checkName(name: string): string {
  if (!ENDPOINT_NAME.test(name)) throw bad("name", "must be 1 to 64 of letters, digits, `-` and `_` (ASCII: A–Z, a–z, 0–9)");
  return name;
}

/** The one operation of a document; a 400 naming the problem when it holds none, several, or a subscription. */
export function soleOperation(document: DocumentNode): OperationDefinitionNode {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== 1) throw bad("document", `must hold exactly one operation (it holds ${operations.length}); fragments beside it are fine`);
  const op = operations[0]!;
  if (op.operation === "subscription") throw bad("document", "is a subscription; an endpoint runs a query or a mutation");
  return op;
}

/** The variables a caller gives (all but accountId), in the operation's order. */
export function callerVariables(op: OperationDefinitionNode): EndpointVariable[] {
  return (op.variableDefinitions ?? [])
    .filter((v) => v.variable.name.value !== ACCOUNT_VARIABLE)
    .map((v) => ({ name: v.variable.name.value, type: print(v.type), required: isRequired(v.type, v.defaultValue !== undefined) }));
}

const isRequired = (type: TypeNode, hasDefault: boolean) => type.kind === Kind.NON_NULL_TYPE && !hasDefault;

/** A document text, parsed and validated against the schema requests run against and within the GraphQL limits: a 400 naming what is wrong. */
export function checkDocument(text: string, schema: GraphQLSchema): { document: DocumentNode; operation: OperationDefinitionNode } {
  let document: DocumentNode;
  try {
    document = parse(text);
  } catch (err) {
    throw bad("document", `does not parse: ${(err as Error).message}`);
  }
  const operation = soleOperation(document);
  // The account variable must take a string, since the path's account is one.
  const account = operation.variableDefinitions?.find((v) => v.variable.name.value === ACCOUNT_VARIABLE);
  if (account) {
    const named = account.type.kind === Kind.NON_NULL_TYPE ? account.type.type : account.type;
    if (named.kind !== Kind.NAMED_TYPE || !["String", "ID"].includes(named.name.value))
      throw bad("document", `declares $${ACCOUNT_VARIABLE} as ${print(account.type)}; it takes the path's account, a String`);
  }
  const problem = storedDocumentProblem(text, document, schema);
  if (problem) throw bad("document", problem);
  return { document, operation };
}

export interface SavedEndpointRow {
  id: string;
  accountId: string;
  name: string;
  method: string;
  documentHash: string;
  description: string | null;
  maxAgeSeconds: number;
  variables: string;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Creates or replaces the endpoint `name` of the account, in one transaction with its audit entry
 * (and the persisted document of a new text). `persistedOnly`: the caller's key runs registered
 * documents only, so it may name one (documentId) but not bring a new text.
 */
export async function putEndpoint(
  accountId: string,
  name: string,
  input: EndpointInput,
  schema: GraphQLSchema,
  persistedOnly: boolean,
): Promise<{ created: boolean; row: SavedEndpointRow }> {
  checkName(name);
  const errors: FieldError[] = [];
  const hasText = input.document != null;
  const hasId = input.documentId != null;
  if (hasText === hasId) throw bad("body", "must give exactly one of `document` (a GraphQL text) and `documentId` (sha256:<hex> of a persisted document)");
  if (hasText && persistedOnly)
    throw new AppError(403, "This API key runs persisted documents only: save the endpoint with `documentId` (a registered document's id).");
  const method: EndpointMethod = input.method ?? "GET";
  const description = input.description ?? null;
  if (description !== null && longerThan(description, DESCRIPTION_MAX))
    errors.push({ path: "description", message: `must be at most ${DESCRIPTION_MAX} characters` });
  const maxAgeSeconds = input.maxAgeSeconds ?? 0;
  if (!Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 0 || maxAgeSeconds > MAX_AGE_SECONDS)
    errors.push({ path: "maxAgeSeconds", message: `must be an integer between 0 and ${MAX_AGE_SECONDS}` });
  if (errors.length) throw badRequest(errors.map((e) => `${e.path} ${e.message}`).join("; "), errors);

  let hash: string | null = null;
  if (hasId) {
    hash = documentHash(input.documentId!);
    if (!hash) throw bad("documentId", "must be `sha256:` followed by the 64 hex digits of the document's SHA-256");
  }

  return withTransaction(async (tx) => {
    // Saves and deletes of the account's endpoints one at a time (PostgreSQL; SQLite runs one write
    // transaction at a time): the name's create-or-replace and the cap's count are decided on what
    // they read, so concurrent saves of one new name answer one 201 and the rest 200, and the cap
    // holds exactly.
    await lockAccountFor(tx, accountId, "endpoints");
    let text = input.document ?? null;
    if (hash) {
      const stored = await tx.persistedDocument.findUnique({ where: { accountId_hash: { accountId, hash } }, select: { text: true } });
      if (!stored) throw bad("documentId", `names no persisted document of this account (register it with POST /v1/accounts/${accountId}/graphql/documents)`);
      text = stored.text;
    } else hash = sha256Hex(text!);
    // Checked against the schema now, whatever was checked when a persisted document was stored:
    // the schema may have changed since, and an endpoint needs one operation besides.
    const { operation } = checkDocument(text!, schema);
    if (operation.operation === "mutation" && method !== "POST")
      throw bad("method", "must be POST: the document is a mutation, and GET answers must not change anything");
    const variables = JSON.stringify(callerVariables(operation));
    // A document's text is fixed by its id: one already stored (by a manifest pushed at the same
    // moment too, which takes no lock) is stored.
    if (!input.documentId) await createRows("PersistedDocument", [{ accountId, hash, text: text! }], { skipDuplicates: true });
    const now = clock.now();
    const fields = { method, documentHash: hash, description, maxAgeSeconds, variables, updatedAt: now };
    const existing = await tx.savedEndpoint.findUnique({ where: { accountId_name: { accountId, name } }, select: { id: true } });
    if (existing) return { created: false, row: await tx.savedEndpoint.update({ where: { id: existing.id }, data: fields }) };
    if ((await tx.savedEndpoint.count({ where: { accountId } })) >= MAX_ENDPOINTS)
      throw new AppError(409, `An account has at most ${MAX_ENDPOINTS} endpoints; delete one first.`);
    return { created: true, row: await tx.savedEndpoint.create({ data: { id: newId("ep"), accountId, name, createdAt: now, ...fields } }) };
  });
}

/** Deletes the endpoint; false when the account has none of that name. (Its persisted document stays: clients may run it by id.) */
export async function deleteEndpoint(accountId: string, name: string): Promise<boolean> {
  return withTransaction(async (tx) => {
    await lockAccountFor(tx, accountId, "endpoints");
    const existing = await tx.savedEndpoint.findUnique({ where: { accountId_name: { accountId, name } }, select: { id: true } });
    if (!existing) return false;
    await tx.savedEndpoint.delete({ where: { id: existing.id } });
    return true;
  });
}

/** The stored variables of an endpoint row. */
export const variablesOf = (row: { variables: string }) => JSON.parse(row.variables) as EndpointVariable[];
