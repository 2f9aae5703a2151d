import type { Migration } from './migration';

/**
 * A run made private (or public) changes who may read it, also on the streams already open: its
 * owner's uid is NOTIFYed on `auth_changed` (as a token revoke is, migration 0009), and the open
 * streams of runs of that owner are re-checked (src/auth/stream-authority.ts). Only an update that
 * changes is_public fires it: nothing on a run's hot path does.
 */
export const runVisibilityChanged: Migration = {
  name: '0025-run-visibility-changed',
  up: `
CREATE TRIGGER circuit_runs_visibility_changed AFTER UPDATE OF is_public ON circuit_runs
  FOR EACH ROW WHEN (OLD.is_public IS DISTINCT FROM NEW.is_public)
  EXECUTE FUNCTION notify_auth_changed('user_uid');
`,
  down: `DROP TRIGGER circuit_runs_visibility_changed ON circuit_runs;`,
};
