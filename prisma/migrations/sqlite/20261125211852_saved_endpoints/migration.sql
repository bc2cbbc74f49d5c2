-- CreateTable
CREATE TABLE "SavedEndpoint" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "documentHash" TEXT NOT NULL,
    "description" TEXT,
    "maxAgeSeconds" INTEGER NOT NULL DEFAULT 0,
    "variables" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "SavedEndpoint_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "SavedEndpoint_accountId_documentHash_fkey" FOREIGN KEY ("accountId", "documentHash") REFERENCES "PersistedDocument" ("accountId", "hash") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "SavedEndpoint_accountId_createdAt_id_idx" ON "SavedEndpoint"("accountId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "SavedEndpoint_accountId_name_key" ON "SavedEndpoint"("accountId", "name");

