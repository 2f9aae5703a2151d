import type { Sequelize } from 'sequelize';
import type { Logger } from '../logger';
import type { User } from '../models';
import type { CircuitRun } from '../models/CircuitRun';
import type { RunEventKind } from '../models/RunEvent';
import type { RunJobHandler } from '../queue/agenda';
import type { BlobStorage } from '../storage';
import type { JsonSchemaService } from '../engine/json-schemas';
import type { Sandbox } from '../sandbox/sandbox';
import type { EngineConfig, EngineDeps, EngineObserver } from '../engine/ports';
import type { RunEventBus } from './events/bus';
import type { RunConfig, RunDeps, RunQueuePort, RunTracer } from './ports';
import { RunLifecycle, type RunLifecycleSubscriptions } from './run-lifecycle';
import { createRunService } from './run-service';
import type { RunReadCache } from './read-cache';
import { createRun, type CreateRunInput, type CreateRunResult } from './create-run';
import type { BatchAction } from '../policies/batch.policy';
import {
  batchRunsPage,
  cancelBatch,
  createBatch,
  findBatchFor,
  type BatchView,
  type CreateBatchInput,
} from './batches';
import { cancelRun } from './cancel';
import { cancelRunsByFilter, replayRunsByFilter, type BulkCancelResult, type BulkReplayResult } from './bulk-runs';
import {
  resolveApproval,
  readDecisionView,
  readWaitingSteps,
  waitingApprovalsOf,
  type ApprovalDecision,
  type ApprovalOutcome,
  type DecisionView,
  type WaitingApproval,
  type WaitingStep,
} from './approvals';
import { deliverSignal, type SignalOutcome } from './signals';
import type { WaitUrlKind, WaitUrls } from './wait-urls';
import { AppError, notFound } from '../errors';
import { loadRunForReplay, replayRun, type ReplayOptions } from './replay';
import { estimateRun, type EstimateInput, type RunEstimate } from './estimate';
import { countMyRuns, findMyRuns, type MyRunsFilter } from './my-runs';
import { readRunEvents, type RunLogRead } from './events/log';
import { runEventStream, streamStart, type RunEventStreamOptions, type StreamStart } from './events/stream';
import type { LoggedRunEvent } from './events/log';
import { waitForRunEnd } from './events/wait';
import { abortedError, endRun, executeRunHandler, failedEnding, type RunWorkerIdentity } from './execute';
import { InflightRuns } from './inflight-runs';
import { claimOrphanedRuns, claimRunsToRequeue, deleteIdleKeyRows, findOverdueRuns, wakeDueRuns } from './transitions';
import { pruneRunEvents } from './events/log';
import { sweepStepCache } from './step-cache';

/**
 * What the run wing is given, once, by the composition (src/runtime.ts): infrastructure (database,
 * log, settings, the queue under it, the cross-process bus, traces) and what the engine needs.
 */
export interface RunWingPorts {
  config: RunConfig;
  sequelize: Sequelize;
  log: Logger;
  queue: RunQueuePort;
  bus: RunEventBus;
  tracer: RunTracer;
  schemas: JsonSchemaService;
  sandbox: Sandbox;
  /** The callback and decision URLs of runs' waits (signed with the service's secret). */
  waitUrls: WaitUrls;
  /**
   * Set when this process executes runs: how it names itself on the runs it claims (./worker-presence.ts),
   * and what the engine reads besides the above (blob content, its settings, where a step's end is counted).
   */
  worker?: {
    identity: RunWorkerIdentity;
    engine: { blobStorage: BlobStorage; config: EngineConfig; stepMetrics: EngineObserver };
  };
}

/** A run's events after a position, as a page (GraphQL `events`, REST polling). */
export type RunEventsPage = RunLogRead;

/**
 * The run wing's one face: what the API layers, webhooks, schedules, MCP and the CLI may do with runs.
 * Each method delegates to the wing's small file that does it.
 */
