-- CreateTable
CREATE TABLE "PersistedDocument" (
    "accountId" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("accountId", "hash"),
    CONSTRAINT "PersistedDocument_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- AlterTable: a column added in place, not a table rebuild, which would drop the ApiKey triggers
-- that signal key changes to every running instance (20261123170000_auth_change_signal).
ALTER TABLE "ApiKey" ADD COLUMN "persistedOnly" BOOLEAN NOT NULL DEFAULT false;
