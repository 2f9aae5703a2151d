import type { RunningApp } from '../../src/app';
import type { Services as EngineServices } from '../../src/services';

// engine deps: replaced when w-engine lands.
/** What the engine's `ExecutionContext.services` holds, built from a running app's pieces, for tests that execute definitions by hand. */
export function engineServices(app: RunningApp, config: EngineServices['config'] = app.services.config): EngineServices {
  const { log, blobStorage, sandbox, schemas } = app.services;
  return { config, log, blobStorage, sandbox, schemas, runMetrics: app.runtime.runMetrics, runs: { llmClients: new Map() } };
}
