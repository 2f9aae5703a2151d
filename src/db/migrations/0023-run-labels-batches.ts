import type { Migration } from './migration';

/**
 * docs/batches-and-budgets.md: a run's caller-side `tags` and `metadata` (filtered through GIN indexes, scoped to the
 * caller's own runs), the batch it was submitted in (`batch_uid`, listed through its own index) and
 * its spend cap (`max_credits`, null: none). `circuit_batches` is a batch's header; its counts are
 * read off its runs.
 */
export const runLabelsBatches: Migration = {
  name: '0023-run-labels-batches',
  up: `
CREATE TABLE circuit_batches (
  uid uuid PRIMARY KEY,
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  circuit_uid uuid NOT NULL,
  total integer NOT NULL,
  canceled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE circuit_runs
  ADD COLUMN tags text[],
  ADD COLUMN metadata jsonb,
  ADD COLUMN batch_uid uuid,
  ADD COLUMN max_credits bigint;
CREATE INDEX circuit_runs_tags ON circuit_runs USING gin (tags) WHERE tags IS NOT NULL;
CREATE INDEX circuit_runs_metadata ON circuit_runs USING gin (metadata jsonb_path_ops) WHERE metadata IS NOT NULL;
CREATE INDEX circuit_runs_batch ON circuit_runs (batch_uid, created_at DESC, uid DESC) WHERE batch_uid IS NOT NULL;
`,
};
