-- AlterTable
ALTER TABLE "CopyJob" ADD COLUMN     "requestedKeyId" TEXT;

