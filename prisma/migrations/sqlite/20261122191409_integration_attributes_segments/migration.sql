-- CreateTable
CREATE TABLE "AttributeField" (
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "description" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("accountId", "name"),
    CONSTRAINT "AttributeField_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "AttributeRecord" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "attributeName" TEXT NOT NULL,
    "attributeValue" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    "updatedBy" TEXT,
    CONSTRAINT "AttributeRecord_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "AttributeRecordValue" (
    "recordId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "text" TEXT,
    "num" REAL,
    "bool" BOOLEAN,
    "time" DATETIME,

    PRIMARY KEY ("recordId", "name"),
    CONSTRAINT "AttributeRecordValue_recordId_fkey" FOREIGN KEY ("recordId") REFERENCES "AttributeRecord" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Segment" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "rule" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Segment_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SegmentContent" (
    "segmentId" TEXT NOT NULL,
    "contentId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,

    PRIMARY KEY ("segmentId", "contentId"),
    CONSTRAINT "SegmentContent_segmentId_fkey" FOREIGN KEY ("segmentId") REFERENCES "Segment" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "SegmentContent_contentId_fkey" FOREIGN KEY ("contentId") REFERENCES "Content" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "AttributeRecord_accountId_attributeName_attributeValue_key" ON "AttributeRecord"("accountId", "attributeName", "attributeValue");

-- CreateIndex
CREATE INDEX "AttributeRecordValue_accountId_name_text_idx" ON "AttributeRecordValue"("accountId", "name", "text");

-- CreateIndex
CREATE INDEX "AttributeRecordValue_accountId_name_num_idx" ON "AttributeRecordValue"("accountId", "name", "num");

-- CreateIndex
CREATE INDEX "AttributeRecordValue_accountId_name_time_idx" ON "AttributeRecordValue"("accountId", "name", "time");

-- CreateIndex
CREATE INDEX "Segment_accountId_createdAt_id_idx" ON "Segment"("accountId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Segment_accountId_name_key" ON "Segment"("accountId", "name");

-- CreateIndex
CREATE INDEX "SegmentContent_contentId_idx" ON "SegmentContent"("contentId");

