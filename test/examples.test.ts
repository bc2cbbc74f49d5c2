// The runnable examples of docs/events-in-and-out.md run here, unmodified, against a real server:
// the Segment client, the webhook receiver (verifying signatures) and the export loop (resuming).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../src/admin.js";
import { closeQueue } from "../src/domains/copyJobs/queue.js";
import { WebhookWorker } from "../src/domains/webhooks/worker.js";
import { prisma, requester, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let worker: WebhookWorker;
let t: Tenant;
const req = requester(() => server);
const dir = mkdtempSync(join(tmpdir(), "gg-examples-"));

beforeAll(async () => {
  server = await startServer({ WEBHOOKS_ALLOW_PRIVATE: "true", WEBHOOK_POLL_MS: "25" });
  worker = new WebhookWorker();
  await worker.start();
  t = await tenant("exmp");
});
afterAll(async () => {
  await worker.stop();
  await closeQueue();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(file: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { env: { PATH: process.env.PATH ?? "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("examples/", () => {
  it("segment-client.mjs sends identify and track calls through @segment/analytics-node", async () => {
    const { key } = await createKey(t.email, { scope: "ingest", accountId: t.accountId });
    const r = await run("examples/segment-client.mjs", { GUIDEGATE_URL: server.url, WRITE_KEY: key });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const events = await prisma.event.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.type).sort()).toEqual(["flow_completed", "flow_started", "user_action"]);
    const user = await req(`/v1/accounts/${t.accountId}/endUsers/user-42?fields=custom`, { headers: t.headers });
    expect(user.body.custom).toMatchObject({ name: "Ada Lovelace", email: "ada@example.com" });
  });

  it("webhook-receiver.mjs verifies the service's signatures and refuses a forged message", async () => {
    const created = await req(`/v1/accounts/${t.accountId}/webhooks`, {
      method: "POST",
      headers: t.headers,
      body: { url: "http://127.0.0.1:9/later", events: ["engagement.flow_completed"] },
    });
    expect(created.status, created.text).toBe(201);
    const child: ChildProcess = spawn(process.execPath, ["examples/webhook-receiver.mjs"], {
      env: { PATH: process.env.PATH ?? "", WEBHOOK_SECRET: created.body.secret, PORT: "0" },
    });
    let out = "";
    child.stdout!.on("data", (c) => (out += c));
    try {
      const port = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no port: ${out}`)), 10_000);
        child.stdout!.on("data", () => {
          const m = /listening on :(\d+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      const url = `http://127.0.0.1:${port}/hook`;
      expect((await req(`/v1/accounts/${t.accountId}/webhooks/${created.body.id}`, { method: "PUT", headers: t.headers, body: { url } })).status).toBe(200);
      await req(`/v1/accounts/${t.accountId}/events`, {
        method: "POST",
        headers: t.headers,
        body: [{ type: "flow_completed", time: Date.now(), endUserId: "u", flowId: "f9", widget: "direct" }],
      });
      const end = Date.now() + 10_000;
      while (!out.includes("engagement.flow_completed") && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(out).toContain('engagement.flow_completed {"type":"flow_completed"');
      // The receiver prints the event before it answers, so the service records the attempt a moment later.
      const deliveriesPath = `/v1/accounts/${t.accountId}/webhooks/${created.body.id}/deliveries`;
      let delivery = (await req(deliveriesPath, { headers: t.headers })).body.data[0];
      while (!delivery?.log?.length && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 50));
        delivery = (await req(deliveriesPath, { headers: t.headers })).body.data[0];
      }
      expect(delivery.log[0].responseCode).toBe(204);
      const forged = await fetch(url, {
        method: "POST",
        headers: { "webhook-id": "msg_x", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": "v1,AAAA" },
        body: "{}",
      });
      expect(forged.status).toBe(400);
    } finally {
      child.kill();
    }
  });

  it("export-loop.mjs exports every event once and resumes where it stopped", async () => {
    const env = {
      GUIDEGATE_URL: server.url,
      ACCOUNT: t.accountId,
      KEY: t.key,
      USER_EMAIL: t.email,
      CURSOR_FILE: join(dir, "cursor"),
      OUT_FILE: join(dir, "events.ndjson"),
    };
    const before = await prisma.event.count({ where: { accountId: t.accountId } });
    const first = await run("examples/export-loop.mjs", env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`exported ${before} new event(s)`);
    expect((await run("examples/export-loop.mjs", env)).stdout).toContain("exported 0 new event(s)");
    await req(`/v1/accounts/${t.accountId}/events`, {
      method: "POST",
      headers: t.headers,
      body: [
        { type: "user_action", time: Date.now(), actionId: "later-1" },
        { type: "user_action", time: Date.now(), actionId: "later-2" },
      ],
    });
    expect((await run("examples/export-loop.mjs", env)).stdout).toContain("exported 2 new event(s)");
    const lines = readFileSync(env.OUT_FILE, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(before + 2);
    expect(new Set(lines.map((e) => e.id)).size).toBe(before + 2);
    expect(lines.slice(-2).map((e) => e.actionId)).toEqual(["later-1", "later-2"]);
  });
});