export interface RunWing {
  /** Where the composition subscribes to what happens to runs (created, started, step, waiting, ended). */
  readonly lifecycle: RunLifecycleSubscriptions;
  /** Rows an ended run's reads need, kept in this process (./read-cache.ts); dropped on `run_reads_changed`. */
  readonly readCache: RunReadCache;

  create(viewer: User, input: CreateRunInput): Promise<CreateRunResult>;
  admitBatch(viewer: User, input: CreateBatchInput): Promise<BatchView>;
  findBatch(viewer: User | null, uid: string, action: BatchAction): Promise<BatchView>;
  batchRuns(
    batchUid: string,
    window: { limit: number; offset: number },
  ): Promise<{ rows: CircuitRun[]; count: number }>;
  cancelBatch(batch: BatchView): Promise<void>;
  /** Asks a run to stop and waits up to `waitMs` for it to end. */
  cancel(uid: string, waitMs?: number): Promise<void>;
  /** Asks every run of the caller's filter still in flight to stop (at most MAX_BULK_RUNS a call). */
  cancelMatching(viewer: User, filter: MyRunsFilter, idempotencyKey?: string | null): Promise<BulkCancelResult>;
  /** Replays every ended run of the caller's filter as one batch (at most MAX_BULK_RUNS a call). */
  replayMatching(
    viewer: User,
    filter: MyRunsFilter,
    mode: string | null | undefined,
    idempotencyKey?: string | null,
  ): Promise<BulkReplayResult>;
  /** A person's decision on a waiting approval step. */
  approve(runUid: string, stepId: string, decision: ApprovalDecision): Promise<ApprovalOutcome>;
  /** The owner's signal to a signal wait step; `versionUid`, the run's version when the caller has read the run. */
  signal(runUid: string, stepId: string, data: unknown, versionUid?: string): Promise<SignalOutcome>;
  /** A signal POSTed to a callback URL (no token: its key is the credential); 404 for a key that is not the step's. */
  signalByCallback(runUid: string, path: string, key: unknown, data: unknown): Promise<SignalOutcome>;
  /** A decision sent to an approval's decision URL (no token: its key is the credential); 404 for a key that is not the step's. */
  decideByLink(runUid: string, path: string, key: unknown, decision: ApprovalDecision): Promise<ApprovalOutcome>;
  /** What an approval's decision page shows; 404 for a key that is not the step's, as for an unknown run. */
  decisionView(runUid: string, path: string, key: unknown): Promise<DecisionView>;
  /** The callback URL of a signal wait, or the decision URL of an approval, of a run. */
  waitUrl(runUid: string, path: string, kind: WaitUrlKind): string;
  waitingSteps(runUids: readonly string[]): Promise<WaitingStep[][]>;
  waitingApprovalsOf(userUid: string, limit?: number): Promise<WaitingApproval[]>;
  replay(viewer: User, run: CircuitRun, options: ReplayOptions): Promise<CreateRunResult>;
  findForReplay(uid: string): Promise<CircuitRun | null>;
  estimate(viewer: User, input: EstimateInput): Promise<RunEstimate>;
  myRuns(
    userUid: string,
    filter: MyRunsFilter,
    window: { limit: number; offset: number },
  ): Promise<{ rows: CircuitRun[]; count: number }>;
  /** How many of the user's runs of a filter are in flight and how many ended (what a cancel or replay by filter matches). */
  countMyRuns(userUid: string, filter: MyRunsFilter): Promise<{ inFlight: number; ended: number }>;
  /** A page of one run's event log. */
  events(uid: string, after: number, kinds: readonly RunEventKind[], limit?: number): Promise<RunEventsPage>;
  /** One run's events, replayed from a position then followed live until its end. */
  stream(uid: string, options: RunEventStreamOptions): AsyncIterableIterator<LoggedRunEvent>;
  /** Where an SSE stream of a run starts (Last-Event-ID), checked before the response is committed. */
  streamStart(uid: string, kinds: readonly RunEventKind[], lastEventId: unknown): Promise<StreamStart>;
  /** Resolves when the run has ended or `ms` has passed. */
  waitForEnd(uid: string, ms: number): Promise<void>;
}

