import type { Migration } from './migration';

/**
 * A run that has ended never changes, so each API process may keep the rows a read of it needs (the
 * run and its circuit: src/runs/read-cache.ts). What could still make such a row stale
 * NOTIFYs `run_reads_changed`, and every process drops its whole cache on hearing it: any change to
 * circuits (a deprecation notice, a rename, a deletion), the deletion of runs (also cascaded from a
 * user, circuit or version), and — which should never happen — an update of a run that had ended.
 * Statement-level where it can be: a cascade that deletes many runs notifies once. Nothing on a run's
 * hot path (insert, claim, heartbeat, end) notifies.
 */
export const runReadsChanged: Migration = {
  name: '0015-run-reads-changed',
  up: `
CREATE FUNCTION run_reads_changed_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('run_reads_changed', '');
  RETURN NULL;
END $$;
CREATE TRIGGER circuits_run_reads_changed AFTER UPDATE OR DELETE ON circuits
  FOR EACH STATEMENT EXECUTE FUNCTION run_reads_changed_notify();
CREATE TRIGGER circuits_run_reads_changed_truncate AFTER TRUNCATE ON circuits
  FOR EACH STATEMENT EXECUTE FUNCTION run_reads_changed_notify();
CREATE TRIGGER circuit_runs_run_reads_changed_delete AFTER DELETE ON circuit_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_reads_changed_notify();
CREATE TRIGGER circuit_runs_run_reads_changed_truncate AFTER TRUNCATE ON circuit_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_reads_changed_notify();
CREATE TRIGGER circuit_runs_run_reads_changed_ended AFTER UPDATE ON circuit_runs
  FOR EACH ROW WHEN (OLD.state IN ('COMPLETED', 'EXCEPTION')) EXECUTE FUNCTION run_reads_changed_notify();
`,
  down: `
DROP TRIGGER circuit_runs_run_reads_changed_ended ON circuit_runs;
DROP TRIGGER circuit_runs_run_reads_changed_truncate ON circuit_runs;
DROP TRIGGER circuit_runs_run_reads_changed_delete ON circuit_runs;
DROP TRIGGER circuits_run_reads_changed_truncate ON circuits;
DROP TRIGGER circuits_run_reads_changed ON circuits;
DROP FUNCTION run_reads_changed_notify();
`,
};
