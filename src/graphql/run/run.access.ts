import { CircuitRun } from '../../models/CircuitRun';
import { isTerminal, type RunState } from '../../domain/runs';
import type { RunReadRows } from '../../runs';
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
 * through Sequelize's findByPk, building and planning the same SELECT each time. A large ended run's
 * rows (over 128 KiB) come from the per-process shared copies (src/runs/read-cache.ts) when it has
 * them, so that its many readers hold one copy; any other run is read each time. The
 * circuit primes the request's circuit loader.
 */
let runSelect: string | undefined;
const CIRCUIT_PREFIX = 'circuit__';
async function readRunRows(uid: string): Promise<RunReadRows | null> {
  runSelect ??=
    `SELECT ${Object.keys(CircuitRun.getAttributes())
      .map((a) => `r."${a}"`)
      .join(', ')}, ` +
    `${Object.keys(Circuit.getAttributes())
      .map((a) => `c."${a}" AS "${CIRCUIT_PREFIX}${a}"`)
      .join(', ')} ` +
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

/** A run as read, and the rows the cache of ended runs kept it from (undefined when it keeps none). */
interface LoadedRun {
  run: CircuitRun;
  kept?: RunReadRows;
}

async function loadRun(ctx: AppContext, uid: string): Promise<LoadedRun | null> {
  const cache = ctx.services.runs.readCache;
  const cached = cache.get(uid);
  let rows = cached;
  let kept = cached;
  if (!rows) {
    const begunAt = cache.begin();
    const read = await cache.readOnce(uid, begunAt, () => readRunRows(uid));
    if (!read) return null;
    if (isTerminal(read.run.state as RunState) && cache.set(uid, read, begunAt)) kept = read;
    rows = read;
  }
  // The circuit is the request's own (a mutation in the same request may change it); its nested values are frozen.
  if (rows.circuit)
    ctx.loaders.circuit.prime(
      rows.circuit.uid as string,
      Circuit.build({ ...rows.circuit } as never, { isNewRecord: false, raw: true }),
    );
  return {
    run: cached ? sharedRun(cached) : CircuitRun.build({ ...rows.run } as never, { isNewRecord: false, raw: true }),
    kept,
  };
}

async function loadRunFor(ctx: AppContext, uid: string, action: RunAction): Promise<LoadedRun> {
  const loaded = isUid(uid) ? await loadRun(ctx, uid) : null;
  if (!loaded) throw notFound('Circuit run');
  authorize(ctx.viewer, runPermits(ctx.viewer, loaded.run, action), 'This run is private to the user who started it');
  return loaded;
}

/** A run read again after this request changed it (the same prepared read as a first one, never from the cache). */
export async function readRunAgain(uid: string): Promise<CircuitRun | null> {
  const rows = await readRunRows(uid);
  return rows ? CircuitRun.build({ ...rows.run } as never, { isNewRecord: false, raw: true }) : null;
}

/** The run a request names, or NotFound; then the policy decides 401/403. */
export async function findRunFor(ctx: AppContext, uid: string, action: RunAction = 'read'): Promise<CircuitRun> {
  return (await loadRunFor(ctx, uid, action)).run;
}

/**
 * findRunFor(ctx, uid, 'read') for a response that is the run alone (`circuitRun`, REST's GET). An
 * ended run whose rows the cache keeps is answered with the same bytes to every viewer who sees the
 * same of it, so those bytes are made once and shared (ctx.sharedAnswers, beside the kept rows): 60
 * paused readers of a 4 MiB result then hold one copy, not one each (docs/connections.md).
 * The key is what the viewer may see: the owner's view (owner-only fields, run policy `debug`) is
 * kept per owner, everyone else's — what any reader of the run sees — once. The policy has decided
 * this request (read) before anything is shared.
 */
export async function findRunToAnswer(ctx: AppContext, uid: string): Promise<CircuitRun> {
  const { run, kept } = await loadRunFor(ctx, uid, 'read');
  if (kept) {
    const view = runPermits(ctx.viewer, run, 'debug') ? `owner:${ctx.viewer?.uid ?? ''}` : 'reader';
    ctx.sharedAnswers = ctx.services.runs.readCache.beside(kept, `answers:${view}`, () => new Map());
  }
  return run;
}
