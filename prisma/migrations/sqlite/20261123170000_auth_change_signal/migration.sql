-- Named to run after every migration that redefines ApiKey, User, Membership or Account: SQLite
-- migrations that change a table rebuild it (CREATE new, copy, DROP, RENAME), which drops its
-- triggers. A later migration that rebuilds one of these tables must create its triggers again
-- (test/identity-cache.test.ts fails on SQLite otherwise).
-- Revocation and grants reach every process at once (src/auth/changes.ts). Every change to what an
-- API key may do (keys, users, memberships, account settings) bumps one counter, whoever makes it:
-- the server, the CLI in another process, or SQL typed by hand. Servers read the counter at most
-- every 250 ms and drop their identity cache when it moved. Key use (ApiKey.lastUsedAt) does not
-- count: it is bookkeeping written every 10 s.
CREATE TABLE "AuthVersion" (
    "id" INTEGER NOT NULL PRIMARY KEY CHECK ("id" = 1),
    "version" INTEGER NOT NULL
);
INSERT INTO "AuthVersion" ("id", "version") VALUES (1, 0);

CREATE TRIGGER "ApiKey_auth_insert" AFTER INSERT ON "ApiKey" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "ApiKey_auth_update" AFTER UPDATE OF "prefix", "hash", "userId", "scope", "expiresAt", "revokedAt" ON "ApiKey" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "ApiKey_auth_delete" AFTER DELETE ON "ApiKey" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "User_auth_update" AFTER UPDATE ON "User" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "User_auth_delete" AFTER DELETE ON "User" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "Membership_auth_insert" AFTER INSERT ON "Membership" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "Membership_auth_update" AFTER UPDATE ON "Membership" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "Membership_auth_delete" AFTER DELETE ON "Membership" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "Account_auth_update" AFTER UPDATE ON "Account" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "Account_auth_delete" AFTER DELETE ON "Account" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
