import type { Migration } from './migration';

/**
 * Fair shares (docs/fairness.md, DESIGN §12): `user_run_slots.running` counts each user's RUNNING
 * runs, kept by a trigger on every state change (so no path that ends a run can forget it), and read
 * under the row's lock by the claim statement, so USER_MAX_CONCURRENT_RUNS holds across any number
 * of workers. A table of its own, not a users column: the claim locks and the trigger updates it once
 * per run, and users rows carry search and auth triggers. `circuit_runs.slot_wait` marks a PROVISIONED
 * run that a claim turned away for want of a slot; it is queued again when one frees.
 */
export const userRunSlots: Migration = {
  name: '0024-user-run-slots',
  up: `
CREATE TABLE user_run_slots (
  user_uid uuid PRIMARY KEY REFERENCES users(uid) ON DELETE CASCADE,
  running integer NOT NULL DEFAULT 0
);
INSERT INTO user_run_slots (user_uid, running)
  SELECT u.uid, (SELECT count(*) FROM circuit_runs r WHERE r.user_uid = u.uid AND r.state = 'RUNNING') FROM users u;

CREATE FUNCTION user_run_slots_create() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO user_run_slots (user_uid) VALUES (NEW.uid) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER users_run_slots_insert AFTER INSERT ON users FOR EACH ROW EXECUTE FUNCTION user_run_slots_create();

CREATE FUNCTION user_run_slots_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE user_run_slots SET running = GREATEST(0, running - 1) WHERE user_uid = OLD.user_uid;
  ELSIF NEW.state = 'RUNNING' THEN
    UPDATE user_run_slots SET running = running + 1 WHERE user_uid = NEW.user_uid;
  ELSE
    UPDATE user_run_slots SET running = GREATEST(0, running - 1) WHERE user_uid = NEW.user_uid;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER circuit_runs_running_count AFTER UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN ((OLD.state = 'RUNNING') IS DISTINCT FROM (NEW.state = 'RUNNING'))
  EXECUTE FUNCTION user_run_slots_count();
CREATE TRIGGER circuit_runs_running_count_delete AFTER DELETE ON circuit_runs
  FOR EACH ROW WHEN (OLD.state = 'RUNNING')
  EXECUTE FUNCTION user_run_slots_count();

ALTER TABLE circuit_runs ADD COLUMN slot_wait boolean NOT NULL DEFAULT false;
CREATE INDEX circuit_runs_slot_wait ON circuit_runs (user_uid, created_at) WHERE slot_wait;
`,
  down: `
DROP INDEX IF EXISTS circuit_runs_slot_wait;
ALTER TABLE circuit_runs DROP COLUMN IF EXISTS slot_wait;
DROP TRIGGER IF EXISTS circuit_runs_running_count_delete ON circuit_runs;
DROP TRIGGER IF EXISTS circuit_runs_running_count ON circuit_runs;
DROP FUNCTION IF EXISTS user_run_slots_count();
DROP TRIGGER IF EXISTS users_run_slots_insert ON users;
DROP FUNCTION IF EXISTS user_run_slots_create();
DROP TABLE IF EXISTS user_run_slots;
`,
};