/** The wing of a process that executes runs: its job handler, its sweep and its stop. */
export interface RunWingWorker {
  /** Takes a run job off the queue (to the worker's in-flight set). */
  readonly jobHandler: RunJobHandler;
  /** Queues runs that lost their worker, were never queued or look stuck; ends overdue runs; prunes old events and cache rows. */
  sweep(): Promise<void>;
  /** Queues the parked runs whose time has come (a wait's expiry, a delayed start): often, cheaply (an index on wake_at). */
  wakeDue(): Promise<void>;
  /** Gives back the runs still executing (RUN_DRAIN_MS); returns those to queue again once the queue has stopped. */
  close(): Promise<string[]>;
}

/**
 * How long a stopping worker waits for its runs to end before giving the rest back: not at all. A run
 * is resumable (its journal keeps every finished step), so a stop gives it back at once for another
 * worker (or this one's next start) to go on with; waiting only delayed the stop, by the whole wait
 * whenever a run was in a long step. What a run was doing at the stop (a step in flight) is done again.
 */
export const RUN_DRAIN_MS = 0;

/** How long a PROVISIONED run may wait unqueued, and how long any in-flight run may look stuck, before the sweeper queues it again. */
export function sweepTimings(lockLifetimeMs: number) {
  return {
    graceMs: Math.max(10_000, lockLifetimeMs),
    stuckAfterMs: Math.max(5 * 60_000, 5 * lockLifetimeMs),
    everyMs: Math.max(5_000, lockLifetimeMs),
  };
}

/** How often a worker looks for parked runs whose time has come, and how many it wakes per statement. */
export const WAKE_DUE_EVERY_MS = 1_000;
const WAKE_BATCH = 1_000;

