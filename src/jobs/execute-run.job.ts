import os from 'node:os';
import type { Job } from 'agenda' with { 'resolution-mode': 'import' };
import { evaluateExpression } from '../engine/expression';
import type { SandboxLimits } from '../sandbox/sandbox';
import { ExecutionFailure, executeDefinition, type ExecutionResult } from '../engine/run-executor';
import { isUid } from '../ids';
import { CircuitRun, isTerminal, RUN_ERROR_CODES, type RunError, type RunErrorCode } from '../models/CircuitRun';
import type { MetricExpression } from '../models/CircuitMetric';
import type { Services } from '../services';
import type { ExecuteRunData } from './agenda';
import { holdCredits, RUN_BASE_CREDITS } from '../credits/holds';
import { RunAborted, type RunBudget, type RunObserver } from '../engine/run-control';
import { RunEventRecorder } from './run-event-recorder';
import { runLifecycleHooks, type HookedRun } from './run-hooks';
import { findUnstorableText } from './storable-json';
import { claimRun, ClaimedRun, finishRun, heartbeatRun, RunEnding, type RunCharge, type WorkerIdentity } from './run-transitions';

/** A run is executed at most this many times (attempts are counted at claim, before executing); the next claim ends it WorkerLost. */
export const MAX_ATTEMPTS = 3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How this worker process identifies itself on the runs it claims (see claimRun). */
export interface RunWorkerIdentity { current(): WorkerIdentity }
const anonymousWorker: RunWorkerIdentity = { current: () => ({ name: `${os.hostname()}:${process.pid}`, backendPid: null }) };

/** Metric values of a completed run: each named JSONata expression over `{input, output, steps}`. */
export async function computeMetrics(metrics: MetricExpression[], input: unknown, result: ExecutionResult, limits?: SandboxLimits): Promise<Record<string, unknown>> {
  const scope = { input, output: result.output, steps: result.steps };
  const values: Record<string, unknown> = {};
  for (const metric of metrics) {
    if (!metric || typeof metric.name !== 'string' || typeof metric.expression !== 'string') continue;
    try {
      values[metric.name] = await evaluateExpression(metric.expression, scope, limits);
    } catch {
      values[metric.name] = null;
    }
  }
  return values;
}

/** The run as its job knows it: its webhook events for the run hooks, its circuit and submission time for the log. */
type EndingRun = HookedRun & Partial<Pick<ClaimedRun, 'circuit_uid' | 'created_at'>>;

/**
 * The one line an operator gets per run: ids, state, time since submission, what was charged and the
 * error code. No failure message: it can quote the run's input or step outputs (the owner reads it
 * in `error`, an operator in circuit_runs.failure_reason).
 */
async function logRunEnded(services: Services, ending: RunEnding, charge: RunCharge, run?: EndingRun): Promise<void> {
  let known = run?.circuit_uid && run.created_at ? { circuit_uid: run.circuit_uid, created_at: run.created_at } : null;
  // Ended before any claim (a cancel or a deadline sweep): the job does not know the run, the row does.
  known ??= await CircuitRun.findByPk(ending.uid, { attributes: ['circuit_uid', 'created_at'] }).catch(() => null);
  services.log.info({
    run: ending.uid,
    circuit: known?.circuit_uid ?? null,
    state: ending.state,
    duration_ms: known ? Date.now() - new Date(known.created_at).getTime() : null,
    credits_charged: charge.amount,
    attempt: ending.attempt,
    ...(ending.state === 'EXCEPTION' ? { error_code: ending.error?.code ?? 'Internal' } : {}),
  }, 'run ended');
}

/** Ends a run (and publishes its state when the bus is not PostgreSQL); false when it was not this attempt's to end. */
export async function endRun(services: Services, ending: RunEnding, run?: EndingRun): Promise<boolean> {
  const channel = services.runEvents.sqlChannel;
  const charge = await finishRun(services.sequelize, ending, channel);
  if (!charge) {
    services.log.info({ run: ending.uid, attempt: ending.attempt }, 'run was ended by another attempt; result dropped');
    return false;
  }
  runLifecycleHooks.ended(services, run ?? { uid: ending.uid, user_uid: charge.userUid });
  await logRunEnded(services, ending, charge, run);
  if (!channel) {
    await services.runEvents.publish({ uid: ending.uid, state: ending.state }).catch((error: unknown) =>
      services.log.warn({ err: error, run: ending.uid }, 'could not publish run state'));
  }
  return true;
}

/** The ending of a run that failed: what the owner sees (`error`) and what the log keeps. */
export function failedEnding(base: { uid: string; attempt: number }, error: RunError, credits = 0, failureReason?: string): RunEnding {
  return { ...base, state: 'EXCEPTION', cost: RUN_BASE_CREDITS + credits, error, failureReason: failureReason ?? `${error.code}: ${error.message}` };
}

