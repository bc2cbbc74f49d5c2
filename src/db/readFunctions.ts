// Cached plans behind a transaction-mode pooler. PgBouncer before 1.21 cannot follow named prepared
// statements across server connections, so with DATABASE_PREPARED_STATEMENTS=false a direct read
// would be parsed and planned on every call, and for the small reads of a page view the planning is
// most of the work (B16's values read: 0.55 ms of planning, 0.09 ms of execution; the segment's
// content 0.7 ms). A PL/pgSQL function keeps the plans of its statements for the life of the server
// connection (PostgreSQL's plan cache, choosing custom or generic plans as for a prepared
// statement), whichever client's transaction calls it next. So each read statement becomes a
// function `gg_read_<hash of its SQL>` with the statement's own parameter and result types, created
// on first use, and runs as `SELECT * FROM gg_read_…($1, …)`, which is cheap to plan.
//
// A function is created in a transaction under an advisory lock on its name (instances starting
// together create it once), its types read from the statement itself (PREPARE: the parameters'; a
// run of it under LIMIT 0: the result's). Its name follows the SQL text, so a release with new
// statements gets functions of its own. A function that was dropped (42883) or whose result no
// longer matches its tables after a migration (42804) is created again. Where the service may not
// create functions (42501), or a statement cannot be one (two result columns of one name; a type a
// function cannot declare, 42P13), the statement runs plain (unnamed). Functions are a cache:
// dropping them is always safe.
import { createHash, randomBytes } from "node:crypto";
import type pg from "pg";
import { logger } from "../logger.js";

/** How a statement runs: through its function, or plain. */
type Way = { call: string } | { plain: true };

/** Statements remembered at most (least recently defined dropped). */
const MAX_STATEMENTS = 1000;

/**
 * Distinct SQL texts of open families (DirectQuery.open) a process gives a name on the server (a
 * function here, or a named prepared statement: ./direct.ts). Each name holds a plan on every server
 * connection that runs it, and a client chooses among thousands of shapes (the content list's
 * filters alone combine into ~5,000): the first ones a process runs get names, any later one runs
 * unnamed, planned on each call. That bounds the plans of a server connection, and the functions a
 * process creates; the service's fixed reads, a bounded set, always get theirs.
 */
export const MAX_NAMED_STATEMENTS = 256;

