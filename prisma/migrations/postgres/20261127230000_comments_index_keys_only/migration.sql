-- Hand-written. The feedback events with a comment, in time order, for the comment reports: the
-- index no longer carries the comment and the other text columns (INCLUDE). A PostgreSQL B-tree
-- entry holds at most 2,704 bytes, and a comment may be 4,000 characters: a long comment that does
-- not compress (and, with it, a long flow id, end user id and domain) failed the whole ingest
-- request with a 500. The comment reports read those columns from the row, a heap visit per
-- comment they list.
DROP INDEX "Event_comments_idx";
CREATE INDEX "Event_comments_idx" ON "Event" ("accountId", "type", "time") WHERE "comment" IS NOT NULL;
