// How a seeder reports its progress (./demo.ts, ./events.ts, bench/seed.ts): a step, done of total.
export type Progress = (step: string, done: number, total: number) => void;

/**
 * Progress on a terminal (one line rewritten), or in a log (stdout/stderr not a TTY): a line for
 * each step's start, every further 10 %, at least every `everyMs` while it moves, and its end.
 */
export function consoleProgress(stream: Pick<NodeJS.WriteStream, "isTTY" | "write"> = process.stderr, everyMs = 2_000, now = Date.now): Progress {
  let step = "";
  let lastTenth = -1;
  let lastAt = 0;
  return (name, done, total) => {
    const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
    const line = `seed: ${name} ${done}/${total} (${pct}%)`;
    if (stream.isTTY) return void stream.write(`\r${line}${done >= total ? "\n" : ""}`);
    if (name !== step) {
      step = name;
      lastTenth = -1;
    }
    const tenth = Math.floor(pct / 10);
    const at = now();
    if (done >= total || tenth > lastTenth || at - lastAt >= everyMs) {
      stream.write(`${line}\n`);
      lastTenth = tenth;
      lastAt = at;
    }
  };
}
