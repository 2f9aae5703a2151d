import type { Job } from 'agenda' with { 'resolution-mode': 'import' };
import { evaluateExpression } from '../engine/expression';
import type { SandboxLimits } from '../sandbox/sandbox';
import { ExecutionFailure, executeDefinition, type ExecutionResult } from '../engine/run-executor';
import { isUid } from '../ids';
import { CircuitRun, isTerminal } from '../models/CircuitRun';
import type { MetricExpression } from '../models/CircuitMetric';
import type { Services } from '../services';
import type { ExecuteRunData } from './agenda';
import { RUN_BASE_CREDITS } from '../credits/holds';
import { claimRun, ClaimedRun, finishRun, heartbeatRun, RunEnding } from './run-transitions';
import { runLifecycleHooks } from './run-hooks';

/** A run taken over this many times (its workers kept dying) ends in EXCEPTION instead of running again. */
export const MAX_ATTEMPTS = 3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

async function end(services: Services, ending: RunEnding): Promise<void> {
  const channel = services.runEvents.sqlChannel;
  const charge = await finishRun(services.sequelize, ending, channel);
  if (!charge) {
    services.log.info({ run: ending.uid, attempt: ending.attempt }, 'run was ended by another attempt; result dropped');
    return;
  }
  const log = { run: ending.uid, state: ending.state, cost: charge.cost, charged: charge.amount, attempt: ending.attempt };
  if (ending.state === 'EXCEPTION') services.log.warn({ ...log, reason: ending.failureReason }, 'run failed');
  else services.log.debug(log, 'run completed');
  if (!channel) {
    await services.runEvents.publish({ uid: ending.uid, state: ending.state }).catch((error: unknown) =>
      services.log.warn({ err: error, run: ending.uid }, 'could not publish run state'));
  }
}

async function executeClaimed(services: Services, claim: ClaimedRun, touch: () => Promise<void>): Promise<void> {
  const { log, sequelize, config } = services;
  const base = { uid: claim.uid, attempt: claim.attempt };
  if (claim.attempt === 1) {
    if (!services.runEvents.sqlChannel) await services.runEvents.publish({ uid: claim.uid, state: 'RUNNING' }).catch((error: unknown) =>
      log.warn({ err: error, run: claim.uid }, 'could not publish run state'));
  } else {
    log.warn({ run: claim.uid, attempt: claim.attempt }, 'taking over a run whose worker went silent');
  }
  if (claim.attempt > MAX_ATTEMPTS) {
    return end(services, { ...base, state: 'EXCEPTION', cost: RUN_BASE_CREDITS, failureReason: `abandoned: its workers stopped ${claim.attempt - 1} times` });
  }
  const plan = claim.definition ? { definition: claim.definition, metrics: claim.metrics } : null;
  if (!plan) return end(services, { ...base, state: 'EXCEPTION', cost: RUN_BASE_CREDITS, failureReason: 'the circuit version no longer exists' });

  const controller = new AbortController();
  const beat = setInterval(() => {
    void (async () => {
      try {
        if (!(await heartbeatRun(sequelize, claim.uid, claim.attempt))) controller.abort(new Error('lost the run to another worker'));
        await touch();
      } catch (error) {
        log.warn({ err: error, run: claim.uid }, 'run heartbeat failed');
      }
    })();
  }, Math.max(200, Math.floor(config.jobLockLifetimeMs / 4)));
  beat.unref();

  let ending: RunEnding;
  try {
    const result = await executeDefinition(plan.definition, claim.input, {
      services,
      run: { uid: claim.uid, userUid: claim.user_uid, circuitUid: claim.circuit_uid, versionUid: claim.circuit_version_uid },
      signal: controller.signal,
      depth: 0,
      // Until the job layer wires credit holds and events (runctl, credits): budgets from config, holds always granted.
      budget: { maxSteps: config.runMaxSteps, maxResultBytes: config.runMaxResultBytes, hold: async () => true },
    });
    const metrics = plan.metrics?.length
      ? await computeMetrics(plan.metrics, claim.input, result, { cpuMs: config.stepCpuMs, memoryMb: config.stepMemoryMb, maxOutputBytes: config.runMaxResultBytes })
      : null;
    ending = {
      ...base,
      state: 'COMPLETED',
      resultBlob: { output: result.output, steps: result.steps },
      metrics,
      cost: RUN_BASE_CREDITS + result.credits,
    };
  } catch (error) {
    const credits = error instanceof ExecutionFailure ? error.credits : 0;
    ending = { ...base, state: 'EXCEPTION', cost: RUN_BASE_CREDITS + credits, failureReason: error instanceof Error ? error.message : String(error) };
  } finally {
    clearInterval(beat);
  }
  if (controller.signal.aborted && ending.state === 'EXCEPTION') {
    log.info({ run: claim.uid, attempt: claim.attempt }, 'run execution cancelled');
  }
  await end(services, ending);
}

/**
 * Executes one run, idempotently: Agenda delivers at least once, so the run is claimed first
 * (PROVISIONED → RUNNING, or a takeover when its worker went silent). A run that is terminal is left
 * alone; one held by a live worker is waited on, and taken over if that worker goes silent.
 */
export async function processRun(services: Services, uid: string, touch: () => Promise<void> = async () => {}): Promise<void> {
  const lease = services.config.jobLockLifetimeMs;
  const giveUpAt = Date.now() + 3 * lease;
  for (;;) {
    const claim = await claimRun(services.sequelize, uid, lease, services.runEvents.sqlChannel);
    if (claim) {
      if (claim.attempt === 1) runLifecycleHooks.started(services, claim);
      await executeClaimed(services, claim, touch);
      runLifecycleHooks.ended(services, claim);
      return;
    }
    const run = await CircuitRun.findByPk(uid, { attributes: ['uid', 'state'] });
    if (!run || isTerminal(run.state)) return;
    if (Date.now() > giveUpAt) return; // still held by a live worker; the sweeper checks it again later
    await sleep(run.state === 'PROVISIONED' ? 10 : Math.max(100, lease / 4));
    await touch().catch(() => {});
  }
}

/** The Agenda handler for `executeRun` jobs. */
export function executeRunHandler(services: Services) {
  return async (job: Job<ExecuteRunData>): Promise<void> => {
    const uid = job.attrs.data?.runUid;
    if (!isUid(uid)) {
      services.log.warn({ data: job.attrs.data }, 'ignoring an executeRun job without a run uid');
      return;
    }
    try {
      await processRun(services, uid, () => job.touch());
    } catch (error) {
      // Left to the lock expiry / sweeper: the run is re-delivered and claimed again.
      services.log.error({ err: error, run: uid }, 'run execution failed unexpectedly');
      throw error;
    }
  };
}
