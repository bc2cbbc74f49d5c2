// Generates both Prisma clients (SQLite, canonical; PostgreSQL, twin) and the Pothos types.
// Runs at `npm install` (postinstall) and by `npm run generate`. The PostgreSQL schema is derived,
// never edited by hand: same models, another provider and output, no Pothos generator.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const canonical = join(root, "prisma", "schema.prisma");
const twin = join(root, "prisma", "postgres", "schema.prisma");

export function postgresTwin(source) {
  return (
    "// GENERATED from prisma/schema.prisma by scripts/generate.mjs: do not edit.\n" +
    source
      .replace(/generator pothos \{[^}]*\}\n*/s, "")
      .replace('provider = "sqlite"', 'provider = "postgresql"')
      .replace('"../src/generated/sqlite"', '"../../src/generated/postgres"')
  );
}

mkdirSync(dirname(twin), { recursive: true });
writeFileSync(twin, postgresTwin(readFileSync(canonical, "utf8")));

const prismaBin = join(root, "node_modules", ".bin", "prisma");
// The datasource URL must match each schema's provider, or the CLI tries to download a native engine.
const PATH = `${join(root, "node_modules", ".bin")}:${process.env.PATH}`;
for (const [schema, url] of [
  [canonical, "file:./data/generate.db"],
  [twin, "postgresql://localhost/generate"],
]) {
  // Prisma 7's generate looks for the native schema engine (which cannot be downloaded here) but
  // never runs it: any existing file satisfies the check.
  const env = {
    ...process.env,
    PATH,
    DATABASE_URL: url,
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
  };
  execFileSync(prismaBin, ["generate", "--schema", schema], { cwd: root, env, stdio: ["ignore", "ignore", "inherit"] });
}
console.log("generated Prisma clients (sqlite, postgres) and Pothos types");
