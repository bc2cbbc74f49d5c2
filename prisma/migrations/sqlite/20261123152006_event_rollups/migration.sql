-- CreateTable
CREATE TABLE "EventRollup" (
    "accountId" TEXT NOT NULL,
    "grain" INTEGER NOT NULL,
    "bucket" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "flowId" TEXT NOT NULL,
    "contentId" TEXT NOT NULL,
    "widget" TEXT NOT NULL,
    "searchTerm" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "actionId" TEXT NOT NULL,
    "useful" INTEGER NOT NULL,
    "n" INTEGER NOT NULL,

    PRIMARY KEY ("accountId", "type", "grain", "bucket", "domain", "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful"),
    CONSTRAINT "EventRollup_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "EventUserRollup" (
    "accountId" TEXT NOT NULL,
    "endUserId" TEXT NOT NULL,
    "day" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "flowId" TEXT NOT NULL,
    "contentId" TEXT NOT NULL,
    "actionId" TEXT NOT NULL,
    "step" INTEGER NOT NULL,
    "n" INTEGER NOT NULL,
    "lastTime" BIGINT NOT NULL,

    PRIMARY KEY ("accountId", "endUserId", "day", "type", "domain", "flowId", "contentId", "actionId", "step"),
    CONSTRAINT "EventUserRollup_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "EventUserRollup_accountId_type_day_idx" ON "EventUserRollup"("accountId", "type", "day");


-- Backfill: the rollups of the events already stored (the statements of `npm run cli -- rollups rebuild`,
-- src/domains/reports/rollups.ts rebuildStatements, for every account).
INSERT INTO "EventRollup" ("accountId", "type", "grain", "bucket", "domain", "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful", "n")
SELECT e."accountId", e."type", 1, (e."time" / 3600000), COALESCE(e."domain", ''), CASE WHEN e."type" IN ('flow_started', 'flow_completed', 'flow_exited', 'flow_failed', 'flow_step', 'flow_feedback', 'task_started', 'task_completed') THEN COALESCE(e."flowId", '') ELSE '' END, CASE WHEN e."type" = 'flow_started' AND COALESCE(e."widget", '') <> 'guided_popup' THEN '' ELSE CASE WHEN e."type" IN ('flow_started', 'selfhelp_content_viewed', 'guided_popup_shown', 'popup_shown', 'popup_clicked', 'smart_popup_shown', 'smarttip_shown', 'smarttip_played', 'beacon_shown', 'beacon_clicked') THEN COALESCE(e."contentId", '') ELSE '' END END, CASE WHEN e."type" IN ('flow_started') THEN COALESCE(e."widget", '') ELSE '' END, CASE WHEN e."type" IN ('selfhelp_search') THEN COALESCE(e."searchTerm", '') ELSE '' END, CASE WHEN e."type" IN ('selfhelp_search') THEN CASE WHEN e."contentId" IS NOT NULL THEN 'successful' WHEN e."resultCount" = 0 THEN 'no_results' ELSE 'unsuccessful' END ELSE '' END, CASE WHEN e."type" IN ('user_action') THEN COALESCE(e."actionId", '') ELSE '' END, CASE WHEN e."type" IN ('flow_feedback') THEN CASE WHEN e."useful" IS NULL THEN -1 WHEN e."useful" THEN 1 ELSE 0 END ELSE -1 END, COUNT(*)
FROM "Event" e 
GROUP BY e."accountId", e."type", (e."time" / 3600000), COALESCE(e."domain", ''), CASE WHEN e."type" IN ('flow_started', 'flow_completed', 'flow_exited', 'flow_failed', 'flow_step', 'flow_feedback', 'task_started', 'task_completed') THEN COALESCE(e."flowId", '') ELSE '' END, CASE WHEN e."type" = 'flow_started' AND COALESCE(e."widget", '') <> 'guided_popup' THEN '' ELSE CASE WHEN e."type" IN ('flow_started', 'selfhelp_content_viewed', 'guided_popup_shown', 'popup_shown', 'popup_clicked', 'smart_popup_shown', 'smarttip_shown', 'smarttip_played', 'beacon_shown', 'beacon_clicked') THEN COALESCE(e."contentId", '') ELSE '' END END, CASE WHEN e."type" IN ('flow_started') THEN COALESCE(e."widget", '') ELSE '' END, CASE WHEN e."type" IN ('selfhelp_search') THEN COALESCE(e."searchTerm", '') ELSE '' END, CASE WHEN e."type" IN ('selfhelp_search') THEN CASE WHEN e."contentId" IS NOT NULL THEN 'successful' WHEN e."resultCount" = 0 THEN 'no_results' ELSE 'unsuccessful' END ELSE '' END, CASE WHEN e."type" IN ('user_action') THEN COALESCE(e."actionId", '') ELSE '' END, CASE WHEN e."type" IN ('flow_feedback') THEN CASE WHEN e."useful" IS NULL THEN -1 WHEN e."useful" THEN 1 ELSE 0 END ELSE -1 END;

INSERT INTO "EventRollup" ("accountId", "type", "grain", "bucket", "domain", "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful", "n")
SELECT e."accountId", e."type", 24, ((e."time" / 86400000) * 24), COALESCE(e."domain", ''), CASE WHEN e."type" IN ('flow_started', 'flow_completed', 'flow_exited', 'flow_failed', 'flow_step', 'flow_feedback', 'task_started', 'task_completed') THEN COALESCE(e."flowId", '') ELSE '' END, CASE WHEN e."type" = 'flow_started' AND COALESCE(e."widget", '') <> 'guided_popup' THEN '' ELSE CASE WHEN e."type" IN ('flow_started', 'selfhelp_content_viewed', 'guided_popup_shown', 'popup_shown', 'popup_clicked', 'smart_popup_shown', 'smarttip_shown', 'smarttip_played', 'beacon_shown', 'beacon_clicked') THEN COALESCE(e."contentId", '') ELSE '' END END, CASE WHEN e."type" IN ('flow_started') THEN COALESCE(e."widget", '') ELSE '' END, CASE WHEN e."type" IN ('selfhelp_search') THEN COALESCE(e."searchTerm", '') ELSE '' END, CASE WHEN e."type" IN ('selfhelp_search') THEN CASE WHEN e."contentId" IS NOT NULL THEN 'successful' WHEN e."resultCount" = 0 THEN 'no_results' ELSE 'unsuccessful' END ELSE '' END, CASE WHEN e."type" IN ('user_action') THEN COALESCE(e."actionId", '') ELSE '' END, CASE WHEN e."type" IN ('flow_feedback') THEN CASE WHEN e."useful" IS NULL THEN -1 WHEN e."useful" THEN 1 ELSE 0 END ELSE -1 END, COUNT(*)
FROM "Event" e 
GROUP BY e."accountId", e."type", ((e."time" / 86400000) * 24), COALESCE(e."domain", ''), CASE WHEN e."type" IN ('flow_started', 'flow_completed', 'flow_exited', 'flow_failed', 'flow_step', 'flow_feedback', 'task_started', 'task_completed') THEN COALESCE(e."flowId", '') ELSE '' END, CASE WHEN e."type" = 'flow_started' AND COALESCE(e."widget", '') <> 'guided_popup' THEN '' ELSE CASE WHEN e."type" IN ('flow_started', 'selfhelp_content_viewed', 'guided_popup_shown', 'popup_shown', 'popup_clicked', 'smart_popup_shown', 'smarttip_shown', 'smarttip_played', 'beacon_shown', 'beacon_clicked') THEN COALESCE(e."contentId", '') ELSE '' END END, CASE WHEN e."type" IN ('flow_started') THEN COALESCE(e."widget", '') ELSE '' END, CASE WHEN e."type" IN ('selfhelp_search') THEN COALESCE(e."searchTerm", '') ELSE '' END, CASE WHEN e."type" IN ('selfhelp_search') THEN CASE WHEN e."contentId" IS NOT NULL THEN 'successful' WHEN e."resultCount" = 0 THEN 'no_results' ELSE 'unsuccessful' END ELSE '' END, CASE WHEN e."type" IN ('user_action') THEN COALESCE(e."actionId", '') ELSE '' END, CASE WHEN e."type" IN ('flow_feedback') THEN CASE WHEN e."useful" IS NULL THEN -1 WHEN e."useful" THEN 1 ELSE 0 END ELSE -1 END;

INSERT INTO "EventRollup" ("accountId", "type", "grain", "bucket", "domain", "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful", "n")
SELECT e."accountId", e."type", 0, ((e."time" / 86400000) * 24), COALESCE(e."domain", ''), '', '', '', '', '', '', -1, COUNT(*)
FROM "Event" e 
GROUP BY e."accountId", e."type", ((e."time" / 86400000) * 24), COALESCE(e."domain", '');

INSERT INTO "EventUserRollup" ("accountId", "endUserId", "day", "type", "domain", "flowId", "contentId", "actionId", "step", "n", "lastTime")
SELECT e."accountId", e."endUserId", e."time" / 86400000, e."type", COALESCE(e."domain", ''), CASE WHEN e."type" IN ('flow_started', 'flow_completed', 'flow_failed', 'flow_step', 'task_started', 'task_completed') THEN COALESCE(e."flowId", '') ELSE '' END, CASE WHEN e."type" IN ('popup_shown', 'popup_clicked', 'smarttip_played', 'beacon_shown', 'beacon_clicked') THEN COALESCE(e."contentId", '') ELSE '' END, CASE WHEN e."type" IN ('user_action') THEN COALESCE(e."actionId", '') ELSE '' END, CASE WHEN e."type" IN ('flow_step') THEN COALESCE(e."step", 0) ELSE 0 END, COUNT(*), MAX(e."time")
FROM "Event" e WHERE e."endUserId" IS NOT NULL
GROUP BY e."accountId", e."endUserId", e."time" / 86400000, e."type", COALESCE(e."domain", ''), CASE WHEN e."type" IN ('flow_started', 'flow_completed', 'flow_failed', 'flow_step', 'task_started', 'task_completed') THEN COALESCE(e."flowId", '') ELSE '' END, CASE WHEN e."type" IN ('popup_shown', 'popup_clicked', 'smarttip_played', 'beacon_shown', 'beacon_clicked') THEN COALESCE(e."contentId", '') ELSE '' END, CASE WHEN e."type" IN ('user_action') THEN COALESCE(e."actionId", '') ELSE '' END, CASE WHEN e."type" IN ('flow_step') THEN COALESCE(e."step", 0) ELSE 0 END;
