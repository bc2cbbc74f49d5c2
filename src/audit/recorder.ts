// The audit log as one mechanism, a Prisma client extension on the writing client: every write to
// a model is decided by the model's classification (src/audit/classification.ts, declared by each
// domain). Writes to audited models (and their children) are allowed inside withTransaction()
// only, where they buffer an entry per changed record that is appended in that same transaction;
// child rows (a content's tags, an end user's values and actions) are folded into their parent's
// entry: one change, one entry. Audit entries are append-only; exempt models and bookkeeping
// writes pass; a model nobody classified cannot be written at all (default deny).
import { AsyncLocalStorage } from "node:async_hooks";
import { Extensions } from "@prisma/client/runtime/client";
import { clock } from "../clock.js";
import { type Dialect, deleteWhere, insertRows, keyValuePairs, sameColumns, updateRows as updateRowsSql } from "../db/insert.js";
import type { Prisma } from "../generated/sqlite/client.js";
import { newId } from "../ids.js";
import type { AuditClassification, AuditedModel, ChildModel, Row, WritePolicy } from "./classification.js";
import { currentScope } from "./requestScope.js";

interface Entry {
  model: string;
  row: Row;
  action: string;
  details: Row;
  /** set by erasure: the pseudonym that stands for the record instead of its own id */
  resourceId?: string;
}

interface TxScope {
  tx: any;
  entries: Map<string, Entry>;
  /** The same entries by model and row id: how a child write finds its parents' entries (recordChild). */
  byId: Map<string, Map<string, Entry>>;
}

/** The transaction's entries of `model` by row id (kept by upsertEntry). */
function entriesById(scope: TxScope, model: string): Map<string, Entry> {
  let byId = scope.byId.get(model);
  if (!byId) scope.byId.set(model, (byId = new Map()));
  return byId;
}
const txScope = new AsyncLocalStorage<TxScope>();

let configured = false;
let classification: AuditClassification = {};
let fastInsert: ReadonlySet<string> = new Set();
let dialect: Dialect = "sqlite";
/**
 * Called by src/db/index.ts when it opens the clients and when it is handed the write policy
 * (configureDatabase). Until it has one, every write is refused.
 */
export function configureAudit(policy: WritePolicy | undefined, d: Dialect): void {
  configured = policy !== undefined;
  classification = policy?.classification ?? {};
  fastInsert = policy?.fastInsert ?? new Set();
  dialect = d;
}
const auditedModel = (model: string) => classification[model] as AuditedModel;

const WRITES = new Set(["create", "createMany", "createManyAndReturn", "update", "updateMany", "updateManyAndReturn", "upsert", "delete", "deleteMany"]);

/** Whether a createMany can run as the multi-row INSERT: a fastInsert model and rows that all name the same columns. */
function fastInsertable(model: string, args: any): boolean {
  if (!fastInsert.has(model)) return false;
  return sameColumns(Array.isArray(args.data) ? args.data : [args.data]);
}

/** createMany of complete rows as multi-row INSERTs; with skipDuplicates only the rows written come back. */
function fastCreateMany(tx: any, model: string, args: any): Promise<{ count: number; inserted: Row[] }> {
  const rows: Row[] = Array.isArray(args.data) ? args.data : [args.data];
  const skipDuplicates = args.skipDuplicates === true;
  const identity = classification[model]?.kind === "audited" ? auditedModel(model).identity : undefined;
  return insertRows(tx, dialect, model, rows, { skipDuplicates, identity });
}

function clean(data: unknown, redact: string[] = []): Row {
  const out: Row = {};
  if (!data || typeof data !== "object") return out;
  for (const [k, v] of Object.entries(data as Row)) {
    if (redact.includes(k) || k === "hash") continue;
    if (v instanceof Date) out[k] = v.toISOString();
    else if (typeof v === "bigint") out[k] = Number(v);
    else if (v !== null && typeof v === "object" && !Array.isArray(v))
      continue; // relation writes: not in our code paths
    else out[k] = v;
  }
  return out;
}

function upsertEntry(scope: TxScope, model: string, row: Row, action: string, details: Row): Entry {
  const a = auditedModel(model);
  const key = `${model}\u0000${a.identity.map((c) => String(row[c])).join("\u0000")}`;
  const cur = scope.entries.get(key);
  if (cur) {
    if (action === "delete") cur.action = "delete";
    Object.assign(cur.row, row);
    Object.assign(cur.details, details);
    if (row.id != null) entriesById(scope, model).set(String(row.id), cur);
    return cur;
  }
  const entry: Entry = { model, row: { ...row }, action, details: { ...details } };
  scope.entries.set(key, entry);
  if (row.id != null) entriesById(scope, model).set(String(row.id), entry);
  return entry;
}

