import type { EngineDeps } from '../engine/ports';
import type { Services } from '../services';

/**
 * The engine's deps out of the run wing's services: the model clients are the run service's pool, and
 * the steps the engine executes are timed in this thread's run metrics.
 */
export function engineDepsOf(services: Services): EngineDeps {
  const { log, config, blobStorage, schemas, sandbox, runs, runMetrics } = services;
  return {
    log, config, blobStorage, schemas, sandbox,
    modelClients: runs.llmClients,
    observer: { stepEnded: (kind, startedAt, endedAt) => runMetrics.stepEnded(kind, startedAt, endedAt) },
  };
}
