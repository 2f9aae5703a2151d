import { Arg, Authorized, Ctx, Directive, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { limitRunCreation } from '../../ratelimit';
import { notFound } from '../../errors';
import { compareRuns } from '../../runs';
import { authorize } from '../../policies/authorize';
import { runPermits } from '../../policies/run.policy';
import { JSONObjectScalar, JSONScalar } from '../common/scalars';
import type { AppContext } from '../context';
import { presentRun } from './run.presenter';
import { findRunFor } from './run.access';
import { CircuitRunType } from './run.type';

@ObjectType('CircuitRunComparison', {
  description: "Two runs side by side: their outputs and each step's output, marked same, changed, added or removed",
})
export class CircuitRunComparisonType {
  @Field(() => JSONScalar, { description: "{status: same | changed, a, b}: the two runs' outputs" }) output!: unknown;
  @Field(() => JSONScalar, {
    description:
      "{<step id>: {status: same | changed | added | removed, a, b}}: each step's output in a and in b (null where the step is absent)",
  })
  steps!: unknown;
}

/** Replay and compare (docs/runs.md, Replay and compare). */
@Resolver()
export class RunReplayResolver {
  @Authorized()
  @Directive('@cost(weight: 100)')
  @Mutation(() => CircuitRunType, {
    description:
      "Starts a new run of a terminal run's circuit (its owner only; POST /circuit-runs/{uid}/replay): the original's version and input unless versionUid / input. mode recorded (default): every llm, http, blob and circuit step whose rendered request equals the original's reuses its output (0 credits); live: every step executes. The run is PROVISIONED and carries replayOf",
  })
  async replayCircuitRun(
    @Arg('uid', () => ID) uid: string,
    @Arg('mode', () => String, { nullable: true, description: 'recorded (default) or live' }) mode: string | null,
    @Arg('versionUid', () => ID, {
      nullable: true,
      description: "A version of the run's circuit; the original's version when absent",
    })
    versionUid: string | null,
    @Arg('input', () => JSONObjectScalar, {
      nullable: true,
      validate: false,
      description: "The input (checked against the version's query schema); the original's when absent",
    })
    input: Record<string, unknown> | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunType> {
    const run = await ctx.services.runs.findForReplay(uid);
    if (!run) throw notFound('Circuit run');
    authorize(ctx.viewer, runPermits(ctx.viewer, run, 'replay'), 'Only the user who started this run may replay it');
    // A replay is a new run: it counts towards the run rate limit like a query.
    await limitRunCreation(ctx.services.runRateLimiter, ctx.viewer!, ctx.responseHeaders);
    const { run: replay, circuit } = await ctx.services.runs.replay(ctx.viewer!, run, { mode, versionUid, input });
    ctx.loaders.circuit.prime(circuit.uid, circuit);
    return presentRun(ctx, replay);
  }

  @Query(() => CircuitRunComparisonType, {
    description:
      'Compares two runs (GET /circuit-runs/{a}/compare/{b}); both must be readable by the caller (as circuitRun)',
  })
  async compareCircuitRuns(
    @Arg('a', () => ID) a: string,
    @Arg('b', () => ID) b: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunComparisonType> {
    const runA = await findRunFor(ctx, a, 'read');
    const runB = await findRunFor(ctx, b, 'read');
    return Object.assign(new CircuitRunComparisonType(), compareRuns(runA, runB));
  }
}
