import { Circuit, CircuitAdaptor, CircuitVersion, type User } from '../models';
import { CircuitRun } from '../models/CircuitRun';
import { isTerminal } from '../domain/runs';
import { badInput, conflict, notFound } from '../errors';
import { isUid } from '../ids';
import type { RunDeps } from './ports';
import { createRun, type CreateRunResult } from './create-run';

export const REPLAY_MODES = ['recorded', 'live'] as const;
export type ReplayMode = (typeof REPLAY_MODES)[number];

export interface ReplayOptions {
  mode?: string | null;
  /** A version of the run's circuit; the original's version when absent. */
  versionUid?: string | null;
  /** The input; the original's when absent (validated like a query's). */
  input?: Record<string, unknown> | null;
}

/**
 * POST /circuit-runs/{uid}/replay (docs/runs.md, Replay and compare): a new run of the replayed run's circuit, created
 * like a query (createRun: the caller must still be allowed to run the circuit and cover the base
 * credit), carrying `replay_of`. In recorded mode its executor reuses the original's output for every
 * durable step whose rendered request hash equals the original's at the same path (src/runs/step-gate.ts).
 * The caller has been checked to own `run` (run policy `replay`).
 */
export async function replayRun(
  deps: RunDeps,
  viewer: User,
  run: CircuitRun,
  options: ReplayOptions,
): Promise<CreateRunResult> {
  const mode = options.mode ?? 'recorded';
  if (!(REPLAY_MODES as readonly string[]).includes(mode))
    throw badInput('mode must be recorded or live', { field: 'mode' });
  if (!isTerminal(run.state))
    throw conflict(`The run is ${run.state}: only a COMPLETED or EXCEPTION run can be replayed`);
  const circuit = await Circuit.findByPk(run.circuit_uid);
  const adaptor =
    circuit &&
    (await CircuitAdaptor.findOne({
      where: { circuit_uid: circuit.uid, kind: 'query' },
      attributes: ['uid'],
      order: [['created_at', 'ASC']],
    }));
  if (!circuit || !adaptor) throw notFound('Circuit');
  let versionUid = run.circuit_version_uid;
  if (options.versionUid != null) {
    const version = isUid(options.versionUid)
      ? await CircuitVersion.findByPk(options.versionUid, { attributes: ['uid', 'circuit_uid'] })
      : null;
    if (!version) throw notFound('Circuit version');
    if (version.circuit_uid !== circuit.uid)
      throw badInput("version_uid must be a version of the run's circuit", { field: 'version_uid' });
    versionUid = version.uid;
  }
  if (options.input != null && (typeof options.input !== 'object' || Array.isArray(options.input)))
    throw badInput('input must be an object', { field: 'input' });
  return createRun(deps, viewer, {
    adaptorUid: adaptor.uid,
    versionUid,
    input: options.input ?? run.input,
    isPublic: false,
    replay: { of: run.uid, mode: mode as ReplayMode },
  });
}

/** Reads the run a replay names (no cache: its state decides). */
export async function loadRunForReplay(uid: string): Promise<CircuitRun | null> {
  return isUid(uid) ? CircuitRun.findByPk(uid) : null;
}
