-- CreateTable
CREATE TABLE "IngestMessage" (
    "accountId" TEXT NOT NULL,
    "messageId" TEXT NOT NULL,
    "receivedAt" DATETIME NOT NULL,

    PRIMARY KEY ("accountId", "messageId")
);

-- CreateTable
CREATE TABLE "Webhook" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT NOT NULL,
    "description" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "secret" TEXT NOT NULL,
    "disabledReason" TEXT,
    "lastSuccessAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Webhook_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "WebhookDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "webhookId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "round" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME,
    "lockedBy" TEXT,
    "lockedUntil" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "deliveredAt" DATETIME,
    CONSTRAINT "WebhookDelivery_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "WebhookAttempt" (
    "deliveryId" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "at" DATETIME NOT NULL,
    "status" TEXT NOT NULL,
    "responseCode" INTEGER,
    "latencyMs" INTEGER NOT NULL,
    "error" TEXT,
    "nextAttemptAt" DATETIME,

    PRIMARY KEY ("deliveryId", "attempt"),
    CONSTRAINT "WebhookAttempt_deliveryId_fkey" FOREIGN KEY ("deliveryId") REFERENCES "WebhookDelivery" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ApiKey" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "scope" TEXT NOT NULL DEFAULT 'integration',
    "accountId" TEXT,
    "expiresAt" DATETIME,
    "revokedAt" DATETIME,
    "lastUsedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ApiKey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "ApiKey_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_ApiKey" ("createdAt", "expiresAt", "hash", "id", "lastUsedAt", "prefix", "revokedAt", "scope", "userId") SELECT "createdAt", "expiresAt", "hash", "id", "lastUsedAt", "prefix", "revokedAt", "scope", "userId" FROM "ApiKey";
DROP TABLE "ApiKey";
ALTER TABLE "new_ApiKey" RENAME TO "ApiKey";
CREATE UNIQUE INDEX "ApiKey_prefix_key" ON "ApiKey"("prefix");
CREATE INDEX "ApiKey_userId_idx" ON "ApiKey"("userId");
CREATE INDEX "ApiKey_accountId_idx" ON "ApiKey"("accountId");
CREATE TABLE "new_Event" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "time" BIGINT NOT NULL,
    "endUserId" TEXT,
    "flowId" TEXT,
    "contentId" TEXT,
    "widget" TEXT,
    "step" INTEGER,
    "searchTerm" TEXT,
    "resultCount" INTEGER,
    "useful" BOOLEAN,
    "comment" TEXT,
    "actionId" TEXT,
    "domain" TEXT,
    "userName" TEXT,
    "receivedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Event_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Event" ("accountId", "actionId", "comment", "contentId", "domain", "endUserId", "flowId", "id", "resultCount", "searchTerm", "step", "time", "type", "useful", "userName", "widget") SELECT "accountId", "actionId", "comment", "contentId", "domain", "endUserId", "flowId", "id", "resultCount", "searchTerm", "step", "time", "type", "useful", "userName", "widget" FROM "Event";
DROP TABLE "Event";
ALTER TABLE "new_Event" RENAME TO "Event";
CREATE INDEX "Event_accountId_id_idx" ON "Event"("accountId", "id");
CREATE INDEX "Event_accountId_type_id_idx" ON "Event"("accountId", "type", "id");
CREATE INDEX "Event_accountId_type_time_idx" ON "Event"("accountId", "type", "time");
-- (No flow index: 20261123155034_event_partitions dropped it; the reports read rollups.)
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "IngestMessage_receivedAt_idx" ON "IngestMessage"("receivedAt");

-- CreateIndex
CREATE INDEX "Webhook_accountId_createdAt_id_idx" ON "Webhook"("accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "WebhookDelivery_webhookId_createdAt_id_idx" ON "WebhookDelivery"("webhookId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_nextAttemptAt_idx" ON "WebhookDelivery"("status", "nextAttemptAt");

