import { CircuitRun } from '../../models/CircuitRun';
import type { RunState } from '../../domain/runs';
import type { LoggedRunEvent } from '../../runs';
import { runPermits } from '../../policies/run.policy';
import type { AppContext } from '../context';
import { aboutCircuit } from '../notices';
import { CircuitRunEventType, CircuitRunType, WaitingStepType } from './run.type';

/**
 * The one place a run is shaped for callers (GraphQL, and through the REST fragment REST, SSE and
 * webhooks). Fields follow RUN_COLUMNS; owner-only ones (`error`) by the run policy's `debug`.
 * A run of a deprecated circuit carries the deprecation notice (docs/api-conventions.md, Notices).
 */
export async function presentRun(ctx: AppContext, run: CircuitRun): Promise<CircuitRunType> {
  const circuit = await ctx.loaders.circuit.load(run.circuit_uid);
  if (circuit) aboutCircuit(ctx, circuit);
  return CircuitRunType.from(run, runPermits(ctx.viewer, run, 'debug'));
}

/**
 * `waitingFor` (docs/runs.md, Waiting for the world): the steps a RUNNING run waits on, oldest first, for its owner
 * (run policy `approve`); null for anyone else, in any other state, and when nothing waits (REST leaves
 * `waiting_for` out then). Read from circuit_run_steps through the request's loader (one statement for
 * the runs of a list), never from the cache of ended runs.
 */
export async function presentWaitingFor(ctx: AppContext, run: CircuitRunType): Promise<WaitingStepType[] | null> {
  if (run.state !== 'RUNNING' || !runPermits(ctx.viewer, { user_uid: run.userUid, is_public: run.isPublic }, 'approve'))
    return null;
  const steps = await ctx.loaders.waitingSteps.load(run.uid);
  const { runs } = ctx.services;
  return steps.length > 0
    ? steps.map((step) =>
        WaitingStepType.from(
          step,
          step.kind === 'signal'
            ? { callback_url: runs.waitUrl(run.uid, step.step_id, 'signal') }
            : step.kind === 'approval'
              ? { decision_url: runs.waitUrl(run.uid, step.step_id, 'approval') }
              : {},
        ),
      )
    : null;
}

/** The run as it was in `state`: fields that come later (end, result, error) are left out by state. */
export function runAsOf(run: CircuitRun, state: RunState): CircuitRun {
  return state === run.state ? run : CircuitRun.build({ ...run.get(), state }, { isNewRecord: false, raw: true });
}

/** A logged event for this viewer: state events carry the run as of that state; `error` inside step events is the owner's. */
export async function presentRunEvent(
  ctx: AppContext,
  run: CircuitRun,
  event: LoggedRunEvent,
): Promise<CircuitRunEventType> {
  const view: CircuitRunEventType = Object.assign(new CircuitRunEventType(), {
    seq: event.seq,
    kind: event.kind,
    createdAt: event.created_at,
    run: null,
    data: null,
  });
  if (event.kind === 'state') {
    view.run = await presentRun(ctx, runAsOf(run, event.data.state as RunState));
  } else {
    const { error, ...data } = event.data;
    view.data = error !== undefined && runPermits(ctx.viewer, run, 'debug') ? { ...data, error } : data;
  }
  return view;
}
