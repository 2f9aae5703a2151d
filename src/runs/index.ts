/**
 * The run wing's front door: everything outside src/runs/ reaches runs through this file (a lint zone
 * in eslint.config.mjs holds it). The wing is built once by `createRunWing` in the
 * composition (src/runtime.ts); the rest are its types and the pure rules others share (how a run is
 * presented, compared, signed).
 */
export {
  createRunWing,
  sweepTimings,
  WAKE_DUE_EVERY_MS,
  type RunWing,
  type RunWingPorts,
  type RunWingWorker,
  type RunEventsPage,
} from './run-wing';
export type { RunConfig, RunTracer, AttemptSpan, StepTraceContext } from './ports';
export { createWaitUrls, WAIT_URL_PREFIX, type WaitUrlKind, type WaitUrls } from './wait-urls';
export type { SignalOutcome } from './signals';
export type {
  LifecycleRun,
  RunLifecycleEvent,
  RunLifecycleEvents,
  RunLifecycleListener,
  RunLifecycleSubscriptions,
} from './run-lifecycle';
export { startWorkerPresence } from './worker-presence';
export { createRunEventBus, type RunEventBus, type RunStateEvent } from './events/bus';
export { startRunReadInvalidation, type RunReadRows } from './read-cache';

export type { CreateRunInput, CreateRunResult } from './create-run';
export type { BatchView, CreateBatchInput } from './batches';
export {
  checkApprovalDecision,
  type ApprovalDecision,
  type ApprovalOutcome,
  type DecisionView,
  type RecordedDecision,
  type WaitingApproval,
  type WaitingStep,
} from './approvals';
export { REPLAY_MODES, type ReplayMode, type ReplayOptions } from './replay';
export { compareRuns, type RunComparison, type StepComparison } from './compare';
export type { EstimateInput, RunEstimate } from './estimate';
export type { MyRunsFilter } from './my-runs';
export { MAX_BULK_RUNS, type BulkCancelResult, type BulkReplayResult } from './bulk-runs';
export { presentRunPayload, runCredits, shownRunFields, startAtOf, type ShownRunField } from './present';
export type { LoggedRunEvent } from './events/log';
export { mapStream, type RunEventStreamOptions, type StreamStart } from './events/stream';
export { checkEventsSignature, signedEventsQuery } from './events/signed-url';
