-- CreateTable
CREATE TABLE "EndUser" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "externalId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "EndUser_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EndUserValue" (
    "endUserId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "field" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "text" TEXT,
    "num" DOUBLE PRECISION,
    "bool" BOOLEAN,
    "time" TIMESTAMP(3),

    CONSTRAINT "EndUserValue_pkey" PRIMARY KEY ("endUserId","field")
);

-- CreateTable
CREATE TABLE "EndUserAction" (
    "endUserId" TEXT NOT NULL,
    "actionId" TEXT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,
    "value" BIGINT,

    CONSTRAINT "EndUserAction_pkey" PRIMARY KEY ("endUserId","actionId")
);

-- CreateTable
CREATE TABLE "EndUserField" (
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "description" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "EndUserField_pkey" PRIMARY KEY ("accountId","name")
);

-- CreateIndex
CREATE INDEX "EndUser_accountId_createdAt_id_idx" ON "EndUser"("accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "EndUser_accountId_updatedAt_id_idx" ON "EndUser"("accountId", "updatedAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "EndUser_accountId_externalId_key" ON "EndUser"("accountId", "externalId");

-- CreateIndex
CREATE INDEX "EndUserValue_accountId_field_text_idx" ON "EndUserValue"("accountId", "field", "text");

-- CreateIndex
CREATE INDEX "EndUserValue_accountId_field_num_idx" ON "EndUserValue"("accountId", "field", "num");

-- CreateIndex
CREATE INDEX "EndUserValue_accountId_field_time_idx" ON "EndUserValue"("accountId", "field", "time");

-- AddForeignKey
ALTER TABLE "EndUser" ADD CONSTRAINT "EndUser_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EndUserValue" ADD CONSTRAINT "EndUserValue_endUserId_fkey" FOREIGN KEY ("endUserId") REFERENCES "EndUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EndUserAction" ADD CONSTRAINT "EndUserAction_endUserId_fkey" FOREIGN KEY ("endUserId") REFERENCES "EndUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EndUserField" ADD CONSTRAINT "EndUserField_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

