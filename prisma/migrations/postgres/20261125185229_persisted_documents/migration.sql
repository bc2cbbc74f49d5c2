-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN     "persistedOnly" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "PersistedDocument" (
    "accountId" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PersistedDocument_pkey" PRIMARY KEY ("accountId","hash")
);

-- AddForeignKey
ALTER TABLE "PersistedDocument" ADD CONSTRAINT "PersistedDocument_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

