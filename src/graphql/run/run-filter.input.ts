import { ArgsType, Field, ID, InputType } from 'type-graphql';
import type { RunState } from '../../domain/runs';
import type { MyRunsFilter } from '../../runs';
import { JSONObjectScalar } from '../common/scalars';
import { CircuitRunState } from './run.type';

/**
 * The filters of the caller's runs, declared once: the arguments of `viewer.runs` (an args type, beside its page
 * arguments) and the `filter` input of the bulk actions (`cancelCircuitRuns`, `replayCircuitRuns`). `runsFilterOf`
 * hands them to the run wing, whose myRunsWhere (src/runs/my-runs.ts) checks them and makes the query.
 */
@InputType('CircuitRunFilter', {
  description:
    'Which of your runs a bulk action works on: the filters of viewer.runs (GET /users/circuit-runs); every condition sent must hold. Empty: all your runs',
})
@ArgsType()
export class CircuitRunFilterInput {
  @Field(() => CircuitRunState, { nullable: true, description: 'Only runs in this state' })
  state?: CircuitRunState | null;

  @Field(() => ID, { nullable: true, description: 'Only runs of this circuit' })
  circuitUid?: string | null;

  @Field(() => String, { nullable: true, description: 'Only runs carrying this tag' })
  tag?: string | null;

  @Field(() => JSONObjectScalar, {
    nullable: true,
    description: 'Only runs whose metadata has every one of these key/value pairs (string values)',
  })
  metadata?: Record<string, string> | null;

  @Field(() => Date, { nullable: true, description: 'Only runs created after this instant' })
  createdAfter?: Date | null;

  @Field(() => Date, { nullable: true, description: 'Only runs created before this instant' })
  createdBefore?: Date | null;

  @Field(() => ID, { nullable: true, description: 'Only runs of this batch' })
  batchUid?: string | null;
}

/** The filter as the run wing reads it. */
export function runsFilterOf(filter: CircuitRunFilterInput): MyRunsFilter {
  return {
    state: filter.state as RunState | null | undefined,
    circuitUid: filter.circuitUid,
    tag: filter.tag,
    metadata: filter.metadata,
    createdAfter: filter.createdAfter,
    createdBefore: filter.createdBefore,
    batchUid: filter.batchUid,
  };
}