export const abortedError = (code: RunAborted['code'], deadlineSeconds?: number): RunError =>
  code === 'Canceled'
    ? { code, message: 'The run was canceled by its owner' }
    : { code, message: deadlineSeconds ? `The run passed its deadline of ${deadlineSeconds} s` : 'The run passed its deadline' };

function isRunErrorCode(value: unknown): value is RunErrorCode {
  return typeof value === 'string' && (RUN_ERROR_CODES as readonly string[]).includes(value);
}

/** What an execution error means for the owner (DESIGN §7.1): the abort reason wins, then the engine's code. */
function errorOf(error: unknown, signal: AbortSignal, deadlineSeconds: number): { error: RunError; credits: number } {
  const credits = error instanceof ExecutionFailure ? error.credits : 0;
  const reason: unknown = signal.aborted ? signal.reason : undefined;
  if (reason instanceof RunAborted) return { error: abortedError(reason.code, deadlineSeconds), credits };
  if (error instanceof ExecutionFailure) {
    const failure = error as ExecutionFailure & { code?: unknown };
    const code = isRunErrorCode(failure.code) ? failure.code : 'StepFailed';
    return { error: { code, message: failure.message, ...(failure.stepId ? { step_id: failure.stepId } : {}) }, credits };
  }
  return { error: { code: 'Internal', message: 'The run failed because of an internal error' }, credits };
}

/** A COMPLETED ending jsonb can store, or the EXCEPTION that replaces it (DESIGN §8: ends at once, not retried). */
function storableEnding(ending: RunEnding, result: ExecutionResult): RunEnding {
  for (const [stepId, record] of Object.entries(result.steps)) {
    const at = findUnstorableText(record.output);
    if (at) {
      return failedEnding(ending, {
        code: 'StepFailed', step_id: stepId,
        message: `step ${stepId}: its output contains a NUL character or a lone surrogate (at ${at.replace(/^\$/, 'output')}), which cannot be stored`,
      }, result.credits);
    }
  }
  const at = findUnstorableText({ output: result.output, metrics: ending.metrics ?? null });
  if (at) return failedEnding(ending, { code: 'StepFailed', message: `the run's ${at.slice(2)} contains a NUL character or a lone surrogate, which cannot be stored` }, result.credits);
  return ending;
}

function deadlineOf(claim: ClaimedRun, defaultSeconds: number): { at: number; seconds: number } {
  const at = claim.deadline_at ? new Date(claim.deadline_at).getTime() : new Date(claim.created_at).getTime() + defaultSeconds * 1000;
  return { at, seconds: Math.round((at - new Date(claim.created_at).getTime()) / 1000) };
}

