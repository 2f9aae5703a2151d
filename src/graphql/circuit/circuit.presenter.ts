import type { Circuit } from '../../models';
import { addNotice, AppContext } from '../context';
import { CircuitType } from './circuit.type';

/** Builds the API view of a circuit, loading its owner and adaptor in batches. */
export async function presentCircuit(ctx: AppContext, circuit: Circuit): Promise<CircuitType> {
  const [owner, adaptor] = await Promise.all([
    ctx.loaders.user.load(circuit.owner_uid),
    ctx.loaders.adaptorByCircuit.load(circuit.uid),
  ]);
  return CircuitType.from(circuit, owner?.username ?? '', adaptor?.uid ?? '');
}

/** Deprecated circuits still work; every response about one says so (DESIGN §5). */
export function noteIfDeprecated(ctx: AppContext, circuit: Circuit): void {
  if (circuit.is_deprecated) {
    addNotice(ctx, { code: 'deprecated', message: `Circuit ${circuit.name} is deprecated and may be removed in the future` }, circuit.deprecated_at);
  }
}
