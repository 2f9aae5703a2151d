import { Arg, Ctx, Directive, Query, Resolver } from 'type-graphql';
import { notFound } from '../../errors';
import { circuitsNamedBy, explainDefinition } from '../../engine/explain';
import { circuitPermits } from '../../policies/circuit.policy';
import type { AppContext } from '../context';
import { findCircuitByNameFor } from './circuit.access';
import { presentCircuit } from './circuit.presenter';
import { CircuitExplanationType, ExplainedInputType, ExplainedStepType } from './circuit.type';

@Resolver()
export class CircuitExplainResolver {
  @Directive('@cost(weight: 10)')
  @Query(() => CircuitExplanationType, {
    description: "A plain-words breakdown of the circuit's primary version: its inputs, its steps and what it returns",
  })
  async explainCircuit(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitExplanationType> {
    const circuit = await findCircuitByNameFor(ctx, username, name, 'read');
    const version = circuit.primary_version_uid ? await ctx.loaders.version.load(circuit.primary_version_uid) : null;
    if (!version) throw notFound('Primary version');

    // Embedded circuits are named only when the caller may list them; otherwise they stay anonymous.
    const names = new Map<string, string>();
    for (const uid of circuitsNamedBy(version.definition)) {
      const embedded = await ctx.loaders.circuit.load(uid);
      if (!embedded) continue;
      if (!circuitPermits(ctx.viewer, embedded, 'list')) {
        names.set(embedded.uid, 'a circuit you cannot see');
        continue;
      }
      const owner = await ctx.loaders.user.load(embedded.owner_uid);
      names.set(embedded.uid, `${owner?.username ?? '?'}/${embedded.name}`);
    }
    const explanation = explainDefinition(version.definition, (uid) => names.get(uid));
    return Object.assign(new CircuitExplanationType(), {
      circuit: await presentCircuit(ctx, circuit),
      versionUid: version.uid,
      inputs: explanation.inputs.map((i) => Object.assign(new ExplainedInputType(), i)),
      steps: explanation.steps.map((s) => Object.assign(new ExplainedStepType(), s)),
      text: explanation.text,
    });
  }
}
