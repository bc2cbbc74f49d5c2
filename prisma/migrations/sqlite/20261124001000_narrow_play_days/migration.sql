-- Narrow day rows (grain 25) of flow plays: per day, domain and flow alone, for the reports that
-- count plays per flow (a flow_started's day rows are also kept by widget and guided popup, seven
-- times and more as many rows). Computed from the day rows (grain 24), which count the same events.
INSERT INTO "EventRollup" ("accountId", "type", "grain", "bucket", "domain", "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful", "n")
SELECT "accountId", "type", 25, "bucket", "domain", "flowId", '', '', '', '', '', -1, SUM("n")
FROM "EventRollup" WHERE "grain" = 24 AND "type" = 'flow_started'
GROUP BY "accountId", "type", "bucket", "domain", "flowId";
