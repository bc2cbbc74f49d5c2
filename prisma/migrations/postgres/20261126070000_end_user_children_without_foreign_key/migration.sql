-- An end user's values and actions without a foreign key to "EndUser" on PostgreSQL: it checked the
-- parent per inserted row, about two fifths of inserting the values of a bulk end-user write (50,000
-- value rows in psql: 550-577 ms with it, 335-375 ms without). The rows are written only in the
-- transaction that writes or locks their end user, and deleted with it by the one path that deletes
-- end users (eraseEndUsers, src/domains/endUsers/schema.ts), which deletes them explicitly; as
-- "Event" (no foreign key to "Account") does. SQLite keeps its foreign keys (its bulk writes are
-- within their target with them). Hand-written: Prisma's schema keeps the relation, for its queries.
ALTER TABLE "EndUserValue" DROP CONSTRAINT "EndUserValue_endUserId_fkey";
ALTER TABLE "EndUserAction" DROP CONSTRAINT "EndUserAction_endUserId_fkey";
