import type { RunDeps } from './ports';
import { waitForRunEnd } from './events/wait';
import { abortedError, endRun, failedEnding } from './execute';
import { abandonedAttempt, requestRunCancel } from './transitions';
import type { RunState } from '../domain/runs';

/** How long a cancel waits for a RUNNING run to end before answering it as it is. */
export const CANCEL_WAIT_MS = 5_000;

/**
 * Cancels a run (docs/runs.md, Cancel); the caller has checked the policy. The request is recorded on the run
 * first, so a worker that claims it afterwards ends it at once; a PROVISIONED run is ended here; a
 * RUNNING one is told over the bus, in whichever process runs it, whose worker aborts its steps and
 * ends it EXCEPTION Canceled, charging base + finished steps (a RUNNING run whose worker is gone is
 * ended here). A terminal run is left as it is.
 */
export async function cancelRun(deps: RunDeps, uid: string, waitMs = CANCEL_WAIT_MS): Promise<void> {
  const marked = await requestRunCancel(deps.sequelize, uid);
  if (!marked) return;
  await stopCanceledRun(deps, uid, marked, waitMs);
}

/**
 * What follows a run's cancel request (`marked`: its state and attempt when it was marked): a PROVISIONED
 * run ended here, a RUNNING one whose worker is gone or that is parked ended here, any other told over the
 * bus (and waited for up to `waitMs`). Each path ends the run once, so its webhook hears one end.
 */
export async function stopCanceledRun(
  deps: RunDeps,
  uid: string,
  marked: { state: RunState; attempt: number },
  waitMs: number,
): Promise<void> {
  if (
    marked.state === 'PROVISIONED' &&
    (await endRun(deps, failedEnding({ uid, attempt: marked.attempt }, abortedError('Canceled'))))
  )
    return;
  // Its worker may have died with it: then nobody hears the message, and the cancel ends it here.
  // Or it is parked (a row waiting for a signal, a decision or a timer): it is ended here as well.
  const orphaned = await abandonedAttempt(deps.sequelize, uid);
  if (
    orphaned !== null &&
    (await endRun(deps, failedEnding({ uid, attempt: orphaned.attempt }, abortedError('Canceled'), orphaned.credits)))
  )
    return;
  await deps.bus.publish({ uid, cancel: true });
  if (waitMs > 0) await waitForRunEnd(deps, uid, waitMs);
}
