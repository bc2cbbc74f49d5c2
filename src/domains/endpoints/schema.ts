// Saved endpoints in GraphQL: an account's endpoints (list, one) and the mutations that save
// (create or replace) and delete one. The REST rows (routes.ts) run these; calling an endpoint is
// src/domains/endpoints/run.ts.
import { prisma } from "../../db/index.js";
import { notFound } from "../../errors.js";
import { builder } from "../../schema/builder.js";
import { afterCursor, connectionFrom, LIST_LIMITS, pageExtensions, pageLimit, toPage } from "../../schema/pagination.js";
import { Account, requireAccount } from "../accounts/schema.js";
import { ENDPOINT_NAME, type EndpointVariable, putEndpoint, deleteEndpoint as removeEndpoint, type SavedEndpointRow, variablesOf } from "./store.js";

const EndpointMethod = builder.enumType("EndpointMethod", {
  description: "How an endpoint is called: GET (queries; GET or POST with a JSON body of variables) or POST (needed by mutations).",
  values: ["GET", "POST"] as const,
});

const EndpointVariableRef = builder.objectRef<EndpointVariable>("EndpointVariable").implement({
  description: "A variable a call gives (as a query parameter, or a member of the JSON body).",
  fields: (t) => ({
    name: t.exposeString("name"),
    type: t.exposeString("type", { description: "Its GraphQL type as the operation declares it, e.g. `Int!`, `[String!]`." }),
    required: t.exposeBoolean("required", { description: "Non-null without a default: a call must give it." }),
  }),
});

/** A row, with its document's text when it was read along. */
type EndpointNode = SavedEndpointRow & { document?: { text: string } };

const WITH_TEXT = { document: { select: { text: true } } } as const;

export const SavedEndpoint = builder.objectRef<EndpointNode>("SavedEndpoint").implement({
  description: "A saved GraphQL operation served as GET/POST /v1/accounts/{accountId}/run/{name}.",
  fields: (t) => ({
    name: t.exposeString("name"),
    method: t.field({ type: EndpointMethod, resolve: (e) => e.method as "GET" }),
    documentId: t.string({ description: "The persisted document it runs: `sha256:<hex>`.", resolve: (e) => `sha256:${e.documentHash}` }),
    document: t.string({
      description: "The document's text.",
      // Lists and lookups read it with the rows (one statement a page, not one per endpoint); a saved row has it too.
      resolve: async (e) =>
        e.document?.text ??
        (await prisma.persistedDocument.findUniqueOrThrow({ where: { accountId_hash: { accountId: e.accountId, hash: e.documentHash } } })).text,
    }),
    description: t.exposeString("description", { nullable: true }),
    maxAgeSeconds: t.exposeInt("maxAgeSeconds", { description: "GET answers carry `Cache-Control: private, max-age=<this>`." }),
    variables: t.field({ type: [EndpointVariableRef], description: "The variables a call gives ($accountId is the path's).", resolve: variablesOf }),
    createdTime: t.field({ type: "Timestamp", resolve: (e) => e.createdAt }),
    lastUpdateTime: t.field({ type: "Timestamp", resolve: (e) => e.updatedAt }),
  }),
});

builder.prismaObjectField(Account, "endpoints", (t) =>
  t.connection(
    {
      type: SavedEndpoint,
      extensions: pageExtensions(LIST_LIMITS.standard),
      description: "The account's saved endpoints, oldest first.",
      resolve: async (account, args) => {
        const limit = pageLimit(args, LIST_LIMITS.standard);
        const rows = await prisma.savedEndpoint.findMany({
          where: { AND: [{ accountId: account.id }, afterCursor("createdAt", args.after, true, account.id)] },
          orderBy: [{ createdAt: "asc" }, { id: "asc" }],
          take: limit + 1,
          include: WITH_TEXT,
        });
        return connectionFrom(toPage(rows, limit), account.id, (r) => r.createdAt);
      },
    },
    {},
    {},
  ),
);

builder.prismaObjectField(Account, "endpoint", (t) =>
  t.field({
    type: SavedEndpoint,
    nullable: true,
    args: { name: t.arg.string({ required: true }) },
    resolve: (account, { name }) => prisma.savedEndpoint.findUnique({ where: { accountId_name: { accountId: account.id, name } }, include: WITH_TEXT }),
  }),
);

const EndpointInput = builder.inputType("EndpointInput", {
  description: "What an endpoint runs: exactly one of `document` and `documentId`.",
  fields: (t) => ({
    document: t.string({ required: false, description: "A GraphQL document with exactly one operation (stored as a persisted document of the account)." }),
    documentId: t.string({ required: false, description: "A persisted document of the account: `sha256:<hex>`." }),
    method: t.field({ type: EndpointMethod, required: false, description: "GET (default) or POST; a mutation needs POST." }),
    description: t.string({ required: false }),
    maxAgeSeconds: t.int({ required: false, description: "`Cache-Control: private, max-age` of GET answers (default 0)." }),
  }),
});

const PutEndpointResult = builder.objectRef<{ created: boolean; endpoint: SavedEndpointRow }>("PutEndpointResult").implement({
  fields: (t) => ({
    created: t.exposeBoolean("created", { description: "true: a new endpoint; false: it replaced the one of that name." }),
    endpoint: t.field({ type: SavedEndpoint, resolve: (r) => r.endpoint }),
  }),
});

builder.mutationField("putEndpoint", (t) =>
  t.field({
    type: PutEndpointResult,
    description:
      "Creates or replaces the endpoint `name`: the document is checked once, here (exactly one operation, valid for this schema, a mutation only with POST); 400 naming the problem otherwise, and nothing changes.",
    args: { accountId: t.arg.string({ required: true }), name: t.arg.string({ required: true }), input: t.arg({ type: EndpointInput, required: true }) },
    resolve: async (_root, { accountId, name, input }, ctx, info) => {
      const identity = await requireAccount(ctx, accountId);
      // Checked against the schema that runs this mutation: the one the endpoint will run against.
      const { created, row } = await putEndpoint(accountId, name, input, info.schema, identity.persistedOnly);
      return { created, endpoint: row };
    },
  }),
);

builder.mutationField("deleteEndpoint", (t) =>
  t.field({
    type: "Boolean",
    description: "Deletes the endpoint `name` (its persisted document stays). 404 when the account has none of that name.",
    args: { accountId: t.arg.string({ required: true }), name: t.arg.string({ required: true }) },
    resolve: async (_root, { accountId, name }, ctx) => {
      await requireAccount(ctx, accountId);
      // A name no endpoint can have names none: a 404, as GET and calls answer it (not looked up:
      // PostgreSQL refuses a NUL in a bound value).
      if (!ENDPOINT_NAME.test(name) || !(await removeEndpoint(accountId, name))) throw notFound(`No endpoint '${name.slice(0, 80)}' in this account.`);
      return true;
    },
  }),
);
