// Writes a new migration for both databases from the change to prisma/schema.prisma:
//   npm run migration:new -- <name>      (needs the local PostgreSQL for the postgres diff)
// Each provider folder keeps schema.snapshot.prisma, the model as of its last migration; the new
// migration is the diff from that snapshot to the current schema. `migrate dev` is avoided on
// purpose: it needs a shadow database and native engines we cannot download here.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync, copyFileSync } from "node:fs";
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
  { provider: "sqlite", schema: "prisma/schema.prisma", url: "file:./data/migration-diff.db" },
  { provider: "postgres", schema: "prisma/postgres/schema.prisma", url: process.env.PG_DIFF_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
];
mkdirSync(join(root, "data"), { recursive: true });
for (const t of targets) {
  const dir = join(root, "prisma", "migrations", t.provider);
  const snapshot = join(dir, "schema.snapshot.prisma");
  const from = existsSync(snapshot) ? ["--from-schema-datamodel", snapshot] : ["--from-empty"];
  const sql = execFileSync(join(root, "node_modules", ".bin", "prisma"),
    ["migrate", "diff", ...from, "--to-schema-datamodel", t.schema, "--script"],
    { cwd: root, env: { ...process.env, DATABASE_URL: t.url }, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
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
