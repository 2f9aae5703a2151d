import type { WebhookDeps } from './ports';
import { CircuitRun } from '../models/CircuitRun';
import { presentRunPayload } from '../runs';

/**
 * The run exactly as `GET /circuit-runs/{uid}` shows it to its owner (the REST payload, owner-only
 * fields included), from the one run presenter (src/runs/present.ts): no GraphQL schema is loaded in
 * the worker for it. Null when the run is gone or is not `ownerUid`'s.
 */
export async function ownerViewOfRun(
  deps: Pick<WebhookDeps, 'runs'>,
  runUid: string,
  ownerUid: string,
): Promise<Record<string, unknown> | null> {
  const run = await CircuitRun.findByPk(runUid);
  if (!run || run.user_uid !== ownerUid) return null;
  const waitingFor = run.state === 'RUNNING' ? (await deps.runs.waitingSteps([run.uid]))[0] : null;
  return presentRunPayload(run, {
    mayDebug: true,
    waitingFor,
    waitUrl: (uid, path, kind) => deps.runs.waitUrl(uid, path, kind),
  });
}
