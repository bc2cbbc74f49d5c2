// One app on a fresh database for the single-request benches (bench:endusers, bench:concurrency):
// a new SQLite file under data/bench/ or a new PostgreSQL database on BENCH_DATABASE_URL's server
// (default the local one, dropped at the end), an account `bench` with a user and a key, and the
// real app listening on an ephemeral port. Everything under src/ is imported after DATABASE_URL
// is set, as the app reads it on first use. BENCH_KEEP_DB=1 keeps the PostgreSQL database (its
// name is printed) for looking at plans afterwards.
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import pg from "pg";

export interface BenchServer {
  kind: "sqlite" | "postgres";
  base: string;
  headers: Record<string, string>;
  prisma: typeof import("../src/db/index.js")["prisma"];
  close(): Promise<void>;
}

export async function benchServer(kind: "sqlite" | "postgres", name: string): Promise<BenchServer> {
  const server = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const dbName = `gg_bench_${name}_${randomBytes(3).toString("hex")}`;
  const file = `data/bench/${name}.db`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: server });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  if (kind === "postgres") {
    await admin(`CREATE DATABASE ${dbName}`);
    const url = new URL(server);
    url.pathname = `/${dbName}`;
    process.env.DATABASE_URL = url.toString();
    process.env.ENCRYPTION_KEY ??= randomBytes(32).toString("base64");
  } else {
    mkdirSync("data/bench", { recursive: true });
    for (const s of ["", "-wal", "-shm"]) rmSync(`${file}${s}`, { force: true });
    process.env.DATABASE_URL = `file:./${file}`;
  }
  process.env.LOG_LEVEL = "silent";
  process.env.NODE_ENV = "production";
  const keep = process.env.BENCH_KEEP_DB === "1";
  if (keep && kind === "postgres") process.stderr.write(`bench database kept: ${dbName}\n`);
  const drop = () => (kind === "postgres" && !keep ? admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`) : Promise.resolve());

  try {
    const { migrate } = await import("../src/db/migrate.js");
    await migrate(process.env.DATABASE_URL!);
    const { configureDatabase, prepareDb, prisma } = await import("../src/db/index.js");
    configureDatabase((await import("../src/domains/index.js")).writePolicy);
    await prepareDb();
    const { createAccount, createUser, createKey } = await import("../src/admin.js");
    const { requestScope } = await import("../src/audit/requestScope.js");
    const { createApp } = await import("../src/app.js");
    const { loadConfig } = await import("../src/config.js");

    const email = "bench@example.com";
    const key = await requestScope.run({ requestId: null, ip: null, actor: "system:bench" }, async () => {
      await createAccount("bench");
      await createUser(email, ["bench"]);
      return (await createKey(email)).key;
    });
    // A budget no bench exhausts: 429s would measure the limiter, not the route.
    const { app, close } = createApp(loadConfig({ ...process.env, RATE_LIMIT_PER_MINUTE: "100000000" }));
    const http = app.listen(0, "127.0.0.1");
    await new Promise((r) => http.once("listening", r));
    return {
      kind,
      base: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      headers: { "x-service-integration-key": key, "x-service-user": email, "content-type": "application/json" },
      prisma,
      close: async () => {
        http.closeAllConnections();
        http.close();
        await close();
        await prisma.$disconnect();
        await drop();
      },
    };
  } catch (err) {
    await drop();
    throw err;
  }
}
