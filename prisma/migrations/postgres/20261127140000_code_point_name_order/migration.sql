-- The names lists are sorted and paged by, in "C" (code-point) order, the order the contract fixes:
-- tags by name, the end-user and integration-attribute schemas' fields by name, integration-attribute
-- records by primary value, segments by name. Left to the database's default collation (often a
-- linguistic one, ICU's en-US: 'a' < 'B' < 'c' < 'Z', punctuation first) PostgreSQL sorted them
-- otherwise, and Prisma's orderBy cannot name a collation. With the column's collation the ORDER BY,
-- the keyset cursor's comparison and the unique index all agree on code points (equality is
-- unchanged: a deterministic collation compares equal only what is byte-equal). SQLite compares
-- text by its bytes already. Hand-written: Prisma's schema cannot express a column's collation.
ALTER TABLE "Tag" ALTER COLUMN "name" TYPE TEXT COLLATE "C";
ALTER TABLE "EndUserField" ALTER COLUMN "name" TYPE TEXT COLLATE "C";
ALTER TABLE "AttributeField" ALTER COLUMN "name" TYPE TEXT COLLATE "C";
ALTER TABLE "AttributeRecord" ALTER COLUMN "attributeName" TYPE TEXT COLLATE "C";
ALTER TABLE "AttributeRecord" ALTER COLUMN "attributeValue" TYPE TEXT COLLATE "C";
ALTER TABLE "Segment" ALTER COLUMN "name" TYPE TEXT COLLATE "C";
