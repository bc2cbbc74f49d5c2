-- B23 lists one primary attribute's records by value. For `double` and `timestamp` primaries the
-- value's text ordered "10" before "9"; "attributeNum" holds the number (epoch ms for timestamps),
-- filled on write, so those lists order by it. Existing records are filled below from their
-- canonical text (written by String(n): plain decimal or exponent notation, which CAST reads).
-- AlterTable
ALTER TABLE "AttributeRecord" ADD COLUMN "attributeNum" REAL;

-- CreateIndex
CREATE INDEX "AttributeRecord_accountId_attributeName_attributeNum_id_idx" ON "AttributeRecord"("accountId", "attributeName", "attributeNum", "id");


-- Backfill (hand-written): the records whose primary attribute is a double or a timestamp.
UPDATE "AttributeRecord" SET "attributeNum" = CAST("attributeValue" AS REAL)
WHERE EXISTS (SELECT 1 FROM "AttributeField" f WHERE f."accountId" = "AttributeRecord"."accountId" AND f."name" = "AttributeRecord"."attributeName" AND f."type" IN ('double', 'timestamp'));
