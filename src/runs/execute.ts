import { evaluateExpression } from '../engine/expression';
import type { SandboxCall } from '../sandbox/sandbox';
import { ExecutionFailure, executeDefinition, type ExecutionResult } from '../engine/run-executor';
import { outputContractViolation } from '../engine/output-schema';
import { isUid } from '../ids';
import { CircuitRun } from '../models/CircuitRun';
import { RUN_ERROR_CODES, type RunError, type RunErrorCode } from '../domain/runs';
import type { MetricExpression } from '../models/CircuitMetric';
import type { RunDeps } from './ports';
import type { EngineDeps } from '../engine/ports';
import type { ExecuteRunData, QueueJob } from '../queue/agenda';
import { holdCredits, RUN_BASE_CREDITS } from '../credits/holds';
import { SpendCap } from '../credits/budget';
import {
  RunAborted,
  RunParked,
  RunSuspended,
  type JournalEntry,
  type RunBudget,
  type RunObserver,
} from '../engine/run-control';
import { RunEventRecorder } from './events/recorder';
import type { LifecycleRun } from './run-lifecycle';
import { findUnstorableText } from './storable-json';
import {
  ClaimedRun,
  endRunTogether,
  handBackRuns,
  MAX_WORKER_LOSSES,
  parkRun,
  RunEnding,
  workerLosses,
  type RunCharge,
  type WorkerIdentity,
} from './transitions';
import { finishedStepCredits, loadStepJournal, runJournal } from './step-journal';
import { journalOf } from './journal-rows';
import { loadReplaySource, recordRunRequests, RunRequestGate } from './step-gate';

/** How this worker process identifies itself on the runs it claims (see claimRun). */
export interface RunWorkerIdentity {
  current(): WorkerIdentity;
}

/** Metric values of a completed run: each named JSONata expression over `{input, output, steps}`. */
export async function computeMetrics(
  metrics: MetricExpression[],
  input: unknown,
  result: ExecutionResult,
  call: SandboxCall,
): Promise<Record<string, unknown>> {
  const scope = { input, output: result.output, steps: result.steps };
  const values: Record<string, unknown> = {};
  for (const metric of metrics) {
    if (!metric || typeof metric.name !== 'string' || typeof metric.expression !== 'string') continue;
    try {
      values[metric.name] = await evaluateExpression(metric.expression, scope, call);
    } catch {
      values[metric.name] = null;
    }
  }
  return values;
}

/** The run as its job knows it: its webhook events for the run's subscribers, its circuit and submission time for the log. */
type EndingRun = LifecycleRun & Partial<Pick<ClaimedRun, 'circuit_uid' | 'created_at'>>;

/**
 * The one line an operator gets per run: ids, state, time since submission, what was charged and the
 * error code. No failure message: it can quote the run's input or step outputs (the owner reads it
 * in `error`, an operator in circuit_runs.failure_reason).
 */
async function logRunEnded(
  deps: RunDeps,
  ending: RunEnding,
  charge: RunCharge,
  run?: EndingRun,
): Promise<Date | string | null> {
  let known = run?.circuit_uid && run.created_at ? { circuit_uid: run.circuit_uid, created_at: run.created_at } : null;
  // Ended before any claim (a cancel or a deadline sweep): the job does not know the run, the row does.
  known ??= await CircuitRun.findByPk(ending.uid, { attributes: ['circuit_uid', 'created_at'] }).catch(() => null);
  deps.log.info(
    {
      run: ending.uid,
      circuit: known?.circuit_uid ?? null,
      state: ending.state,
      duration_ms: known ? Date.now() - new Date(known.created_at).getTime() : null,
      credits_charged: charge.amount,
      attempt: ending.attempt,
      ...(ending.state === 'EXCEPTION' ? { error_code: ending.error?.code ?? 'Internal' } : {}),
    },
    'run ended',
  );
  return known?.created_at ?? null;
}

