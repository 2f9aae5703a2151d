import { Arg, Authorized, Ctx, Directive, Field, ID, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
import { limitRunCreation } from '../../ratelimit';
import { MAX_BULK_RUNS, type BulkCancelResult, type BulkReplayResult } from '../../runs';
import type { AppContext } from '../context';
import { CircuitRunFilterInput, runsFilterOf } from './run-filter.input';

@ObjectType('CircuitRunsCanceled', { description: 'What a cancel by filter did' })
export class CircuitRunsCanceledType {
  @Field(() => Int, {
    description: `Your runs of the filter still PROVISIONED or RUNNING, all of them (the call acts on the oldest ${MAX_BULK_RUNS})`,
  })
  matched!: number;
  @Field(() => Int, {
    description:
      'Those this call asked to stop: PROVISIONED ones ended EXCEPTION Canceled, RUNNING ones told to stop (they end Canceled within a second or so); runs asked before are not counted again',
  })
  canceled!: number;
  @Field(() => Boolean, {
    description: `True when more than ${MAX_BULK_RUNS} matched: call again for the rest`,
  })
  truncated!: boolean;

  static from(result: BulkCancelResult): CircuitRunsCanceledType {
    return Object.assign(new CircuitRunsCanceledType(), result);
  }
}

@ObjectType('CircuitRunsReplayed', { description: 'What a replay by filter did' })
export class CircuitRunsReplayedType {
  @Field(() => Int, {
    description: `Your ended runs (COMPLETED, EXCEPTION) of the filter, all of them (the call replays the oldest ${MAX_BULK_RUNS})`,
  })
  matched!: number;
  @Field(() => Int, { description: 'How many runs the call replayed: the runs of its batch' })
  replayed!: number;
  @Field(() => ID, { nullable: true, description: 'The batch the replays form; null when nothing matched' })
  batchUid!: string | null;
  @Field(() => Boolean, {
    description: `True when more than ${MAX_BULK_RUNS} matched: only the oldest ${MAX_BULK_RUNS} were replayed; narrow the filter (createdAfter) for the rest`,
  })
  truncated!: boolean;

  static from(result: BulkReplayResult): CircuitRunsReplayedType {
    return Object.assign(new CircuitRunsReplayedType(), {
      matched: result.matched,
      replayed: result.replayed,
      batchUid: result.batch_uid,
      truncated: result.truncated,
    });
  }
}

/** Cancel and replay by filter (docs/runs.md, Cancel and replay by filter): the caller's own runs only. */
@Resolver()
export class RunBulkResolver {
  @Authorized()
  @Directive('@cost(weight: 100)')
  @Mutation(() => CircuitRunsCanceledType, {
    description: `Asks every run of your filter still PROVISIONED or RUNNING to stop, as cancelCircuitRun does (POST /users/circuit-runs/cancel); at most ${MAX_BULK_RUNS} a call, the oldest first. Only your own runs, whatever the filter`,
  })
  async cancelCircuitRuns(
    @Arg('filter', () => CircuitRunFilterInput, { validate: false }) filter: CircuitRunFilterInput,
    @Arg('idempotencyKey', () => String, {
      nullable: true,
      description: 'The same key from the same caller within 24 hours answers what the first call did',
    })
    idempotencyKey: string | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunsCanceledType> {
    return CircuitRunsCanceledType.from(
      await ctx.services.runs.cancelMatching(ctx.viewer!, runsFilterOf(filter), idempotencyKey),
    );
  }

  @Authorized()
  @Directive('@cost(weight: 100)')
  @Mutation(() => CircuitRunsReplayedType, {
    description: `Replays every ended run of your filter as replayCircuitRun does (its version and input), the replays forming one batch (POST /users/circuit-runs/replay); at most ${MAX_BULK_RUNS} a call, the oldest first. Only your own runs, whatever the filter`,
  })
  async replayCircuitRuns(
    @Arg('filter', () => CircuitRunFilterInput, { validate: false }) filter: CircuitRunFilterInput,
    @Arg('mode', () => String, { nullable: true, description: 'recorded (default) or live' }) mode: string | null,
    @Arg('idempotencyKey', () => String, {
      nullable: true,
      description: 'The same key from the same caller within 24 hours answers what the first call did',
    })
    idempotencyKey: string | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunsReplayedType> {
    // One call is one request against the token's run rate limit, as a batch is.
    await limitRunCreation(ctx.services.runRateLimiter, ctx.viewer!, ctx.responseHeaders);
    return CircuitRunsReplayedType.from(
      await ctx.services.runs.replayMatching(ctx.viewer!, runsFilterOf(filter), mode, idempotencyKey),
    );
  }
}
