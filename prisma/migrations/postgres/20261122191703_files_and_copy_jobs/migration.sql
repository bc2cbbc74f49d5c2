-- AlterTable
ALTER TABLE "Content" ADD COLUMN     "ownerId" TEXT;

-- CreateTable
CREATE TABLE "StoredFile" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "filename" TEXT NOT NULL,
    "flowId" TEXT NOT NULL,
    "version" BIGINT NOT NULL,
    "timestamp" BIGINT NOT NULL,
    "contentType" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "StoredFile_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CopyJob" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "destinationAccountId" TEXT NOT NULL,
    "destinationUserId" TEXT NOT NULL,
    "requestedBy" TEXT NOT NULL,
    "copyUserTags" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "total" INTEGER NOT NULL,
    "copied" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "runAfter" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "error" TEXT,
    "notifiedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CopyJob_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CopyJobItem" (
    "jobId" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "targetId" TEXT,
    "created" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "CopyJobItem_pkey" PRIMARY KEY ("jobId","sourceId")
);

-- CreateIndex
CREATE INDEX "StoredFile_accountId_createdAt_id_idx" ON "StoredFile"("accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "StoredFile_accountId_contentType_createdAt_id_idx" ON "StoredFile"("accountId", "contentType", "createdAt", "id");

-- CreateIndex
CREATE INDEX "CopyJob_accountId_createdAt_id_idx" ON "CopyJob"("accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "CopyJob_status_runAfter_idx" ON "CopyJob"("status", "runAfter");

-- AddForeignKey
ALTER TABLE "StoredFile" ADD CONSTRAINT "StoredFile_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CopyJobItem" ADD CONSTRAINT "CopyJobItem_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "CopyJob"("id") ON DELETE CASCADE ON UPDATE CASCADE;

