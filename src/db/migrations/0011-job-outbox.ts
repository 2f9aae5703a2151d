import type { Migration } from './migration';

/**
 * The job outbox (src/queue/job-outbox.ts): with a job store outside PostgreSQL (MongoDB), the statement
 * that inserts a run inserts its row here too, so an accepted run always has a durable "job due" record
 * until a relay has handed it to the job store. Empty with the PostgreSQL job store.
 */
export const jobOutbox: Migration = {
  name: '0011-job-outbox',
  up: `
CREATE TABLE run_job_outbox (
  run_uid uuid PRIMARY KEY REFERENCES circuit_runs(uid) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX run_job_outbox_created_idx ON run_job_outbox(created_at);
`,
  down: 'DROP TABLE run_job_outbox;',
};
