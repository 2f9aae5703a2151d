import type { Migration } from './migration';

/**
 * Run control: failure details, the event log, cancel, deadlines, poison-run containment (docs/runs.md).
 *
 * - `error`: {code, message, step_id?} of an EXCEPTION run, shown to its owner only.
 * - `deadline_at`: past it the run ends EXCEPTION DeadlineExceeded (by its worker, or by the sweeper
 *   when the worker died). NULL = the service default counted from `created_at`.
 * - `cancel_requested_at`: set by a cancel; a worker that claims or runs the run stops it.
 * - `worker`: which worker process holds a RUNNING run (`host:pid`, for operators and tests), and
 *   `worker_backend_pid`: the PostgreSQL backend of that worker's presence connection. A run is taken
 *   over only when its heartbeat is stale AND that backend is gone, so a worker that is alive but slow
 *   to heartbeat (a blocked event loop) never has its run executed twice.
 * - The event log: `circuit_run_events`, `seq` gap-free from 1 per run, counted by
 *   `circuit_runs.event_seq` (raised under the run's row lock, in the transaction that inserts the
 *   events). State events are written by triggers inside the very statement that changes the state,
 *   whoever issues it (insert: PROVISIONED; every later state change).
 */
export const runControl: Migration = {
  name: '0005-run-control',
  up: `
ALTER TABLE circuit_runs
  ADD COLUMN error jsonb,
  ADD COLUMN deadline_at timestamptz,
  ADD COLUMN cancel_requested_at timestamptz,
  ADD COLUMN worker text,
  ADD COLUMN worker_backend_pid integer,
  ADD COLUMN event_seq integer NOT NULL DEFAULT 0,
  ADD CONSTRAINT circuit_runs_error_only_on_exception CHECK (error IS NULL OR state = 'EXCEPTION');

CREATE TABLE circuit_run_events (
  run_uid uuid NOT NULL REFERENCES circuit_runs(uid) ON DELETE CASCADE,
  seq integer NOT NULL CHECK (seq >= 1),
  kind text NOT NULL CHECK (kind IN ('state', 'step', 'output')),
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_uid, seq)
);
-- Retention deletes step/output events by age (state events stay): only those are indexed by time.
CREATE INDEX circuit_run_events_prunable_idx ON circuit_run_events (created_at) WHERE kind <> 'state';

-- Existing runs get their current state as event 1.
UPDATE circuit_runs SET event_seq = 1;
INSERT INTO circuit_run_events (run_uid, seq, kind, data, created_at)
  SELECT uid, 1, 'state', jsonb_build_object('state', state), COALESCE(ended_at, started_at, created_at) FROM circuit_runs;

CREATE FUNCTION circuit_run_state_seq() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.event_seq := 1;
  ELSE
    NEW.event_seq := OLD.event_seq + 1;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION circuit_run_state_event() RETURNS trigger AS $$
BEGIN
  INSERT INTO circuit_run_events (run_uid, seq, kind, data) VALUES (NEW.uid, NEW.event_seq, 'state', jsonb_build_object('state', NEW.state));
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

-- The seq is taken in the row change itself (BEFORE); the event row follows it (AFTER, for the foreign key).
CREATE TRIGGER circuit_runs_state_seq_insert BEFORE INSERT ON circuit_runs
  FOR EACH ROW EXECUTE FUNCTION circuit_run_state_seq();
CREATE TRIGGER circuit_runs_state_seq_update BEFORE UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION circuit_run_state_seq();
CREATE TRIGGER circuit_runs_state_event_insert AFTER INSERT ON circuit_runs
  FOR EACH ROW EXECUTE FUNCTION circuit_run_state_event();
CREATE TRIGGER circuit_runs_state_event_update AFTER UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION circuit_run_state_event();
`,
  down: `
DROP TRIGGER IF EXISTS circuit_runs_state_event_update ON circuit_runs;
DROP TRIGGER IF EXISTS circuit_runs_state_event_insert ON circuit_runs;
DROP TRIGGER IF EXISTS circuit_runs_state_seq_update ON circuit_runs;
DROP TRIGGER IF EXISTS circuit_runs_state_seq_insert ON circuit_runs;
DROP FUNCTION IF EXISTS circuit_run_state_event();
DROP FUNCTION IF EXISTS circuit_run_state_seq();
DROP TABLE IF EXISTS circuit_run_events;
ALTER TABLE circuit_runs DROP CONSTRAINT IF EXISTS circuit_runs_error_only_on_exception,
  DROP COLUMN IF EXISTS error, DROP COLUMN IF EXISTS deadline_at, DROP COLUMN IF EXISTS cancel_requested_at,
  DROP COLUMN IF EXISTS worker, DROP COLUMN IF EXISTS worker_backend_pid, DROP COLUMN IF EXISTS event_seq;
`,
};
