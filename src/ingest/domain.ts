// Ingestion (the Segment-format endpoints, src/ingest/router.ts) as an entry of the domain list: it
// owns a model, so its classification comes from the same list as every other model's. It has no
// GraphQL schema and no REST rows (its paths are served and documented outside the route table).
import { defineDomain } from "../domains/define.js";
import { ingestAudit } from "./audit.js";

export const ingest = defineDomain({
  name: "ingest",
  description: "Segment-format ingestion of engagement events and end-user traits (src/ingest), with its idempotency keys.",
  audit: ingestAudit,
});
