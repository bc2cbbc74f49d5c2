// How a seeder reports its progress (./demo.ts, ./events.ts, bench/seed.ts): a step, done of total.
export type Progress = (step: string, done: number, total: number) => void;

/** Progress on a terminal (one line rewritten) or in a log (a line at every quarter). */
export function consoleProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  let lastLine = "";
  return (step, done, total) => {
    const pct = Math.floor((done / total) * 100);
    const line = `seed: ${step} ${done}/${total} (${pct}%)`;
    if (stream.isTTY) stream.write(`\r${line}${done === total ? "\n" : ""}`);
    else if (done === total || line.split(" (")[0] !== lastLine) {
      if (done === total || pct % 25 === 0) stream.write(`${line}\n`);
    }
    lastLine = line.split(" (")[0]!;
  };
}
