import type { Migration } from './migration';

/**
 * A resumed run takes its slots back through the claim, and a key's slot rows go with its last run
 * (docs/fairness.md, Key slots; docs/runs.md, Concurrency keys).
 *
 * The end of a pause (`paused_at` cleared) no longer takes the run's slots back by subtracting from
 * `user_run_ends` and `run_key_ends`: that took a slot whatever the limit, and a claim reading the ends row
 * without a lock could miss the subtraction and count one run too few. The statement that ends a pause (the
 * claim statement, or the resume of a run its worker holds, src/runs/transitions.ts) locks the slot rows and adds
 * to `claimed`, like any claim, and turns the run away when no slot is free. Start of a pause: as before.
 *
 * `run_key_ends.in_flight` counts a key's runs not yet ended (PROVISIONED or RUNNING): admission adds to it, a trigger
 * takes off each that ends or is deleted. Both lock the ends row, so when the trigger sees it reach 0 no run of the
 * key can be admitted until it commits, and it deletes the key's two rows (the slots row only when no claim holds
 * it: SKIP LOCKED, so an end never waits for a claim). A key used once therefore keeps no rows once its runs ended.
 */
export const resumedRunsClaimSlots: Migration = {
  name: '0036-resumed-runs-claim-slots',
  up: `
ALTER TABLE run_key_ends ADD COLUMN in_flight bigint NOT NULL DEFAULT 0;
UPDATE run_key_ends e SET in_flight = a.n
  FROM (SELECT concurrency_key, count(*) AS n FROM circuit_runs
         WHERE concurrency_key IS NOT NULL AND state IN ('PROVISIONED', 'RUNNING') GROUP BY concurrency_key) a
 WHERE a.concurrency_key = e.key;
DELETE FROM run_key_slots s USING run_key_ends e WHERE e.key = s.key AND e.in_flight = 0 AND s.claimed = e.ended;
DELETE FROM run_key_ends e WHERE e.in_flight = 0 AND NOT EXISTS (SELECT 1 FROM run_key_slots s WHERE s.key = e.key);

CREATE OR REPLACE FUNCTION user_run_pause_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE user_run_ends SET ended = ended + 1 WHERE user_uid = NEW.user_uid;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS circuit_runs_pause_slot ON circuit_runs;
CREATE TRIGGER circuit_runs_pause_slot AFTER UPDATE OF paused_at ON circuit_runs
  FOR EACH ROW WHEN (OLD.state = 'RUNNING' AND NEW.state = 'RUNNING' AND OLD.paused_at IS NULL AND NEW.paused_at IS NOT NULL)
  EXECUTE FUNCTION user_run_pause_slot();

CREATE OR REPLACE FUNCTION run_key_pause_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_key_ends SET ended = ended + 1 WHERE key = NEW.concurrency_key;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS circuit_runs_key_pause ON circuit_runs;
CREATE TRIGGER circuit_runs_key_pause AFTER UPDATE OF paused_at ON circuit_runs
  FOR EACH ROW WHEN (NEW.concurrency_key IS NOT NULL AND OLD.state = 'RUNNING' AND NEW.state = 'RUNNING'
                     AND OLD.paused_at IS NULL AND NEW.paused_at IS NOT NULL)
  EXECUTE FUNCTION run_key_pause_slot();

CREATE OR REPLACE FUNCTION run_key_ends_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  freed int := 0;
  left_in_flight bigint;
  ended_now bigint;
BEGIN
  IF OLD.state = 'RUNNING' AND OLD.paused_at IS NULL THEN
    freed := 1;
  END IF;
  UPDATE run_key_ends SET ended = ended + freed, in_flight = in_flight - 1 WHERE key = OLD.concurrency_key
  RETURNING in_flight, ended INTO left_in_flight, ended_now;
  IF left_in_flight <= 0 THEN
    DELETE FROM run_key_slots s
     WHERE s.key = OLD.concurrency_key AND s.claimed = ended_now
       AND s.key IN (SELECT l.key FROM run_key_slots l WHERE l.key = OLD.concurrency_key FOR UPDATE SKIP LOCKED);
    IF FOUND THEN
      DELETE FROM run_key_ends WHERE key = OLD.concurrency_key;
    END IF;
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS circuit_runs_key_ended ON circuit_runs;
CREATE TRIGGER circuit_runs_key_ended AFTER UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN (OLD.concurrency_key IS NOT NULL AND OLD.state IN ('PROVISIONED', 'RUNNING')
                     AND NEW.state IN ('COMPLETED', 'EXCEPTION'))
  EXECUTE FUNCTION run_key_ends_count();
DROP TRIGGER IF EXISTS circuit_runs_key_deleted ON circuit_runs;
CREATE TRIGGER circuit_runs_key_deleted AFTER DELETE ON circuit_runs
  FOR EACH ROW WHEN (OLD.concurrency_key IS NOT NULL AND OLD.state IN ('PROVISIONED', 'RUNNING'))
  EXECUTE FUNCTION run_key_ends_count();
`,
  down: `
DROP TRIGGER IF EXISTS circuit_runs_key_deleted ON circuit_runs;
DROP TRIGGER IF EXISTS circuit_runs_key_ended ON circuit_runs;
CREATE OR REPLACE FUNCTION run_key_ends_count() RETURNS trigger LANGUAGE plpgsql AS $$
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

DROP TRIGGER IF EXISTS circuit_runs_key_pause ON circuit_runs;
CREATE OR REPLACE FUNCTION run_key_pause_slot() RETURNS trigger LANGUAGE plpgsql AS $$
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

DROP TRIGGER IF EXISTS circuit_runs_pause_slot ON circuit_runs;
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

INSERT INTO run_key_slots (key) SELECT DISTINCT concurrency_key FROM circuit_runs
 WHERE concurrency_key IS NOT NULL AND state IN ('PROVISIONED', 'RUNNING') ON CONFLICT DO NOTHING;
INSERT INTO run_key_ends (key) SELECT DISTINCT concurrency_key FROM circuit_runs
 WHERE concurrency_key IS NOT NULL AND state IN ('PROVISIONED', 'RUNNING') ON CONFLICT DO NOTHING;
ALTER TABLE run_key_ends DROP COLUMN IF EXISTS in_flight;
`,
};
