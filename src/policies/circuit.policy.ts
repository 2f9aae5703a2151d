import { Op, WhereOptions } from 'sequelize';
import type { Circuit, User } from '../models';

/**
 * - `list`: appears in listings and search, may be starred and pinged as existing.
 * - `read`: the circuit object, its versions and explain.
 * - `run`: post a query to it.
 * - `manage`: update, deprecate, publish versions, set a run public.
 */
export type CircuitAction = 'list' | 'read' | 'run' | 'manage';

/**
 * Private: only the owner (admins may read). Protected: listed and runnable by any token holder,
 * but its object, versions and explain are the owner's. Public: anyone reads, token holders run.
 */
export function circuitPermits(viewer: User | null, circuit: Circuit, action: CircuitAction): boolean {
  const isOwner = viewer !== null && viewer.uid === circuit.owner_uid;
  const isAdmin = viewer?.is_admin === true;
  if (action === 'manage') return isOwner;
  if (isOwner) return true;
  if (circuit.is_private) return isAdmin && action !== 'run';
  switch (action) {
    case 'list':
      return true;
    case 'read':
      return !circuit.is_protected || isAdmin;
    case 'run':
      return viewer !== null;
  }
}

/**
 * circuitPermits(viewer, c, 'list') as SQL over a circuits alias, for queries that filter many
 * circuits at once (lists, counts). Bind the returned replacements alongside your own.
 */
export function listableCircuitsSql(alias: string, viewer: User | null): { sql: string; replacements: Record<string, unknown> } {
  if (viewer?.is_admin) return { sql: 'TRUE', replacements: {} };
  if (!viewer) return { sql: `NOT ${alias}.is_private`, replacements: {} };
  return { sql: `(NOT ${alias}.is_private OR ${alias}.owner_uid = :listViewerUid)`, replacements: { listViewerUid: viewer.uid } };
}

/** circuitPermits(viewer, c, 'list') as a Sequelize where clause on Circuit. */
export function listableCircuitsWhere(viewer: User | null): WhereOptions<Circuit> {
  if (viewer?.is_admin) return {};
  return viewer ? { [Op.or]: [{ is_private: false }, { owner_uid: viewer.uid }] } : { is_private: false };
}
