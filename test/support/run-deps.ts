import type { RunningApp } from '../../src/app';
import type { RunDeps } from '../../src/runs/ports';
import { createRunService } from '../../src/runs/run-service';
import { RunLifecycle } from '../../src/runs/run-lifecycle';
import { runTracer } from '../../src/run-telemetry';

/**
 * What the run wing's own files receive, built from a running app's pieces, for tests that drive the
 * wing's internals by hand (claim, record, end) as a worker would. Its batchers and lifecycle are its
 * own (no subscribers): the app's wing is reached only through its front door.
 */
export function runDeps(app: RunningApp): RunDeps {
  const { config, sequelize, log, schemas, sandbox } = app.services;
  const { queue, bus } = app.runtime;
  return {
    config,
    sequelize,
    log,
    queue,
    bus,
    schemas,
    sandbox,
    tracer: runTracer(),
    runService: createRunService(sequelize, queue, bus.sqlChannel),
    lifecycle: new RunLifecycle(log),
  };
}
