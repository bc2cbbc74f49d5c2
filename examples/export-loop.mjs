// Incremental export that resumes: reads every event once, in ingestion order, saving the cursor
// after each page; run it again (now, or tomorrow) and it continues where it stopped.
//   GUIDEGATE_URL=http://localhost:4000 ACCOUNT=demo KEY=ggk_... USER_EMAIL=admin@example.com node examples/export-loop.mjs
import { existsSync, readFileSync, writeFileSync, appendFileSync } from "node:fs";

const base = process.env.GUIDEGATE_URL ?? "http://localhost:4000";
const account = process.env.ACCOUNT ?? "demo";
const headers = { "x-service-integration-key": process.env.KEY, "x-service-user": process.env.USER_EMAIL ?? "admin@example.com" };
const stateFile = process.env.CURSOR_FILE ?? `export-${account}.cursor`;
const outFile = process.env.OUT_FILE ?? `export-${account}.ndjson`;

let cursor = existsSync(stateFile) ? readFileSync(stateFile, "utf8").trim() : "";
let total = 0;
for (;;) {
  const url = `${base}/v1/accounts/${account}/events/export?format=ndjson&limit=10000${cursor ? `&cursor=${cursor}` : ""}`;
  const res = await fetch(url, { headers });
  if (res.status === 429) {
    await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after") ?? 1) * 1000));
    continue;
  }
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  const lines = await res.text();
  // Write the events first, then the cursor: a crash in between re-reads a page (dedupe by the events' id), never skips one.
  if (lines) appendFileSync(outFile, lines);
  total += lines ? lines.trimEnd().split("\n").length : 0;
  cursor = res.headers.get("x-next-cursor");
  writeFileSync(stateFile, cursor);
  if (res.headers.get("x-has-more") !== "true") break;
}
console.log(`exported ${total} new event(s) to ${outFile}; the next run resumes from ${stateFile}`);
