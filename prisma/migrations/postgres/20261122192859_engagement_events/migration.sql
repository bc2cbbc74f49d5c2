-- CreateTable
CREATE TABLE "Event" (
    "id" SERIAL NOT NULL,
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

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EventUserName" (
    "accountId" TEXT NOT NULL,
    "endUserId" TEXT NOT NULL,
    "userName" TEXT NOT NULL,
    "time" BIGINT NOT NULL,

    CONSTRAINT "EventUserName_pkey" PRIMARY KEY ("accountId","endUserId")
);

-- CreateIndex
CREATE INDEX "Event_accountId_type_time_idx" ON "Event"("accountId", "type", "time");

-- CreateIndex
CREATE INDEX "Event_accountId_flowId_type_time_idx" ON "Event"("accountId", "flowId", "type", "time");

-- CreateIndex
CREATE INDEX "AuditLog_accountId_resourceType_resourceId_timestamp_idx" ON "AuditLog"("accountId", "resourceType", "resourceId", "timestamp");

-- AddForeignKey
ALTER TABLE "Event" ADD CONSTRAINT "Event_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

