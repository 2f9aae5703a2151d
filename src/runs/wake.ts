import type { RunDeps } from './ports';
import { queueRuns } from './queue-runs';
import { wakeParkedRun } from './transitions';

/**
 * After a signal or decision resolved one of a run's waits: a parked run is unparked and queued (any worker
 * takes it on from its journal); a run a worker holds in memory hears a wake message instead.
 */
export async function wakeRun(deps: Pick<RunDeps, 'sequelize' | 'queue' | 'bus'>, uid: string): Promise<void> {
  if (await wakeParkedRun(deps.sequelize, uid)) await queueRuns(deps, [uid]);
  else await deps.bus.publish({ uid, wake: true });
}
