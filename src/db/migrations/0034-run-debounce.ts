import type { Migration } from './migration';

/**
 * Debounce (docs/runs.md, Debounce): `debounce_key`, a run's rendered key under its version's `debounce`. While
 * its window is open the run is PROVISIONED and parked until the window's end (`wake_at`); a query of the same
 * caller, version and key finds it through this index and replaces its input instead of making a run.
 */
export const runDebounce: Migration = {
  name: '0034-run-debounce',
  up: `
ALTER TABLE circuit_runs ADD COLUMN debounce_key text;
CREATE INDEX circuit_runs_debounce ON circuit_runs (user_uid, circuit_version_uid, debounce_key)
  WHERE debounce_key IS NOT NULL AND state = 'PROVISIONED' AND parked_at IS NOT NULL;
`,
  down: `
DROP INDEX IF EXISTS circuit_runs_debounce;
ALTER TABLE circuit_runs DROP COLUMN IF EXISTS debounce_key;
`,
};
