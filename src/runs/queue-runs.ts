import { enqueueBySql } from '../queue/agenda';
import type { RunDeps } from './ports';

/** Queues the jobs of runs already marked queued: in one statement where the job store queues in SQL, else one by one. */
export async function queueRuns(deps: Pick<RunDeps, 'sequelize' | 'queue'>, uids: readonly string[]): Promise<void> {
  if (uids.length === 0) return;
  if (deps.queue.sqlEnqueue) await enqueueBySql(deps.sequelize, deps.queue.sqlEnqueue, uids);
  else for (const uid of uids) await deps.queue.enqueue(uid);
}
