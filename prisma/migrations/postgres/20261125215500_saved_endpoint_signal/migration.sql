-- A saved endpoint's definition is cached per process like a resolved key (src/domains/endpoints/
-- run.ts): its changes raise the same signal (20261123170000_auth_change_signal), so a replaced or
-- deleted endpoint applies on every instance at commit, whoever changed it.
CREATE TRIGGER "SavedEndpoint_auth_changed" AFTER INSERT OR UPDATE OR DELETE ON "SavedEndpoint"
  FOR EACH STATEMENT EXECUTE FUNCTION guidegate_auth_changed();
