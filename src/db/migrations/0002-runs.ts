import type { Migration } from './migration';

/**
 * Runs, the credit ledger and idempotency keys.
 *
 * A run's state only moves forward: every transition is one guarded UPDATE in
 * src/runs/transitions.ts. `attempt` and `heartbeat_at` fence executions: a worker owns a RUNNING
 * run while its heartbeat is fresh, and only the attempt that claimed it may end it.
 * `failure_reason` is for the owner's logs and never leaves the service.
 *
 * The Agenda job table is created here too (same DDL as @agendajs/postgres-backend), so that several
 * processes starting at once on one database do not race each other creating it.
 */
export const runs: Migration = {
  name: '0002-runs',
  up: `
CREATE TABLE circuit_runs (
  uid uuid PRIMARY KEY,
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  circuit_uid uuid NOT NULL REFERENCES circuits(uid) ON DELETE CASCADE,
  circuit_version_uid uuid NOT NULL REFERENCES circuit_versions(uid) ON DELETE CASCADE,
  state text NOT NULL DEFAULT 'PROVISIONED' CHECK (state IN ('PROVISIONED', 'RUNNING', 'COMPLETED', 'EXCEPTION')),
  is_public boolean NOT NULL DEFAULT false,
  input jsonb NOT NULL,
  result_blob jsonb,
  metrics jsonb,
  failure_reason text,
  credits_cost bigint,
  attempt integer NOT NULL DEFAULT 0,
  enqueued_at timestamptz,
  heartbeat_at timestamptz,
  started_at timestamptz,
  ended_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((state IN ('COMPLETED', 'EXCEPTION')) = (ended_at IS NOT NULL)),
  CHECK (result_blob IS NULL OR state = 'COMPLETED')
);
CREATE INDEX circuit_runs_public_by_version_idx ON circuit_runs (circuit_version_uid, created_at DESC)
  WHERE state = 'COMPLETED' AND is_public;
CREATE INDEX circuit_runs_public_by_circuit_idx ON circuit_runs (circuit_uid, created_at DESC)
  WHERE state = 'COMPLETED' AND is_public;
CREATE INDEX circuit_runs_in_flight_idx ON circuit_runs (state, created_at)
  WHERE state IN ('PROVISIONED', 'RUNNING');
CREATE INDEX circuit_runs_user_idx ON circuit_runs (user_uid, created_at DESC);

-- Exactly one charge per run, written in the transaction that ends it.
CREATE TABLE credit_ledger (
  uid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  run_uid uuid NOT NULL UNIQUE REFERENCES circuit_runs(uid) ON DELETE CASCADE,
  cost bigint NOT NULL CHECK (cost >= 0),
  amount bigint NOT NULL CHECK (amount >= 0),
  balance_after bigint NOT NULL CHECK (balance_after >= 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_ledger_user_idx ON credit_ledger (user_uid, created_at DESC);

-- Idempotency-Key: the same caller and key within 24 hours names the same run.
CREATE TABLE idempotency_keys (
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  key text NOT NULL,
  request_hash text NOT NULL,
  run_uid uuid NOT NULL REFERENCES circuit_runs(uid) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_uid, key)
);

CREATE TABLE IF NOT EXISTS agenda_jobs (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  name VARCHAR(255) NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  next_run_at TIMESTAMPTZ,
  type VARCHAR(10) NOT NULL DEFAULT 'normal' CHECK (type IN ('normal', 'single')),
  locked_at TIMESTAMPTZ,
  last_finished_at TIMESTAMPTZ,
  failed_at TIMESTAMPTZ,
  fail_count INTEGER DEFAULT NULL,
  fail_reason TEXT,
  repeat_timezone VARCHAR(100),
  last_run_at TIMESTAMPTZ,
  repeat_interval VARCHAR(255),
  data JSONB DEFAULT '{}'::jsonb,
  repeat_at VARCHAR(255),
  disabled BOOLEAN DEFAULT FALSE,
  progress REAL,
  fork BOOLEAN DEFAULT FALSE,
  last_modified_by VARCHAR(255),
  debounce_started_at TIMESTAMPTZ,
  start_date TIMESTAMPTZ,
  end_date TIMESTAMPTZ,
  skip_days JSONB,
  created_at TIMESTAMPTZ DEFAULT NOW(),
  updated_at TIMESTAMPTZ DEFAULT NOW()
);
CREATE INDEX IF NOT EXISTS agenda_jobs_find_and_lock_idx
  ON agenda_jobs (name, next_run_at, priority DESC, locked_at, disabled) WHERE disabled = FALSE;
CREATE UNIQUE INDEX IF NOT EXISTS agenda_jobs_single_job_idx ON agenda_jobs (name) WHERE type = 'single';
CREATE INDEX IF NOT EXISTS agenda_jobs_locked_at_idx ON agenda_jobs (locked_at) WHERE locked_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS agenda_jobs_next_run_at_idx ON agenda_jobs (next_run_at) WHERE next_run_at IS NOT NULL;
CREATE OR REPLACE FUNCTION update_agenda_jobs_updated_at() RETURNS TRIGGER AS $$
BEGIN
  NEW.updated_at = NOW();
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS "agenda_jobs_updated_at_trigger" ON agenda_jobs;
CREATE TRIGGER "agenda_jobs_updated_at_trigger" BEFORE UPDATE ON agenda_jobs
  FOR EACH ROW EXECUTE FUNCTION update_agenda_jobs_updated_at();
`,
};
