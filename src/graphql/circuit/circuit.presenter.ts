import type { Circuit } from '../../models';
import type { AppContext } from '../context';
import { aboutCircuit } from '../notices';
import { CircuitType } from './circuit.type';

/** Builds the API view of a circuit, loading its owner and adaptor in batches. */
export async function presentCircuit(ctx: AppContext, circuit: Circuit): Promise<CircuitType> {
  const [owner, adaptor] = await Promise.all([
    ctx.loaders.user.load(circuit.owner_uid),
    ctx.loaders.adaptorByCircuit.load(circuit.uid),
  ]);
  return CircuitType.from(circuit, owner?.username ?? '', adaptor?.uid ?? '');
}

/**
 * @deprecated Notices follow from the response's subjects (graphql/notices.ts): a circuit found
 * through circuit.access is one already; a presenter of something of a circuit calls aboutCircuit.
 */
export const noteIfDeprecated = aboutCircuit;
