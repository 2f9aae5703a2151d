import type { SqlEnqueue } from '../queue/agenda';
import type { RunDeps } from './ports';
import { queueRuns } from './queue-runs';

/**
 * Waking a run whose wait a signal or a decision resolved, in the statement that records it. That
 * statement locks the run first in a CTE `target(uid, parked)` (`parked`: a RUNNING run that is only a
 * row), resolves the wait in a CTE `resolved` (no row: nothing was resolved), and ends with the pieces
 * below: the run row is touched (a cached read of it must not be served stale) and, when parked,
 * unparked and its job queued — any worker takes it on from its journal. A run a worker holds in memory
 * hears a wake message instead (wakeHeard).
 */
export function wakeInStatement(sqlEnqueue: SqlEnqueue | undefined): { ctes: string; columns: string } {
  const touched = `touched AS (
  UPDATE circuit_runs r
     SET updated_at = now(),
         parked_at = CASE WHEN target.parked THEN NULL ELSE r.parked_at END,
         wake_at = CASE WHEN target.parked THEN NULL ELSE r.wake_at END,
         enqueued_at = CASE WHEN target.parked THEN now() ELSE r.enqueued_at END
    FROM target WHERE r.uid = target.uid AND EXISTS (SELECT 1 FROM resolved)
  RETURNING r.uid, target.parked
), run AS (SELECT uid FROM touched WHERE parked)`;
  if (!sqlEnqueue) return { ctes: touched, columns: `(SELECT count(*) FROM run)::int AS woken, 0 AS queued` };
  return {
    ctes: `${touched}, job AS (${sqlEnqueue.jobCte})`,
    columns: `(SELECT count(*) FROM run)::int AS woken, (SELECT count(${sqlEnqueue.notifyColumn}) FROM job)::int AS queued`,
  };
}

/** What wakeInStatement's columns said. */
export interface WakeOutcome {
  woken: number;
  queued: number;
}

/** After the statement: a run held in memory hears its wake message; a woken run without a SQL job store is queued here. */
export async function wakeHeard(
  deps: Pick<RunDeps, 'sequelize' | 'queue' | 'bus'>,
  uid: string,
  outcome: WakeOutcome,
): Promise<void> {
  if (!outcome.woken) await deps.bus.publish({ uid, wake: true });
  else if (!outcome.queued) await queueRuns(deps, [uid]);
}
