import type { Migration } from './migration';

/**
 * Bulk cancel and replay by filter (docs/runs.md, Cancel and replay by filter).
 *
 * `idempotency_keys` also names the answer of a bulk action (`answer`, set once the action is done; null while
 * it runs), which has no one run: `run_uid` is null for those. A replay by filter forms a batch whose runs may
 * be of several circuits: `circuit_batches.circuit_uid` is then null.
 */
export const bulkRunActions: Migration = {
  name: '0033-bulk-run-actions',
  up: `
ALTER TABLE idempotency_keys ALTER COLUMN run_uid DROP NOT NULL;
ALTER TABLE idempotency_keys ADD COLUMN answer jsonb;
ALTER TABLE circuit_batches ALTER COLUMN circuit_uid DROP NOT NULL;
`,
  down: `
DELETE FROM circuit_batches WHERE circuit_uid IS NULL;
ALTER TABLE circuit_batches ALTER COLUMN circuit_uid SET NOT NULL;
DELETE FROM idempotency_keys WHERE run_uid IS NULL;
ALTER TABLE idempotency_keys DROP COLUMN IF EXISTS answer;
ALTER TABLE idempotency_keys ALTER COLUMN run_uid SET NOT NULL;
`,
};