/** Ids named by a child write's `where` on its parent key: a string or `{ in: [...] }`. */
function parentIdsOf(where: Row | undefined, key: string): string[] | null {
  const v = where?.[key];
  if (typeof v === "string") return [v];
  if (v && typeof v === "object" && Array.isArray((v as { in?: unknown }).in)) return (v as { in: string[] }).in;
  return null;
}

async function recordChild(scope: TxScope, model: string, operation: string, args: any, query: (a: unknown) => Promise<unknown>) {
  const child = classification[model] as ChildModel;
  const parent = auditedModel(child.parent);
  const creating = operation.startsWith("create");
  const rows: Row[] = creating ? (Array.isArray(args.data) ? args.data : [args.data]) : [];
  const parentIds = creating ? [...new Set(rows.map((r) => String(r[child.key])))] : parentIdsOf(args.where, child.key);
  const result =
    operation === "createMany" && fastInsertable(model, args)
      ? countOnly(await fastCreateMany(scope.tx, model, args))
      : operation === "deleteMany"
        ? await fastDeleteMany(scope.tx, model, args, query)
        : await query(args);
  if (!parentIds?.length) return result; // e.g. a field's values removed with the field: its own entry says so
  // Looked up, not gathered from every entry: a bulk write makes a child write per chunk and
  // statement, and building this map from its 10,000 entries each time was ~150 ms of CPU and
  // ~20 MB of garbage in a 10,000-user update.
  const known = entriesById(scope, child.parent);
  const missing = parentIds.filter((id) => !known.has(id));
  if (missing.length) {
    const select = Object.fromEntries(parent.identity.map((c) => [c, true]));
    const delegate = scope.tx[child.parent[0]!.toLowerCase() + child.parent.slice(1)];
    for (const p of (await delegate.findMany({ where: { id: { in: missing } }, select })) as Row[]) upsertEntry(scope, child.parent, p, "update", {});
  }
  const rowsByParent = new Map<string, Row[]>();
  for (const r of rows) {
    const id = String(r[child.key]);
    const list = rowsByParent.get(id);
    if (list) list.push(r);
    else rowsByParent.set(id, [r]);
  }
  for (const id of parentIds) {
    const entry = known.get(id);
    if (!entry) continue;
    if (!creating && child.list) entry.details[child.list] ??= [];
    for (const r of rowsByParent.get(id) ?? []) {
      const [field, name, value] = child.detail(r);
      if (field === child.list) {
        const list = (entry.details[field] ??= []) as string[];
        list.push(name);
      } else {
        const map = (entry.details[field] ??= {}) as Row;
        map[name] = typeof value === "bigint" ? Number(value) : value instanceof Date ? value.toISOString() : value;
      }
    }
  }
  return result;
}

const countOnly = ({ count }: { count: number }) => ({ count });

/** A child's deleteMany by lists of ids in one statement (src/db/insert.ts deleteWhere); Prisma's for any other `where`. */
async function fastDeleteMany(tx: any, model: string, args: any, query: (a: unknown) => Promise<unknown>): Promise<unknown> {
  const count = await deleteWhere(tx, dialect, model, args.where);
  return count === null ? query(args) : { count };
}

/** `{ userId_accountId: { userId, accountId } }` (unique-key form) → `{ userId, accountId }` for findMany. */
function flattenCompoundKeys(where: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(where)) {
    const parts = k.split("_");
    const compound =
      parts.length > 1 &&
      v !== null &&
      typeof v === "object" &&
      !Array.isArray(v) &&
      !(v instanceof Date) &&
      Object.keys(v as Row).every((x) => parts.includes(x));
    if (compound) Object.assign(out, v as Row);
    else out[k] = v;
  }
  return out;
}

