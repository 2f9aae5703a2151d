import type { WhereOptions } from 'sequelize';
import type { Circuit, User } from '../models';
import type { CircuitRun } from '../models/CircuitRun';
import { circuitPermits } from './circuit.policy';
import { tokenMayStartRun } from './token.policy';
import { OWNER, any, flag, permits, ruleWhere, type Rule, type RuleTable } from './visibility';

/**
 * - `read`: the run object (GET, GraphQL, SSE, subscription). Public runs: anyone, without a token.
 *   Private runs: only the user who started the run (docs/spec-decisions.md).
 * - `debug`: why it failed (`error`, and `error` inside step events): only the user who started it.
 * - `cancel`: only the user who started it.
 * - `approve`: decide its approval steps, and see what it waits for (`waiting_for`): only the user
 *   who started it.
 * - `replay`: start a replay of it: only the user who started it.
 */
export type RunAction = 'read' | 'debug' | 'cancel' | 'approve' | 'replay';

/** A run belongs to the user who started it: the circuit's owner and admins have no say over it. */
const RUNS: RuleTable = { ownerColumn: 'user_uid' };

export const RUN_RULES: Record<RunAction, Rule> = {
  read: any(OWNER, flag('is_public')),
  debug: OWNER,
  cancel: OWNER,
  approve: OWNER,
  replay: OWNER,
};

export function runPermits(
  viewer: User | null,
  run: Pick<CircuitRun, 'user_uid' | 'is_public'>,
  action: RunAction,
): boolean {
  return permits(RUN_RULES[action], RUNS, viewer, run);
}

/**
 * The runs the viewer may `action`, as a Sequelize where clause on CircuitRun: what a bulk action by filter
 * (cancel, replay) works on, whatever its filter says.
 */
export function runsWhere(viewer: User | null, action: RunAction): WhereOptions<CircuitRun> {
  return ruleWhere<CircuitRun>(RUN_RULES[action], RUNS, viewer);
}

/** runPermits(viewer, run, 'read') as a Sequelize where clause on CircuitRun; with no viewer, the public runs. */
export function readableRunsWhere(viewer: User | null): WhereOptions<CircuitRun> {
  return ruleWhere<CircuitRun>(RUN_RULES.read, RUNS, viewer);
}

/**
 * Starting a run: the caller's token must allow it (scopes, circuit allow-list: token.policy), the
 * caller must be allowed to run the circuit; making the run public is the circuit owner's decision
 * (the API contract: "Only the circuit owner can set is_public true").
 */
export function startRunPermits(
  viewer: User | null,
  circuit: Circuit,
  isPublic: boolean,
  options: { webhook: boolean } = { webhook: false },
): { allowed: boolean; message?: string } {
  const token = tokenMayStartRun(viewer, circuit.uid, options);
  if (!token.allowed) return token;
  if (!circuitPermits(viewer, circuit, 'run'))
    return { allowed: false, message: 'You are not allowed to run this circuit' };
  if (isPublic && !circuitPermits(viewer, circuit, 'manage'))
    return { allowed: false, message: 'Only the circuit owner may make a run public' };
  return { allowed: true };
}
