-- Distinct end users without reading a row per (key, end user, day): for windows that reach the
-- account's latest counted event, each end user's latest event per type and key and how many end
-- users were last seen on each day (flowViews, userActions, beacons); and distinct end users per
-- type and day (selfHelpSearchTrend). Kept by the rollup worker (src/domains/reports/rollups.ts).
-- CreateTable
CREATE TABLE "EventUserLastSeen" (
    "accountId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "endUserId" TEXT NOT NULL,
    "lastTime" BIGINT NOT NULL,

    PRIMARY KEY ("accountId", "type", "key", "endUserId"),
    CONSTRAINT "EventUserLastSeen_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "EventLastSeenCount" (
    "accountId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "day" INTEGER NOT NULL,
    "users" INTEGER NOT NULL,

    PRIMARY KEY ("accountId", "type", "key", "day"),
    CONSTRAINT "EventLastSeenCount_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "EventActiveUserCount" (
    "accountId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "day" INTEGER NOT NULL,
    "users" INTEGER NOT NULL,

    PRIMARY KEY ("accountId", "type", "day"),
    CONSTRAINT "EventActiveUserCount_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- The events already counted (up to each account's watermark), from the per-user rollup rows,
-- which hold every counted event that names an end user.
INSERT INTO "EventUserLastSeen" ("accountId", "type", "key", "endUserId", "lastTime")
SELECT "accountId", "type", CASE WHEN "type" = 'flow_started' THEN "flowId" WHEN "type" = 'user_action' THEN "actionId" ELSE "contentId" END, "endUserId", MAX("lastTime")
FROM "EventUserRollup" WHERE "type" IN ('flow_started', 'beacon_shown', 'beacon_clicked', 'user_action')
GROUP BY 1, 2, 3, 4;
INSERT INTO "EventLastSeenCount" ("accountId", "type", "key", "day", "users")
SELECT "accountId", "type", "key", "lastTime" / 86400000, COUNT(*) FROM "EventUserLastSeen" GROUP BY 1, 2, 3, 4;
INSERT INTO "EventActiveUserCount" ("accountId", "type", "day", "users")
SELECT "accountId", "type", "day", COUNT(DISTINCT "endUserId") FROM "EventUserRollup" WHERE "type" = 'selfhelp_search' GROUP BY 1, 2, 3;
