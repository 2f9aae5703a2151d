import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { CircuitMetric } from '../../models';
import { createCircuitMetric } from '../../commands/create-circuit-metric';
import type { AppContext } from '../context';
import { CircuitMetricType, CreateCircuitMetricInput } from './circuit-metric.type';

@Resolver(() => CircuitMetricType)
export class CircuitMetricResolver {
  @Authorized()
  @Mutation(() => CircuitMetricType, {
    description: 'Creates a metric configuration owned by the caller; every expression must parse as JSONata',
  })
  async createCircuitMetric(
    @Arg('input', () => CreateCircuitMetricInput) input: CreateCircuitMetricInput,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitMetricType> {
    return CircuitMetricType.from(await createCircuitMetric(ctx.services.sandbox, ctx.viewer!, input));
  }

  @Authorized()
  @Query(() => [CircuitMetricType], { description: "The caller's metric configurations, newest first" })
  async circuitMetrics(@Ctx() ctx: AppContext): Promise<CircuitMetricType[]> {
    const rows = await CircuitMetric.findAll({
      where: { user_uid: ctx.viewer!.uid },
      order: [
        ['created_at', 'DESC'],
        ['uid', 'ASC'],
      ],
      limit: 500,
    });
    return rows.map((m) => CircuitMetricType.from(m));
  }
}
