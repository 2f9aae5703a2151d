import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { SubscribeResolverData } from 'type-graphql';
import { CircuitVersion } from '../../models';
import { CircuitRun, stateRank } from '../../models/CircuitRun';
import { createRun } from '../../commands/create-run';
import { notFound, unauthorized } from '../../errors';
import { runPubSub } from '../../events/pubsub';
import { JSONObjectScalar } from '../common/scalars';
import { PageArgs, paged, pageWindow, PageWindow } from '../common/pagination';
import { isUid } from '../../ids';
import type { AppContext } from '../context';
import { findCircuitFor } from '../circuit/circuit.access';
import { noteIfDeprecated } from '../circuit/circuit.presenter';
import { findRunFor } from './run.access';
import { presentRun } from './run.presenter';
import { CircuitRunContextInput, CircuitRunPage, CircuitRunType } from './run.type';

async function publicCompletedRuns(ctx: AppContext, where: { circuit_uid: string } | { circuit_version_uid: string }, window: PageWindow): Promise<CircuitRunPage> {
  const { rows, count } = await CircuitRun.findAndCountAll({
    where: { ...where, state: 'COMPLETED', is_public: true },
    attributes: { exclude: ['input', 'failure_reason'] },
    order: [['created_at', 'DESC'], ['uid', 'DESC']],
    limit: window.limit,
    offset: window.offset,
  });
  return paged(await Promise.all(rows.map((run) => presentRun(ctx, run))), count, window);
}

/**
 * The run's current state, then each later state, ending after a terminal one. Read rules are
 * checked before the stream starts; events come from the cross-process bus through `runPubSub`.
 */
async function subscribeToRun({ args, context }: SubscribeResolverData<unknown, { uid: string }, AppContext>): Promise<AsyncIterable<CircuitRun>> {
  if (context.auth.kind === 'invalid') throw unauthorized('The bearer token is invalid or revoked');
  const { uid } = await findRunFor(context, args.uid, 'read');
  // A pubSub subscription only starts listening at its first next(): ask for it now, before the first
  // read, or a run that ends between that read and the loop is never seen to end (the stream hangs).
  const events = runPubSub.subscribe('CIRCUIT_RUN_UPDATED', uid)[Symbol.asyncIterator]();
  let nextEvent = events.next();
  return (async function* () {
    let lastRank = -1;
    /** The states the run has reached since the last read: RUNNING too when it was passed between reads. */
    const advanced = async (): Promise<CircuitRun[]> => {
      const run = await CircuitRun.findByPk(uid);
      if (!run || stateRank(run.state) <= lastRank) return [];
      const passed = lastRank === stateRank('PROVISIONED') && stateRank(run.state) > stateRank('RUNNING')
        ? [CircuitRun.build({ ...run.get(), state: 'RUNNING', ended_at: null, result_blob: null, metrics: null }, { isNewRecord: false })]
        : [];
      lastRank = stateRank(run.state);
      return [...passed, run];
    };
    try {
      for (const run of await advanced()) yield run;
      if (lastRank >= stateRank('COMPLETED')) return;
      while (!(await nextEvent).done) {
        nextEvent = events.next();
        for (const run of await advanced()) yield run;
        if (lastRank >= stateRank('COMPLETED')) return;
      }
    } finally {
      await events.return?.();
    }
  })();
}

@Resolver(() => CircuitRunType)
export class RunResolver {
  @Authorized()
  @Mutation(() => CircuitRunType, {
    description: "Starts a run of the adaptor's circuit (POST /circuit-adaptors/{adaptor_uid}/query); it is PROVISIONED and executes asynchronously",
  })
  async queryCircuitAdaptor(
    @Arg('adaptorUid', () => ID) adaptorUid: string,
    // JSON literals have no prototype and class-validator rejects them; the query schema validates input.
    @Arg('input', () => JSONObjectScalar, { description: "Matches the version's query schema", validate: false }) input: Record<string, unknown>,
    @Arg('context', () => CircuitRunContextInput, { nullable: true }) runContext: CircuitRunContextInput | null,
    @Arg('isPublic', () => Boolean, { nullable: true, description: 'Only the circuit owner may set it' }) isPublic: boolean | null,
    @Arg('idempotencyKey', () => String, { nullable: true, description: 'The same key from the same caller within 24 hours returns the same run' })
    idempotencyKey: string | null,
    @Arg('webhook', () => String, { nullable: true, description: 'An https URL to POST signed run events to (Standard Webhooks; DESIGN §7.5)' }) webhook: string | null,
    @Arg('webhookEventsFilter', () => [String], { nullable: true, description: 'Which events to POST: start, step, completed (default [completed])' })
    webhookEventsFilter: string[] | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunType> {
    const { run, circuit } = await createRun(ctx.services, ctx.viewer!, {
      adaptorUid,
      versionUid: runContext?.version ?? null,
      input,
      isPublic,
      idempotencyKey,
      webhook,
      webhookEventsFilter,
    });
    noteIfDeprecated(ctx, circuit);
    return CircuitRunType.from(run);
  }

  @Query(() => CircuitRunType, { nullable: true, description: 'A run; public runs to anyone, private runs to the user who started them' })
  async circuitRun(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<CircuitRunType> {
    return presentRun(ctx, await findRunFor(ctx, uid, 'read'));
  }

  @Query(() => CircuitRunPage, { description: 'The completed public runs of a version, newest first (limit default 10, max 100)' })
  async circuitVersionRuns(
    @Arg('versionUid', () => ID) versionUid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunPage> {
    const version: CircuitVersion | null = isUid(versionUid) ? await ctx.loaders.version.load(versionUid) : null;
    if (!version) throw notFound('Circuit version');
    const circuit = await findCircuitFor(ctx, version.circuit_uid, 'list');
    noteIfDeprecated(ctx, circuit);
    return publicCompletedRuns(ctx, { circuit_version_uid: version.uid }, pageWindow(args));
  }

  @Query(() => CircuitRunPage, { description: 'The completed public runs of a circuit across its versions, newest first (limit default 10, max 100)' })
  async circuitRuns(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunPage> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'list');
    noteIfDeprecated(ctx, circuit);
    return publicCompletedRuns(ctx, { circuit_uid: circuit.uid }, pageWindow(args));
  }

  @Subscription(() => CircuitRunType, {
    description: 'The run now, then on every state change until it is COMPLETED or EXCEPTION; same read rules as circuitRun',
    subscribe: subscribeToRun as never,
  })
  async circuitRunUpdated(@Root() run: CircuitRun, @Arg('uid', () => ID) _uid: string, @Ctx() ctx: AppContext): Promise<CircuitRunType> {
    return presentRun(ctx, run);
  }
}
