import { Arg, Args, Authorized, Ctx, Directive, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { notFound } from '../../errors';
import { limitRunCreation } from '../../ratelimit';
import { MAX_START_DELAY_SECONDS, RUN_PRIORITY_DEFAULT, RUN_PRIORITY_MAX, RUN_PRIORITY_MIN } from '../../domain/runs';
import { JSONObjectScalar } from '../common/scalars';
import { PageArgs, paged, pageWindow } from '../common/pagination';
import type { AppContext } from '../context';
import { presentRun } from '../run/run.presenter';
import { CircuitRunContextInput, CircuitRunPage } from '../run/run.type';
import { CircuitBatchType } from './batch.type';

@Resolver(() => CircuitBatchType)
export class BatchResolver {
  @Authorized()
  @Directive('@cost(weight: 100)')
  @Mutation(() => CircuitBatchType, {
    description:
      "Submits 1–1000 inputs of the adaptor's circuit at once (POST /circuit-adaptors/{uid}/batches): each is validated first (one invalid input refuses the batch, naming its index), then becomes a run carrying batchUid; inputs the balance cannot cover end EXCEPTION InsufficientCredits",
  })
  async createCircuitBatch(
    @Arg('adaptorUid', () => ID) adaptorUid: string,
    @Arg('inputs', () => [JSONObjectScalar], {
      validate: false,
      description: "1–1000 objects, each matching the version's query schema",
    })
    inputs: Record<string, unknown>[],
    @Arg('context', () => CircuitRunContextInput, { nullable: true }) runContext: CircuitRunContextInput | null,
    @Arg('isPublic', () => Boolean, { nullable: true, description: 'Only the circuit owner may set it' })
    isPublic: boolean | null,
    @Arg('tags', () => [String], { nullable: true, description: 'Tags of every run (at most 10)' })
    tags: string[] | null,
    @Arg('metadata', () => JSONObjectScalar, {
      nullable: true,
      validate: false,
      description: 'Metadata of every run (string values, ≤ 4 KiB)',
    })
    metadata: Record<string, unknown> | null,
    @Arg('webhook', () => String, { nullable: true, description: 'An https URL to POST signed events of every run to' })
    webhook: string | null,
    @Arg('webhookEventsFilter', () => [String], { nullable: true }) webhookEventsFilter: string[] | null,
    @Arg('maxCredits', () => Int, {
      nullable: true,
      description: 'The most each run may cost (BudgetExceeded past it)',
    })
    maxCredits: number | null,
    @Arg('startAt', () => String, {
      nullable: true,
      description:
        'Start every run at this ISO 8601 instant (with its offset), at most a year ahead; they stay PROVISIONED until then. Not with delaySeconds',
    })
    startAt: string | null,
    @Arg('delaySeconds', () => Int, {
      nullable: true,
      description: `Start every run this many seconds from now (1–${MAX_START_DELAY_SECONDS}, a year). Not with startAt`,
    })
    delaySeconds: number | null,
    @Arg('priority', () => Int, {
      nullable: true,
      description: `Every run's priority, ${RUN_PRIORITY_MIN}–${RUN_PRIORITY_MAX} (default ${RUN_PRIORITY_DEFAULT}): among your runs waiting for a slot, higher first; never ahead of another user's`,
    })
    priority: number | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitBatchType> {
    // One batch is one request against the token's run rate limit; the balance and USER_MAX_CONCURRENT_RUNS bound its runs.
    await limitRunCreation(ctx.services.runRateLimiter, ctx.viewer!, ctx.responseHeaders);
    const batch = await ctx.services.runs.admitBatch(ctx.viewer!, {
      adaptorUid,
      versionUid: runContext?.version ?? null,
      alias: runContext?.alias ?? null,
      inputs,
      isPublic,
      tags,
      metadata,
      webhook,
      webhookEventsFilter,
      maxCredits,
      startAt,
      delaySeconds,
      priority,
    });
    return CircuitBatchType.from(batch);
  }

  @Query(() => CircuitBatchType, {
    description: 'A batch with the counts of its runs by state (its owner only; GET /batches/{uid})',
  })
  async circuitBatch(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<CircuitBatchType> {
    return CircuitBatchType.from(await ctx.services.runs.findBatch(ctx.viewer, uid, 'manage'));
  }

  @Query(() => CircuitRunPage, {
    description: "A batch's runs, in submission order (its owner only; GET /batches/{uid}/runs)",
  })
  async circuitBatchRuns(
    @Arg('uid', () => ID) uid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunPage> {
    const batch = await ctx.services.runs.findBatch(ctx.viewer, uid, 'manage');
    const window = pageWindow(args);
    const { rows, count } = await ctx.services.runs.batchRuns(batch.uid, window);
    return paged(await Promise.all(rows.map((run) => presentRun(ctx, run))), count, window);
  }

  @Authorized()
  @Mutation(() => CircuitBatchType, {
    description:
      'Cancels every run of the batch not yet ended, as cancelCircuitRun does (its owner only; POST /batches/{uid}/cancel)',
  })
  async cancelCircuitBatch(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<CircuitBatchType> {
    const batch = await ctx.services.runs.findBatch(ctx.viewer, uid, 'manage');
    await ctx.services.runs.cancelBatch(batch);
    const after = await ctx.services.runs.findBatch(ctx.viewer, uid, 'manage').catch(() => null);
    if (!after) throw notFound('Batch');
    return CircuitBatchType.from(after);
  }
}