async function recordWrite(scope: TxScope, model: string, operation: string, args: any, query: (a: unknown) => Promise<unknown>) {
  const a = auditedModel(model);
  const delegate = scope.tx[model[0]!.toLowerCase() + model.slice(1)];
  if (operation === "createMany" && (fastInsertable(model, args) || args.skipDuplicates)) {
    // Only the rows actually written get an entry (skipDuplicates may skip some).
    const { count, inserted } = await fastCreateMany(scope.tx, model, args);
    for (const r of inserted) upsertEntry(scope, model, r, "create", clean(r, a.redact));
    return { count };
  }
  if (operation === "createMany") {
    const rows: Row[] = Array.isArray(args.data) ? args.data : [args.data];
    const result = await query(args);
    for (const r of rows) upsertEntry(scope, model, r, "create", clean(r, a.redact));
    return result;
  }
  if (operation === "create" || operation === "createManyAndReturn") {
    const result = await query(args);
    const rows: Row[] = operation === "create" ? [{ ...(args.data as Row), ...(result as Row) }] : (result as Row[]);
    for (const r of rows) upsertEntry(scope, model, r, "create", clean(r, a.redact));
    return result;
  }
  // A single update or delete returns the whole row: it names the record, no read needed first.
  if ((operation === "update" || operation === "delete") && !args.select && !args.include) {
    const row = (await query(args)) as Row;
    upsertEntry(scope, model, row, operation, operation === "delete" ? { deleted: clean(row, a.redact) } : clean(args.data, a.redact));
    return row;
  }
  // updateMany / upsert / deleteMany: find the records first, inside the transaction.
  const where = flattenCompoundKeys(args.where ?? {});
  const before = (await delegate.findMany({
    where,
    ...(operation.startsWith("delete") ? {} : { select: Object.fromEntries(a.identity.map((c) => [c, true])) }),
  })) as Row[];
  const result = await query(args);
  if (operation === "upsert") {
    const created = before.length === 0;
    if (!created && Object.keys(args.update ?? {}).length === 0) return result; // found and left as it was: no change, no entry
    const row = { ...(result as Row) };
    upsertEntry(scope, model, row, created ? "create" : "update", clean(created ? args.create : args.update, a.redact));
  } else if (operation.startsWith("delete")) {
    for (const r of before) upsertEntry(scope, model, r, "delete", { deleted: clean(r, a.redact) });
  } else {
    for (const r of before) upsertEntry(scope, model, r, "update", clean(args.data, a.redact));
  }
  return result;
}

/**
 * The extension that applies the classification to every write of the client it extends. Reads
 * pass untouched.
 */
// The runtime's defineExtension, typed as the generated client's: importing the generated client
// here would load the SQLite client on PostgreSQL too (src/db/index.ts loads only the one in use).
const defineExtension = Extensions.defineExtension as unknown as typeof Prisma.defineExtension;
export const auditExtension = defineExtension({
  name: "audit",
  query: {
    $allModels: {
      async $allOperations({ model, operation, args, query }) {
        if (!WRITES.has(operation)) return query(args);
        if (!configured) {
          throw new Error(
            `${model}.${operation}: the database layer has no audit classification, so it writes nothing (the process's entry point hands it over: configureDatabase(writePolicy), src/domains/index.ts)`,
          );
        }
        const c = classification[model];
        if (!c) throw new Error(`${model}.${operation}: model ${model} is not classified for the audit log (add it to its domain's audit.ts)`);
        const a = args as any;
        if (c.kind === "exempt") return query(args);
        if (c.kind === "log") {
          if (!operation.startsWith("create")) throw new Error(`AuditLog.${operation}: audit entries are append-only`);
          return query(args);
        }
        if (c.kind === "audited" && c.bookkeeping?.(a)) return query(args);
        const scope = txScope.getStore();
        if (!scope) {
          throw new Error(
            `${model}.${operation} outside withTransaction(): changes to audited data must go through it so the audit entry is written with them`,
          );
        }
        return c.kind === "child" ? recordChild(scope, model, operation, a, query) : recordWrite(scope, model, operation, a, query);
      },
    },
  },
});

/**
 * The process-wide client: reads go to `reader`; writes go to `writer` (whose audit extension
 * decides them), and on SQLite (`serializeWrites`: one writer connection) each runs in a
 * transaction of its own, so it waits for an open transaction instead of slipping into it.
 * `$transaction` is refused: withTransaction() is the way to change data.
 */
