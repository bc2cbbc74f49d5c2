// The audit log as one mechanism: withTransaction() hands its callback a transaction client whose
// writes to audited models buffer an entry per changed record, and writes the entries in that same
// transaction. The process-wide client refuses such writes outside withTransaction, so a new
// capability cannot forget its audit trail. Child rows (a content's tags, an end
// user's values and actions) are folded into their parent's entry: one change, one entry.
import { AsyncLocalStorage } from "node:async_hooks";
import { clock } from "../clock.js";
import { newId } from "../ids.js";
import { currentScope } from "./requestScope.js";

type Row = Record<string, unknown>;

interface Audited {
  type: string;
  /** columns that identify the record and its account (selected before updates and deletes) */
  identity: string[];
  resourceId(row: Row): string;
  accountId(row: Row): string | null;
  /** columns never copied into details */
  redact?: string[];
}

const AUDITED: Record<string, Audited> = {
  Account: { type: "account", identity: ["id"], resourceId: (r) => String(r.id), accountId: (r) => String(r.id) },
  User: { type: "user", identity: ["id", "email"], resourceId: (r) => String(r.email ?? r.id), accountId: () => null },
  Membership: { type: "membership", identity: ["userId", "accountId"], resourceId: (r) => `${r.userId}:${r.accountId}`, accountId: (r) => String(r.accountId) },
  ApiKey: { type: "apiKey", identity: ["id", "prefix"], resourceId: (r) => String(r.prefix ?? r.id), accountId: () => null, redact: ["hash"] },
  Content: { type: "content", identity: ["id", "accountId"], resourceId: (r) => String(r.id), accountId: (r) => String(r.accountId) },
  Tag: { type: "tag", identity: ["id", "accountId"], resourceId: (r) => String(r.id), accountId: (r) => String(r.accountId) },
  EndUser: { type: "endUser", identity: ["id", "accountId", "externalId"], resourceId: (r) => String(r.externalId), accountId: (r) => String(r.accountId) },
  EndUserField: { type: "endUserField", identity: ["accountId", "name"], resourceId: (r) => String(r.name), accountId: (r) => String(r.accountId) },
};

/** Rows owned by an audited parent: their writes become details of the parent's entry. */
const CHILDREN: Record<string, { parent: string; key: string; detail(row: Row): [string, string, unknown] }> = {
  ContentTag: { parent: "Content", key: "contentId", detail: (r) => ["tagIds", String(r.tagId), true] },
  EndUserValue: {
    parent: "EndUser",
    key: "endUserId",
    detail: (r) => ["custom", String(r.field), r.type === "encrypted_string" ? "[encrypted]" : (r.text ?? r.num ?? r.bool ?? r.time ?? null)],
  },
  EndUserAction: { parent: "EndUser", key: "endUserId", detail: (r) => ["userActions", String(r.actionId), { count: r.count, value: r.value }] },
};

/** Writes that are bookkeeping, not changes: recorded nowhere. */
const exempt = (model: string, args: { data?: Row }) =>
  model === "ApiKey" && args.data !== undefined && Object.keys(args.data).every((k) => k === "lastUsedAt");

interface Entry {
  model: string;
  row: Row;
  action: string;
  details: Row;
}

// ---- fast bulk inserts ---------------------------------------------------------------------------
// Prisma's createMany costs ~50 µs per bound value in its query compiler: a 10,000-user upsert (60,000
// value rows) spent most of its time there. For the models whose callers always give complete rows,
// createMany runs as plain multi-row INSERTs instead. Values are converted as Prisma stores them.

let dialect: "sqlite" | "postgres" = "sqlite";
/** Called once by src/db/index.ts. */
export function setDialect(d: "sqlite" | "postgres"): void {
  dialect = d;
}

const FAST_INSERT = new Set(["EndUser", "EndUserValue", "EndUserAction", "ContentTag", "AuditLog"]);
const MAX_PARAMS = 30_000; // under SQLite's 32,766 and PostgreSQL's 65,535

function sqlValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (v instanceof Date) return dialect === "sqlite" ? v.toISOString().replace("Z", "+00:00") : v.toISOString();
  if (typeof v === "boolean") return dialect === "sqlite" ? (v ? 1 : 0) : v;
  if (typeof v === "bigint") return dialect === "sqlite" ? Number(v) : v.toString();
  return v;
}

