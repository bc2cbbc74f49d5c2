-- DropIndex
DROP INDEX "Event_accountId_flowId_type_time_idx";


-- Partition "Event" by month of "time" (epoch ms, UTC), so raw-event retention drops whole
-- partitions and a report's edge reads touch one or two of them. Hand-written: Prisma does not
-- model partitioning. A partitioned table's primary key must include the partition key: ("id", "time").
-- The service creates the coming months' partitions (src/domains/events/partitions.ts); events
-- outside every monthly partition (older than those created here) go to "Event_default".
ALTER SEQUENCE "Event_id_seq" OWNED BY NONE;
ALTER TABLE "Event" RENAME TO "Event_unpartitioned";
ALTER TABLE "Event_unpartitioned" RENAME CONSTRAINT "Event_pkey" TO "Event_unpartitioned_pkey";
ALTER TABLE "Event_unpartitioned" RENAME CONSTRAINT "Event_accountId_fkey" TO "Event_unpartitioned_accountId_fkey";
ALTER INDEX "Event_accountId_type_time_idx" RENAME TO "Event_unpartitioned_accountId_type_time_idx";

CREATE TABLE "Event" (
    "id" INTEGER NOT NULL DEFAULT nextval('"Event_id_seq"'),
    "accountId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "time" BIGINT NOT NULL,
    "endUserId" TEXT,
    "flowId" TEXT,
    "contentId" TEXT,
    "widget" TEXT,
    "step" INTEGER,
    "searchTerm" TEXT,
    "resultCount" INTEGER,
    "useful" BOOLEAN,
    "comment" TEXT,
    "actionId" TEXT,
    "domain" TEXT,
    "userName" TEXT,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id", "time")
) PARTITION BY RANGE ("time");
ALTER SEQUENCE "Event_id_seq" OWNED BY "Event"."id";
CREATE INDEX "Event_accountId_type_time_idx" ON "Event"("accountId", "type", "time");
ALTER TABLE "Event" ADD CONSTRAINT "Event_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE TABLE "Event_default" PARTITION OF "Event" DEFAULT;

-- Monthly partitions from the oldest stored event's month (at most 24 months back) to three
-- months ahead; older events go to the default partition.
DO $$
DECLARE
  first_month date := date_trunc('month', now() AT TIME ZONE 'UTC')::date;
  oldest bigint;
  m date;
BEGIN
  SELECT MIN("time") INTO oldest FROM "Event_unpartitioned";
  IF oldest IS NOT NULL THEN
    first_month := LEAST(first_month, GREATEST(
      date_trunc('month', to_timestamp(oldest / 1000.0) AT TIME ZONE 'UTC')::date,
      (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '24 months')::date));
  END IF;
  m := first_month;
  WHILE m <= (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '3 months')::date LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "Event" FOR VALUES FROM (%s) TO (%s)',
      'Event_' || to_char(m, 'YYYY_MM'),
      (extract(epoch FROM m::timestamp) * 1000)::bigint,
      (extract(epoch FROM (m + interval '1 month')::timestamp) * 1000)::bigint);
    m := (m + interval '1 month')::date;
  END LOOP;
END $$;

INSERT INTO "Event" SELECT * FROM "Event_unpartitioned";
DROP TABLE "Event_unpartitioned";
