// A real server (or CLI) process for tests that need one: its stdout read as JSON log lines, waited
// on by predicate. Used where in-process servers would share what is under test (module state such
// as the identity cache) or where the process itself is the subject (signals, exit codes, logs).
import { type ChildProcess, spawn } from "node:child_process";

export interface Child {
  proc: ChildProcess;
  lines: string[];
  stderr: () => string;
  exited: Promise<number | null>;
  /** The log lines so far that parse as JSON. */
  logs(): Record<string, any>[];
  waitFor(pred: (line: Record<string, any>) => boolean, ms?: number): Promise<Record<string, any>>;
}

const children: ChildProcess[] = [];

/** Kills every child still running (call from afterAll). */
export function killChildren(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
}

export function spawnLogged(command: string, args: string[], env: Record<string, string | undefined>): Child {
  const proc = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(proc);
  const lines: string[] = [];
  let err = "";
  const waiters: (() => void)[] = [];
  let buffered = "";
  proc.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    lines.push(...parts.filter(Boolean));
    for (const w of waiters.splice(0)) w();
  });
  proc.stderr!.on("data", (chunk: Buffer) => void (err += chunk.toString()));
  // "close", not "exit": the last lines of stdout may still be in flight when the process exits.
  const exited = new Promise<number | null>((resolve) => proc.once("close", (code) => resolve(code)));
  const logs = () =>
    lines.flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
  return {
    proc,
    lines,
    stderr: () => err,
    exited,
    logs,
    async waitFor(pred, ms = 60_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const hit = logs().find(pred);
        if (hit) return hit;
        if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`no such log line; stdout:\n${lines.join("\n")}\nstderr:\n${err}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
  };
}

/**
 * The server from source (tsx as node's loader, no build) on a free port; resolves with its base URL
 * once it listens. One process, node itself: killing it leaves nothing behind (through `npx tsx` the
 * server would be a grandchild that outlives the kill).
 */
export async function startServerProcess(env: Record<string, string>): Promise<{ child: Child; url: string }> {
  const child = spawnLogged(process.execPath, ["--import", "tsx", "src/main.ts"], {
    NODE_ENV: "production",
    HOST: "127.0.0.1",
    PORT: "0",
    SEED_DEMO: "false",
    LOG_LEVEL: "info",
    JOB_WORKER: "false",
    ...env,
  });
  const listening = await child.waitFor((l) => /listening/.test(l.msg));
  return { child, url: `http://127.0.0.1:${listening.port}` };
}
