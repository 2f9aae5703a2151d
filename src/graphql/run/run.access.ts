import { CircuitRun, isTerminal, type RunState } from '../../models/CircuitRun';
import type { RunReadRows } from '../../runs/read-cache';
import { Circuit } from '../../models';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { RunAction, runPermits } from '../../policies/run.policy';
import type { AppContext } from '../context';
import { isUid } from '../../ids';
import { preparedQuery } from '../../db/prepared';

/**
 * One run by uid, with its circuit (for its deprecation notice), in one named (prepared) statement:
 * a statement costs a round trip (a socket write, measured as the largest item of a read's CPU) plus,
 * through Sequelize's findByPk, building and planning the same SELECT each time. An ended run's rows
 * come from the per-process cache (run-read.cache.ts) when it has them: polls and repeated GETs
 * of a result cost no round trip. The circuit primes the request's circuit loader.
 */
let runSelect: string | undefined;
const CIRCUIT_PREFIX = 'circuit__';
async function readRunRows(uid: string): Promise<RunReadRows | null> {
  runSelect ??= `SELECT ${Object.keys(CircuitRun.getAttributes()).map((a) => `r."${a}"`).join(', ')}, ` +
    `${Object.keys(Circuit.getAttributes()).map((a) => `c."${a}" AS "${CIRCUIT_PREFIX}${a}"`).join(', ')} ` +
    'FROM circuit_runs r LEFT JOIN circuits c ON c.uid = r.circuit_uid WHERE r.uid = $1';
  const [row] = await preparedQuery<Record<string, unknown>>(CircuitRun.sequelize!, runSelect, [uid]);
  if (!row) return null;
  const run: Record<string, unknown> = {};
  const circuit: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith(CIRCUIT_PREFIX)) circuit[key.slice(CIRCUIT_PREFIX.length)] = value;
    else run[key] = value;
  }
  return { run, circuit: circuit.uid ? circuit : null };
}

/**
 * An ended run served from the cache is built once per entry and shared by the requests that read it:
 * building a run instance cost more than the rest of its read from the cache. Its values are frozen, so
 * a change would throw rather than reach another request.
 */
const sharedRuns = new WeakMap<RunReadRows, CircuitRun>();
function sharedRun(rows: RunReadRows): CircuitRun {
  let run = sharedRuns.get(rows);
  if (!run) {
    run = CircuitRun.build({ ...rows.run } as never, { isNewRecord: false, raw: true });
    Object.freeze(run.dataValues);
    sharedRuns.set(rows, run);
  }
  return run;
}

async function loadRun(ctx: AppContext, uid: string): Promise<CircuitRun | null> {
  const cache = ctx.services.runs.readCache;
  const cached = cache.get(uid);
  let rows = cached;
  if (!rows) {
    const begunAt = cache.begin();
    const read = await cache.readOnce(uid, begunAt, () => readRunRows(uid));
    if (!read) return null;
    if (isTerminal(read.run.state as RunState)) cache.set(uid, read, begunAt);
    rows = read;
  }
  // The circuit is the request's own (a mutation in the same request may change it); its nested values are frozen.
  if (rows.circuit) ctx.loaders.circuit.prime(rows.circuit.uid as string, Circuit.build({ ...rows.circuit } as never, { isNewRecord: false, raw: true }));
  return cached ? sharedRun(cached) : CircuitRun.build({ ...rows.run } as never, { isNewRecord: false, raw: true });
}

/** The run a request names, or NotFound; then the policy decides 401/403. */
export async function findRunFor(ctx: AppContext, uid: string, action: RunAction = 'read'): Promise<CircuitRun> {
  const run = isUid(uid) ? await loadRun(ctx, uid) : null;
  if (!run) throw notFound('Circuit run');
  authorize(ctx.viewer, runPermits(ctx.viewer, run, action), 'This run is private to the user who started it');
  return run;
}
