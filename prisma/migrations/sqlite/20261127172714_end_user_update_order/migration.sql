-- `GET /api/v1/{accountId}/endUsers?updatedSince=` lists end users by (lastUpdateTime, id), the id
-- being the wire id (externalId) as the contract says; ties (a bulk write gives 10,000 users one
-- lastUpdateTime) were broken by the internal id. The keyset index follows the new order.
-- DropIndex
DROP INDEX "EndUser_accountId_updatedAt_id_idx";

-- CreateIndex
CREATE INDEX "EndUser_accountId_updatedAt_externalId_idx" ON "EndUser"("accountId", "updatedAt", "externalId");