const delegateOf = (tx: any, model: string) => tx[model[0]!.toLowerCase() + model.slice(1)];

/**
 * INSERTs `rows` (all with the same columns) in statements of at most MAX_PARAMS values. With
 * `skipDuplicates`, rows that collide with a unique key (a concurrent insert of the same natural
 * key) are skipped (`ON CONFLICT DO NOTHING`, both dialects) and `inserted` lists the rows written.
 */
async function insertRows(tx: any, model: string, rows: Row[], skipDuplicates = false): Promise<{ count: number; inserted: Row[] }> {
  if (!rows.length) return { count: 0, inserted: [] };
  const columns = Object.keys(rows[0]!);
  const sameShape = rows.every((r) => Object.keys(r).length === columns.length && columns.every((c) => c in r));
  // skipDuplicates is ours on both databases (Prisma has none for SQLite): its callers give complete rows.
  if (!(FAST_INSERT.has(model) || skipDuplicates) || !sameShape) {
    if (skipDuplicates) throw new Error(`${model}.createMany({ skipDuplicates }) needs rows of one shape`);
    const { count } = await delegateOf(tx, model).createMany({ data: rows });
    return { count, inserted: rows };
  }
  const identity = AUDITED[model]?.identity ?? columns;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const head = `INSERT INTO "${model}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES `;
  const tail = skipDuplicates ? ` ON CONFLICT DO NOTHING RETURNING ${identity.map((c) => `"${c}"`).join(", ")}` : "";
  const inserted: Row[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const params: unknown[] = [];
    const tuples = chunk.map(
      (r) =>
        `(${columns
          .map((c) => {
            params.push(sqlValue(r[c]));
            return dialect === "sqlite" ? "?" : `$${params.length}`;
          })
          .join(", ")})`,
    );
    if (!skipDuplicates) {
      await tx.$executeRawUnsafe(head + tuples.join(", "), ...params);
      inserted.push(...chunk);
      continue;
    }
    const written = new Set(
      ((await tx.$queryRawUnsafe(head + tuples.join(", ") + tail, ...params)) as Row[]).map((r) => identity.map((c) => String(r[c])).join("\u0000")),
    );
    inserted.push(...chunk.filter((r) => written.has(identity.map((c) => String(r[c])).join("\u0000"))));
  }
  return { count: inserted.length, inserted };
}
interface TxScope {
  tx: any;
  entries: Map<string, Entry>;
}
const txScope = new AsyncLocalStorage<TxScope>();

