-- AlterTable
ALTER TABLE "CopyJob" ADD COLUMN     "idempotencyKey" TEXT,
ADD COLUMN     "requestHash" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "CopyJob_accountId_idempotencyKey_key" ON "CopyJob"("accountId", "idempotencyKey");

