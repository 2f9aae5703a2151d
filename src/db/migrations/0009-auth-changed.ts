import type { Migration } from './migration';

/**
 * Every committed change that can alter what a token authenticates as — a token revoked or deleted,
 * its user's row changed or deleted — NOTIFYs `auth_changed` with the user's uid, so that each process
 * drops its cached authentications of that user (src/auth/token-cache.ts). `last_used_at` touches do not.
 */
export const authChanged: Migration = {
  name: '0009-auth-changed',
  up: `
CREATE FUNCTION notify_auth_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('auth_changed', to_jsonb(OLD) ->> TG_ARGV[0]);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER users_auth_changed AFTER UPDATE OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION notify_auth_changed('uid');
CREATE TRIGGER api_tokens_auth_changed AFTER DELETE ON api_tokens
  FOR EACH ROW EXECUTE FUNCTION notify_auth_changed('user_uid');
CREATE TRIGGER api_tokens_revoked AFTER UPDATE ON api_tokens
  FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.token_hash IS DISTINCT FROM NEW.token_hash)
  EXECUTE FUNCTION notify_auth_changed('user_uid');
`,
};
