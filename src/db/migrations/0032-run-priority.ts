import type { Migration } from './migration';

/**
 * A run's `priority` (0–9, default 5; docs/runs.md, Priority): among one user's runs waiting for a slot,
 * higher priorities are claimed first. It orders a user's own runs only (the claim statement and the wake of
 * waiting runs rank per user), never one user against another. A constant default: no table rewrite.
 */
export const runPriority: Migration = {
  name: '0032-run-priority',
  up: `
ALTER TABLE circuit_runs ADD COLUMN priority smallint NOT NULL DEFAULT 5 CHECK (priority BETWEEN 0 AND 9);
`,
  down: `
ALTER TABLE circuit_runs DROP COLUMN IF EXISTS priority;
`,
};
