-- Distinct users per key and day read every column they need from this index (a covering index).
DROP INDEX "EventUserRollup_accountId_type_day_idx";
CREATE INDEX "EventUserRollup_type_day_covering_idx" ON "EventUserRollup"("accountId", "type", "day", "endUserId", "domain", "flowId", "contentId", "actionId", "step", "n", "lastTime");
