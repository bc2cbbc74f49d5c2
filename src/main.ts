// Entry point: validate configuration, apply migrations, seed the demo account on a new database,
// then listen. SIGTERM/SIGINT stop accepting, finish in-flight requests and close the database.
import type { AddressInfo } from "node:net";
import { AdminError } from "./admin.js";
import { createApp } from "./app.js";
import { requestScope } from "./audit/requestScope.js";
import { flushKeyUsage } from "./auth/keyUsage.js";
import { loadConfig, sessionDatabaseUrl, sessionDatabaseVariable } from "./config.js";
import { initEncryption } from "./crypto.js";
import { configureDatabase, dbKind, disconnectDb, prepareDb } from "./db/index.js";
import { DatabaseOpenError, migrate } from "./db/migrate.js";
import { closeQueue } from "./domains/copyJobs/queue.js";
import { CopyJobWorker } from "./domains/copyJobs/worker.js";
import { startEventMaintenance } from "./domains/events/partitions.js";
import { writePolicy } from "./domains/index.js";
import { RollupWorker } from "./domains/reports/rollupWorker.js";
import { WebhookWorker } from "./domains/webhooks/worker.js";
import { createHttpServer } from "./httpServer.js";
import { MessagePruner } from "./ingest/prune.js";
import { gracefulShutdown } from "./lifecycle.js";
import { logger } from "./logger.js";
import { startTracing, stopTracing } from "./observability/tracing.js";
import { DEMO_EMAIL, demoSeedUnfinished, seedDemo } from "./seed/demo.js";
import { consoleProgress } from "./seed/progress.js";

