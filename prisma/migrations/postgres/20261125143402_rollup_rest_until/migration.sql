-- AlterTable
ALTER TABLE "RollupWatermark" ADD COLUMN     "restUntil" BIGINT NOT NULL DEFAULT 0;

