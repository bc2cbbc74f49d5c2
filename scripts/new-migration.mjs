// Writes a new migration for both databases from the change to prisma/schema.prisma:
//   npm run migration:new -- <name>
// Each provider folder keeps schema.snapshot.prisma, the model as of its last migration; the new
// migration is the diff from that snapshot to the current schema. `migrate dev` is avoided on
// purpose: it needs a shadow database and native engines we cannot download here.
//
// The diff runs on a pinned Prisma 6.19 CLI (the `prisma6` alias in package.json): Prisma 7's
// `migrate diff` needs the native schema engine, while 6.19 diffs through its bundled WASM engine
// when its config names a driver adapter (the project's own 7.x adapters serve it; the PostgreSQL
// diff connects to the local server, PG_DIFF_URL overrides). 6.19 also wants the datasource `url`
// that 7 forbids: the diff reads temporary copies of the schemas with it added.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const name = (process.argv[2] ?? "").replace(/[^a-z0-9_]/gi, "_");
if (!name) {
  console.error("usage: npm run migration:new -- <name>");
  process.exit(2);
}
execFileSync("node", [join(root, "scripts", "generate.mjs")], { stdio: "inherit" });
const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
const targets = [
  { provider: "sqlite", schema: "prisma/schema.prisma", url: "file:./data/migration-diff/diff.db" },
  { provider: "postgres", schema: "prisma/postgres/schema.prisma", url: process.env.PG_DIFF_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
];
const work = join(root, "data", "migration-diff");
mkdirSync(work, { recursive: true });

/** A copy of a schema whose datasource has the `url` line Prisma 6.19 requires. */
function withUrl(file, tag) {
  const source = readFileSync(file, "utf8");
  const out = join(work, `${tag}.prisma`);
  writeFileSync(
    out,
    /datasource db \{[^}]*\burl\s*=/s.test(source)
      ? source
      : source.replace(/(datasource db \{[^}]*?provider\s*=\s*"[^"]+")/s, '$1\n  url      = env("DATABASE_URL")'),
  );
  return out;
}

try {
  for (const t of targets) {
    const dir = join(root, "prisma", "migrations", t.provider);
    const snapshot = join(dir, "schema.snapshot.prisma");
    const config = join(work, `${t.provider}.config.mjs`);
    writeFileSync(
      config,
      `export default {
  experimental: { adapter: true },
  engine: "js",
  schema: ${JSON.stringify(join(root, t.schema))},
  async adapter() {
    ${
      t.provider === "postgres"
        ? `const { PrismaPg } = await import("@prisma/adapter-pg");
    return new PrismaPg({ connectionString: ${JSON.stringify(t.url)} });`
        : `const { PrismaBetterSqlite3 } = await import("@prisma/adapter-better-sqlite3");
    return new PrismaBetterSqlite3({ url: ${JSON.stringify(t.url)} });`
    }
  },
};\n`,
    );
    const from = existsSync(snapshot) ? ["--from-schema-datamodel", withUrl(snapshot, `${t.provider}-from`)] : ["--from-empty"];
    const sql = execFileSync(
      process.execPath,
      [
        join(root, "node_modules", "prisma6", "build", "index.js"),
        "migrate",
        "diff",
        "--config",
        config,
        ...from,
        "--to-schema-datamodel",
        withUrl(join(root, t.schema), `${t.provider}-to`),
        "--script",
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: t.url,
          PRISMA_HIDE_UPDATE_MESSAGE: "1",
          PRISMA_QUERY_ENGINE_LIBRARY: process.execPath,
          PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
        },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    if (!/\b(CREATE|ALTER|DROP)\b/.test(sql)) {
      console.log(`${t.provider}: no change`);
      continue;
    }
    const out = join(dir, `${stamp}_${name}`);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "migration.sql"), sql);
    copyFileSync(join(root, t.schema), snapshot);
    console.log(`${t.provider}: wrote ${out}/migration.sql (${readFileSync(join(out, "migration.sql"), "utf8").split("\n").length} lines)`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
