// The REST compatibility layer as data: one row per path of the spec, declared by the domains
// (src/domains/*/routes.ts, listed by src/domains/index.ts) with the contract of src/rest/contract.ts. src/rest/router.ts executes
// every row the same way; src/openapi derives the OpenAPI document from them.
import { domainRoutes } from "../domains/index.js";
import type { RestRoute } from "./contract.js";

export type { RestInput, RestRoute } from "./contract.js";

export const routes: readonly RestRoute[] = domainRoutes;
