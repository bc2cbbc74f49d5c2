// Compiles src/ to plain JavaScript in dist/ (same layout, so paths relative to a module, such as
// the migrations, resolve alike). `npm start` and `npm run cli` run the build first and then the
// JavaScript: no TypeScript loader in the serving process. Under tsx a server held ~120 MB more RSS
// (tsx's loader thread and its transform cache) — a third of the 300 MB a bulk request may peak at.
// Transpile only, well under a second: `npm run typecheck` is the type check. Skipped when dist/ is
// newer than every source, and never emptied first: a server running from dist/ while the CLI
// starts (which builds too) may still import modules lazily from it.
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = join(root, "src");
const out = join(root, "dist");

const files = readdirSync(src, { recursive: true, withFileTypes: true })
  .filter((f) => f.isFile() && f.name.endsWith(".ts") && !f.name.endsWith(".d.ts"))
  .map((f) => join(f.parentPath, f.name));
if (!files.some((f) => relative(src, f).startsWith("generated"))) {
  console.error("build: src/generated is missing; run `npm run generate` (npm install runs it) first");
  process.exit(1);
}

const stamp = join(out, ".built");
const newest = Math.max(...files.map((f) => statSync(f).mtimeMs), statSync(fileURLToPath(import.meta.url)).mtimeMs);
if (!process.argv.includes("--force") && existsSync(stamp) && statSync(stamp).mtimeMs >= newest) process.exit(0);
const t0 = performance.now();
await build({
  entryPoints: files,
  outdir: out,
  outbase: src,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
});
writeFileSync(stamp, new Date().toISOString());
console.error(`build: ${files.length} modules → dist/ in ${Math.round(performance.now() - t0)} ms`);
