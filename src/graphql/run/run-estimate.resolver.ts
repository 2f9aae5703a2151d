import { Arg, Authorized, Ctx, Directive, Field, Float, ID, ObjectType, Query, Resolver } from 'type-graphql';
import { JSONObjectScalar, JSONScalar } from '../common/scalars';
import type { AppContext } from '../context';
import { CircuitRunContextInput } from './run.type';
import { badInput } from '../../errors';

@ObjectType('CircuitRunEstimate', {
  description: 'What a run may cost, in credits: a completed run costs from min to max, its base credit included',
})
export class CircuitRunEstimateType {
  @Field(() => Float) min!: number;
  @Field(() => Float, { description: 'A sound upper bound: a query with maxCredits ≥ max never ends BudgetExceeded' })
  max!: number;
  @Field(() => JSONScalar, { description: '{<step id>: {min, max}} for the top-level steps' }) steps!: Record<
    string,
    { min: number; max: number }
  >;
}

@Resolver(() => CircuitRunEstimateType)
export class RunEstimateResolver {
  @Authorized()
  @Directive('@cost(weight: 100)')
  @Query(() => CircuitRunEstimateType, {
    description: 'What a run of this input may cost (POST /circuit-adaptors/{uid}/estimate); nothing runs',
  })
  async estimateCircuitAdaptor(
    @Arg('adaptorUid', () => ID) adaptorUid: string,
    @Arg('input', () => JSONObjectScalar, { validate: false, description: "Matches the version's query schema" })
    input: Record<string, unknown>,
    @Arg('context', () => CircuitRunContextInput, {
      nullable: true,
      description: 'context.version only (an alias draws a version per run)',
    })
    runContext: CircuitRunContextInput | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunEstimateType> {
    if (runContext?.alias != null)
      throw badInput('an estimate takes context.version, not context.alias', { field: 'context.alias' });
    const estimate = await ctx.services.runs.estimate(ctx.viewer!, {
      adaptorUid,
      versionUid: runContext?.version ?? null,
      input,
    });
    return Object.assign(new CircuitRunEstimateType(), estimate);
  }
}
