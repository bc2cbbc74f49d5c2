-- The typed-value indexes of custom fields and integration attributes hold only the rows that have a
-- value in their column. A value row fills one of "text", "num" and "time" (a boolean none of them),
-- yet every row went into all three indexes, two or three times with NULL: a 10,000-user bulk write
-- with five fields wrote 150,000 index entries for the 50,000 rows, of which 100,000 said nothing.
-- Every read these indexes serve compares the column with a value ("=", "IN"), which no NULL
-- satisfies, so both databases use the partial index for it (test/typed-value-indexes.test.ts checks
-- the plans). 50,000 value rows, the two sets alternately: PostgreSQL (psql) 0.70-1.12 s with the full
-- indexes, 0.47-0.54 s with these; SQLite 0.62-0.76 s, 0.51-0.55 s. Hand-written: Prisma's schema
-- cannot say WHERE.
DROP INDEX "EndUserValue_accountId_field_text_idx";
CREATE INDEX "EndUserValue_accountId_field_text_idx" ON "EndUserValue" ("accountId", "field", "text") WHERE "text" IS NOT NULL;
DROP INDEX "EndUserValue_accountId_field_num_idx";
CREATE INDEX "EndUserValue_accountId_field_num_idx" ON "EndUserValue" ("accountId", "field", "num") WHERE "num" IS NOT NULL;
DROP INDEX "EndUserValue_accountId_field_time_idx";
CREATE INDEX "EndUserValue_accountId_field_time_idx" ON "EndUserValue" ("accountId", "field", "time") WHERE "time" IS NOT NULL;
DROP INDEX "AttributeRecordValue_accountId_name_text_idx";
CREATE INDEX "AttributeRecordValue_accountId_name_text_idx" ON "AttributeRecordValue" ("accountId", "name", "text") WHERE "text" IS NOT NULL;
DROP INDEX "AttributeRecordValue_accountId_name_num_idx";
CREATE INDEX "AttributeRecordValue_accountId_name_num_idx" ON "AttributeRecordValue" ("accountId", "name", "num") WHERE "num" IS NOT NULL;
DROP INDEX "AttributeRecordValue_accountId_name_time_idx";
CREATE INDEX "AttributeRecordValue_accountId_name_time_idx" ON "AttributeRecordValue" ("accountId", "name", "time") WHERE "time" IS NOT NULL;
