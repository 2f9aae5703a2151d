import { Circuit, User } from '../../models';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { CircuitAction, circuitPermits } from '../../policies/circuit.policy';
import type { AppContext } from '../context';
import { isUid } from '../../ids';

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
