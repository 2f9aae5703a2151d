import type { Migration } from './migration';

/**
 * Signed webhooks and schedules (docs/webhooks-and-schedules.md).
 *
 * A run's `webhook_url` and `webhook_events` are stored with the run (set by the statement that
 * inserts it). The `start` and `completed` deliveries are written by a trigger in the very
 * transaction that moves the run to RUNNING or to a terminal state, so a worker that dies right
 * after a run ends cannot lose its delivery: the delivery row exists, and a sweeper queues any row
 * whose job never ran (src/webhooks/sweeper.ts). Each row is one message (its uid is the
 * `webhook-id`); `webhook_attempts` records every attempt at it.
 *
 * A schedule fires through one Agenda repeating job (data.scheduleUid); the unique index keeps two
 * processes saving the same schedule at once from creating two jobs.
 */
export const webhooksSchedules: Migration = {
  name: '0007-webhooks-schedules',
  up: `
ALTER TABLE circuit_runs
  ADD COLUMN webhook_url text,
  ADD COLUMN webhook_events text[];

CREATE TABLE webhook_secrets (
  user_uid uuid PRIMARY KEY REFERENCES users(uid) ON DELETE CASCADE,
  secret text NOT NULL CHECK (secret ~ '^whsec_[A-Za-z0-9+/=]+$'),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
  uid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  run_uid uuid NOT NULL REFERENCES circuit_runs(uid) ON DELETE CASCADE,
  event text NOT NULL CHECK (event IN ('start', 'step', 'completed')),
  -- For step events: "<step_id>:<status>", so each step event is one message; '' otherwise.
  step_key text NOT NULL DEFAULT '',
  step jsonb,
  url text NOT NULL,
  -- The signed body, fixed by the first attempt so every retry sends the same message.
  body text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (run_uid, event, step_key)
);
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE webhook_attempts (
  delivery_uid uuid NOT NULL REFERENCES webhook_deliveries(uid) ON DELETE CASCADE,
  attempt integer NOT NULL,
  status_code integer,
  error text,
  delivered_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (delivery_uid, attempt)
);

CREATE FUNCTION circuit_runs_webhook_outbox() RETURNS trigger AS $$
BEGIN
  IF NEW.state = 'RUNNING' AND 'start' = ANY (NEW.webhook_events) THEN
    INSERT INTO webhook_deliveries (run_uid, event, url) VALUES (NEW.uid, 'start', NEW.webhook_url) ON CONFLICT DO NOTHING;
  ELSIF NEW.state IN ('COMPLETED', 'EXCEPTION') AND 'completed' = ANY (NEW.webhook_events) THEN
    INSERT INTO webhook_deliveries (run_uid, event, url) VALUES (NEW.uid, 'completed', NEW.webhook_url) ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER circuit_runs_webhook_outbox AFTER UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN (NEW.webhook_url IS NOT NULL AND NEW.state IS DISTINCT FROM OLD.state)
  EXECUTE FUNCTION circuit_runs_webhook_outbox();

CREATE TABLE circuit_schedules (
  uid uuid PRIMARY KEY,
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  circuit_uid uuid NOT NULL REFERENCES circuits(uid) ON DELETE CASCADE,
  cron text NOT NULL,
  timezone text NOT NULL,
  input jsonb NOT NULL,
  version_uid uuid REFERENCES circuit_versions(uid) ON DELETE CASCADE,
  is_public boolean NOT NULL DEFAULT false,
  is_paused boolean NOT NULL DEFAULT false,
  last_run_uid uuid REFERENCES circuit_runs(uid) ON DELETE SET NULL,
  last_fired_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX circuit_schedules_circuit_idx ON circuit_schedules (circuit_uid, created_at);

CREATE UNIQUE INDEX agenda_jobs_schedule_idx ON agenda_jobs ((data->>'scheduleUid')) WHERE name = 'fireSchedule';
`,
};
