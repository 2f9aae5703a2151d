import { Op, WhereOptions } from 'sequelize';
import { Circuit, User } from '../../models';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { CircuitAction, circuitPermits } from '../../policies/circuit.policy';
import type { AppContext } from '../context';
import { isUid } from '../common/uid';

/** The circuit a request names, or NotFound; then the policy decides 401/403 for `action`. */
export async function findCircuitFor(ctx: AppContext, uid: string, action: CircuitAction): Promise<Circuit> {
  const circuit = isUid(uid) ? await ctx.loaders.circuit.load(uid) : null;
  if (!circuit) throw notFound('Circuit');
  authorize(ctx.viewer, circuitPermits(ctx.viewer, circuit, action));
  return circuit;
}

export async function findCircuitByNameFor(ctx: AppContext, username: string, name: string, action: CircuitAction): Promise<Circuit> {
  const circuit = await findCircuitByName(username, name);
  if (!circuit) throw notFound('Circuit');
  authorize(ctx.viewer, circuitPermits(ctx.viewer, circuit, action));
  return circuit;
}

export async function findCircuitByName(username: string, name: string): Promise<Circuit | null> {
  const owner = await User.findOne({ where: { username } });
  return owner ? Circuit.findOne({ where: { owner_uid: owner.uid, name } }) : null;
}

/**
 * SQL condition (on alias `alias`) for the circuits `viewer` may list: what circuitPermits(…, 'list')
 * allows, for queries that filter many circuits at once. Keep the two in step.
 */
export function listableSql(viewer: User | null, alias = 'c'): string {
  if (viewer?.is_admin) return 'TRUE';
  const sequelize = Circuit.sequelize!;
  return viewer ? `(${alias}.is_private = FALSE OR ${alias}.owner_uid = ${sequelize.escape(viewer.uid)})` : `${alias}.is_private = FALSE`;
}

/** The same condition as listableSql, as a Sequelize where clause on Circuit. */
export function listableWhere(viewer: User | null): WhereOptions<Circuit> {
  if (viewer?.is_admin) return {};
  return viewer ? { [Op.or]: [{ is_private: false }, { owner_uid: viewer.uid }] } : { is_private: false };
}
