import type { Migration } from './migration';

/**
 * Runs that wait for the world (docs/runs.md, Waiting for the world).
 *
 * `circuit_run_steps` rows of `wait` steps: `wait_for` says on what (`time` or `signal`; approvals keep
 * kind `approval`), `schema` is a signal's JSON Schema, `decision` holds what resolved the wait (a signal's
 * `data`, an approval's decision). New statuses: `signaled` (a signal arrived, also before its step began
 * waiting), `elapsed` (a time wait is over), `timed_out` (a signal that never came).
 *
 * `circuit_runs.parked_at`: the run holds no memory in any process; it is a row until `wake_at` (its
 * earliest timer, or its delayed start) or until a signal or decision unparks it. A PROVISIONED run
 * parked is a delayed start. Parked runs are found by their wake time (a partial index).
 *
 * A run that waits does not hold a slot of USER_MAX_CONCURRENT_RUNS: the pause (`paused_at` set) counts as
 * an end in `user_run_ends`, the end of the pause takes it back, and a run that ends paused is not counted
 * a second time. Triggers, so that every statement that pauses or ends a run keeps the count right.
 */
export const waits: Migration = {
  name: '0031-waits',
  up: `
ALTER TABLE circuit_run_steps ADD COLUMN wait_for text CHECK (wait_for IN ('time', 'signal'));
ALTER TABLE circuit_run_steps ADD COLUMN schema jsonb;
ALTER TABLE circuit_run_steps DROP CONSTRAINT IF EXISTS circuit_run_steps_status_check;
ALTER TABLE circuit_run_steps ADD CONSTRAINT circuit_run_steps_status_check
  CHECK (status IN ('completed', 'waiting', 'approved', 'rejected', 'signaled', 'elapsed', 'timed_out'));
ALTER TABLE circuit_run_steps DROP CONSTRAINT IF EXISTS circuit_run_steps_on_timeout_check;
ALTER TABLE circuit_run_steps ADD CONSTRAINT circuit_run_steps_on_timeout_check
  CHECK (on_timeout IN ('approve', 'reject', 'fail', 'continue'));

ALTER TABLE circuit_runs ADD COLUMN parked_at timestamptz;
ALTER TABLE circuit_runs ADD COLUMN wake_at timestamptz;
CREATE INDEX circuit_runs_parked_wake ON circuit_runs (wake_at) WHERE parked_at IS NOT NULL;

ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_event_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_check
  CHECK (event IN ('start', 'step', 'waiting', 'completed'));

CREATE OR REPLACE FUNCTION user_run_pause_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.paused_at IS NULL AND NEW.paused_at IS NOT NULL THEN
    UPDATE user_run_ends SET ended = ended + 1 WHERE user_uid = NEW.user_uid;
  ELSIF OLD.paused_at IS NOT NULL AND NEW.paused_at IS NULL THEN
    UPDATE user_run_ends SET ended = ended - 1 WHERE user_uid = NEW.user_uid;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER circuit_runs_pause_slot AFTER UPDATE OF paused_at ON circuit_runs
  FOR EACH ROW WHEN (OLD.state = 'RUNNING' AND NEW.state = 'RUNNING' AND (OLD.paused_at IS NULL) <> (NEW.paused_at IS NULL))
  EXECUTE FUNCTION user_run_pause_slot();

DROP TRIGGER IF EXISTS circuit_runs_running_ended ON circuit_runs;
CREATE TRIGGER circuit_runs_running_ended AFTER UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN (OLD.state = 'RUNNING' AND NEW.state IS DISTINCT FROM 'RUNNING' AND OLD.paused_at IS NULL)
  EXECUTE FUNCTION user_run_ends_count();
DROP TRIGGER IF EXISTS circuit_runs_running_deleted ON circuit_runs;
CREATE TRIGGER circuit_runs_running_deleted AFTER DELETE ON circuit_runs
  FOR EACH ROW WHEN (OLD.state = 'RUNNING' AND OLD.paused_at IS NULL)
  EXECUTE FUNCTION user_run_ends_count();
`,
  down: `
DROP TRIGGER IF EXISTS circuit_runs_running_deleted ON circuit_runs;
CREATE TRIGGER circuit_runs_running_deleted AFTER DELETE ON circuit_runs
  FOR EACH ROW WHEN (OLD.state = 'RUNNING') EXECUTE FUNCTION user_run_ends_count();
DROP TRIGGER IF EXISTS circuit_runs_running_ended ON circuit_runs;
CREATE TRIGGER circuit_runs_running_ended AFTER UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN (OLD.state = 'RUNNING' AND NEW.state IS DISTINCT FROM 'RUNNING')
  EXECUTE FUNCTION user_run_ends_count();
DROP TRIGGER IF EXISTS circuit_runs_pause_slot ON circuit_runs;
DROP FUNCTION IF EXISTS user_run_pause_slot();
ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_event_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_check CHECK (event IN ('start', 'step', 'completed'));
DROP INDEX IF EXISTS circuit_runs_parked_wake;
ALTER TABLE circuit_runs DROP COLUMN IF EXISTS wake_at;
ALTER TABLE circuit_runs DROP COLUMN IF EXISTS parked_at;
ALTER TABLE circuit_run_steps DROP CONSTRAINT IF EXISTS circuit_run_steps_on_timeout_check;
ALTER TABLE circuit_run_steps ADD CONSTRAINT circuit_run_steps_on_timeout_check CHECK (on_timeout IN ('approve', 'reject'));
ALTER TABLE circuit_run_steps DROP CONSTRAINT IF EXISTS circuit_run_steps_status_check;
ALTER TABLE circuit_run_steps ADD CONSTRAINT circuit_run_steps_status_check
  CHECK (status IN ('completed', 'waiting', 'approved', 'rejected'));
ALTER TABLE circuit_run_steps DROP COLUMN IF EXISTS schema;
ALTER TABLE circuit_run_steps DROP COLUMN IF EXISTS wait_for;
`,
};
