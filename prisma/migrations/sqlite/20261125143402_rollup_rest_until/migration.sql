-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_RollupWatermark" (
    "accountId" TEXT NOT NULL PRIMARY KEY,
    "eventId" INTEGER NOT NULL,
    "updatedAt" BIGINT NOT NULL,
    "restUntil" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "RollupWatermark_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_RollupWatermark" ("accountId", "eventId", "updatedAt") SELECT "accountId", "eventId", "updatedAt" FROM "RollupWatermark";
DROP TABLE "RollupWatermark";
ALTER TABLE "new_RollupWatermark" RENAME TO "RollupWatermark";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