/** Executes a claimed run and ends it; false when the end was refused (the run was not this attempt's any more). */
async function executeClaimed(services: Services, claim: ClaimedRun, touch: () => Promise<void>): Promise<boolean> {
  const { log, sequelize, config } = services;
  const base = { uid: claim.uid, attempt: claim.attempt };
  if (claim.attempt === 1) {
    if (!services.runEvents.sqlChannel) await services.runEvents.publish({ uid: claim.uid, state: 'RUNNING' }).catch((error: unknown) =>
      log.warn({ err: error, run: claim.uid }, 'could not publish run state'));
    runLifecycleHooks.started(services, claim);
  } else {
    log.warn({ run: claim.uid, attempt: claim.attempt }, 'taking over a run whose worker is gone');
  }
  const deadline = deadlineOf(claim, config.runDeadlineSeconds);
  if (claim.attempt > MAX_ATTEMPTS) {
    return endRun(services, failedEnding(base, { code: 'WorkerLost', message: `The run stopped its worker ${claim.attempt - 1} times; it is not retried again` }), claim);
  }
  if (claim.cancel_requested_at) return endRun(services, failedEnding(base, abortedError('Canceled')), claim);
  if (deadline.at <= Date.now()) return endRun(services, failedEnding(base, abortedError('DeadlineExceeded', deadline.seconds)), claim);
  const plan = claim.definition ? { definition: claim.definition, metrics: claim.metrics } : null;
  if (!plan) return endRun(services, failedEnding(base, { code: 'Internal', message: 'The circuit version of this run no longer exists' }), claim);

  const controller = new AbortController();
  const abort = (reason: unknown) => { if (!controller.signal.aborted) controller.abort(reason); };
  const unsubscribe = services.runEvents.subscribe(claim.uid, (message) => { if (message.cancel) abort(new RunAborted('Canceled')); });
  const deadlineTimer = setTimeout(() => abort(new RunAborted('DeadlineExceeded')), Math.max(0, deadline.at - Date.now()));
  const beat = setInterval(() => {
    void (async () => {
      try {
        const { held, cancel } = await heartbeatRun(sequelize, claim.uid, claim.attempt);
        if (!held) abort(new Error('lost the run to another worker'));
        else if (cancel) abort(new RunAborted('Canceled'));
        await touch();
      } catch (error) {
        log.warn({ err: error, run: claim.uid }, 'run heartbeat failed');
      }
    })();
  }, Math.max(200, Math.floor(config.jobLockLifetimeMs / 4)));
  beat.unref();
  const recorder = new RunEventRecorder(services, claim.uid, claim.attempt, claim);

  let ending: RunEnding;
  try {
    // The run's budget (DESIGN §8) and its observer, which feeds the event log.
    const budget: RunBudget = {
      maxSteps: config.runMaxSteps,
      maxResultBytes: config.runMaxResultBytes,
      hold: (credits) => holdCredits(sequelize, { uid: claim.uid, userUid: claim.user_uid }, credits),
    };
    const context = {
      services,
      run: { uid: claim.uid, userUid: claim.user_uid, circuitUid: claim.circuit_uid, versionUid: claim.circuit_version_uid },
      signal: controller.signal,
      depth: 0,
      observer: recorder satisfies RunObserver,
      budget,
    };
    const result = await executeDefinition(plan.definition, claim.input, context);
    const metrics = plan.metrics?.length
      ? await computeMetrics(plan.metrics, claim.input, result, { cpuMs: config.stepCpuMs, memoryMb: config.stepMemoryMb, maxOutputBytes: config.runMaxResultBytes })
      : null;
    ending = storableEnding({
      ...base,
      state: 'COMPLETED',
      resultBlob: { output: result.output, steps: result.steps },
      metrics,
      cost: RUN_BASE_CREDITS + result.credits,
    }, result);
  } catch (error) {
    const failed = errorOf(error, controller.signal, deadline.seconds);
    ending = failedEnding(base, failed.error, failed.credits, error instanceof Error ? error.message : String(error));
  } finally {
    clearInterval(beat);
    clearTimeout(deadlineTimer);
    unsubscribe();
  }
  const events = await recorder.closeForEnding();
  try {
    return await endRun(services, { ...ending, events }, claim);
  } catch (error) {
    // A value jsonb rejects that the check above did not foresee: end the run now rather than on every retry.
    if (ending.state !== 'COMPLETED' || !String((error as { code?: unknown }).code ?? '').startsWith('22')) throw error;
    return endRun(services, { ...failedEnding(base, { code: 'StepFailed', message: "The run's result cannot be stored" }, Number(ending.cost) - RUN_BASE_CREDITS, String(error)), events }, claim);
  }
}

/**
 * Executes one run, idempotently: Agenda delivers at least once, so the run is claimed first
 * (PROVISIONED → RUNNING, or a takeover when its worker is gone). A run that is terminal is left
 * alone; one held by a live worker is waited on, and taken over if that worker goes away.
 */
export async function processRun(services: Services, uid: string, touch: () => Promise<void> = async () => {}, worker: RunWorkerIdentity = anonymousWorker): Promise<void> {
  const lease = services.config.jobLockLifetimeMs;
  const giveUpAt = Date.now() + 3 * lease;
  for (;;) {
    const claim = await claimRun(services.sequelize, uid, lease, services.runEvents.sqlChannel, worker.current());
    if (claim && (await executeClaimed(services, claim, touch))) return;
    const run = await CircuitRun.findByPk(uid, { attributes: ['uid', 'state'] });
    if (!run || isTerminal(run.state)) return;
    // A refused end of a run that is PROVISIONED again: a crash of PostgreSQL rolled the claim back
    // (claims commit asynchronously, src/db/async-commit.ts), so it is claimed and executed anew.
    if (claim) {
      if (run.state === 'PROVISIONED') continue;
      return; // taken over by another worker
    }
    if (Date.now() > giveUpAt) return; // still held by a live worker; the sweeper checks it again later
    await sleep(run.state === 'PROVISIONED' ? 10 : Math.max(100, lease / 4));
    await touch().catch(() => {});
  }
}

/** The Agenda handler for `executeRun` jobs. */
export function executeRunHandler(services: Services, worker: RunWorkerIdentity = anonymousWorker) {
  return async (job: Job<ExecuteRunData>): Promise<void> => {
    const uid = job.attrs.data?.runUid;
    if (!isUid(uid)) {
      services.log.warn({ data: job.attrs.data }, 'ignoring an executeRun job without a run uid');
      return;
    }
    try {
      await processRun(services, uid, () => job.touch(), worker);
    } catch (error) {
      // Left to the lock expiry / sweeper: the run is re-delivered and claimed again.
      services.log.error({ err: error, run: uid }, 'run execution failed unexpectedly');
      throw error;
    }
  };
}
