import type { WebhookDeps } from './ports';
import { CircuitRun } from '../models/CircuitRun';
import type { RunState } from '../domain/runs';
import { presentRunPayload } from '../runs';

/**
 * The run exactly as `GET /circuit-runs/{uid}` shows it to its owner (the REST payload, owner-only
 * fields included), from the one run presenter (src/runs/present.ts): no GraphQL schema is loaded in
 * the worker for it. Null when the run is gone or is not `ownerUid`'s. With `asOf`, the run as it was in
 * that state (a step message's run is the run when the step event happened, not when it is sent): the
 * fields a later state brings (its end, result, error, metrics) are left out by the presenter's rules.
 */
export async function ownerViewOfRun(
  deps: Pick<WebhookDeps, 'runs'>,
  runUid: string,
  ownerUid: string,
  asOf?: RunState,
): Promise<Record<string, unknown> | null> {
  const found = await CircuitRun.findByPk(runUid);
  if (!found || found.user_uid !== ownerUid) return null;
  const run =
    asOf === undefined || asOf === found.state
      ? found
      : CircuitRun.build({ ...found.get(), state: asOf }, { isNewRecord: false, raw: true });
  // What the run waits on is known only now: shown only while it still runs.
  const waitingFor =
    run.state === 'RUNNING' && found.state === 'RUNNING' ? (await deps.runs.waitingSteps([run.uid]))[0] : null;
  return presentRunPayload(run, {
    mayDebug: true,
    waitingFor,
    waitUrl: (uid, path, kind) => deps.runs.waitUrl(uid, path, kind),
  });
}
