import type { Migration } from './migration';

/**
 * Concurrency keys (docs/runs.md, Concurrency keys; docs/fairness.md, Key slots): a version's `concurrency`
 * holds its circuit to `limit` RUNNING runs per rendered key, across every worker.
 *
 * `circuit_runs.concurrency_key` is the run's slot key (its circuit's uid and its rendered key) and
 * `concurrency_limit` the limit of its version; both null for a run without one. A key's RUNNING runs are
 * `run_key_slots.claimed` minus `run_key_ends.ended`, as a user's are in `user_run_slots`/`user_run_ends`
 * (migration 0024): the claim statement locks the key's slots row and adds what it claims; triggers count every
 * run of the key leaving RUNNING (or deleted while running) in the ends row, which no claim locks, so an end never
 * waits for a claim. A run that starts waiting (`paused_at` set: a wait step, an approval; a parked run is paused)
 * gives its key slot back the same way, and takes it again when the pause ends. The rows of a key are made by the
 * statement that admits its first run.
 */
export const concurrencyKeys: Migration = {
  name: '0035-concurrency-keys',
  up: `
ALTER TABLE circuit_runs ADD COLUMN concurrency_key text;
ALTER TABLE circuit_runs ADD COLUMN concurrency_limit integer;
CREATE TABLE run_key_slots (
  key text PRIMARY KEY,
  claimed bigint NOT NULL DEFAULT 0
);
CREATE TABLE run_key_ends (
  key text PRIMARY KEY,
  ended bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION run_key_ends_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_key_ends SET ended = ended + 1 WHERE key = OLD.concurrency_key;
  RETURN NULL;
END $$;
CREATE TRIGGER circuit_runs_key_ended AFTER UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN (OLD.concurrency_key IS NOT NULL AND OLD.state = 'RUNNING' AND NEW.state IS DISTINCT FROM 'RUNNING' AND OLD.paused_at IS NULL)
  EXECUTE FUNCTION run_key_ends_count();
CREATE TRIGGER circuit_runs_key_deleted AFTER DELETE ON circuit_runs
  FOR EACH ROW WHEN (OLD.concurrency_key IS NOT NULL AND OLD.state = 'RUNNING' AND OLD.paused_at IS NULL)
  EXECUTE FUNCTION run_key_ends_count();

CREATE FUNCTION run_key_pause_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.paused_at IS NULL AND NEW.paused_at IS NOT NULL THEN
    UPDATE run_key_ends SET ended = ended + 1 WHERE key = NEW.concurrency_key;
  ELSIF OLD.paused_at IS NOT NULL AND NEW.paused_at IS NULL THEN
    UPDATE run_key_ends SET ended = ended - 1 WHERE key = NEW.concurrency_key;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER circuit_runs_key_pause AFTER UPDATE OF paused_at ON circuit_runs
  FOR EACH ROW WHEN (NEW.concurrency_key IS NOT NULL AND OLD.state = 'RUNNING' AND NEW.state = 'RUNNING'
                     AND (OLD.paused_at IS NULL) <> (NEW.paused_at IS NULL))
  EXECUTE FUNCTION run_key_pause_slot();
`,
  down: `
DROP TRIGGER IF EXISTS circuit_runs_key_pause ON circuit_runs;
DROP FUNCTION IF EXISTS run_key_pause_slot();
DROP TRIGGER IF EXISTS circuit_runs_key_deleted ON circuit_runs;
DROP TRIGGER IF EXISTS circuit_runs_key_ended ON circuit_runs;
DROP FUNCTION IF EXISTS run_key_ends_count();
DROP TABLE IF EXISTS run_key_ends;
DROP TABLE IF EXISTS run_key_slots;
ALTER TABLE circuit_runs DROP COLUMN IF EXISTS concurrency_limit;
ALTER TABLE circuit_runs DROP COLUMN IF EXISTS concurrency_key;
`,
};
