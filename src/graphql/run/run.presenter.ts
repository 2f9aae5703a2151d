import type { CircuitRun } from '../../models/CircuitRun';
import type { AppContext } from '../context';
import { noteIfDeprecated } from '../circuit/circuit.presenter';
import { CircuitRunType } from './run.type';

/** The API view of a run; a run of a deprecated circuit carries the deprecation notice (DESIGN §5). */
export async function presentRun(ctx: AppContext, run: CircuitRun): Promise<CircuitRunType> {
  const circuit = await ctx.loaders.circuit.load(run.circuit_uid);
  if (circuit) noteIfDeprecated(ctx, circuit);
  return CircuitRunType.from(run);
}
