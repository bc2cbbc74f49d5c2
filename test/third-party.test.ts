// Tools written by others check us, so that what our own tests and our code agree on is checked
// against someone else's reading of the standards: Redocly lints the served OpenAPI document with
// its recommended rules, Spectral with spectral:oas, and graphql-http's audits check /graphql against the GraphQL-over-HTTP spec.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serverAudits } from "graphql-http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
const dir = mkdtempSync(join(tmpdir(), "gg-third-party-"));
beforeAll(async () => {
  server = await startServer();
  t = await tenant("audits");
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // No telemetry and no update check: these machines reach no other host.
    const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => void (stdout += c));
    child.stderr.on("data", (c) => void (stderr += c));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("Redocly", () => {
  it("lints the served /openapi.json with its recommended rules: no errors, no warnings", async () => {
    const file = join(dir, "openapi.json");
    writeFileSync(file, await (await fetch(`${server.url}/openapi.json`)).text());
    const r = await run(process.execPath, ["node_modules/@redocly/cli/bin/cli.js", "lint", file, "--format", "json"]);
    const report = JSON.parse(r.stdout.slice(r.stdout.indexOf("{"))) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(r.code).toBe(0);
  }, 60_000);
});

describe("Spectral", () => {
  it("lints the served /openapi.json with spectral:oas: no errors", async () => {
    const file = join(dir, "spectral-openapi.json");
    const ruleset = join(dir, ".spectral.yaml");
    writeFileSync(file, await (await fetch(`${server.url}/openapi.json`)).text());
    writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
    const r = await run(process.execPath, [
      "node_modules/@stoplight/spectral-cli/dist/index.js",
      "lint",
      file,
      "--ruleset",
      ruleset,
      "--format",
      "json",
      "--quiet",
    ]);
    const reports = JSON.parse(r.stdout.slice(r.stdout.indexOf("["))) as { code: string; severity: number; path: string[]; message: string }[];
    const errors = reports
      .filter((p) => p.severity === 0)
      // Spectral reads an example's property named `default` (an end-user field's default value) as
      // the JSON Schema keyword and demands a string (stoplightio/spectral#1972): a false report.
      .filter((p) => !(p.code === "oas3-valid-schema-example" && p.path.at(-1) === "default"))
      .map((p) => `${p.code} ${p.path.join(".")}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(reports.length).toBeGreaterThan(0); // Spectral did run (it reports the false positives above)
  }, 60_000);
});

describe("graphql-http audits", () => {
  it("every MUST and SHOULD of GraphQL over HTTP passes on /graphql (with credentials)", async () => {
    // Our /graphql answers 401 to anonymous callers, so the auditor calls it as a client with a key.
    const fetchFn: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      for (const [k, v] of Object.entries(t.headers)) headers.set(k, v);
      return fetch(input, { ...init, headers });
    };
    const audits = serverAudits({ url: `${server.url}/graphql`, fetchFn });
    const failed: string[] = [];
    for (const audit of audits) {
      const result = await audit.fn();
      if (result.status !== "ok" && !audit.name.startsWith("MAY")) failed.push(`${audit.name}: ${result.status}: ${"reason" in result ? result.reason : ""}`);
    }
    expect(failed).toEqual([]);
    expect(audits.filter((a) => a.name.startsWith("MUST")).length).toBeGreaterThan(10);
  }, 60_000);
});
