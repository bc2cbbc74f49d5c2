// Four instances of the real server on one PostgreSQL, through whatever DATABASE_URL names: in CI's
// PostgreSQL pass that is PgBouncer in transaction mode (DATABASE_DIRECT_URL the server itself, for
// migrations and LISTEN). Requests go round robin; each webhook delivery and each copy job (with its
// e-mail) is done once, by one of them.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server as HttpServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, createUser } from "../src/admin.js";
import { dbKind, withTransaction } from "../src/db/index.js";
import { type Child, killChildren, startServerProcess } from "./childProcess.js";
import { call, prisma, type Tenant, tenant, until } from "./helpers.js";

const postgres = dbKind() === "postgres";
const outbox = mkdtempSync(join(tmpdir(), "gg-instances-outbox-"));
const received: { id: string }[] = [];
let receiver: HttpServer;
let receiverUrl: string;
let instances: { child: Child; url: string }[] = [];
let t: Tenant;

beforeAll(async () => {
  if (!postgres) return;
  receiver = createServer((req: IncomingMessage, res) => {
    req.resume();
    req.on("end", () => {
      received.push({ id: String(req.headers["webhook-id"]) });
      res.end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t = await tenant("inst");
  const env = {
    JOB_WORKER: "true",
    WEBHOOKS_ALLOW_PRIVATE: "true",
    WEBHOOK_POLL_MS: "100",
    JOB_POLL_MS: "100",
    OUTBOX_DIR: outbox,
    IDENTITY_CACHE_MS: "5000",
  };
  // One after another: each loads tsx and checks the migrations (a loaded 2-core machine).
  for (let i = 0; i < 4; i++) instances.push(await startServerProcess(env));
}, 240_000);

afterAll(async () => {
  killChildren();
  instances = [];
  receiver?.close();
  rmSync(outbox, { recursive: true, force: true });
});

describe.runIf(postgres)("four instances on one PostgreSQL (through PgBouncer in CI)", () => {
  let n = 0;
  const next = () => instances[n++ % instances.length]!.url;

  it("answer round robin; each webhook delivery and each copy job (with its e-mail) is done once", async () => {
    for (let i = 0; i < 8; i++) expect((await call(`${next()}/api/v1/${t.accountId}/content?limit=5`, { headers: t.headers })).status).toBe(200);

    const hook = await call(`${next()}/v1/accounts/${t.accountId}/webhooks`, {
      method: "POST",
      headers: t.headers,
      body: { url: `${receiverUrl}/hook`, events: ["engagement.user_action", "copy_job.completed"] },
    });
    expect(hook.status, hook.text).toBe(201);
    const N = 24;
    for (let i = 0; i < N; i += 4) {
      const batch = Array.from({ length: 4 }, (_, k) => ({ type: "user_action", time: Date.now(), actionId: `a${i + k}` }));
      const r = await call(`${next()}/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: batch });
      expect(r.status, r.text).toBeLessThan(300);
    }

    const dst = `${t.accountId}-dst`;
    await createAccount(dst);
    await createUser(t.email, [dst]);
    const ids = Array.from({ length: 6 }, (_, i) => `${t.accountId}-src-${i}`);
    await withTransaction((tx) => tx.content.createMany({ data: ids.map((id) => ({ id, accountId: t.accountId, title: id, type: "link" })) }));
    const jobs: string[] = [];
    for (let j = 0; j < 3; j++) {
      const r = await call(`${next()}/v1/accounts/${t.accountId}/content/copy`, {
        method: "POST",
        headers: t.headers,
        body: { destinationAccountId: dst, destinationUserId: t.email, contentIds: ids.slice(j * 2, j * 2 + 2) },
      });
      expect(r.status, r.text).toBe(202);
      jobs.push(r.body.id ?? r.body.jobId);
    }

    const total = N + jobs.length; // one message per event and per finished copy job
    await until(
      "every delivery delivered",
      async () => (await prisma.webhookDelivery.count({ where: { accountId: t.accountId, status: "delivered" } })) === total,
      60_000,
    );
    await until("every job notified", async () => (await prisma.copyJob.count({ where: { accountId: t.accountId, notifiedAt: { not: null } } })) === 3, 60_000);
    await new Promise((r) => setTimeout(r, 1_000)); // a duplicate would arrive by now
    expect(received).toHaveLength(total);
    expect(new Set(received.map((m) => m.id)).size).toBe(total);
    const rows = await prisma.copyJob.findMany({ where: { accountId: t.accountId } });
    expect(rows.map((r) => [r.status, r.copied, r.attempts])).toEqual(rows.map(() => ["completed", 2, 1]));
    expect(await prisma.content.count({ where: { accountId: dst } })).toBe(6);
    for (const job of rows) expect(readdirSync(outbox).filter((f) => f.includes(job.id))).toHaveLength(1);
  }, 180_000);
});
