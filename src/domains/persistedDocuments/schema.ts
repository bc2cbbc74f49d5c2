// Persisted documents in the schema: the mutation that stores a manifest (what the REST route runs).
import { AppError } from "../../errors.js";
import { builder } from "../../schema/builder.js";
import { requireAccount } from "../accounts/schema.js";
import { storeManifest } from "./store.js";

const PersistedDocumentInput = builder.inputType("PersistedDocumentInput", {
  description: "One entry of a manifest: a document's id (`sha256:<hex>` or `<hex>` of its text's SHA-256) and its text.",
  fields: (t) => ({ id: t.string({ required: true }), text: t.string({ required: true }) }),
});

const StoredPersistedDocuments = builder.objectRef<{ stored: number }>("StoredPersistedDocuments").implement({
  fields: (t) => ({ stored: t.exposeInt("stored", { description: "Documents of the manifest now stored for the account." }) }),
});

builder.mutationField("storePersistedDocuments", (t) =>
  t.field({
    type: StoredPersistedDocuments,
    description:
      "Stores a manifest of persisted documents for the account, to be run by `documentId`. Each id must be the SHA-256 of its text and each text a valid document for this schema; otherwise a 400 naming the ids, and nothing is stored.",
    args: {
      accountId: t.arg.string({ required: true }),
      documents: t.arg({ type: [PersistedDocumentInput], required: true }),
    },
    // Validated against the schema that runs this mutation (the one requests run against).
    resolve: async (_root, { accountId, documents }, ctx, info) => {
      const identity = await requireAccount(ctx, accountId);
      // A key that runs registered documents only cannot register its own: otherwise the lock would
      // be one request away (store a text, run it by id). Documents come from a build's manifest,
      // registered with another key or the CLI.
      if (identity.persistedOnly)
        throw new AppError(
          403,
          "This API key runs persisted documents only and cannot register them: store the manifest with another key of the account, or with the CLI (`documents push`).",
        );
      return { stored: await storeManifest(accountId, documents, info.schema) };
    },
  }),
);
