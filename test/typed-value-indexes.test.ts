// The typed-value indexes of custom fields ("EndUserValue") and integration attributes
// ("AttributeRecordValue") are partial: a row is in the index of the column it fills ("text", "num"
// or "time"), not in all three with NULLs (migration 20261126120000_typed_value_indexes_without_nulls).
// The reads they serve compare the column with a value, and a bound value at that: these tests check
// on both databases that the indexes are partial and that those reads, with their values as
// parameters, still go through them, and that the answers did not change.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../src/db/index.js";
import { call, gql, prisma, type Server, sqlOf, startServer, type Tenant, tenant } from "./helpers.js";

const postgres = /^postgres/.test(process.env.DATABASE_URL ?? "");
const INDEXES = ["text", "num", "time"].flatMap((c) => [
  { name: `EndUserValue_accountId_field_${c}_idx`, table: "EndUserValue", key: "field", column: c },
  { name: `AttributeRecordValue_accountId_name_${c}_idx`, table: "AttributeRecordValue", key: "name", column: c },
]);

/** The definitions of the named indexes, as the database keeps them. */
async function definitions(): Promise<Map<string, string>> {
  const rows = postgres
    ? await prisma.$queryRawUnsafe<{ name: string; sql: string }[]>(
        `SELECT indexname AS "name", indexdef AS "sql" FROM pg_indexes WHERE schemaname = current_schema()`,
      )
    : await prisma.$queryRawUnsafe<{ name: string; sql: string }[]>(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`);
  return new Map(rows.map((r) => [r.name, r.sql]));
}

/**
 * The plan of `sql` with its `?` placeholders bound to `params`. On PostgreSQL as a generic plan of
 * a prepared statement (what a cached plan looks like: it must hold for any value), with sequential
 * scans off (the test's tables are small: the question is which index it can use, not whether).
 */
async function planOf(sql: string, params: unknown[]): Promise<string> {
  if (!postgres) {
    const rows = await prisma.$queryRawUnsafe<{ detail: string }[]>(`EXPLAIN QUERY PLAN ${sql}`, ...params);
    return rows.map((r) => r.detail).join("\n");
  }
  let i = 0;
  const numbered = sql.replace(/\?/g, () => `$${++i}`);
  return withTransaction(async (tx) => {
    await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
    await tx.$executeRawUnsafe("SET LOCAL plan_cache_mode = force_generic_plan");
    await tx.$executeRawUnsafe(`PREPARE typed_value_probe AS ${numbered}`);
    try {
      const literal = (v: unknown) => (typeof v === "number" ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
      const rows = await tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN EXECUTE typed_value_probe(${params.map(literal).join(", ")})`);
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    } finally {
      // Named statements live as long as the server connection (a pooler hands it on).
      await tx.$executeRawUnsafe("DEALLOCATE typed_value_probe");
    }
  });
}

describe("typed-value indexes", () => {
  let server: Server;
  let t: Tenant;
  beforeAll(async () => {
    server = await startServer();
    t = await tenant("tvi");
    const fields = [
      { name: "plan", type: "string" },
      { name: "seats", type: "double" },
      { name: "renewal", type: "timestamp" },
      { name: "trial", type: "boolean" },
    ];
    const r = await gql(
      server,
      t,
      `mutation($a: String!, $in: [SchemaFieldInput!]!) { upsertEndUserFields(accountId: $a, input: $in) { results { statusCode } } }`,
      { a: t.accountId, in: fields },
    );
    expect(r.errors).toBeUndefined();
    const users = Array.from({ length: 30 }, (_, i) => ({
      id: `u${i}`,
      custom: { plan: i % 3 ? "free" : "gold", seats: i, renewal: Date.UTC(2026, i % 9, 1), trial: i % 2 === 0 },
    }));
    const put = await call(`${server.url}/v1/accounts/${t.accountId}/endUsers`, { method: "PUT", headers: t.headers, body: users });
    expect(put.status, put.text.slice(0, 400)).toBe(201);
  }, 60_000);
  afterAll(() => server.close());

  it("are partial: each holds the rows that fill its column", async () => {
    const defs = await definitions();
    for (const ix of INDEXES) {
      const sql = defs.get(ix.name);
      expect(sql, ix.name).toBeDefined();
      expect(sql!.replace(/"/g, ""), ix.name).toMatch(new RegExp(`\\(accountId, ${ix.key}, ${ix.column}\\) WHERE \\(?${ix.column} IS NOT NULL\\)?$`));
    }
    // Four values per end user (one of them a boolean), one row each.
    const stored = await prisma.endUserValue.groupBy({ by: ["type"], where: { accountId: t.accountId }, _count: true });
    expect(Object.fromEntries(stored.map((s) => [s.type, s._count]))).toEqual({ string: 30, double: 30, timestamp: 30, boolean: 30 });
  });

  it("serve the reads that compare a column with bound values", async () => {
    for (const ix of INDEXES) {
      const value = ix.column === "text" ? "gold" : ix.column === "num" ? 3 : "2026-01-01 00:00:00";
      const id = ix.table === "EndUserValue" ? "endUserId" : "recordId";
      // The shape of the attribute search's secondary read (src/domains/attributes/schema.ts) and of
      // a custom-field filter: the account, the field and the column's values.
      const equal = await planOf(`SELECT "${id}" FROM "${ix.table}" WHERE "accountId" = ? AND "${ix.key}" = ? AND "${ix.column}" = ?`, [
        t.accountId,
        "f",
        value,
      ]);
      expect(equal, `${ix.name} (=)`).toContain(ix.name);
      const among = await planOf(`SELECT "${id}" FROM "${ix.table}" WHERE "accountId" = ? AND "${ix.key}" = ? AND "${ix.column}" IN (?, ?)`, [
        t.accountId,
        "f",
        value,
        value,
      ]);
      expect(among, `${ix.name} (IN)`).toContain(ix.name);
    }
  });

  it("find the same end users through the GraphQL filter, on each type, with the account in the read", async () => {
    const page = async (field: string, equals: unknown) => {
      const { result, sql } = await sqlOf(() =>
        gql(server, t, `query($a: String!, $f: EndUserFilter) { account(id: $a) { endUsers(first: 100, filter: $f) { nodes { id } } } }`, {
          a: t.accountId,
          f: { custom: [{ field, equals }] },
        }),
      );
      expect(result.errors).toBeUndefined();
      // The values' read names the account, so the (accountId, field, column) index can be used.
      const read = sql.find((q) => /EndUserValue/.test(q));
      expect(read?.slice(read.indexOf("EndUserValue")), sql.join("\n")).toMatch(/^EndUserValue\W+AS\W+(\w+)\W+WHERE\W+\1\W+accountId\W+= /);
      return result.data.account.endUsers.nodes.map((n: { id: string }) => n.id).sort();
    };
    expect(await page("plan", "gold")).toEqual(["u0", "u12", "u15", "u18", "u21", "u24", "u27", "u3", "u6", "u9"]);
    expect(await page("seats", 7)).toEqual(["u7"]);
    expect(await page("renewal", Date.UTC(2026, 1, 1))).toEqual(["u1", "u10", "u19", "u28"]);
    expect(await page("trial", false)).toHaveLength(15);
  });
});
