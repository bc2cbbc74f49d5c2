-- Revocation and grants reach every instance at once (src/auth/changes.ts). Every change to what an
-- API key may do (keys, users, memberships, account settings) sends a NOTIFY on the channel
-- guidegate_auth inside its own transaction, whoever makes it: a server, the CLI, or SQL typed by
-- hand. PostgreSQL delivers it at commit (never for a rolled-back change) to every instance, which
-- LISTENs and drops its identity cache. Key use (ApiKey.lastUsedAt) does not notify: it is
-- bookkeeping written every 10 s.
CREATE FUNCTION guidegate_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('guidegate_auth', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

CREATE TRIGGER "ApiKey_auth_changed" AFTER INSERT OR DELETE OR UPDATE OF "prefix", "hash", "userId", "scope", "expiresAt", "revokedAt" ON "ApiKey"
  FOR EACH STATEMENT EXECUTE FUNCTION guidegate_auth_changed();
CREATE TRIGGER "User_auth_changed" AFTER UPDATE OR DELETE ON "User"
  FOR EACH STATEMENT EXECUTE FUNCTION guidegate_auth_changed();
CREATE TRIGGER "Membership_auth_changed" AFTER INSERT OR UPDATE OR DELETE ON "Membership"
  FOR EACH STATEMENT EXECUTE FUNCTION guidegate_auth_changed();
CREATE TRIGGER "Account_auth_changed" AFTER UPDATE OR DELETE ON "Account"
  FOR EACH STATEMENT EXECUTE FUNCTION guidegate_auth_changed();
