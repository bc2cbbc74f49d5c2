-- The rollups move off the ingest request (src/domains/reports/rollupWorker.ts): events are
-- counted into EventRollup / EventUserRollup by a worker, and each account's watermark says how far.
-- CreateTable
CREATE TABLE "RollupWatermark" (
    "accountId" TEXT NOT NULL PRIMARY KEY,
    "eventId" INTEGER NOT NULL,
    "updatedAt" BIGINT NOT NULL,
    CONSTRAINT "RollupWatermark_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- Until now ingest kept the rollups up to date in its own transaction: every stored event is counted.
INSERT INTO "RollupWatermark" ("accountId", "eventId", "updatedAt")
SELECT "accountId", MAX("id"), CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM "Event" GROUP BY "accountId";
