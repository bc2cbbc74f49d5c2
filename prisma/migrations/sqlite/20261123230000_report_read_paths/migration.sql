-- The comment reports list single feedback events with a comment, in time order: a partial index
-- of just those events (about one in a hundred), carrying every column the reports read, serves a
-- page in index order without touching the table. (Hand-written: Prisma's schema cannot say WHERE.)
CREATE INDEX "Event_comments_idx" ON "Event" ("accountId", "type", "time", "flowId", "endUserId", "useful", "comment", "domain") WHERE "comment" IS NOT NULL;

-- The day totals (grain 0) keep a search's outcome as well, so searchSuccessVsFailure reads 3 rows
-- a day and domain instead of every search term's. Recomputed from the day rows (grain 24), which
-- count the same events (those up to the rollup watermark).
DELETE FROM "EventRollup" WHERE "grain" = 0 AND "type" = 'selfhelp_search';
INSERT INTO "EventRollup" ("accountId", "type", "grain", "bucket", "domain", "flowId", "contentId", "widget", "searchTerm", "outcome", "actionId", "useful", "n")
SELECT "accountId", "type", 0, "bucket", "domain", '', '', '', '', "outcome", '', -1, SUM("n")
FROM "EventRollup" WHERE "grain" = 24 AND "type" = 'selfhelp_search'
GROUP BY "accountId", "type", "bucket", "domain", "outcome";
