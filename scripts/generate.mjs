// Generates both Prisma clients (SQLite, canonical; PostgreSQL, twin) and the Pothos types.
// Runs at `npm install` (postinstall) and by `npm run generate`. The PostgreSQL schema is derived,
// never edited by hand: same models, another provider and output, no Pothos generator.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { rewriteGeneratedClient } from "./prismaClientRewrites.mjs";

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
// What each client keeps in the heap: its parameterization schema's objects in ~1.7 MB instead of
// ~9 MB, and no copy of the query compiler's base64 text (scripts/prismaClientRewrites.mjs says why).
for (const db of ["sqlite", "postgres"]) {
  const file = join(root, "src", "generated", db, "internal", "class.ts");
  writeFileSync(file, rewriteGeneratedClient(readFileSync(file, "utf8")));
}
console.log("generated Prisma clients (sqlite, postgres) and Pothos types");

// gql.tada's view of the GraphQL schema: the route documents' result and variable types are
// inferred from it (src/rest/operation.ts). Made from the committed schema.graphql, which
// test/schema.test.ts keeps equal to the schema the code builds.
const { buildSchema, introspectionFromSchema } = await import("graphql");
const { minifyIntrospection, outputIntrospectionFile } = await import("gql.tada/internal");
const introspection = minifyIntrospection(introspectionFromSchema(buildSchema(readFileSync(join(root, "schema.graphql"), "utf8"))));
const env = join(root, "src", "generated", "graphql-env.d.ts");
mkdirSync(dirname(env), { recursive: true });
writeFileSync(env, outputIntrospectionFile(introspection, { fileType: ".d.ts", shouldPreprocess: true }));
console.log("generated the GraphQL introspection types of gql.tada (src/generated/graphql-env.d.ts)");
