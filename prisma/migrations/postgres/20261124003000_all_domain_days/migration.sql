-- Day rows of every domain together (grain 26, domain ''): what a report without a domain filter
-- reads, up to one row per key and day instead of one per key, day and domain. Computed from the
-- day rows (grain 24), which count the same events.
INSERT INTO "EventRollup" ("accountId", "type", "grain", "bucket", "domain", "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful", "n")
SELECT "accountId", "type", 26, "bucket", '', "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful", SUM("n")
FROM "EventRollup" WHERE "grain" = 24
GROUP BY "accountId", "type", "bucket", "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful";
