import type { Circuit } from '../../models';
import type { AppContext } from '../context';
import { CircuitType } from './circuit.type';

/** Builds the API view of a circuit, loading its owner and adaptor in batches. */
export async function presentCircuit(ctx: AppContext, circuit: Circuit): Promise<CircuitType> {
  const [owner, adaptor] = await Promise.all([
    ctx.loaders.user.load(circuit.owner_uid),
    ctx.loaders.adaptorByCircuit.load(circuit.uid),
  ]);
  return CircuitType.from(circuit, owner?.username ?? '', adaptor?.uid ?? '');
}
