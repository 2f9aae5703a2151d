import { CircuitRun } from '../../models/CircuitRun';
import { Circuit } from '../../models';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { RunAction, runPermits } from '../../policies/run.policy';
import type { AppContext } from '../context';
import { isUid } from '../../ids';
import { preparedQuery } from '../../db/prepared';

/**
 * One run by uid, with its circuit, in one named (prepared) statement: every GET of a run (and every
 * poll) reads both (the circuit for its deprecation notice), and a statement costs a round trip
 * (a socket write, measured as the largest item of a read's CPU) plus, through Sequelize's findByPk,
 * building and planning the same SELECT each time. The circuit primes the request's circuit loader.
 */
let runSelect: string | undefined;
const CIRCUIT_PREFIX = 'circuit__';
async function loadRun(ctx: AppContext, uid: string): Promise<CircuitRun | null> {
  runSelect ??= `SELECT ${Object.keys(CircuitRun.getAttributes()).map((a) => `r."${a}"`).join(', ')}, ` +
    `${Object.keys(Circuit.getAttributes()).map((a) => `c."${a}" AS "${CIRCUIT_PREFIX}${a}"`).join(', ')} ` +
    'FROM circuit_runs r LEFT JOIN circuits c ON c.uid = r.circuit_uid WHERE r.uid = $1';
  const [row] = await preparedQuery<Record<string, unknown>>(CircuitRun.sequelize!, runSelect, [uid]);
  if (!row) return null;
  const runRow: Record<string, unknown> = {};
  const circuitRow: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith(CIRCUIT_PREFIX)) circuitRow[key.slice(CIRCUIT_PREFIX.length)] = value;
    else runRow[key] = value;
  }
  if (circuitRow.uid) ctx.loaders.circuit.prime(circuitRow.uid as string, Circuit.build(circuitRow as never, { isNewRecord: false, raw: true }));
  return CircuitRun.build(runRow as never, { isNewRecord: false, raw: true });
}

/** The run a request names, or NotFound; then the policy decides 401/403. */
export async function findRunFor(ctx: AppContext, uid: string, action: RunAction = 'read'): Promise<CircuitRun> {
  const run = isUid(uid) ? await loadRun(ctx, uid) : null;
  if (!run) throw notFound('Circuit run');
  authorize(ctx.viewer, runPermits(ctx.viewer, run, action), 'This run is private to the user who started it');
  return run;
}
