import type { Sequelize } from 'sequelize';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { RunQueue } from '../queue/agenda';
import type { JsonSchemaService } from '../engine/json-schemas';
import type { ExecutionContext } from '../engine/steps/types';
import type { Sandbox } from '../sandbox/sandbox';
import type { RunError, RunState } from '../domain/runs';
import type { RunEventBus } from './events/bus';
import type { RunService } from './run-service';
import type { RunLifecycle } from './run-lifecycle';

/** The settings the run wing reads. */
export type RunConfig = Pick<
  Config,
  | 'httpStepAllowPrivate'
  | 'jobLockLifetimeMs'
  | 'runDeadlineSeconds'
  | 'runEventsRetentionDays'
  | 'runMaxInflight'
  | 'runParkAfterSeconds'
  | 'runMaxResultBytes'
  | 'runMaxSteps'
  | 'runUserInflightSharePercent'
  | 'sandboxUserIsolates'
  | 'sseKeepAliveMs'
  | 'stepCpuMs'
  | 'stepMemoryMb'
  | 'userMaxConcurrentRuns'
>;

/** What the wing asks of the queue under it (src/queue/agenda.ts). */
export type RunQueuePort = Pick<RunQueue, 'enqueue' | 'sqlEnqueue'>;

/** The trace context the engine's step spans are children of. */
export type StepTraceContext = NonNullable<ExecutionContext['trace']>['context'];

/** One attempt's span: the context its steps continue, and its end (null: handed back unfinished). */
export interface AttemptSpan {
  readonly context: StepTraceContext;
  end(ending: { state: RunState; cost: number | string; error?: RunError | null } | null): void;
}

/** The run wing's traces (implemented in src/telemetry/run-tracing.ts); the wing knows no tracing library. */
export interface RunTracer {
  /** The trace context to store on a new run: a query span under the caller's `traceparent`, else that traceparent as sent, else null. */
  queryTraceparent(given: string | null | undefined, circuitUid: string, versionUid: string): string | null;
  /** The span of one attempt of a run, continuing the trace stored on it; undefined with traces off. */
  startAttempt(run: {
    uid: string;
    circuit_uid: string;
    circuit_version_uid: string;
    attempt: number;
    traceparent?: string | null;
  }): AttemptSpan | undefined;
}

/**
 * What the run wing's files receive: infrastructure only (database, log, settings, the queue, the
 * cross-process bus), the wing's own pieces of this process, the lifecycle it announces on, and what
 * the engine needs to execute a definition.
 */
export interface RunDeps {
  config: RunConfig;
  sequelize: Sequelize;
  log: Logger;
  queue: RunQueuePort;
  bus: RunEventBus;
  /** The wing's batchers and caches of this process (./run-service.ts). */
  runService: RunService;
  lifecycle: RunLifecycle;
  tracer: RunTracer;
  schemas: JsonSchemaService;
  sandbox: Sandbox;
}