export function routedClient<C extends object>(reader: C, writer: C, serializeWrites: boolean): C {
  const viaWriter = (run: (w: any) => Promise<unknown>) => (serializeWrites ? (writer as any).$transaction((tx: any) => run(tx)) : run(writer));
  return new Proxy(reader, {
    get(target, prop) {
      const value = (target as any)[prop];
      if (prop === "$transaction") {
        return () => {
          throw new Error("use withTransaction() from src/db/index.ts: it writes the audit entries in the same transaction");
        };
      }
      if (prop === "$executeRaw" || prop === "$executeRawUnsafe") return (...args: unknown[]) => viaWriter((w) => w[prop](...args));
      if (prop === "$disconnect") return () => Promise.all([...new Set([reader, writer])].map((c) => (c as any).$disconnect())).then(() => undefined);
      if (typeof prop !== "string" || prop.startsWith("$") || typeof value !== "object" || value === null) {
        return typeof value === "function" ? value.bind(target) : value;
      }
      // A model delegate: reads from the reader, writes through the writer's extension.
      return new Proxy(value, {
        get(delegate, op) {
          const fn = delegate[op];
          if (typeof op !== "string" || typeof fn !== "function") return fn;
          if (!WRITES.has(op)) return fn.bind(delegate);
          return (args: unknown) => viaWriter((w) => w[prop][op](args));
        },
      });
    },
  });
}

/**
 * createMany as a multi-row INSERT, audited exactly as the extension audits `createMany`, without
 * passing the rows through Prisma's client: its query extensions deep-clone their arguments first
 * (the 50,000 value rows of a 10,000-user write, and the garbage of the copy). For complete rows of
 * a fastInsert model (its domain's `fastInsert`), or, with `skipDuplicates`, of any audited model:
 * rows that collide with a unique key are skipped (ON CONFLICT DO NOTHING) and only the rows written
 * are audited. Inside withTransaction() only. Returns how many rows were written: with
 * `skipDuplicates`, fewer than given means a concurrent insert won the race.
 */
export async function createRows(model: string, rows: Row[], opts: { skipDuplicates?: boolean } = {}): Promise<number> {
  const scope = txScope.getStore();
  if (!scope) throw new Error(`${model} createRows outside withTransaction(): changes to audited data must go through it`);
  if (!rows.length) return 0;
  const args = { data: rows, ...(opts.skipDuplicates ? { skipDuplicates: true } : {}) };
  const kind = classification[model]?.kind;
  // The paths of recordWrite and recordChild that answer without Prisma's query.
  const fast =
    kind === "audited" ? opts.skipDuplicates || fastInsertable(model, args) : kind === "child" && !opts.skipDuplicates && fastInsertable(model, args);
  if (!fast) throw new Error(`createRows(${model}): not an audited model, or rows it cannot insert directly`);
  const unused = () => Promise.reject(new Error(`createRows(${model}): the fast insert answers it`));
  const record = kind === "child" ? recordChild : recordWrite;
  return ((await record(scope, model, "createMany", args, unused)) as { count: number }).count;
}

/**
 * Updates rows of an audited model, each with its own values, in a few statements instead of one
 * per row (src/db/insert.ts `updateRows`), and records each row's entry as `update` would: the
 * identity columns match the rows, the other columns are what changed. Inside withTransaction()
 * only. Returns how many rows changed.
 */
export async function updateRows(model: string, rows: Row[]): Promise<number> {
  const scope = txScope.getStore();
  if (!scope) throw new Error(`${model} updateRows outside withTransaction(): changes to audited data must go through it`);
  const a = auditedModel(model);
  if (classification[model]?.kind !== "audited") throw new Error(`updateRows(${model}): not an audited model`);
  const changed = await updateRowsSql(scope.tx, dialect, model, a.identity, rows);
  for (const r of rows) {
    const data: Row = {};
    for (const [k, v] of Object.entries(r)) if (!a.identity.includes(k)) data[k] = v;
    upsertEntry(scope, model, r, "update", clean(data, a.redact));
  }
  return changed;
}

// ---- erasure of personal data ---------------------------------------------------------------------
// The audit log is append-only with one exception: when a person's data is erased (an end user
// deleted), their records' entries must not keep naming them. The deletion's own entry says only
// that the record was erased, under a pseudonym, and the record's earlier entries are rewritten to
// the same pseudonym with their details (the values that were set) dropped. Who changed what and
// when stays; whose data it was does not.

/** What an erased record's entries say instead of what changed. */
export const ERASED_DETAILS = { erased: true } as const;

/**
 * Inside withTransaction, after deleting `rows` of an audited model: their deletion entries name
 * the pseudonym given for each row and carry no details but ERASED_DETAILS, and the model's earlier
 * entries for them are rewritten the same way (one statement per call, whatever the number of rows).
 */
