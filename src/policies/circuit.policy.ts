import type { WhereOptions } from 'sequelize';
import type { Circuit, User } from '../models';
import {
  ADMIN,
  OWNER,
  SIGNED_IN,
  all,
  any,
  flag,
  not,
  permits,
  ruleSql,
  ruleWhere,
  type Rule,
  type RuleTable,
} from './visibility';

/**
 * - `list`: appears in listings and search, may be starred and pinged as existing.
 * - `read`: the circuit object, its versions and explain.
 * - `run`: post a query to it.
 * - `manage`: update, deprecate, publish versions, set a run public.
 */
export type CircuitAction = 'list' | 'read' | 'run' | 'manage';

const PRIVATE = flag('is_private');
const PROTECTED = flag('is_protected');
const CIRCUITS: RuleTable = { ownerColumn: 'owner_uid' };

/**
 * The one statement of who may do what with a circuit; everything below derives from it.
 * Private: only the owner (admins may list and read). Protected: listed and runnable by any token
 * holder, but its object, versions and explain are the owner's (and admins'). Public: anyone
 * reads, token holders run. Only the owner manages.
 */
export const CIRCUIT_RULES: Record<CircuitAction, Rule> = {
  list: any(OWNER, ADMIN, not(PRIVATE)),
  read: any(OWNER, ADMIN, all(not(PRIVATE), not(PROTECTED))),
  run: any(OWNER, all(not(PRIVATE), SIGNED_IN)),
  manage: OWNER,
};

export function circuitPermits(viewer: User | null, circuit: Circuit, action: CircuitAction): boolean {
  return permits(CIRCUIT_RULES[action], CIRCUITS, viewer, circuit);
}

/**
 * circuitPermits(viewer, c, 'list') as SQL over a circuits alias, for queries that filter many
 * circuits at once (lists, counts). Bind the returned replacements alongside your own.
 */
export function listableCircuitsSql(
  alias: string,
  viewer: User | null,
): { sql: string; replacements: Record<string, unknown> } {
  return ruleSql(CIRCUIT_RULES.list, CIRCUITS, viewer, alias);
}

/** circuitPermits(viewer, c, 'list') as a Sequelize where clause on Circuit. */
export function listableCircuitsWhere(viewer: User | null): WhereOptions<Circuit> {
  return ruleWhere<Circuit>(CIRCUIT_RULES.list, CIRCUITS, viewer);
}
