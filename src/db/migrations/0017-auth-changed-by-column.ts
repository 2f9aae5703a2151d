import type { Migration } from './migration';

/** Every column of users but the balance (credits, credits_held) and updated_at. */
export const AUTH_COLUMNS = [
  'uid',
  'username',
  'name',
  'bio',
  'is_private',
  'is_admin',
  'password_hash',
  'created_at',
  'search_vector',
] as const;

/**
 * Migration 0012's trigger compared the whole row, as JSON, on every update of a user, so each credit
 * hold and charge (one per run) turned the row into JSON twice (~0.07 ms of PostgreSQL's CPU each).
 * Fired only by updates that set one of the other columns, it is not even looked at by a balance
 * change; the comparison is unchanged for the updates that reach it. A column added to users later
 * belongs in AUTH_COLUMNS (test/auth.token-cache.test.ts fails until it is).
 */
export const authChangedByColumn: Migration = {
  name: '0017-auth-changed-by-column',
  up: `
DROP TRIGGER users_auth_changed_update ON users;
CREATE TRIGGER users_auth_changed_update AFTER UPDATE OF ${AUTH_COLUMNS.join(', ')} ON users
  FOR EACH ROW WHEN ((to_jsonb(OLD) - 'credits' - 'credits_held' - 'updated_at') IS DISTINCT FROM (to_jsonb(NEW) - 'credits' - 'credits_held' - 'updated_at'))
  EXECUTE FUNCTION notify_auth_changed('uid');
`,
  down: `
DROP TRIGGER users_auth_changed_update ON users;
CREATE TRIGGER users_auth_changed_update AFTER UPDATE ON users
  FOR EACH ROW WHEN ((to_jsonb(OLD) - 'credits' - 'credits_held' - 'updated_at') IS DISTINCT FROM (to_jsonb(NEW) - 'credits' - 'credits_held' - 'updated_at'))
  EXECUTE FUNCTION notify_auth_changed('uid');
`,
};
