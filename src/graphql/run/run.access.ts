import { CircuitRun } from '../../models/CircuitRun';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { RunAction, runPermits } from '../../policies/run.policy';
import type { AppContext } from '../context';
import { isUid } from '../../ids';
import { preparedQuery } from '../../db/prepared';

/**
 * One run by uid as a named (prepared) statement: every GET of a run (and every poll) reads it, and
 * Sequelize's findByPk builds and plans the same SELECT each time.
 */
let runSelect: string | undefined;
async function loadRun(uid: string): Promise<CircuitRun | null> {
  runSelect ??= `SELECT ${Object.keys(CircuitRun.getAttributes()).map((a) => `"${a}"`).join(', ')} FROM circuit_runs WHERE uid = $1`;
  const [row] = await preparedQuery<object>(CircuitRun.sequelize!, runSelect, [uid]);
  return row ? CircuitRun.build(row as never, { isNewRecord: false, raw: true }) : null;
}

/** The run a request names, or NotFound; then the policy decides 401/403. */
export async function findRunFor(ctx: AppContext, uid: string, action: RunAction = 'read'): Promise<CircuitRun> {
  const run = isUid(uid) ? await loadRun(uid) : null;
  if (!run) throw notFound('Circuit run');
  authorize(ctx.viewer, runPermits(ctx.viewer, run, action), 'This run is private to the user who started it');
  return run;
}
