import { Circuit, User } from '../../models';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { CircuitAction, circuitPermits } from '../../policies/circuit.policy';
import type { AppContext } from '../context';
import { isUid } from '../../ids';
import { aboutCircuit } from '../notices';

/** Whether the viewer may do `action` (any of them, when several) with the circuit: 401/403 when not. */
function authorizeCircuit(ctx: AppContext, circuit: Circuit, action: CircuitAction | CircuitAction[]): void {
  const actions = Array.isArray(action) ? action : [action];
  authorize(
    ctx.viewer,
    actions.some((a) => circuitPermits(ctx.viewer, circuit, a)),
  );
}

/**
 * The circuit a request names, or NotFound; then the policy decides 401/403 for `action` (any of
 * several). The circuit becomes a subject of the response: if deprecated, the response says so.
 */
export async function findCircuitFor(
  ctx: AppContext,
  uid: string,
  action: CircuitAction | CircuitAction[],
): Promise<Circuit> {
  const circuit = isUid(uid) ? await ctx.loaders.circuit.load(uid) : null;
  if (!circuit) throw notFound('Circuit');
  authorizeCircuit(ctx, circuit, action);
  aboutCircuit(ctx, circuit);
  return circuit;
}

export async function findCircuitByNameFor(
  ctx: AppContext,
  username: string,
  name: string,
  action: CircuitAction | CircuitAction[],
): Promise<Circuit> {
  const circuit = await findCircuitByName(username, name);
  if (!circuit) throw notFound('Circuit');
  authorizeCircuit(ctx, circuit, action);
  aboutCircuit(ctx, circuit);
  return circuit;
}

export async function findCircuitByName(username: string, name: string): Promise<Circuit | null> {
  const owner = await User.findOne({ where: { username } });
  return owner ? Circuit.findOne({ where: { owner_uid: owner.uid, name } }) : null;
}
