import type { RunningApp } from '../../src/app';
import type { EngineConfig, EngineDeps } from '../../src/engine/ports';

/** The engine's deps built from a running app's pieces, for tests that execute definitions by hand; `config` overrides settings. */
export function engineDeps(app: RunningApp, config: Partial<EngineConfig> = {}): EngineDeps {
  const { log, blobStorage, sandbox, schemas } = app.services;
  return {
    config: { ...app.services.config, ...config },
    log,
    blobStorage,
    sandbox,
    schemas,
    modelClients: new Map(),
    observer: app.runtime.runMetrics,
  };
}
