-- CreateTable
CREATE TABLE "SavedEndpoint" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "documentHash" TEXT NOT NULL,
    "description" TEXT,
    "maxAgeSeconds" INTEGER NOT NULL DEFAULT 0,
    "variables" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SavedEndpoint_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SavedEndpoint_accountId_createdAt_id_idx" ON "SavedEndpoint"("accountId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "SavedEndpoint_accountId_name_key" ON "SavedEndpoint"("accountId", "name");

-- AddForeignKey
ALTER TABLE "SavedEndpoint" ADD CONSTRAINT "SavedEndpoint_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SavedEndpoint" ADD CONSTRAINT "SavedEndpoint_accountId_documentHash_fkey" FOREIGN KEY ("accountId", "documentHash") REFERENCES "PersistedDocument"("accountId", "hash") ON DELETE CASCADE ON UPDATE CASCADE;