/** Builds the run wing once; `worker` is set when the process executes runs. */
export function createRunWing(ports: RunWingPorts): { wing: RunWing; worker?: RunWingWorker } {
  const { config, sequelize, log, queue, bus, tracer, schemas, sandbox, waitUrls } = ports;
  const runService = createRunService(sequelize, queue, bus.sqlChannel);
  const lifecycle = new RunLifecycle(log);
  const deps: RunDeps = { config, sequelize, log, queue, bus, runService, lifecycle, tracer, schemas, sandbox };

  const wing: RunWing = {
    lifecycle,
    readCache: runService.readCache,
    create: (viewer, input) => createRun(deps, viewer, input),
    admitBatch: (viewer, input) => createBatch(deps, viewer, input),
    findBatch: (viewer, uid, action) => findBatchFor(deps, viewer, uid, action),
    batchRuns: (batchUid, window) => batchRunsPage(batchUid, window),
    cancelBatch: (batch) => cancelBatch(deps, batch),
    cancel: (uid, waitMs) => cancelRun(deps, uid, waitMs),
    cancelMatching: (viewer, filter, key) => cancelRunsByFilter(deps, viewer, filter, key),
    replayMatching: (viewer, filter, mode, key) => replayRunsByFilter(deps, viewer, filter, mode, key),
    approve: (runUid, stepId, decision) => resolveApproval(deps, runUid, stepId, decision),
    waitingSteps: (runUids) => readWaitingSteps(sequelize, runUids),
    waitingApprovalsOf: (userUid, limit) => waitingApprovalsOf(sequelize, userUid, limit),
    signal: (runUid, stepId, data, versionUid) => deliverSignal(deps, runUid, stepId, data, 'owner', versionUid),
    async signalByCallback(runUid, path, key, data) {
      if (!waitUrls.verify(runUid, path, 'signal', key)) throw notFound('Callback');
      return deliverSignal(deps, runUid, path, data, 'callback').catch((error: unknown) => {
        throw error instanceof AppError && error.code === 'NotFound' ? notFound('Callback') : error;
      });
    },
    async decideByLink(runUid, path, key, decision) {
      if (!waitUrls.verify(runUid, path, 'approval', key)) throw notFound('Decision');
      return resolveApproval(deps, runUid, path, decision).catch((error: unknown) => {
        throw error instanceof AppError && error.code === 'NotFound' ? notFound('Decision') : error;
      });
    },
    async decisionView(runUid, path, key) {
      if (!waitUrls.verify(runUid, path, 'approval', key)) throw notFound('Decision');
      const view = await readDecisionView(sequelize, runUid, path);
      if (!view) throw notFound('Decision');
      return view;
    },
    waitUrl: (runUid, path, kind) => waitUrls.url(runUid, path, kind),
    replay: (viewer, run, options) => replayRun(deps, viewer, run, options),
    findForReplay: (uid) => loadRunForReplay(uid),
    estimate: (viewer, input) => estimateRun(deps, viewer, input),
    myRuns: (userUid, filter, window) => findMyRuns(userUid, filter, window),
    countMyRuns: (userUid, filter) => countMyRuns(userUid, filter),
    events: (uid, after, kinds, limit) => readRunEvents(sequelize, uid, after, kinds, limit),
    stream: (uid, options) => runEventStream(deps, uid, options),
    streamStart: (uid, kinds, lastEventId) => streamStart(deps, uid, kinds, lastEventId),
    waitForEnd: (uid, ms) => waitForRunEnd(deps, uid, ms),
  };
  if (!ports.worker) return { wing };

  // The one place the engine's deps are built: the model clients are the run service's pool.
  const given = ports.worker.engine;
  const engine: EngineDeps = {
    config: given.config,
    log,
    blobStorage: given.blobStorage,
    sandbox,
    schemas,
    modelClients: runService.llmClients,
    observer: given.stepMetrics,
    waitUrl: (runUid, path, kind) => waitUrls.url(runUid, path, kind),
  };
  const inflight = new InflightRuns({
    deps,
    engine,
    worker: ports.worker.identity,
    maxInflight: config.runMaxInflight,
    heartbeatEveryMs: Math.max(200, Math.floor(config.jobLockLifetimeMs / 4)),
    userMaxConcurrent: config.userMaxConcurrentRuns,
    userShare: Math.max(1, Math.floor((config.runMaxInflight * config.runUserInflightSharePercent) / 100)),
  });
  /** Deadlines hold also when the worker died: runs past theirs that no live worker will end. */
  const endOverdueRuns = async () => {
    const overdue = await findOverdueRuns(
      sequelize,
      config.runDeadlineSeconds,
      config.jobLockLifetimeMs,
      Math.max(30_000, 2 * config.jobLockLifetimeMs),
    );
    for (const run of overdue) {
      await endRun(
        deps,
        failedEnding({ uid: run.uid, attempt: run.attempt }, abortedError('DeadlineExceeded'), run.credits),
      );
    }
  };
  const worker: RunWingWorker = {
    jobHandler: executeRunHandler(deps, inflight),
    async sweep() {
      const { graceMs, stuckAfterMs } = sweepTimings(config.jobLockLifetimeMs);
      const orphans = await claimOrphanedRuns(sequelize, config.jobLockLifetimeMs);
      for (const uid of orphans) await queue.enqueue(uid);
      if (orphans.length > 0) log.warn({ runs: orphans.length }, 'queued runs again whose worker is gone');
      const uids = await claimRunsToRequeue(sequelize, graceMs, stuckAfterMs);
      for (const uid of uids) await queue.enqueue(uid);
      if (uids.length > 0) log.warn({ runs: uids.length }, 'queued runs again that were never queued or looked stuck');
      await endOverdueRuns();
      inflight.wake();
      await pruneRunEvents(sequelize, config.runEventsRetentionDays);
      await sweepStepCache(sequelize);
      await deleteIdleKeyRows(sequelize);
    },
    async wakeDue() {
      for (;;) {
        const woken = await wakeDueRuns(sequelize, WAKE_BATCH);
        if (woken > 0) inflight.wake();
        if (woken < WAKE_BATCH) return;
      }
    },
    close: () => inflight.close(RUN_DRAIN_MS),
  };
  return { wing, worker };
}
