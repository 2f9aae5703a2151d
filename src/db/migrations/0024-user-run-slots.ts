import type { Migration } from './migration';

/**
 * Fair shares (docs/fairness.md): a user's RUNNING runs are `user_run_slots.claimed`
 * minus `user_run_ends.ended`. The claim statement locks the user's slots row, reads the count and
 * adds what it claims, so USER_MAX_CONCURRENT_RUNS holds across any number of workers. A trigger
 * counts every end (any path out of RUNNING, or a RUNNING run deleted) in a row of another table:
 * a run's end never waits for a claim's lock (the two would otherwise deadlock, each holding what
 * the other wants: the run row and the user's balance against the slots row), and a claim that reads
 * an end not yet committed only counts one run too many, never one too few. Tables of their own,
 * not users columns: users rows carry search and auth triggers. `circuit_runs.slot_wait` marks a
 * PROVISIONED run that a claim turned away for want of a slot; it is queued again when one frees.
 */
export const userRunSlots: Migration = {
  name: '0024-user-run-slots',
  up: `
CREATE TABLE user_run_slots (
  user_uid uuid PRIMARY KEY REFERENCES users(uid) ON DELETE CASCADE,
  claimed bigint NOT NULL DEFAULT 0
);
CREATE TABLE user_run_ends (
  user_uid uuid PRIMARY KEY REFERENCES users(uid) ON DELETE CASCADE,
  ended bigint NOT NULL DEFAULT 0
);
INSERT INTO user_run_slots (user_uid, claimed)
  SELECT u.uid, (SELECT count(*) FROM circuit_runs r WHERE r.user_uid = u.uid AND r.state = 'RUNNING') FROM users u;
INSERT INTO user_run_ends (user_uid) SELECT uid FROM users;

CREATE FUNCTION user_run_slots_create() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO user_run_slots (user_uid) VALUES (NEW.uid) ON CONFLICT DO NOTHING;
  INSERT INTO user_run_ends (user_uid) VALUES (NEW.uid) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER users_run_slots_insert AFTER INSERT ON users FOR EACH ROW EXECUTE FUNCTION user_run_slots_create();

CREATE FUNCTION user_run_ends_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE user_run_ends SET ended = ended + 1 WHERE user_uid = OLD.user_uid;
  RETURN NULL;
END $$;
CREATE TRIGGER circuit_runs_running_ended AFTER UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN (OLD.state = 'RUNNING' AND NEW.state IS DISTINCT FROM 'RUNNING')
  EXECUTE FUNCTION user_run_ends_count();
CREATE TRIGGER circuit_runs_running_deleted AFTER DELETE ON circuit_runs
  FOR EACH ROW WHEN (OLD.state = 'RUNNING')
  EXECUTE FUNCTION user_run_ends_count();

ALTER TABLE circuit_runs ADD COLUMN slot_wait boolean NOT NULL DEFAULT false;
CREATE INDEX circuit_runs_slot_wait ON circuit_runs (user_uid, created_at) WHERE slot_wait;
`,
  down: `
DROP INDEX IF EXISTS circuit_runs_slot_wait;
ALTER TABLE circuit_runs DROP COLUMN IF EXISTS slot_wait;
DROP TRIGGER IF EXISTS circuit_runs_running_deleted ON circuit_runs;
DROP TRIGGER IF EXISTS circuit_runs_running_ended ON circuit_runs;
DROP FUNCTION IF EXISTS user_run_ends_count();
DROP TRIGGER IF EXISTS users_run_slots_insert ON users;
DROP FUNCTION IF EXISTS user_run_slots_create();
DROP TABLE IF EXISTS user_run_ends;
DROP TABLE IF EXISTS user_run_slots;
`,
};