const WRITES = new Set(["create", "createMany", "createManyAndReturn", "update", "updateMany", "upsert", "delete", "deleteMany"]);

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
  const a = AUDITED[model]!;
  const key = `${model}\u0000${a.identity.map((c) => String(row[c])).join("\u0000")}`;
  const cur = scope.entries.get(key);
  if (cur) {
    if (action === "delete") cur.action = "delete";
    Object.assign(cur.row, row);
    Object.assign(cur.details, details);
    return cur;
  }
  const entry: Entry = { model, row: { ...row }, action, details: { ...details } };
  scope.entries.set(key, entry);
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
  const child = CHILDREN[model]!;
  const parent = AUDITED[child.parent]!;
  const creating = operation.startsWith("create");
  const rows: Row[] = creating ? (Array.isArray(args.data) ? args.data : [args.data]) : [];
  const parentIds = creating ? [...new Set(rows.map((r) => String(r[child.key])))] : parentIdsOf(args.where, child.key);
  const result = operation === "createMany" ? countOnly(await insertRows(scope.tx, model, rows)) : await query(args);
  if (!parentIds?.length) return result; // e.g. a field's values removed with the field: its own entry says so
  const known = new Map<string, Entry>();
  for (const e of scope.entries.values()) if (e.model === child.parent) known.set(String(e.row.id), e);
  const missing = parentIds.filter((id) => !known.has(id));
  if (missing.length) {
    const select = Object.fromEntries(parent.identity.map((c) => [c, true]));
    const delegate = scope.tx[child.parent[0]!.toLowerCase() + child.parent.slice(1)];
    for (const p of (await delegate.findMany({ where: { id: { in: missing } }, select })) as Row[]) {
      known.set(String(p.id), upsertEntry(scope, child.parent, p, "update", {}));
    }
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
    if (!creating && model === "ContentTag") entry.details.tagIds ??= [];
    for (const r of rowsByParent.get(id) ?? []) {
      const [field, name, value] = child.detail(r);
      if (field === "tagIds") {
        const list = (entry.details.tagIds ??= []) as string[];
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
  const a = AUDITED[model]!;
  const delegate = scope.tx[model[0]!.toLowerCase() + model.slice(1)];
  if (operation === "createMany") {
    // Only the rows actually written get an entry (skipDuplicates may skip some).
    const { count, inserted } = await insertRows(scope.tx, model, Array.isArray(args.data) ? args.data : [args.data], args.skipDuplicates === true);
    for (const r of inserted) upsertEntry(scope, model, r, "create", clean(r, a.redact));
    return { count };
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

const modelOf = (prop: string | symbol) => (typeof prop === "string" && !prop.startsWith("$") ? prop[0]!.toUpperCase() + prop.slice(1) : null);
const isTracked = (model: string | null): model is string => !!model && (!!AUDITED[model] || !!CHILDREN[model]);

/** Wraps a model delegate so that its write methods go through `onWrite`. */
function wrapDelegate(delegate: any, _model: string, onWrite: (op: string, args: any, run: (a: unknown) => Promise<unknown>) => Promise<unknown>) {
  return new Proxy(delegate, {
    get(target, op) {
      const value = target[op];
      if (typeof op !== "string" || typeof value !== "function") return value;
      if (!WRITES.has(op)) return value.bind(target);
      return (args: any = {}) => onWrite(op, args, (a) => value.call(target, a));
    },
  });
}

/** Audit entries are append-only: no code path may edit or delete them. */
function appendOnly(delegate: any) {
  return wrapDelegate(delegate, "AuditLog", (op, args, run) => {
    if (op.startsWith("create")) return run(args);
    throw new Error(`AuditLog.${op}: audit entries are append-only`);
  });
}

/** The transaction client handed to withTransaction callbacks: its writes are recorded. */
function auditedTx(tx: any, scope: TxScope) {
  return new Proxy(tx, {
    get(target, prop) {
      const value = target[prop];
      if (prop === "auditLog") return appendOnly(value);
      const model = modelOf(prop);
      if (!isTracked(model)) return value;
      return wrapDelegate(value, model, (op, args, run) =>
        exempt(model, args) ? run(args) : CHILDREN[model] ? recordChild(scope, model, op, args, run) : recordWrite(scope, model, op, args, run),
      );
    },
  });
}

/**
 * The process-wide client: reads go to `reader`; writes to audited data (and raw $transaction) are
 * refused, so every change goes through withTransaction and leaves its audit entry. The writes it
 * allows (audit appends, bookkeeping, unaudited models, $executeRaw) go to `writer`; with
 * `serializeWrites` (SQLite's one writer connection) each runs in a transaction of its own, so it
 * waits for an open transaction instead of slipping into it.
 */
export function guardedClient<C extends object>(reader: C, writer: C, serializeWrites: boolean): C {
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
      const model = modelOf(prop);
      if (!model || typeof value !== "object" || value === null) return typeof value === "function" ? value.bind(target) : value;
      const write = (op: string, args: unknown) => viaWriter((w) => w[prop as string][op](args));
      if (prop === "auditLog") return appendOnly(wrapDelegate(value, model, write));
      if (!isTracked(model)) return wrapDelegate(value, model, write);
      return wrapDelegate(value, model, (op, args) => {
        if (exempt(model, args)) return write(op, args);
        throw new Error(`${model}.${op} outside withTransaction(): changes to audited data must go through it so the audit entry is written with them`);
      });
    },
  });
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
  if (outer) return fn(auditedTx(outer.tx, outer) as Tx);
  const changed = new Set<string>();
  const result = await client.$transaction(
    async (tx) => {
      const scope: TxScope = { tx, entries: new Map() };
      const result = await txScope.run(scope, () => fn(auditedTx(tx, scope) as Tx));
      if (scope.entries.size) {
        const request = currentScope();
        const now = clock.now(); // the service's "now" (src/clock.ts), the same one B25 windows are computed from
        await insertRows(
          tx,
          "AuditLog",
          [...scope.entries.values()].map((e) => {
            const a = AUDITED[e.model]!;
            return {
              id: newId("a"),
              accountId: a.accountId(e.row),
              timestamp: now,
              userId: request?.actor ?? "system",
              action: e.action,
              resourceType: a.type,
              resourceId: a.resourceId(e.row),
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
