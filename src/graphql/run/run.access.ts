import { CircuitRun } from '../../models/CircuitRun';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { RunAction, runPermits } from '../../policies/run.policy';
import type { AppContext } from '../context';
import { isUid } from '../../ids';

/** The run a request names, or NotFound; then the policy decides 401/403. */
export async function findRunFor(ctx: AppContext, uid: string, action: RunAction = 'read'): Promise<CircuitRun> {
  const run = isUid(uid) ? await CircuitRun.findByPk(uid) : null;
  if (!run) throw notFound('Circuit run');
  authorize(ctx.viewer, runPermits(ctx.viewer, run, action), 'This run is private to the user who started it');
  return run;
}