/** Ends a run (and publishes its state when the bus is not PostgreSQL); false when it was not this attempt's to end. */
export async function endRun(deps: RunDeps, ending: RunEnding, run?: EndingRun): Promise<boolean> {
  const channel = deps.bus.sqlChannel;
  const charge = await endRunTogether(deps.runService.runEnds, ending, run?.user_uid);
  if (!charge) {
    deps.log.info({ run: ending.uid, attempt: ending.attempt }, 'run was ended by another attempt; result dropped');
    return false;
  }
  const createdAt = await logRunEnded(deps, ending, charge, run);
  deps.lifecycle.emit('ended', {
    run: run
      ? { uid: run.uid, user_uid: run.user_uid, webhook_events: run.webhook_events }
      : { uid: ending.uid, user_uid: charge.userUid },
    state: ending.state,
    attempt: ending.attempt,
    error: ending.error ?? null,
    charged: charge.amount,
    createdAt,
  });
  if (!channel) {
    await deps.bus
      .publish({ uid: ending.uid, state: ending.state })
      .catch((error: unknown) => deps.log.warn({ err: error, run: ending.uid }, 'could not publish run state'));
  }
  return true;
}

/** The ending of a run that failed: what the owner sees (`error`) and what the log keeps. */
export function failedEnding(
  base: { uid: string; attempt: number },
  error: RunError,
  credits = 0,
  failureReason?: string,
): RunEnding {
  return {
    ...base,
    state: 'EXCEPTION',
    cost: RUN_BASE_CREDITS + credits,
    error,
    failureReason: failureReason ?? `${error.code}: ${error.message}`,
  };
}

export const abortedError = (code: RunAborted['code'], deadlineSeconds?: number): RunError =>
  code === 'Canceled'
    ? { code, message: 'The run was canceled by its owner' }
    : {
        code,
        message: deadlineSeconds
          ? `The run passed its deadline of ${deadlineSeconds} s`
          : 'The run passed its deadline',
      };

function isRunErrorCode(value: unknown): value is RunErrorCode {
  return typeof value === 'string' && (RUN_ERROR_CODES as readonly string[]).includes(value);
}

/** What an execution error means for the owner (docs/runs.md, Failure details): the abort reason wins, then the engine's code. */
function errorOf(error: unknown, signal: AbortSignal, deadlineSeconds: number): { error: RunError; credits: number } {
  const credits = error instanceof ExecutionFailure ? error.credits : 0;
  const reason: unknown = signal.aborted ? signal.reason : undefined;
  if (reason instanceof RunAborted) return { error: abortedError(reason.code, deadlineSeconds), credits };
  if (error instanceof ExecutionFailure) {
    const failure = error as ExecutionFailure & { code?: unknown };
    const code = isRunErrorCode(failure.code) ? failure.code : 'StepFailed';
    return {
      error: { code, message: failure.message, ...(failure.stepId ? { step_id: failure.stepId } : {}) },
      credits,
    };
  }
  return { error: { code: 'Internal', message: 'The run failed because of an internal error' }, credits };
}

/**
 * What a run stopped (canceled, past its deadline) pays for its steps: what they finished. With steps still in
 * flight when it stopped (an agent waiting on a tool approval or a model, an embedded run partway), what those had
 * finished is only in the run's journal, which holds every finished step `counted` (the engine's own count) holds
 * too — unless writing one failed, hence never less than `counted`. Else `counted`.
 */
async function stoppedRunCredits(
  deps: RunDeps,
  uid: string,
  error: unknown,
  reason: unknown,
  counted: number,
): Promise<number> {
  if (!(reason instanceof RunAborted && error instanceof ExecutionFailure && error.stepsInFlight)) return counted;
  try {
    return Math.max(counted, await finishedStepCredits(deps.sequelize, uid));
  } catch (failure) {
    deps.log.warn({ err: failure, run: uid }, "could not read the credits of a stopped run's finished steps");
    return counted;
  }
}

/** A COMPLETED ending jsonb can store, or the EXCEPTION that replaces it (such a run ends at once and is not retried). */
function storableEnding(ending: RunEnding, result: ExecutionResult): RunEnding {
  for (const [stepId, record] of Object.entries(result.steps)) {
    const at = findUnstorableText(record.output);
    if (at) {
      return failedEnding(
        ending,
        {
          code: 'StepFailed',
          step_id: stepId,
          message: `step ${stepId}: its output contains a NUL character or a lone surrogate (at ${at.replace(/^\$/, 'output')}), which cannot be stored`,
        },
        result.credits,
      );
    }
  }
  const at = findUnstorableText({ output: result.output, metrics: ending.metrics ?? null });
  if (at)
    return failedEnding(
      ending,
      {
        code: 'StepFailed',
        message: `the run's ${at.slice(2)} contains a NUL character or a lone surrogate, which cannot be stored`,
      },
      result.credits,
    );
  return ending;
}

