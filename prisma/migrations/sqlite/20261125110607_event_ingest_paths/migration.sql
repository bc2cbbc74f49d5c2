-- Cheaper ingest, as on PostgreSQL: no foreign key from "Event" to "Account", and one index in
-- ingestion order, (accountId, id, type), instead of (accountId, id) and (accountId, type, id). The
-- table is rebuilt (SQLite cannot drop a foreign key), its ids and id sequence kept (an export
-- cursor must never see an id again), and its indexes made again.
-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Event" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
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
    "receivedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO "new_Event" ("accountId", "actionId", "comment", "contentId", "domain", "endUserId", "flowId", "id", "receivedAt", "resultCount", "searchTerm", "step", "time", "type", "useful", "userName", "widget") SELECT "accountId", "actionId", "comment", "contentId", "domain", "endUserId", "flowId", "id", "receivedAt", "resultCount", "searchTerm", "step", "time", "type", "useful", "userName", "widget" FROM "Event";
-- Keep the AUTOINCREMENT high-water mark: retention may have deleted the newest ids' predecessors,
-- and a reused id would hide an event from an export cursor that passed it.
DELETE FROM "sqlite_sequence" WHERE "name" = 'new_Event';
INSERT INTO "sqlite_sequence" ("name", "seq") SELECT 'new_Event', "seq" FROM "sqlite_sequence" WHERE "name" = 'Event';
DROP TABLE "Event";
ALTER TABLE "new_Event" RENAME TO "Event";
CREATE INDEX "Event_accountId_id_type_idx" ON "Event"("accountId", "id", "type");
CREATE INDEX "Event_accountId_type_time_idx" ON "Event"("accountId", "type", "time");
-- Hand-written partial indexes (Prisma's schema cannot say WHERE): the comment reports' (made in
-- 20261123230000_report_read_paths, dropped with the old table), and an end user's completed flows
-- and tasks for a segment's personalised content order (read on every page view; the readers spell
-- the same type list as literals, which SQLite needs to use a partial index).
CREATE INDEX "Event_comments_idx" ON "Event" ("accountId", "type", "time", "flowId", "endUserId", "useful", "comment", "domain") WHERE "comment" IS NOT NULL;
CREATE INDEX "Event_completions_idx" ON "Event" ("accountId", "endUserId", "flowId") WHERE "type" IN ('flow_completed', 'task_completed');
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

