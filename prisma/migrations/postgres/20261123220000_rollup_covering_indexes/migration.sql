-- Reports read the rollups from their indexes alone (index-only scans once autovacuum has marked
-- the pages all-visible), instead of a heap page for every few rows:
-- distinct users per key and day read every column they need from this index;
DROP INDEX "EventUserRollup_accountId_type_day_idx";
CREATE INDEX "EventUserRollup_type_day_covering_idx" ON "EventUserRollup"("accountId", "type", "day", "endUserId", "domain", "flowId", "contentId", "actionId", "step", "n", "lastTime");
-- and the counting reports sum "n" over a range of the primary key, which now carries it.
-- (Hand-written: Prisma's schema cannot say INCLUDE; the key's columns are unchanged.)
ALTER TABLE "EventRollup" DROP CONSTRAINT "EventRollup_pkey",
  ADD CONSTRAINT "EventRollup_pkey" PRIMARY KEY ("accountId", "type", "grain", "bucket", "domain", "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful") INCLUDE ("n");
