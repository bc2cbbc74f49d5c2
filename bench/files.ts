// Upload benchmark: 25 MiB PDF uploads (the limit) through B8, streamed by the client in 64 KiB
// chunks, then their downloads, against the real server (`node dist/main.js`, as npm start runs it) in a
// child process, so its memory is the server's alone: its peak RSS (VmHWM) before the first big
// upload and after all, and its RSS sampled every 20 ms during each request. A body held whole
// would add at least 25 MiB. Figures only: it never passes or fails.
//
//   npm run bench:files [-- --uploads 3]      (SQLite, directory store, files under data/bench/)
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { memoryMb, startServerProcess } from "./serverProcess.js";

const { values } = parseArgs({ options: { uploads: { type: "string", default: "3" } } });
const SIZE = 25 * 1024 * 1024;
const CHUNK = 64 * 1024;
const dir = "data/bench/files-bench";
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const db = `${dir}/bench.db`;
process.env.DATABASE_URL = `file:./${db}`;
process.env.LOG_LEVEL = "silent";

const { migrate } = await import("../src/db/migrate.js");
await migrate(process.env.DATABASE_URL);
const { createAccount, createUser, createKey } = await import("../src/admin.js");
const { requestScope } = await import("../src/audit/requestScope.js");
const { configureDatabase, disconnectDb } = await import("../src/db/index.js");
configureDatabase((await import("../src/domains/index.js")).writePolicy);
const email = "bench@example.com";
const key = await requestScope.run({ requestId: null, ip: null, actor: "system:bench" }, async () => {
  await createAccount("bench");
  await createUser(email, ["bench"]);
  return (await createKey(email)).key;
});
await disconnectDb();

const server = await startServerProcess({
  ...process.env,
  SEED_DEMO: "false",
  NODE_ENV: "production",
  FILES_DIR: `${dir}/store`,
  JOB_WORKER: "false",
  RATE_LIMIT_PER_MINUTE: "100000",
});
const base = server.base;
const headers = { "x-service-integration-key": key, "x-service-user": email };

/** The server process's memory in MB, from /proc: current RSS and peak RSS (VmHWM). */
function serverMemory(): { rss: number; peak: number } {
  return { rss: Math.round(memoryMb(server.pid, "VmRSS")), peak: Math.round(memoryMb(server.pid, "VmHWM")) };
}

async function sampled<T>(fn: () => Promise<T>): Promise<{ result: T; maxRss: number }> {
  let maxRss = serverMemory().rss;
  const timer = setInterval(() => void (maxRss = Math.max(maxRss, serverMemory().rss)), 20);
  try {
    const result = await fn();
    return { result, maxRss: Math.max(maxRss, serverMemory().rss) };
  } finally {
    clearInterval(timer);
  }
}

/** A PDF of exactly SIZE bytes, generated chunk by chunk as the request reads it. */
function pdfStream(hash: ReturnType<typeof createHash>): ReadableStream<Uint8Array> {
  const noise = randomBytes(CHUNK);
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= SIZE) return c.close();
      const n = Math.min(CHUNK, SIZE - sent);
      const chunk = Buffer.from(noise.subarray(0, n));
      if (sent === 0) chunk.write("%PDF-1.7\n", 0, "latin1");
      if (sent + n === SIZE) chunk.write("\n%%EOF\n", n - 7, "latin1");
      chunk.writeUInt32BE(sent, Math.min(16, n - 4)); // every chunk differs
      hash.update(chunk);
      sent += n;
      c.enqueue(chunk);
    },
  });
}

try {
  const h = { ...headers, "content-type": "application/pdf" };
  // Warm up the route, Prisma and the store with a small upload and download.
  const warm = await fetch(`${base}/v1/accounts/bench/content/upload/cloud/pdf/warm/1/1/warm.pdf`, {
    method: "POST",
    headers: h,
    body: "%PDF-1.7\nwarm up\n%%EOF\n",
  });
  const warmFile = (await warm.json()) as { url: string };
  await (await fetch(base + warmFile.url, { headers })).arrayBuffer();
  const before = serverMemory();
  const rows: string[][] = [];
  for (let i = 0; i < Number(values.uploads); i++) {
    const hash = createHash("sha256");
    const t0 = performance.now();
    const up = await sampled(async () => {
      const res = await fetch(`${base}/v1/accounts/bench/content/upload/cloud/pdf/flow-${i}/1/${Date.now()}/big-${i}.pdf`, {
        method: "POST",
        headers: h,
        body: pdfStream(hash),
        duplex: "half",
      } as RequestInit);
      return { status: res.status, file: (await res.json()) as { sha256: string; url: string } };
    });
    const s = (performance.now() - t0) / 1000;
    const ok = up.result.status === 201 && up.result.file.sha256 === hash.digest("hex");
    rows.push([`POST upload #${i + 1} (25 MiB, chunked)`, `${up.result.status}${ok ? "" : " MISMATCH"}`, (25 / s).toFixed(0), s.toFixed(2), String(up.maxRss)]);
    const t1 = performance.now();
    const down = await sampled(async () => {
      const dl = await fetch(base + up.result.file.url, { headers });
      let bytes = 0;
      for await (const chunk of dl.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
      return { status: dl.status, bytes };
    });
    const s1 = (performance.now() - t1) / 1000;
    rows.push([
      `GET download #${i + 1}`,
      `${down.result.status}${down.result.bytes === SIZE ? "" : " SHORT"}`,
      (25 / s1).toFixed(0),
      s1.toFixed(2),
      String(down.maxRss),
    ]);
  }
  const after = serverMemory();
  console.log(`\nguidegate file bench: the server in its own process (SQLite, directory store), ${values.uploads} uploads of 25 MiB`);
  const head = ["operation", "status", "MiB/s", "seconds", "server RSS max MB"];
  const widths = head.map((x, i) => Math.max(x.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  console.log(
    `server peak RSS (VmHWM): ${before.peak} MB after warm-up, ${after.peak} MB after all (+${after.peak - before.peak} MB); a 25 MiB body held whole would add at least 25.`,
  );
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
