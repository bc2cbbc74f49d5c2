// A real server process for the benches that measure the server alone (bench:bulk, bench:files):
// compiled and started as `npm start` starts it (`node dist/main.js`), listening on a free port,
// and what /proc says of it. Its JSON log lines are read for the port; what node flags print
// (--trace-gc, ...) goes on to stderr.
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));

/** Runs a node script of the project; its last stdout line (the CLI prints a key there). */
export function runNode(args: string[], env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(process.execPath, args, { cwd: root, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout.trim().split("\n").at(-1) ?? "";
}

export interface ServerProcess {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The node flags and environment `npm start` runs the server with, read from package.json's start
 * script so a bench measures what production runs (`... MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} exec node <flags> dist/main.js`).
 */
export function startCommand(): { nodeArgs: string[]; env: Record<string, string> } {
  const script = (JSON.parse(readFileSync(`${root}/package.json`, "utf8")) as { scripts: { start: string } }).scripts.start;
  const m = /((?:\w+=\$\{\w+:-[^}]*\} )*)exec node ((?:--\S+ )*)dist\/main\.js/.exec(script);
  if (!m) throw new Error(`package.json's start script is not "... [VAR=\${VAR:-default} ]exec node [--flags] dist/main.js": ${script}`);
  const env = Object.fromEntries([...m[1]!.matchAll(/(\w+)=\$\{\w+:-([^}]*)\}/g)].map(([, k, v]) => [k!, process.env[k!] ?? v!]));
  return { nodeArgs: m[2]!.trim().split(" ").filter(Boolean), env };
}

/**
 * A server's command line, on the CPUs named by BENCH_SERVER_CPUS (`taskset -c`, which execs the
 * command: the pid stays the server's) when set. On a 2-core machine a server pinned to one core and
 * the load generator to the other (`BENCH_SERVER_CPUS=1 taskset -c 0 npm run bench`) stop taking
 * each other's core mid-request, which moved a 5-second run's CPU ms per request by ±30 % here.
 */
export function pinned(command: string, args: string[]): [string, string[]] {
  const cpus = process.env.BENCH_SERVER_CPUS;
  return cpus ? ["taskset", ["-c", cpus, command, ...args]] : [command, args];
}

/** Builds dist/ (when a source changed) and starts the server as `npm start` does, with `env` (PORT and HOST are set here) and any extra node flags. */
export async function startServerProcess(env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<ServerProcess> {
  // BENCH_SERVER_NODE_ARGS: node flags for every server of a run, e.g. "--cpu-prof --cpu-prof-dir=data/bench/prof".
  nodeArgs = [...nodeArgs, ...(process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean)];
  runNode(["scripts/build.mjs"]);
  const start = startCommand();
  const proc = spawn(...pinned(process.execPath, [...start.nodeArgs, ...nodeArgs, "dist/main.js"]), {
    cwd: root,
    env: { ...start.env, ...env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let buf = "";
    proc.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const m = /"port":(\d+)/.exec(buf);
      if (m) resolve(Number(m[1]));
      const lines = buf.split("\n");
      buf = lines.pop()!;
      for (const line of lines) if (!line.startsWith("{")) process.stderr.write(`${line}\n`);
    });
    proc.once("exit", (code) => reject(new Error(`server exited (${code}) before listening`)));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    pid: proc.pid!,
    stop: async () => {
      // Stopped already (a second call): its exit event has come and gone.
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

/** A memory figure of the process from /proc/<pid>/status, in MB: current RSS or its peak (VmHWM). */
export const memoryMb = (pid: number, field: "VmRSS" | "VmHWM"): number =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

/** Resets the process's peak RSS to its current RSS ("5" to clear_refs), so a peak can be per request. */
export const resetPeak = (pid: number): void => writeFileSync(`/proc/${pid}/clear_refs`, "5");

/** CPU time the process has used, user + system, in ms (/proc/<pid>/stat fields 14 and 15, in clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time, user + system in ms, of every process whose command is `comm` ("postgres": the database
 * server's backends and its background processes; "pgbouncer"), other clients' work included, and
 * of their children that have exited (cutime + cstime): a backend that exits between two readings
 * moves its time to the postmaster that reaped it, so a difference neither loses it nor goes
 * negative (it did, by the time of the direct server's idle connections that closed meanwhile).
 */
export function commandCpuMs(comm: string): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== comm) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}