// Modules do nothing at import (the database clients are created on first use), so everything is
// imported statically and runs in this order.
const config = (() => {
  try {
    return loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
})();

try {
  // Fails early, naming ENCRYPTION_KEY, where encrypted_string values could not be read or written.
  initEncryption(config);
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}

// OpenTelemetry (OTEL_* variables), before the first query so Prisma's statements are traced; with
// no endpoint set, the SDK is not loaded at all.
if (await startTracing(config))
  logger.info({ service: config.OTEL_SERVICE_NAME, sampler: config.OTEL_TRACES_SAMPLER }, "OpenTelemetry traces exported over OTLP/HTTP");

// The database layer writes only what the domains' audit classification allows (before the demo seed writes).
configureDatabase(writePolicy);
const { applied, fresh } = await migrate(sessionDatabaseUrl(config), (msg) => logger.info(msg)).catch((err: unknown) => {
  // A database that cannot be opened or reached is a configuration problem: one line naming the variable.
  if (!(err instanceof DatabaseOpenError)) throw err;
  console.error(`${sessionDatabaseVariable(config)}: ${err.message}`);
  process.exit(1);
});
await prepareDb();
// The demo account on a new database, or the rest of it when the start that began its seed was
// stopped half way (src/seed/demo.ts).
const unfinished = !fresh && config.SEED_DEMO && (await demoSeedUnfinished());
if (config.SEED_DEMO && (fresh || unfinished)) {
  if (unfinished) logger.info({ account: "demo" }, "finishing the demo account's seed, which an earlier start left unfinished");
  try {
    const { key } = await requestScope.run({ requestId: null, ip: null, actor: "system:seed" }, () => seedDemo({ progress: consoleProgress() }));
    logger.info({ account: "demo", user: DEMO_EMAIL }, unfinished ? "finished the demo account's seed" : "seeded the demo account on the new database");
    console.log(`\nDemo account 'demo', user ${DEMO_EMAIL}. Its API key (shown once):\n${key}\n`);
  } catch (err) {
    // Another instance seeds it (PostgreSQL, several instances starting on a new database): serve meanwhile.
    if (!(err instanceof AdminError)) throw err;
    logger.info({ account: "demo" }, `demo account not seeded here: ${err.message}`);
  }
}
// Event partitions ahead (PostgreSQL) and EVENTS_RETENTION_DAYS.
const stopEventMaintenance = startEventMaintenance(config);
const { app, close: closeApp, lifecycle } = createApp(config);
// Copy jobs: this process works on them unless JOB_WORKER=false (then other instances do).
const jobWorker = config.JOB_WORKER
  ? new CopyJobWorker({
      leaseMs: config.JOB_LEASE_MS,
      pollMs: config.JOB_POLL_MS,
      itemAttempts: config.JOB_ITEM_ATTEMPTS,
      itemDelayMs: config.TEST_COPY_ITEM_DELAY_MS,
    })
  : null;
await jobWorker?.start();
// On SIGTERM the item being copied finishes (with the in-flight requests); the rest of its job waits for the next worker.
if (jobWorker) lifecycle.onDrain(() => jobWorker.stop());
// Webhook deliveries run with the job worker (JOB_WORKER=false: other instances send them).
const webhookWorker = config.JOB_WORKER ? new WebhookWorker() : null;
await webhookWorker?.start();
if (webhookWorker) lifecycle.onDrain(() => webhookWorker.stop());
// The reports' rollups (off the ingest request; every instance may run it: accounts are shared by lock).
const rollupWorker = config.JOB_WORKER
  ? new RollupWorker({
      pollMs: config.ROLLUP_POLL_MS,
      quietMs: config.ROLLUP_QUIET_MS,
      maxLagMs: config.ROLLUP_MAX_LAG_MS,
      ingestShare: config.ROLLUP_SHARE_WHILE_INGESTING,
    })
  : null;
rollupWorker?.start();
if (rollupWorker) lifecycle.onDrain(() => rollupWorker.stop());
// Expired idempotency keys: every instance offers the hourly prune, one runs it (src/ingest/prune.ts).
// Not awaited: on SQLite the first offer prunes in place, and listening need not wait for it.
const messagePruner = new MessagePruner();
void messagePruner.start().catch((err) => logger.error({ err }, "the idempotency-key prune could not start; keys are not pruned"));
lifecycle.onDrain(() => messagePruner.stop());
const server = createHttpServer(app, config);
// An address that cannot be listened on is a configuration problem: one line naming HOST or PORT.
// (Only until it listens: a later server error is no such problem.)
const cannotListen = (err: NodeJS.ErrnoException) => {
  console.error(listenProblem(err, config.HOST, config.PORT));
  process.exit(1);
};
server.once("error", cannotListen);
server.listen(config.PORT, config.HOST, () => {
  server.off("error", cannotListen);
  // The bound port, not the configured one: PORT=0 picks a free port (the shutdown test uses it).
  const { port } = server.address() as AddressInfo;
  logger.info({ port, pid: process.pid, db: dbKind(), migrationsApplied: applied.length }, `guidegate listening on http://localhost:${port}`);
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down: finishing in-flight requests");
  // Last resort if closing resources hangs past the drain deadline.
  setTimeout(() => process.exit(1), config.SHUTDOWN_DELAY_MS + config.SHUTDOWN_TIMEOUT_MS + 5_000).unref();
  const drained = await gracefulShutdown({
    server,
    lifecycle,
    delayMs: config.SHUTDOWN_DELAY_MS,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    log: (msg, details) => logger.info(details ?? {}, msg),
    closeResources: async () => {
      stopEventMaintenance();
      await closeQueue();
      await flushKeyUsage();
      await closeApp();
      await disconnectDb();
      // Last: the spans of everything above are exported before the process exits.
      await stopTracing();
    },
  });
  logger.info({ drained }, "stopped");
  process.exit(drained ? 0 : 1);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

function listenProblem(err: NodeJS.ErrnoException, host: string, port: number): string {
  const at = `${host}:${port}`;
  switch (err.code) {
    case "EADDRINUSE":
      return `PORT: cannot listen on ${at}: the port is already in use (another process listens there); choose another PORT`;
    case "EACCES":
      return `PORT: cannot listen on ${at}: permission denied (ports below 1024 need privileges); choose another PORT`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `HOST: cannot listen on ${at}: '${host}' does not resolve to an address of this machine (${err.code})`;
    case "EADDRNOTAVAIL":
      return `HOST: cannot listen on ${at}: '${host}' is not an address of this machine (EADDRNOTAVAIL)`;
    default:
      return `HOST/PORT: cannot listen on ${at}: ${err.message}`;
  }
}
