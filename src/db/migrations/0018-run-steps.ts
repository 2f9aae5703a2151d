import type { Migration } from './migration';

/**
 * Runs that wait (docs/runs.md). `circuit_run_steps` is each run's durable step record: a step with an
 * effect outside the run (http, llm, blob, circuit) is written here as it completes, so an attempt
 * after a worker's death reuses its output instead of calling upstream again (Durable steps); an approval step
 * (Approvals) is a row from the moment it starts waiting until a person (or its timeout) decides.
 * `path` is the step id, prefixed by the embedding step ids inside embedded runs (`outer/inner`).
 * `circuit_runs.paused_at`: since when an approval has held the run; the deadline does not run meanwhile.
 * `circuit_runs.handed_back`: attempts that a stopping worker gave back unfinished (a restart, not a
 * crash), which poison containment (MAX_WORKER_LOSSES, src/runs/transitions.ts) does not count.
 */
export const runSteps: Migration = {
  name: '0018-run-steps',
  up: `
CREATE TABLE circuit_run_steps (
  run_uid uuid NOT NULL REFERENCES circuit_runs(uid) ON DELETE CASCADE,
  path text NOT NULL,
  kind text NOT NULL,
  status text NOT NULL CHECK (status IN ('completed', 'waiting', 'approved', 'rejected')),
  attempt integer NOT NULL,
  output jsonb,
  credits integer NOT NULL DEFAULT 0,
  usage jsonb,
  started_at timestamptz NOT NULL,
  ended_at timestamptz,
  prompt text,
  expires_at timestamptz,
  on_timeout text CHECK (on_timeout IN ('approve', 'reject')),
  decision jsonb,
  PRIMARY KEY (run_uid, path)
);
ALTER TABLE circuit_runs ADD COLUMN paused_at timestamptz;
ALTER TABLE circuit_runs ADD COLUMN handed_back integer NOT NULL DEFAULT 0;
`,
  down: `
ALTER TABLE circuit_runs DROP COLUMN handed_back;
ALTER TABLE circuit_runs DROP COLUMN paused_at;
DROP TABLE circuit_run_steps;
`,
};