export async function eraseAuditTrail(model: string, rows: { row: Row; pseudonym: string }[]): Promise<void> {
  const scope = txScope.getStore();
  if (!scope) throw new Error(`eraseAuditTrail(${model}) outside withTransaction()`);
  const a = auditedModel(model);
  if (classification[model]?.kind !== "audited") throw new Error(`eraseAuditTrail(${model}): not an audited model`);
  for (const { row, pseudonym } of rows) {
    const entry = scope.entries.get(`${model}\u0000${a.identity.map((c) => String(row[c])).join("\u0000")}`);
    if (!entry) continue;
    entry.details = { ...ERASED_DETAILS };
    entry.resourceId = pseudonym;
  }
  const details = JSON.stringify(ERASED_DETAILS);
  const byAccount = new Map<string | null, [string, string][]>();
  for (const { row, pseudonym } of rows) {
    const account = a.accountId(row);
    (byAccount.get(account) ?? byAccount.set(account, []).get(account)!).push([a.resourceId(row), pseudonym]);
  }
  for (const [account, pairs] of byAccount) {
    const m = await keyValuePairs(scope.tx, dialect, pairs);
    if (dialect === "postgres") {
      // `= $4`, not IS NOT DISTINCT FROM: only equality can use the (accountId, resourceType,
      // resourceId) index; with IS NOT DISTINCT FROM each of a chunk's 1,000 pairs scanned the
      // account's entries (3 s a chunk with 10,000 of them).
      const sql = `UPDATE "AuditLog" l SET "resourceId" = m.v, "details" = $2 FROM ${m.from} m
           WHERE ${account === null ? `l."accountId" IS NULL` : `l."accountId" = $4`} AND l."resourceType" = $3 AND l."resourceId" = m.k`;
      await scope.tx.$executeRawUnsafe(sql, ...m.params, details, a.type, ...(account === null ? [] : [account]));
    } else {
      const sql = `UPDATE "AuditLog" SET "resourceId" = m.v, "details" = ? FROM ${m.from} AS m
           WHERE "AuditLog"."accountId" IS ? AND "AuditLog"."resourceType" = ? AND "AuditLog"."resourceId" = m.k`;
      await scope.tx.$executeRawUnsafe(sql, ...m.params, details, account, a.type);
    }
  }
}

/** True inside withTransaction (its callbacks and what they call). */
export const inTransaction = (): boolean => txScope.getStore() !== undefined;

type CommitListener = (models: ReadonlySet<string>) => void;
const commitListeners = new Set<CommitListener>();

/**
 * Calls `fn` after each committed transaction of this process with the models it changed (e.g. the
 * identity cache drops what a key revocation or a membership change made stale).
 */
export function onCommit(fn: CommitListener): () => void {
  commitListeners.add(fn);
  return () => commitListeners.delete(fn);
}

export interface TransactionClient {
  $transaction<T>(fn: (tx: any) => Promise<T>, opts?: { timeout?: number; maxWait?: number }): Promise<T>;
}

/**
 * Runs `fn` in one database transaction and appends the audit entries of its changes to the
 * same transaction. Nested calls join the outer transaction.
 */
export async function runAudited<T, Tx>(client: TransactionClient, fn: (tx: Tx) => Promise<T>, opts: { timeout?: number; maxWait?: number } = {}): Promise<T> {
  const outer = txScope.getStore();
  if (outer) return fn(outer.tx as Tx);
  const changed = new Set<string>();
  const result = await client.$transaction(
    async (tx) => {
      const scope: TxScope = { tx, entries: new Map(), byId: new Map() };
      // Awaited inside the scope: Prisma's promises are lazy and run their query (and so the audit
      // extension) where they are awaited, which must see this transaction's scope.
      const result = await txScope.run(scope, async () => await fn(tx as Tx));
      if (scope.entries.size) {
        const request = currentScope();
        const now = clock.now(); // the service's "now" (src/clock.ts), the same one B25 windows are computed from
        await insertRows(
          tx,
          dialect,
          "AuditLog",
          [...scope.entries.values()].map((e) => {
            const a = auditedModel(e.model);
            return {
              id: newId("a"),
              accountId: a.accountId(e.row),
              timestamp: now,
              userId: request?.actor ?? "system",
              action: e.action,
              resourceType: a.type,
              resourceId: e.resourceId ?? a.resourceId(e.row),
              sourceIp: request?.ip ?? null,
              requestId: request?.requestId ?? null,
              details: JSON.stringify(e.details, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v)),
            };
          }),
        );
      }
      changed.clear(); // a rerun replaces what an attempt rolled back
      for (const e of scope.entries.values()) changed.add(e.model);
      return result;
    },
    { timeout: opts.timeout ?? 120_000, maxWait: opts.maxWait ?? 10_000 },
  );
  if (changed.size) for (const fn of commitListeners) fn(changed);
  return result;
}
