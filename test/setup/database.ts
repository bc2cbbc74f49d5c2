// Gives every test file a database of its own before any app module loads: a fresh SQLite file by
// default, or a fresh PostgreSQL database when TEST_DATABASE_URL names a server (the suite runs
// unchanged on both). Migrations are applied the way the server applies them.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import pg from "pg";
import { afterAll } from "vitest";
import { migrate } from "../../src/db/migrate.js";

const tag = `${process.pid}_${randomBytes(3).toString("hex")}`;
const server = process.env.TEST_DATABASE_URL;
// Set to the server itself when TEST_DATABASE_URL names a pooler in transaction mode (PgBouncer):
// the database is made and dropped there, and the app gets it as DATABASE_DIRECT_URL.
const directServer = process.env.TEST_DATABASE_DIRECT_URL;
let drop: () => Promise<void>;

if (server && /^postgres(ql)?:/.test(server)) {
  const name = `gg_test_${tag}`;
  const adminUrl = directServer ?? server;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // Its default collation linguistic (ICU's en-US: 'a' < 'B' < 'c', punctuation first) where the
  // server can (PostgreSQL 15 and ICU), as many production databases are: every order the contract
  // fixes (code points) is spelt out with COLLATE "C", never left to the database's default.
  const icu = (
    await admin.query(
      `SELECT current_setting('server_version_num')::int >= 150000 AND EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'en-US-x-icu') AS ok`,
    )
  ).rows[0]?.ok;
  await admin.query(`CREATE DATABASE ${name}${icu ? ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'` : ""}`);
  // Sessions on it in a zone far from UTC (+12:45/+13:45, DST), as a server set up in its machine's
  // zone has them: nothing may depend on the session's TimeZone (a CURRENT_TIMESTAMP default into a
  // zoneless column stored the server's wall clock). TEST_DATABASE_TIMEZONE picks another.
  await admin.query(`ALTER DATABASE ${name} SET timezone TO '${(process.env.TEST_DATABASE_TIMEZONE ?? "Pacific/Chatham").replaceAll("'", "")}'`);
  await admin.end();
  const withName = (u: string) => {
    const url = new URL(u);
    url.pathname = `/${name}`;
    return url.toString();
  };
  process.env.DATABASE_URL = withName(server);
  if (directServer) {
    process.env.DATABASE_DIRECT_URL = withName(directServer);
    // PgBouncer before 1.21 hands a named statement's next use another server connection: the
    // reads run as functions. TEST_POOLER_PREPARED_STATEMENTS=true: this pooler keeps named
    // statements (PgBouncer ≥ 1.21 with max_prepared_statements), so the app keeps its default.
    process.env.DATABASE_PREPARED_STATEMENTS = process.env.TEST_POOLER_PREPARED_STATEMENTS === "true" ? "true" : "false";
  }
  drop = async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
} else {
  const file = `data/test/${tag}.db`;
  process.env.DATABASE_URL = `file:./${file}`;
  drop = async () => {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
  };
}
process.env.SEED_DEMO = "false";
// A fixed test key: PostgreSQL deployments must configure one (SQLite would generate a key file).
process.env.ENCRYPTION_KEY ??= Buffer.alloc(32, 7).toString("base64");
process.env.LOG_LEVEL ??= "silent";
// Tests that pin SQL see the key lookup on every request; test/identity-cache.test.ts turns the cache on.
process.env.IDENTITY_CACHE_MS ??= "0";
await migrate(process.env.DATABASE_DIRECT_URL ?? process.env.DATABASE_URL);
// The database layer is handed the domains' audit classification, as every entry point does (loaded
// now: app modules read the environment set above).
const { configureDatabase } = await import("../../src/db/index.js");
configureDatabase((await import("../../src/domains/index.js")).writePolicy);

afterAll(async () => {
  const { disconnectDb } = await import("../../src/db/index.js");
  await disconnectDb();
  await drop();
});
