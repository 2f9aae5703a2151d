import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { ArrayMaxSize, ArrayMinSize, MaxLength, ValidateNested } from 'class-validator';
import type { CircuitMetric as MetricModel } from '../../models';

@ObjectType('MetricExpression', { description: 'A named JSONata expression evaluated over a completed run' })
export class MetricExpressionType {
  @Field(() => String) name!: string;
  @Field(() => String) expression!: string;
}

@ObjectType('CircuitMetric', {
  description: 'A metric configuration; attach it to circuits through userCircuitMetricUid',
})
export class CircuitMetricType {
  @Field(() => ID) uid!: string;
  @Field(() => String) name!: string;
  @Field(() => [MetricExpressionType]) metrics!: MetricExpressionType[];
  @Field(() => Date) createdAt!: Date;

  static from(metric: MetricModel): CircuitMetricType {
    return Object.assign(new CircuitMetricType(), {
      uid: metric.uid,
      name: metric.name,
      metrics: metric.metrics.map((m) => Object.assign(new MetricExpressionType(), m)),
      createdAt: metric.created_at,
    });
  }
}

@InputType()
export class MetricExpressionInput {
  @Field(() => String) @MaxLength(64) name!: string;
  @Field(() => String) @MaxLength(10_000) expression!: string;
}

@InputType()
export class CreateCircuitMetricInput {
  @Field(() => String) @MaxLength(100) name!: string;
  @Field(() => [MetricExpressionInput])
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @ValidateNested()
  metrics!: MetricExpressionInput[];
}
