-- Explore's funnels and retention read each step's (or cohort's start) events by type and time and
-- need only their end user and id: with the end user after the key's columns (the id is the rowid,
-- in every SQLite index already), those reads are served from the index alone. (Hand-written: the
-- schema keeps @@index([accountId, type, time]), which this index still serves, under its name, as
-- on PostgreSQL, where the end user is an INCLUDE column.)
DROP INDEX "Event_accountId_type_time_idx";
CREATE INDEX "Event_accountId_type_time_idx" ON "Event"("accountId", "type", "time", "endUserId");
