// Audit classification of ingestion's idempotency keys: a record that an id was seen, written with
// the events it came with; not a change to the account's data.
import { exempt } from "../audit/classification.js";

export const ingestAudit = {
  IngestMessage: exempt("idempotency keys of ingested events (messageId / id), kept 7+ days so retries are not counted twice"),
};