function deadlineOf(claim: ClaimedRun, defaultSeconds: number): { at: number; seconds: number } {
  const at = claim.deadline_at
    ? new Date(claim.deadline_at).getTime()
    : new Date(claim.created_at).getTime() + defaultSeconds * 1000;
  return { at, seconds: Math.round((at - new Date(claim.created_at).getTime()) / 1000) };
}

/** The abort reason of a run that a stopping worker gives back unfinished (another attempt goes on with it). */
export class RunHandedBack extends RunSuspended {
  constructor() {
    super('the worker is stopping; the run goes on elsewhere');
    this.name = 'RunHandedBack';
  }
}

/**
 * The abort reason of an attempt whose heartbeat no longer finds the run its own: another worker took it over, or
 * its row was given up (parked, given back, turned away for a slot, ended elsewhere). The attempt stops and ends
 * nothing: the row is no longer its to end, even where its attempt number still matches (a run turned away for a
 * slot keeps it until claimed again).
 */
export class RunLost extends RunSuspended {
  constructor() {
    super("the run is no longer this attempt's");
    this.name = 'RunLost';
  }
}

/**
 * The abort reason of a run whose waits ended while a slot it must take back was full: it was given back, waiting
 * for the slot (resumeHeldRun), and is claimed again in turn.
 */
export class RunAwaitingSlot extends RunSuspended {
  constructor() {
    super('the run waits for a slot to go on');
    this.name = 'RunAwaitingSlot';
  }
}

/** A run's deadline timer, paused while an approval step waits. */
class RunDeadline {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private at: number,
    private readonly onPassed: () => void,
    private paused: boolean,
  ) {
    if (!paused) this.arm();
  }

  passed(): boolean {
    return !this.paused && this.at <= Date.now();
  }

  pause(): void {
    this.paused = true;
    clearTimeout(this.timer);
  }

  resume(at: Date): void {
    this.at = at.getTime();
    this.paused = false;
    this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    // setTimeout holds at most ~24.8 days; deadlines are at most an hour (plus pauses) away.
    this.timer = setTimeout(this.onPassed, Math.min(2 ** 31 - 1, Math.max(0, this.at - Date.now())));
  }
}

/**
 * How an attempt of a run ended for this worker. 'parked': the run waits as a row; 'parkRefused': it was to
 * park but something resolved a wait meanwhile (or a cancel came): it was given back, to be taken again now;
 * 'awaitingSlot': its waits ended but its slot was full: it was given back, waiting for a slot.
 */
export type AttemptOutcome = 'ended' | 'refused' | 'handedBack' | 'parked' | 'parkRefused' | 'awaitingSlot';

/**
 * Executes a claimed run and ends it. `control` is the attempt's abort controller, held by the
 * worker's in-flight set (src/runs/inflight-runs.ts): cancel, losing the run, or a stopping worker
 * abort it. 'refused': the end was refused, or the attempt stopped without one (RunLost): the run was not this
 * attempt's any more.
 */
