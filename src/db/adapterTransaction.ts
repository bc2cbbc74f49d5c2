// The driver adapter's own transaction behind withTransaction's client, for the bulk statements
// that carry a whole chunk of rows as one JSON parameter (./insert.ts). Prisma's raw-query path
// encodes a statement's argument list as JSON and decodes it again before the adapter sees it:
// for a JSON parameter of several MB (10,000 end users' audit entries: 7 MB) that is two more
// copies of it, escaped and parsed, each in V8's large-object space until the next full
// collection, and ~30 MB of a 10,000-user write's peak. Handed to the adapter directly, the
// parameter goes to the driver as it is. Everything else keeps going through Prisma.
//
// withTransaction opens a slot (an AsyncLocalStorage store) before it starts Prisma's transaction;
// the adapter wrapper of ./index.ts adopts the transaction the adapter starts in that slot, and the
// slot learns the Prisma client handed to the callback. A statement may take the direct way only
// with that same client, and never once COMMIT or ROLLBACK has been sent: Prisma's transaction
// timeout rolls back and returns the connection to the pool, and a statement sent after that
// would run outside any transaction.
import { AsyncLocalStorage } from "node:async_hooks";

/** A statement as driver adapters take it (@prisma/driver-adapter-utils' SqlQuery). */
export interface AdapterQuery {
  sql: string;
  args: unknown[];
  argTypes: { scalarType: string; arity: "scalar" | "list" }[];
}

export interface AdapterTransaction {
  executeRaw(query: AdapterQuery): Promise<number>;
  queryRaw(query: AdapterQuery): Promise<{ columnNames: string[]; rows: unknown[][] }>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

interface Slot {
  client?: unknown;
  adapter?: AdapterTransaction;
  closed: boolean;
}
const opening = new AsyncLocalStorage<Slot>();

/**
 * Runs `start` (which begins one Prisma transaction) with a slot for the adapter's transaction;
 * `start` calls `bind` with the Prisma client its callback is given.
 */
export function withAdapterTransactionSlot<T>(start: (bind: (client: unknown) => void) => Promise<T>): Promise<T> {
  const slot: Slot = { closed: false };
  return opening.run(slot, () =>
    start((client) => {
      slot.client = client;
    }),
  );
}

// What Prisma's transaction manager sends to end a transaction (not ROLLBACK TO SAVEPOINT, which
// leaves it open), or its comment when the adapter ends it itself.
const ENDS = /^\s*(COMMIT|ROLLBACK)\s*;?\s*$|^-- Implicit "(COMMIT|ROLLBACK)"/i;

/**
 * Called by the adapter wrapper on each transaction the adapter starts: the first one started in
 * an open slot is that slot's, and is marked closed as the transaction manager ends it.
 */
export function adoptTransaction<T extends object>(transaction: T): T {
  const slot = opening.getStore();
  if (!slot || slot.adapter) return transaction;
  const t = transaction as unknown as AdapterTransaction;
  slot.adapter = t;
  const executeRaw = t.executeRaw.bind(t);
  t.executeRaw = (query) => {
    if (ENDS.test(query.sql)) slot.closed = true;
    return executeRaw(query);
  };
  for (const end of ["commit", "rollback"] as const) {
    const run = t[end].bind(t);
    t[end] = () => {
      slot.closed = true;
      return run();
    };
  }
  return transaction;
}

/**
 * The adapter's transaction when `db` is the client of the transaction open in this async context
 * and it is still open; undefined otherwise (the statement then goes through Prisma, which refuses
 * it on a closed transaction).
 */
export function adapterTransactionOf(db: unknown): AdapterTransaction | undefined {
  const slot = opening.getStore();
  if (!slot?.adapter || slot.closed || slot.client !== db) return undefined;
  return slot.adapter;
}

const TEXT_ARG = { scalarType: "string", arity: "scalar" } as const;

/**
 * A statement whose one parameter is a JSON text: on the adapter's transaction when it may, else
 * through Prisma. `uses`: how many times SQLite's text names it (`?` is positional there; PostgreSQL
 * names `$1` again instead).
 */
export async function executeWithJson(db: RawClient, sql: string, json: string, uses = 1): Promise<number> {
  const direct = adapterTransactionOf(db);
  const args = Array<string>(uses).fill(json);
  return direct ? direct.executeRaw({ sql, args, argTypes: args.map(() => TEXT_ARG) }) : db.$executeRawUnsafe(sql, ...args);
}

/**
 * The same, answering rows as objects keyed by column name. On the adapter the values are the
 * driver's (PostgreSQL int8 as text, for one), not Prisma's deserialized ones: callers compare
 * them as strings (insertRows' RETURNING of the identity columns).
 */
export async function queryWithJson(db: RawClient, sql: string, json: string, uses = 1): Promise<Record<string, unknown>[]> {
  const direct = adapterTransactionOf(db);
  const args = Array<string>(uses).fill(json);
  if (!direct) return (await db.$queryRawUnsafe(sql, ...args)) as Record<string, unknown>[];
  const { columnNames, rows } = await direct.queryRaw({ sql, args, argTypes: args.map(() => TEXT_ARG) });
  return rows.map((r) => Object.fromEntries(columnNames.map((c, i) => [c, r[i]])));
}

export interface RawClient {
  $executeRawUnsafe(sql: string, ...params: unknown[]): Promise<number>;
  $queryRawUnsafe(sql: string, ...params: unknown[]): Promise<unknown>;
}
