import type { Migration } from './migration';

/**
 * A user's balance is not part of what a token authenticates as: holds and charges change it on every
 * run, and a NOTIFY from each of them dropped the user's cached authentications in every process and
 * queued each run's commit behind PostgreSQL's one NOTIFY lock. Only changes to other columns notify
 * now; balances are always read from the row (src/credits/balance.ts), never from a cached viewer.
 */
export const authChangedIgnoresBalance: Migration = {
  name: '0012-auth-changed-ignores-balance',
  up: `
DROP TRIGGER users_auth_changed ON users;
CREATE TRIGGER users_auth_changed_update AFTER UPDATE ON users
  FOR EACH ROW WHEN ((to_jsonb(OLD) - 'credits' - 'credits_held' - 'updated_at') IS DISTINCT FROM (to_jsonb(NEW) - 'credits' - 'credits_held' - 'updated_at'))
  EXECUTE FUNCTION notify_auth_changed('uid');
CREATE TRIGGER users_auth_changed_delete AFTER DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION notify_auth_changed('uid');
`,
  down: `
DROP TRIGGER users_auth_changed_delete ON users;
DROP TRIGGER users_auth_changed_update ON users;
CREATE TRIGGER users_auth_changed AFTER UPDATE OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION notify_auth_changed('uid');
`,
};