export async function executeClaimed(
  deps: RunDeps,
  engine: EngineDeps,
  claim: ClaimedRun,
  control: AbortController,
  slotsFreed: () => void = () => {},
): Promise<AttemptOutcome> {
  const { log, sequelize, config } = deps;
  const base = { uid: claim.uid, attempt: claim.attempt };
  const ended = async (ending: RunEnding): Promise<AttemptOutcome> =>
    (await endRun(deps, ending, claim)) ? 'ended' : 'refused';
  // The run as its events name it (subscribers see no more of the claim than this).
  const announced: LifecycleRun = { uid: claim.uid, user_uid: claim.user_uid, webhook_events: claim.webhook_events };
  if (claim.attempt === 1) {
    if (!deps.bus.sqlChannel)
      await deps.bus
        .publish({ uid: claim.uid, state: 'RUNNING' })
        .catch((error: unknown) => log.warn({ err: error, run: claim.uid }, 'could not publish run state'));
    deps.lifecycle.emit('started', { run: announced });
  } else {
    log.warn({ run: claim.uid, attempt: claim.attempt }, 'taking over a run whose worker is gone');
  }
  const deadlineAt = deadlineOf(claim, config.runDeadlineSeconds);
  // A run ended before this attempt executes anything pays what earlier attempts finished (its journal).
  const finishedBefore = () => (claim.attempt > 1 ? finishedStepCredits(sequelize, claim.uid) : Promise.resolve(0));
  const crashes = workerLosses(claim);
  if (crashes >= MAX_WORKER_LOSSES) {
    return ended(
      failedEnding(
        base,
        {
          code: 'WorkerLost',
          message: `The run stopped its worker ${crashes} times; it is not retried again`,
        },
        await finishedBefore(),
      ),
    );
  }
  if (claim.cancel_requested_at) return ended(failedEnding(base, abortedError('Canceled'), await finishedBefore()));
  if (!claim.paused_at && deadlineAt.at <= Date.now())
    return ended(failedEnding(base, abortedError('DeadlineExceeded', deadlineAt.seconds), await finishedBefore()));
  const plan = claim.definition ? { definition: claim.definition, metrics: claim.metrics } : null;
  if (!plan)
    return ended(failedEnding(base, { code: 'Internal', message: 'The circuit version of this run no longer exists' }));

  const abort = (reason: unknown) => {
    if (!control.signal.aborted) control.abort(reason);
  };
  const unsubscribe = deps.bus.subscribe(claim.uid, (message) => {
    if (message.cancel) abort(new RunAborted('Canceled'));
  });
  const deadline = new RunDeadline(
    deadlineAt.at,
    () => abort(new RunAborted('DeadlineExceeded')),
    claim.paused_at !== null,
  );
  const recorder = new RunEventRecorder(deps, claim.uid, claim.attempt, announced);
  // The attempt's span, continuing the trace stored on the run (the tracer is given by the composition).
  const runSpan = deps.tracer.startAttempt(claim);
  const endRunSpan = (ending: RunEnding | null) => runSpan?.end(ending);

  let ending: RunEnding;
  const cap = new SpendCap(
    Number(claim.credits_held ?? RUN_BASE_CREDITS),
    claim.max_credits == null ? null : Number(claim.max_credits),
  );
  // The step cache and recorded replays; it collects the request hashes a replay of this run compares.
  const gate = new RunRequestGate(
    { sequelize, log, flights: deps.runService.cacheFlights },
    {
      bypassCache: Boolean(claim.cache_bypass),
      replay:
        claim.replay_of && claim.replay_mode === 'recorded'
          ? await loadReplaySource(sequelize, claim.replay_of).catch(() => null)
          : null,
    },
  );
  const recordRequests = () =>
    recordRunRequests(sequelize, claim.uid, gate.requests).catch((error: unknown) =>
      log.warn({ err: error, run: claim.uid }, "could not record the run's step requests"),
    );
  try {
    const entries =
      claim.attempt <= 1
        ? new Map<string, JournalEntry>()
        : claim.journal
          ? journalOf(claim.journal)
          : await loadStepJournal(sequelize, claim.uid);
    // The run's budget (docs/limits.md), its observer, which feeds the event log, and its step journal (durable steps).
    const budget: RunBudget = {
      maxSteps: config.runMaxSteps,
      maxResultBytes: config.runMaxResultBytes,
      hold: (credits) => holdCredits(sequelize, { uid: claim.uid, userUid: claim.user_uid }, credits),
      withinCap: (credits) => cap.reserve(credits),
      releaseCap: (credits) => cap.release(credits),
    };
    const context = {
      deps: engine,
      run: {
        uid: claim.uid,
        userUid: claim.user_uid,
        circuitUid: claim.circuit_uid,
        versionUid: claim.circuit_version_uid,
      },
      signal: control.signal,
      depth: 0,
      observer: recorder satisfies RunObserver,
      budget,
      gate,
      ...(runSpan ? { trace: { context: runSpan.context, attempt: claim.attempt } } : {}),
      journal: runJournal({
        sequelize,
        writes: deps.runService.journalWrites,
        runEvents: deps.bus,
        runUid: claim.uid,
        attempt: claim.attempt,
        defaultDeadlineSeconds: config.runDeadlineSeconds,
        userMaxConcurrent: config.userMaxConcurrentRuns,
        entries,
        deadline,
        parkAfterMs: config.runParkAfterSeconds * 1000,
        park: (waiting) => abort(new RunParked(waiting)),
        awaitSlot: () => abort(new RunAwaitingSlot()),
        slotsFreed,
        signal: control.signal,
        paused: claim.paused_at !== null,
      }),
    };
    const result = await executeDefinition(plan.definition, claim.input, context);
    const metrics = plan.metrics?.length
      ? await computeMetrics(plan.metrics, claim.input, result, {
          sandbox: deps.sandbox,
          cpuMs: config.stepCpuMs,
          memoryMb: config.stepMemoryMb,
          maxOutputBytes: config.runMaxResultBytes,
          owner: claim.user_uid,
          ownerShare: config.sandboxUserIsolates,
        })
      : null;
    // The version's output_schema (its output contract): an output that fails it ends the run EXCEPTION.
    const violation = outputContractViolation(
      deps.schemas.outputs,
      claim.circuit_version_uid,
      plan.definition,
      result.output,
    );
    ending = violation
      ? failedEnding(base, violation, result.credits)
      : storableEnding(
          {
            ...base,
            state: 'COMPLETED',
            resultBlob: { output: result.output, steps: result.steps },
            metrics,
            cost: RUN_BASE_CREDITS + result.credits,
          },
          result,
        );
  } catch (error) {
    const reason: unknown = control.signal.reason;
    if (
      reason instanceof RunHandedBack ||
      reason instanceof RunParked ||
      reason instanceof RunAwaitingSlot ||
      reason instanceof RunLost
    ) {
      await recordRequests();
      await recorder.flush();
      endRunSpan(null);
      if (reason instanceof RunHandedBack) return 'handedBack';
      if (reason instanceof RunAwaitingSlot) return 'awaitingSlot';
      if (reason instanceof RunLost) return 'refused';
      return suspendWaitingRun(deps, claim, reason.waiting);
    }
    const failed = errorOf(error, control.signal, deadlineAt.seconds);
    ending = failedEnding(
      base,
      failed.error,
      await stoppedRunCredits(deps, claim.uid, error, reason, failed.credits),
      error instanceof Error ? error.message : String(error),
    );
  } finally {
    deadline.stop();
    unsubscribe();
  }
  const events = await recorder.closeForEnding();
  ending = { ...ending, cost: cap.charge(Number(ending.cost)), requests: gate.requests };
  try {
    return await ended({ ...ending, events });
  } catch (error) {
    // A value jsonb rejects that the check above did not foresee: end the run now rather than on every retry.
    if (ending.state !== 'COMPLETED' || !String((error as { code?: unknown }).code ?? '').startsWith('22')) throw error;
    ending = failedEnding(
      base,
      { code: 'StepFailed', message: "The run's result cannot be stored" },
      Number(ending.cost) - RUN_BASE_CREDITS,
      String(error),
    );
    return ended({ ...ending, events });
  } finally {
    endRunSpan(ending);
  }
}

