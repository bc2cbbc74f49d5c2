-- Explore's `query` reads events and distinct end users per day and type from the rollups
-- (src/domains/explore/rollup.ts): distinct end users per day are now counted for every type, and
-- over every type together (type ''), and each end user's latest counted event of any type is kept
-- (type '' and key ''), with the day counts of those. No table changes: these are rows. Computed
-- for the events already counted (up to each account's watermark) from the per-user rollup rows,
-- which hold every counted event that names an end user. (selfhelp_search's day counts were kept
-- already.)
INSERT INTO "EventActiveUserCount" ("accountId", "type", "day", "users")
SELECT "accountId", "type", "day", COUNT(DISTINCT "endUserId") FROM "EventUserRollup" WHERE "type" <> 'selfhelp_search' GROUP BY 1, 2, 3;
INSERT INTO "EventActiveUserCount" ("accountId", "type", "day", "users")
SELECT "accountId", '', "day", COUNT(DISTINCT "endUserId") FROM "EventUserRollup" GROUP BY "accountId", "day";
INSERT INTO "EventUserLastSeen" ("accountId", "type", "key", "endUserId", "lastTime")
SELECT "accountId", '', '', "endUserId", MAX("lastTime") FROM "EventUserRollup" GROUP BY "accountId", "endUserId";
INSERT INTO "EventLastSeenCount" ("accountId", "type", "key", "day", "users")
SELECT "accountId", '', '', "lastTime" / 86400000, COUNT(*) FROM "EventUserLastSeen" WHERE "type" = '' GROUP BY "accountId", "lastTime" / 86400000;
