// What an idle server process holds (docs/performance.md, Memory): the real entry point, compiled as
// `npm start` runs it, with every module it loads recorded by a loader hook. Only the database in use
// has its generated Prisma client and driver adapter loaded, and what only some requests need (the
// S3 SDK, the mailer, GraphiQL's page, pg-boss on SQLite) waits for them. Its resident memory stays
// far below the 330 MB it held before (see the figures in docs/performance.md).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { startCommand } from "../bench/serverProcess.js";
import { killChildren, spawnLogged } from "./childProcess.js";

const files: string[] = [];
afterAll(() => {
  killChildren();
  for (const f of files) rmSync(f, { force: true });
});

const postgres = /^postgres/.test(process.env.DATABASE_URL ?? "");

/**
 * Writes the URL of every module the process loads to `out`, one a line, and "icu:<what>" for
 * each use of ICU's locale formatting (Intl's formatters, the toLocale… methods, localeCompare):
 * a first use maps megabytes of its data, so start-up makes none.
 */
const recorder = (out: string) =>
  `data:text/javascript,${encodeURIComponent(`
    import { appendFileSync } from "node:fs";
    const mark = (what) => appendFileSync(${JSON.stringify(out)}, "icu:" + what + "\\n");
    for (const name of ["NumberFormat", "DateTimeFormat", "Collator", "PluralRules", "RelativeTimeFormat", "ListFormat", "Segmenter", "DisplayNames"]) {
      const original = Intl[name];
      Intl[name] = new Proxy(original, {
        construct: (t, args, target) => (mark(name), Reflect.construct(t, args, target)),
        apply: (t, self, args) => (mark(name), Reflect.apply(t, self, args)),
      });
    }
    for (const [proto, method] of [[Number.prototype, "toLocaleString"], [BigInt.prototype, "toLocaleString"], [Array.prototype, "toLocaleString"],
        [Date.prototype, "toLocaleString"], [Date.prototype, "toLocaleDateString"], [Date.prototype, "toLocaleTimeString"], [String.prototype, "localeCompare"]]) {
      const original = proto[method];
      proto[method] = function (...args) { mark(method); return original.apply(this, args); };
    }
    import { register } from "node:module";
    register("data:text/javascript," + encodeURIComponent(\`
      import { appendFileSync } from "node:fs";
      export async function load(url, context, next) { appendFileSync(${JSON.stringify(out)}, url + "\\\\n"); return next(url, context); }
    \`));
  `)}`;

describe("an idle server", () => {
  it("loads only the client of its database and nothing only some requests need, formats nothing through ICU; idles under 200 MB RSS", async () => {
    execFileSync(process.execPath, ["scripts/build.mjs"]);
    // Its own folder: the PostgreSQL pass may run on a checkout where no SQLite test made it yet.
    mkdirSync("data/test", { recursive: true });
    const out = `data/test/modules-${process.pid}.txt`;
    const db = `data/test/footprint-${process.pid}.db`;
    files.push(out, db, `${db}-wal`, `${db}-shm`);
    // As `npm start` runs it (its node flags and MALLOC_ARENA_MAX), plus the recorder.
    const start = startCommand();
    const child = spawnLogged(process.execPath, [...start.nodeArgs, "--import", recorder(out), "dist/main.js"], {
      ...start.env,
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: "0",
      SEED_DEMO: "false",
      LOG_LEVEL: "info",
      ...(postgres ? {} : { DATABASE_URL: `file:./${db}` }),
    });
    const listening = await child.waitFor((l) => /listening/.test(l.msg));
    expect((await fetch(`http://127.0.0.1:${listening.port}/healthz`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    const rssMb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.proc.pid}/status`, "utf8"))?.[1]) / 1024;
    child.proc.kill("SIGTERM");
    expect(await child.exited).toBe(0);

    const loaded = readFileSync(out, "utf8").split("\n");
    const any = (part: string) => loaded.some((u) => u.includes(part));
    const [mine, other] = postgres
      ? ["generated/postgres/client.js", "generated/sqlite/client.js"]
      : ["generated/sqlite/client.js", "generated/postgres/client.js"];
    expect(any(mine)).toBe(true);
    expect(any(other)).toBe(false);
    expect(any(postgres ? "@prisma/adapter-pg" : "@prisma/adapter-better-sqlite3")).toBe(true);
    expect(any(postgres ? "@prisma/adapter-better-sqlite3" : "@prisma/adapter-pg")).toBe(false);
    // The query compiler's size-optimised build (compilerBuild = "small" in prisma/schema.prisma).
    expect(any("query_compiler_small_bg")).toBe(true);
    expect(any("query_compiler_fast_bg")).toBe(false);
    for (const lazy of ["@aws-sdk/", "nodemailer", "@graphql-yoga/render-graphiql", "swagger-ui-dist/swagger-ui-bundle"]) expect(any(lazy), lazy).toBe(false);
    if (!postgres) expect(any("pg-boss")).toBe(false);
    // No ICU formatting at start-up or in a health check (a first use maps ~5 MB of its data).
    expect(loaded.filter((l) => l.startsWith("icu:"))).toEqual([]);
    // Measured 148–160 MB on 2 cores (330 MB before); a margin for other machines' allocators.
    expect(rssMb).toBeLessThan(200);
  }, 120_000);
});
