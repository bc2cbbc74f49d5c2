// How each Prisma model takes part in the audit log. Every model of the schema is classified, by
// the domain that owns it (src/domains/*/audit.ts, in its domain object); a model nobody classified
// cannot be written (configureDatabase in src/db/index.ts refuses the classification, so the
// process does not start, and test/audit-classification.test.ts fails), so a new table cannot slip
// past the audit unnoticed.
export type Row = Record<string, unknown>;

/** Its writes are changes: each changed record gets an entry, in the transaction of the change. */
export interface AuditedModel {
  kind: "audited";
  /** resourceType of its entries */
  type: string;
  /** columns that identify the record and its account (selected before updates and deletes) */
  identity: string[];
  resourceId(row: Row): string;
  accountId(row: Row): string | null;
  /** columns never copied into details */
  redact?: string[];
  /** writes that are bookkeeping rather than changes (recorded nowhere, allowed anywhere) */
  bookkeeping?(args: { data?: Row }): boolean;
}

/** Rows owned by an audited parent: their writes become details of the parent's entry. */
export interface ChildModel {
  kind: "child";
  parent: string;
  /** the column holding the parent's id */
  key: string;
  /** [detail field, name, value] this row contributes to the parent's entry */
  detail(row: Row): [string, string, unknown];
  /**
   * The detail field that lists these rows' names (`detail`'s value unused) instead of mapping
   * names to values: the rows are a set replaced as a whole, so a write that removes them starts
   * the list empty (a content's tag ids).
   */
  list?: string;
}

/** The audit log itself: appended to, never changed. */
export interface LogModel {
  kind: "log";
}

/** Not a change worth recording (derived or transient data); say why. */
export interface ExemptModel {
  kind: "exempt";
  why: string;
}

export type ModelAudit = AuditedModel | ChildModel | LogModel | ExemptModel;
export type AuditClassification = Record<string, ModelAudit>;

/**
 * What the database layer is handed by whoever starts the process (src/db/index.ts
 * `configureDatabase`, from src/domains/index.ts): every model's classification, and the models
 * whose createMany runs as multi-row INSERTs (src/db/insert.ts; their callers always give complete rows).
 */
export interface WritePolicy {
  classification: AuditClassification;
  fastInsert: ReadonlySet<string>;
}

/** An audited model; its declared type keeps whether it has bookkeeping writes (src/db's types read it). */
export const audited = <M extends Omit<AuditedModel, "kind">>(m: M): M & { kind: "audited" } => ({ kind: "audited", ...m });
export const childOf = (parent: string, key: string, detail: ChildModel["detail"], opts: { list?: string } = {}): ChildModel => ({
  kind: "child",
  parent,
  key,
  detail,
  ...opts,
});
export const auditLog: LogModel = { kind: "log" };
export const exempt = (why: string): ExemptModel => ({ kind: "exempt", why });

/** Whether the audit lets `c`'s model be written outside withTransaction(): exempt, or audited with bookkeeping writes (which it still checks call by call). */
export const writableOutsideTransactions = (c: ModelAudit): boolean => c.kind === "exempt" || (c.kind === "audited" && c.bookkeeping !== undefined);

/** The models of `models` that `classification` leaves out; and children whose parent is not audited. */
export function classificationProblems(models: readonly string[], classification: AuditClassification): string[] {
  const problems = models.filter((m) => !classification[m]).map((m) => `model ${m} is not classified for the audit log (add it to its domain's audit.ts)`);
  for (const [model, c] of Object.entries(classification)) {
    if (!models.includes(model)) problems.push(`audit classification names ${model}, which is not a model of the schema`);
    if (c.kind === "child" && classification[c.parent]?.kind !== "audited") problems.push(`${model} is a child of ${c.parent}, which is not an audited model`);
  }
  return problems;
}
