-- A saved endpoint's definition is cached per process like a resolved key (src/domains/endpoints/
-- run.ts): its changes raise the same signal (20261123170000_auth_change_signal), so a replaced or
-- deleted endpoint applies on every instance within the signal's delay, whoever changed it.
-- A later migration that rebuilds "SavedEndpoint" (a SQLite table change) must create these again.
CREATE TRIGGER "SavedEndpoint_auth_insert" AFTER INSERT ON "SavedEndpoint" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "SavedEndpoint_auth_update" AFTER UPDATE ON "SavedEndpoint" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
CREATE TRIGGER "SavedEndpoint_auth_delete" AFTER DELETE ON "SavedEndpoint" BEGIN UPDATE "AuthVersion" SET "version" = "version" + 1; END;