/** The first `max` distinct keys are admitted, for good; any other is not. */
export function admission(max: number): (key: string) => boolean {
  const admitted = new Set<string>();
  return (key) => {
    if (admitted.has(key)) return true;
    if (admitted.size >= max) return false;
    admitted.add(key);
    return true;
  };
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The function's name for one SQL text (63-byte identifiers: 24 hex digits of SHA-1 are plenty). */
export const readFunctionName = (sql: string) => `gg_read_${createHash("sha1").update(sql).digest("hex").slice(0, 24)}`;

/** Errors that say the statement cannot become a function here, now or later: run it plain for good. */
const permanent = (code: string | undefined) => code === "42501" || code === "42P13" || code === "0A000";

export class ReadFunctions {
  private readonly ways = new Map<string, Promise<Way>>();

  private readonly admit: (sql: string) => boolean;

  constructor(
    private readonly pool: pg.Pool,
    maxFunctions = MAX_NAMED_STATEMENTS,
  ) {
    this.admit = admission(maxFunctions);
  }

  /**
   * Runs one read statement (its `$n` parameters bound to `params`); rows as the driver returns them.
   * `open`: one of a family of shapes clients choose (DirectQuery.open), admitted up to the bound.
   */
  async query(sql: string, params: unknown[], open = false): Promise<unknown[]> {
    const way: Way = !open || this.admit(sql) ? await this.way(sql, false) : { plain: true };
    if ("plain" in way) return (await this.pool.query({ text: sql, values: params })).rows;
    try {
      return (await this.pool.query({ text: way.call, values: params })).rows;
    } catch (err) {
      const code = (err as { code?: string }).code;
      // Dropped since, or its result type no longer what the tables give: make it again, once.
      if (code !== "42883" && code !== "42804") throw err;
      this.ways.delete(sql);
      const again = await this.way(sql, true);
      return (await this.pool.query("plain" in again ? { text: sql, values: params } : { text: again.call, values: params })).rows;
    }
  }

  private way(sql: string, replace: boolean): Promise<Way> {
    let way = this.ways.get(sql);
    if (way) return way;
    way = this.define(sql, replace);
    this.ways.set(sql, way);
    if (this.ways.size > MAX_STATEMENTS) this.ways.delete(this.ways.keys().next().value!);
    // A failure that may pass (a lost connection, a timeout) is not remembered: the next call tries again.
    way.catch(() => this.ways.delete(sql));
    return way;
  }

  private async define(sql: string, replace: boolean): Promise<Way> {
    const name = readFunctionName(sql);
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      try {
        const way = await this.create(client, sql, name, replace);
        await client.query("COMMIT");
        return way;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      }
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (!permanent(code)) throw err;
      logger.warn({ err, function: name, code }, "a direct read runs as a plain statement: its function could not be created");
      return { plain: true };
    } finally {
      client.release();
    }
  }

  private async create(client: pg.PoolClient, sql: string, name: string, replace: boolean): Promise<Way> {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [name]);
    const existing = await client.query<{ args: string; n: number }>(
      "SELECT pg_get_function_identity_arguments(oid) AS args, pronargs::int AS n FROM pg_proc WHERE proname = $1 AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())",
      [name],
    );
    const found = existing.rows[0];
    if (found && !replace) return { call: call(name, found.n) };
    if (found) await client.query(`DROP FUNCTION ${quote(name)}(${found.args})`);

    const { params, columns } = await describe(client, sql);
    const names = columns.map((c) => c.name);
    if (new Set(names).size !== names.length) return { plain: true };
    // use_column: the result columns are variables of the function too; the statement's own
    // references mean its tables' columns, as they did outside it.
    await client.query(
      `CREATE FUNCTION ${quote(name)}(${params.join(", ")}) RETURNS TABLE(${columns.map((c) => `${quote(c.name)} ${c.type}`).join(", ")}) ` +
        `LANGUAGE plpgsql STABLE AS $gg_read$\n#variable_conflict use_column\nBEGIN\nRETURN QUERY ${sql};\nEND\n$gg_read$`,
    );
    return { call: call(name, params.length) };
  }
}

const call = (name: string, n: number) => `SELECT * FROM ${quote(name)}(${Array.from({ length: n }, (_, i) => `$${i + 1}`).join(", ")})`;

/**
 * The statement's parameter types (as PREPARE infers them) and result columns (a run of it under
 * LIMIT 0, every parameter NULL: nothing is read), inside the caller's transaction, so that a
 * pooler keeps one server connection for all of it. The probe's prepared statement is not
 * transactional: it is deallocated here, also when the probe fails.
 */
async function describe(client: pg.PoolClient, sql: string): Promise<{ params: string[]; columns: { name: string; type: string }[] }> {
  const probe = `gg_read_probe_${randomBytes(6).toString("hex")}`;
  await client.query(`PREPARE ${probe} AS SELECT * FROM (${sql}) AS gg_probe LIMIT 0`);
  await client.query("SAVEPOINT gg_probe");
  try {
    const types = await client.query<{ t: string }>(
      "SELECT format_type(t::oid, NULL) AS t FROM pg_prepared_statements, unnest(parameter_types) WITH ORDINALITY AS p(t, i) WHERE name = $1 ORDER BY i",
      [probe],
    );
    const params = types.rows.map((r) => r.t);
    const result = await client.query(`EXECUTE ${probe}${params.length ? `(${params.map(() => "NULL").join(", ")})` : ""}`);
    const formatted = await client.query<{ t: string }>(
      "SELECT format_type(o, m) AS t FROM unnest($1::oid[], $2::int[]) WITH ORDINALITY AS c(o, m, i) ORDER BY i",
      [result.fields.map((f) => f.dataTypeID), result.fields.map((f) => f.dataTypeModifier)],
    );
    return { params, columns: result.fields.map((f, i) => ({ name: f.name, type: formatted.rows[i]!.t })) };
  } catch (err) {
    await client.query("ROLLBACK TO SAVEPOINT gg_probe");
    throw err;
  } finally {
    await client.query(`DEALLOCATE ${probe}`);
  }
}
