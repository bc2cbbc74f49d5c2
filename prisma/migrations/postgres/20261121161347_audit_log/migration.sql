-- CreateTable
CREATE TABLE "AuditLog" (
    "id" TEXT NOT NULL,
    "accountId" TEXT,
    "timestamp" TIMESTAMP(3) NOT NULL,
    "userId" TEXT,
    "action" TEXT NOT NULL,
    "resourceType" TEXT NOT NULL,
    "resourceId" TEXT NOT NULL,
    "sourceIp" TEXT,
    "details" TEXT NOT NULL,
    "requestId" TEXT,

    CONSTRAINT "AuditLog_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AuditLog_accountId_timestamp_id_idx" ON "AuditLog"("accountId", "timestamp", "id");

-- CreateIndex
CREATE INDEX "AuditLog_accountId_userId_timestamp_id_idx" ON "AuditLog"("accountId", "userId", "timestamp", "id");

