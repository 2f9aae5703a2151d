import { Field, ID, Int, ObjectType } from 'type-graphql';
import type { BatchView } from '../../runs';

@ObjectType('CircuitBatchCounts', {
  description: "How many of a batch's runs are in each state; they add up to its total",
})
export class CircuitBatchCountsType {
  @Field(() => Int) PROVISIONED!: number;
  @Field(() => Int) RUNNING!: number;
  @Field(() => Int) COMPLETED!: number;
  @Field(() => Int) EXCEPTION!: number;
}

@ObjectType('CircuitBatch', {
  description:
    'Inputs submitted together, or the replays of a replay by filter; each is an ordinary run carrying batchUid',
})
export class CircuitBatchType {
  @Field(() => ID) uid!: string;
  @Field(() => ID, {
    nullable: true,
    description: 'The circuit of its runs; null for the replays of runs of several circuits (replayCircuitRuns)',
  })
  circuitUid!: string | null;
  @Field(() => Int, { description: 'How many inputs (runs) it holds' }) total!: number;
  @Field(() => CircuitBatchCountsType) counts!: CircuitBatchCountsType;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When its owner canceled it; null otherwise' })
  canceledAt!: Date | null;

  static from(batch: BatchView): CircuitBatchType {
    return Object.assign(new CircuitBatchType(), {
      uid: batch.uid,
      circuitUid: batch.circuit_uid,
      total: batch.total,
      counts: Object.assign(new CircuitBatchCountsType(), batch.counts),
      createdAt: batch.created_at,
      canceledAt: batch.canceled_at,
    });
  }
}
