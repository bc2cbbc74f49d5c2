-- Event ids as 64-bit integers on PostgreSQL. They come from one sequence shared by every account,
-- and as SERIAL (int4) it stops at 2,147,483,647: a handful of mid-size accounts (~5 million events
-- a day each) would reach it within months, after which every ingest fails. SQLite's INTEGER
-- PRIMARY KEY is 64-bit already. Prisma's schema keeps `Int` (shared with SQLite): the PostgreSQL
-- client reads and binds these columns as JavaScript numbers, exact up to 2^53.
--
-- On an existing deployment this rewrites the event table and its indexes under an exclusive lock
-- (minutes per hundred million events): run it in a maintenance window, or before the table grows.
ALTER SEQUENCE "Event_id_seq" AS bigint;
ALTER TABLE "Event" ALTER COLUMN "id" TYPE bigint;
ALTER TABLE "RollupWatermark" ALTER COLUMN "eventId" TYPE bigint;
