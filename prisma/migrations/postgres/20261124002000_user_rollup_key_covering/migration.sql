-- A page of a per-user report reads its end users' rows along the primary key (end user first):
-- with the counts and the latest time in the key (INCLUDE), that read is index-only instead of a
-- heap page per few rows (endUserEngagement's first page: ~60,000 rows at 3M events).
-- (Hand-written: Prisma's schema cannot say INCLUDE; the key's columns are unchanged.)
ALTER TABLE "EventUserRollup" DROP CONSTRAINT "EventUserRollup_pkey",
  ADD CONSTRAINT "EventUserRollup_pkey" PRIMARY KEY ("accountId", "endUserId", "day", "type", "domain", "flowId", "contentId", "actionId", "step") INCLUDE ("n", "lastTime");
