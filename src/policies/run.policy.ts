import type { Circuit, User } from '../models';
import type { CircuitRun } from '../models/CircuitRun';
import { circuitPermits } from './circuit.policy';

/**
 * - `read`: the run object (GET, GraphQL, SSE, subscription). Public runs: anyone, without a token.
 *   Private runs: only the user who started the run (spec §3).
 * - `debug`: why it failed (`error`, and `error` inside step events): only the user who started it (DESIGN §7.1).
 * - `cancel`: only the user who started it (DESIGN §7.3).
 */
export type RunAction = 'read' | 'debug' | 'cancel';

export function runPermits(viewer: User | null, run: Pick<CircuitRun, 'user_uid' | 'is_public'>, action: RunAction): boolean {
  switch (action) {
    case 'read':
      return run.is_public || (viewer !== null && viewer.uid === run.user_uid);
    case 'debug':
    case 'cancel':
      return viewer !== null && viewer.uid === run.user_uid;
  }
}

/**
 * Starting a run: the caller must be allowed to run the circuit; making the run public is the
 * circuit owner's decision (spec §3: "Only the circuit owner can set is_public true").
 */
export function startRunPermits(viewer: User | null, circuit: Circuit, isPublic: boolean): { allowed: boolean; message?: string } {
  if (!circuitPermits(viewer, circuit, 'run')) return { allowed: false, message: 'You are not allowed to run this circuit' };
  if (isPublic && !circuitPermits(viewer, circuit, 'manage')) return { allowed: false, message: 'Only the circuit owner may make a run public' };
  return { allowed: true };
}
