-- AlterTable
ALTER TABLE "CopyJob" ADD COLUMN     "traceparent" TEXT;

-- AlterTable
ALTER TABLE "WebhookDelivery" ADD COLUMN     "traceparent" TEXT;

