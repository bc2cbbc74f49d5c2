// The domains of the service, one object each (a folder's domain.ts: its GraphQL schema, REST rows,
// audit classification, write flags and OpenAPI tags; the type is ./define.ts). Everything that
// needs to know the domains derives from this list. Adding a domain is a folder, a line here, and
// its migration.

import { ingest } from "../ingest/domain.js";
import { accounts } from "./accounts/domain.js";
import { attributes } from "./attributes/domain.js";
import { auditLogs } from "./auditLogs/domain.js";
import { content } from "./content/domain.js";
import { copyJobs } from "./copyJobs/domain.js";
import { type Domain, type FreeWriteModels, openApiTagsOf, writePolicyOf } from "./define.js";
import { endpoints } from "./endpoints/domain.js";
import { endUsers } from "./endUsers/domain.js";
import { eventExport } from "./eventExport/domain.js";
import { events } from "./events/domain.js";
import { explore } from "./explore/domain.js";
import { files } from "./files/domain.js";
import { persistedDocuments } from "./persistedDocuments/domain.js";
import { reports } from "./reports/domain.js";
import { segments } from "./segments/domain.js";
import { tags } from "./tags/domain.js";
import { webhooks } from "./webhooks/domain.js";

/** In the order the OpenAPI document lists their routes. */
export const domains = [
  accounts,
  content,
  tags,
  endUsers,
  segments,
  attributes,
  files,
  copyJobs,
  events,
  ingest,
  reports,
  explore,
  auditLogs,
  eventExport,
  webhooks,
  persistedDocuments,
  endpoints,
] as const satisfies readonly Domain[];

/** Every REST row, in the order the OpenAPI document lists them. */
export const domainRoutes = domains.flatMap((d: Domain) => d.routes ?? []);

/** Every model's audit classification and write flags: what the process hands the database layer (configureDatabase). */
export const writePolicy = writePolicyOf(domains);

/** What each REST resource is (OpenAPI tag descriptions), by the path segment after the account. */
export const openApiTags = openApiTagsOf(domains);

// The database layer's types know which models may be written outside withTransaction() from here.
declare module "../db/index.js" {
  interface FreeWrites extends Record<FreeWriteModels<NonNullable<(typeof domains)[number]["audit"]>>, true> {}
}
