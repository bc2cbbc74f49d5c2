-- AlterTable
ALTER TABLE "WebhookDelivery" ADD COLUMN     "error" TEXT;

-- CreateIndex
CREATE INDEX "WebhookDelivery_webhookId_status_idx" ON "WebhookDelivery"("webhookId", "status");

-- CreateIndex
CREATE INDEX "WebhookDelivery_lockedUntil_idx" ON "WebhookDelivery"("lockedUntil");