/**
 * Parks a run whose every step in flight waits (docs/runs.md, Parked runs): a row until its signal,
 * decision or timer. When a wait was resolved meanwhile, the run is given back instead, to be taken again.
 */
async function suspendWaitingRun(
  deps: RunDeps,
  claim: ClaimedRun,
  waiting: readonly string[],
): Promise<AttemptOutcome> {
  const parked = await parkRun(deps.sequelize, claim.uid, claim.attempt, waiting);
  if (parked === 'parked') return 'parked';
  if (parked === 'woken') {
    await deps.queue.enqueue(claim.uid);
    return 'parked';
  }
  await handBackRuns(deps.sequelize, [{ uid: claim.uid, attempt: claim.attempt }]);
  return 'parkRefused';
}

/** What takes a run off the queue: the worker's in-flight set (src/runs/inflight-runs.ts). */
export interface RunTaker {
  take(uid: string): Promise<void>;
}

/**
 * The Agenda handler for `executeRun` jobs: hands the run to the worker's in-flight set, which claims
 * it and executes it detached from the job. The job ends once the run is claimed (or found terminal,
 * or held by a live worker), so a run that waits holds no job slot (docs/runs.md, Waiting is cheap).
 */
export function executeRunHandler(deps: RunDeps, runs: RunTaker) {
  return async (job: QueueJob<ExecuteRunData>): Promise<void> => {
    const uid = job.attrs.data?.runUid;
    if (!isUid(uid)) {
      deps.log.warn({ data: job.attrs.data }, 'ignoring an executeRun job without a run uid');
      return;
    }
    try {
      await runs.take(uid);
    } catch (error) {
      // Left to the lock expiry / sweeper: the run is re-delivered and claimed again.
      deps.log.error({ err: error, run: uid }, 'run execution failed unexpectedly');
      throw error;
    }
  };
}
