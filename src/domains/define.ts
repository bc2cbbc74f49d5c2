// What a domain is: one object, exported by its folder's domain.ts and listed once in
// src/domains/index.ts. Everything that needs to know the domains (the GraphQL schema, the REST
// table, the OpenAPI tags, the audit classification and the database layer's write flags)
// derives from that list here; nothing keeps a list of its own.
import type { AuditClassification, ModelAudit, WritePolicy } from "../audit/classification.js";
import type { RestRoute } from "../rest/contract.js";

export interface Domain {
  /** its folder under src/domains */
  name: string;
  /** what it is, in a sentence */
  description: string;
  /**
   * Its GraphQL types, queries and mutations: its schema.ts, which registers them on the Pothos
   * builder (src/schema/builder.ts) when imported. Held here so that importing the domain is its
   * registration; src/schema/index.ts builds the schema from src/domains/index.ts.
   */
  graphql?: object;
  /** its REST rows, in the order the OpenAPI document lists them */
  routes?: readonly RestRoute[];
  /** how each of its models takes part in the audit log (every model of the schema: one domain's) */
  audit?: AuditClassification;
  /**
   * Of its models, those whose createMany runs as multi-row INSERTs (src/db/insert.ts): their
   * callers always give complete rows. (Which models may be written outside withTransaction()
   * follows from `audit`: exempt models and audited ones with bookkeeping writes.)
   */
  fastInsert?: readonly string[];
  /** What each REST resource of its rows is (the path segment after the account): OpenAPI tag descriptions. */
  openApiTags?: Record<string, string>;
}

/**
 * A domain whose classification's declared type is kept (src/db's types are derived from it): a
 * domain's audit.ts declares its classification without a type annotation, and this checks it.
 */
export interface DomainOf<C extends AuditClassification> extends Domain {
  audit?: C;
  fastInsert?: readonly (keyof C & string)[];
}

/** A domain (its classification's type kept, see DomainOf). */
export const defineDomain = <C extends AuditClassification = Record<never, ModelAudit>>(domain: DomainOf<C>): DomainOf<C> => domain;

/** The write policy of `domains`; a model classified by two domains stops start-up. */
export function writePolicyOf(domains: readonly Domain[]): WritePolicy {
  const classification: AuditClassification = {};
  const owner = new Map<string, string>();
  const fastInsert = new Set<string>();
  for (const d of domains) {
    for (const [model, c] of Object.entries(d.audit ?? {})) {
      if (owner.has(model)) throw new Error(`model ${model} is classified by two domains: ${owner.get(model)} and ${d.name}`);
      owner.set(model, d.name);
      classification[model] = c;
    }
    for (const model of d.fastInsert ?? []) fastInsert.add(model);
  }
  return { classification, fastInsert };
}

/** The OpenAPI tag descriptions of `domains`, by resource; a resource described by two domains stops start-up. */
export function openApiTagsOf(domains: readonly Domain[]): Readonly<Record<string, string>> {
  const tags: Record<string, string> = {};
  for (const d of domains) {
    for (const [resource, what] of Object.entries(d.openApiTags ?? {})) {
      if (resource in tags) throw new Error(`REST resource ${resource} is described by two domains (${d.name} and another)`);
      tags[resource] = what;
    }
  }
  return tags;
}

/**
 * The models of a classification that may be written outside withTransaction(), as a type (src/db's
 * `FreeWrites`): the rule of writableOutsideTransactions (src/audit/classification.ts), which the
 * audit applies at run time.
 */
export type FreeWriteModels<C> = C extends unknown
  ? { [K in keyof C]: C[K] extends { kind: "exempt" } ? K : C[K] extends { bookkeeping: (...args: never[]) => boolean } ? K : never }[keyof C] & string
  : never;
