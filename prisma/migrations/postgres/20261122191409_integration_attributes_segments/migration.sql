-- CreateTable
CREATE TABLE "AttributeField" (
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "description" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AttributeField_pkey" PRIMARY KEY ("accountId","name")
);

-- CreateTable
CREATE TABLE "AttributeRecord" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "attributeName" TEXT NOT NULL,
    "attributeValue" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "updatedBy" TEXT,

    CONSTRAINT "AttributeRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AttributeRecordValue" (
    "recordId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "text" TEXT,
    "num" DOUBLE PRECISION,
    "bool" BOOLEAN,
    "time" TIMESTAMP(3),

    CONSTRAINT "AttributeRecordValue_pkey" PRIMARY KEY ("recordId","name")
);

-- CreateTable
CREATE TABLE "Segment" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "rule" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Segment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SegmentContent" (
    "segmentId" TEXT NOT NULL,
    "contentId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "SegmentContent_pkey" PRIMARY KEY ("segmentId","contentId")
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

-- AddForeignKey
ALTER TABLE "AttributeField" ADD CONSTRAINT "AttributeField_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AttributeRecord" ADD CONSTRAINT "AttributeRecord_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AttributeRecordValue" ADD CONSTRAINT "AttributeRecordValue_recordId_fkey" FOREIGN KEY ("recordId") REFERENCES "AttributeRecord"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Segment" ADD CONSTRAINT "Segment_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SegmentContent" ADD CONSTRAINT "SegmentContent_segmentId_fkey" FOREIGN KEY ("segmentId") REFERENCES "Segment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SegmentContent" ADD CONSTRAINT "SegmentContent_contentId_fkey" FOREIGN KEY ("contentId") REFERENCES "Content"("id") ON DELETE CASCADE ON UPDATE CASCADE;

