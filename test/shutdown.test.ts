// The real entry point as a process manager or container runtime starts it: `npm start`, signalled
// itself (not the node process under it). SIGTERM during a slow request turns readiness false, stops
// accepting connections, lets the request finish with 200, closes the database, and node and npm
// both exit 0, leaving no orphan. The child's stdout also shows the structured logs.
import { rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { type Child, killChildren, spawnLogged } from "./childProcess.js";

/** The server from source (node with tsx as its loader), for start-ups that must fail. */
function startFromSource(env: Record<string, string | undefined>): Child {
  return spawnLogged(process.execPath, ["--import", "tsx", "src/main.ts"], {
    NODE_ENV: "production",
    HOST: "127.0.0.1",
    PORT: "0",
    SEED_DEMO: "false",
    JOB_WORKER: "false",
    LOG_LEVEL: "info",
    DATABASE_URL: databaseUrl(),
    ...env,
  });
}

const files: string[] = [];

afterAll(() => {
  killChildren();
  for (const f of files) for (const s of ["", "-wal", "-shm"]) rmSync(`${f}${s}`, { force: true });
});

/** The test database on PostgreSQL runs; a fresh SQLite file otherwise (main.ts migrates it). */
function databaseUrl(): string {
  const url = process.env.DATABASE_URL ?? "";
  if (/^postgres/.test(url)) return url;
  const file = `data/test/shutdown-${process.pid}-${files.length}.db`;
  files.push(file);
  return `file:./${file}`;
}

function start(env: Record<string, string>): Child {
  return spawnLogged("npm", ["start", "--silent"], {
    NODE_ENV: "production",
    HOST: "127.0.0.1",
    PORT: "0",
    SEED_DEMO: "false",
    LOG_LEVEL: "info",
    DATABASE_URL: databaseUrl(),
    ...env,
  });
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(false);
    });
    s.once("error", () => resolve(true));
  });

describe("SIGTERM", () => {
  it("drains: readiness 503, in-flight request completes with 200, no new connections, exit 0", async () => {
    const child = start({ TEST_SLOW_ROUTE_MS: "2000", SHUTDOWN_DELAY_MS: "600" });
    const listening = await child.waitFor((l) => /listening/.test(l.msg));
    const base = `http://127.0.0.1:${listening.port}`;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    const slow = fetch(`${base}/__test/slow`, { headers: { "x-request-id": "slow-request-1" } });
    await new Promise((r) => setTimeout(r, 300)); // let the request arrive before the signal
    child.proc.kill("SIGTERM");
    await child.waitFor((l) => /draining/.test(l.msg), 5_000);

    // During the delay the listener is still open, and readiness says "take me out".
    const ready = await fetch(`${base}/readyz`, { headers: { connection: "close" } });
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "draining" });

    const done = await slow;
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({ ok: true, waitedMs: 2000 });
    expect(await refused(listening.port)).toBe(true);

    expect(await child.exited).toBe(0);
    // the server was node under npm (not npm itself), and it is gone too
    expect(listening.pid).not.toBe(child.proc.pid);
    expect(() => process.kill(listening.pid, 0)).toThrow(/ESRCH/);
    const logs = child.lines.map((l) => JSON.parse(l) as Record<string, any>); // every line is JSON
    const access = logs.find((l) => l.req?.url === "/__test/slow");
    expect(access).toMatchObject({ requestId: "slow-request-1", route: "/__test/slow", res: { statusCode: 200 }, service: "guidegate" });
    for (const l of logs.filter((x) => x.req)) expect(l.requestId, JSON.stringify(l)).toBe(l.req.id);
    expect(logs.some((l) => l.msg === "in-flight requests finished")).toBe(true);
    // The last word is "stopped" (access lines come from the request logger, whose write can land
    // just after it: the request itself completed with its 200 above).
    expect(logs.filter((l) => !l.req).at(-1)).toMatchObject({ msg: "stopped", drained: true });
  }, 90_000);

  it("an invalid variable stops start-up with exit code 2 and names itself", async () => {
    const child = start({ GRAPHQL_MAX_DEPTH: "deep" });
    expect(await child.exited).toBe(2);
    expect(child.stderr()).toMatch(/GRAPHQL_MAX_DEPTH: /);
  }, 60_000);
});

describe("start-up problems: one line naming the variable, no stack, a non-zero exit", () => {
  const STACK = /^\s+at /m;

  it("LOG_LEVEL that pino does not know, DATABASE_URL=file: with no path, an empty PORT: exit 2", async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ LOG_LEVEL: "verbose" }, /^Invalid configuration:\n {2}LOG_LEVEL: [^\n]+\n$/],
      [{ DATABASE_URL: "file:" }, /^Invalid configuration:\n {2}DATABASE_URL: [^\n]+\n$/],
      [{ PORT: "" }, /^Invalid configuration:\n {2}PORT: is empty; unset it to use the default\n$/],
    ];
    const children = cases.map(([env]) => startFromSource(env));
    for (const [i, child] of children.entries()) {
      expect(await child.exited).toBe(2);
      expect(child.stderr()).toMatch(cases[i]![1]);
    }
  }, 60_000);

  it("PORT in use, HOST that does not resolve, a database that cannot be reached: exit 1", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const { port } = taken.address() as { port: number };
    // On PostgreSQL runs a database that does not exist on the test server; else a server that is not there.
    const server = process.env.TEST_DATABASE_DIRECT_URL ?? process.env.TEST_DATABASE_URL ?? "";
    const missing = /^postgres/.test(server)
      ? Object.assign(new URL(server), { pathname: "/gg_no_such_database" }).toString()
      : "postgresql://postgres@127.0.0.1:1/x";
    try {
      const cases: [Record<string, string | undefined>, RegExp][] = [
        [{ PORT: String(port) }, new RegExp(`^PORT: cannot listen on 127\\.0\\.0\\.1:${port}: the port is already in use`)],
        [{ HOST: "no-such-host.invalid" }, /^HOST: cannot listen on no-such-host\.invalid:0: 'no-such-host\.invalid' does not resolve/],
        [{ DATABASE_URL: missing, DATABASE_DIRECT_URL: undefined }, /^DATABASE_URL: cannot connect to PostgreSQL at postgresql:\/\/[^\n]+\n$/],
      ];
      const children = cases.map(([env]) => startFromSource(env));
      for (const [i, child] of children.entries()) {
        expect(await child.exited).toBe(1);
        expect(child.stderr()).toMatch(cases[i]![1]);
        expect(child.stderr()).not.toMatch(STACK);
      }
    } finally {
      taken.close();
    }
  }, 90_000);
});
