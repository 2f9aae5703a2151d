import {
  Arg,
  Args,
  Authorized,
  Ctx,
  Directive,
  FieldResolver,
  ID,
  Int,
  Mutation,
  Query,
  Resolver,
  Root,
  Subscription,
} from 'type-graphql';
import type { SubscribeResolverData } from 'type-graphql';
import { CircuitVersion } from '../../models';
import { CircuitRun } from '../../models/CircuitRun';
import {
  isTerminal,
  MAX_START_DELAY_SECONDS,
  RUN_PRIORITY_DEFAULT,
  RUN_PRIORITY_MAX,
  RUN_PRIORITY_MIN,
  type RunState,
} from '../../domain/runs';
import { RUN_EVENT_KINDS, type RunEventKind } from '../../models/RunEvent';
import { DEFAULT_WEBHOOK_EVENTS, WEBHOOK_EVENTS } from '../../domain/webhook-events';
import { badInput, notFound, unauthorized } from '../../errors';
import { checkApprovalDecision, mapStream, signedEventsQuery, type LoggedRunEvent } from '../../runs';
import { readableRunsWhere } from '../../policies/run.policy';
import { JSONObjectScalar, JSONScalar } from '../common/scalars';
import { PageArgs, paged, pageWindow, PageWindow } from '../common/pagination';
import { isUid } from '../../ids';
import type { AppContext } from '../context';
import { findCircuitFor } from '../circuit/circuit.access';
import { findRunFor, findRunToAnswer, readRunAgain } from './run.access';
import { presentRun, presentRunEvent, presentWaitingFor, runAsOf } from './run.presenter';
import { resolveSecret } from '../../storage/secret';
import {
  CircuitRunContextInput,
  SignedUrlType,
  CircuitRunEventType,
  CircuitRunPage,
  CircuitRunType,
  RunEventKindEnum,
  WaitingStepType,
} from './run.type';
import { limitRunCreation } from '../../ratelimit';

/** `Prefer: wait=N` / `waitSeconds`: 1–60 (docs/runs.md, Waiting in one request). */
export const MAX_WAIT_SECONDS = 60;
const MAX_EVENTS_PAGE = 500;

async function publicCompletedRuns(
  ctx: AppContext,
  where: { circuit_uid: string } | { circuit_version_uid: string },
  window: PageWindow,
): Promise<CircuitRunPage> {
  const { rows, count } = await CircuitRun.findAndCountAll({
    where: { ...where, state: 'COMPLETED', ...readableRunsWhere(null) },
    attributes: { exclude: ['input', 'failure_reason'] },
    order: [
      ['created_at', 'DESC'],
      ['uid', 'DESC'],
    ],
    limit: window.limit,
    offset: window.offset,
  });
  return paged(await Promise.all(rows.map((run) => presentRun(ctx, run))), count, window);
}

/** A logged event with the run row it is presented against (re-read once the run is terminal). */
interface RunEventRoot {
  event: LoggedRunEvent;
  run: CircuitRun;
}

function kindsOf(kinds: string[] | null | undefined, fallback: readonly RunEventKind[]): RunEventKind[] {
  if (!kinds || kinds.length === 0) return [...fallback];
  return [...new Set(kinds)].filter((k): k is RunEventKind => (RUN_EVENT_KINDS as readonly string[]).includes(k));
}

/**
 * The one subscription behind `circuitRunEvents`, `circuitRunUpdated` and the REST SSE stream: read
 * rules are checked before it starts, then the run's log is replayed and followed (runEventStream).
 */
async function subscribeToRunEvents(
  context: AppContext,
  uid: string,
  after: number | null,
  kinds: readonly RunEventKind[],
): Promise<AsyncIterableIterator<RunEventRoot>> {
  if (context.auth.kind === 'invalid') throw unauthorized(context.auth.message);
  if (after !== null && (!Number.isInteger(after) || after < 0))
    throw badInput('after must be a whole number ≥ 0', { field: 'after' });
  let run: CircuitRun | null = await findRunFor(context, uid, 'read');
  // Re-checked while open: a revoked token or a run made private ends the stream.
  const lost = new AbortController();
  const unwatch = context.services.streams?.authority.watch(
    { auth: context.auth, runUid: run.uid, runOwnerUid: run.user_uid },
    () => lost.abort(),
  );
  const stream = context.services.runs.stream(run.uid, { after, kinds, signal: lost.signal, onEnd: unwatch });
  const runUid = run.uid;
  return mapStream(stream, async (event) => {
    const state = event.kind === 'state' ? (event.data.state as RunState) : null;
    let current = run ?? (await CircuitRun.findByPk(runUid));
    if (!current) throw notFound('Circuit run');
    if (state && isTerminal(state) && !isTerminal(current.state))
      current = (await CircuitRun.findByPk(runUid)) ?? current;
    // Not kept once its terminal state is out (the last event): its result may be 4 MiB, and the
    // stream lives on while a slow reader takes it.
    run = state && isTerminal(state) ? null : current;
    return { event, run: current };
  });
}

/** `alias:` and `context.alias` say the same thing; saying two different things is 400. */
function aliasOf(argument: string | null | undefined, inContext: string | null | undefined): string | null {
  if (argument != null && inContext != null && argument !== inContext)
    throw badInput('alias and context.alias differ', { field: 'alias' });
  return argument ?? inContext ?? null;
}

@Resolver(() => CircuitRunType)
export class RunResolver {
  @Authorized()
  @Directive('@cost(weight: 100)')
  @Mutation(() => CircuitRunType, {
    description:
      "Starts a run of the adaptor's circuit (POST /circuit-adaptors/{adaptor_uid}/query); it is PROVISIONED and executes asynchronously",
  })
  async queryCircuitAdaptor(
    @Arg('adaptorUid', () => ID) adaptorUid: string,
    // JSON literals have no prototype and class-validator rejects them; the query schema validates input.
    @Arg('input', () => JSONObjectScalar, { description: "Matches the version's query schema", validate: false })
    input: Record<string, unknown>,
    @Arg('context', () => CircuitRunContextInput, { nullable: true }) runContext: CircuitRunContextInput | null,
    @Arg('isPublic', () => Boolean, { nullable: true, description: 'Only the circuit owner may set it' })
    isPublic: boolean | null,
    @Arg('idempotencyKey', () => String, {
      nullable: true,
      description: 'The same key from the same caller within 24 hours returns the same run',
    })
    idempotencyKey: string | null,
    @Arg('webhook', () => String, {
      nullable: true,
      description: "An https URL to POST run events to, signed with the owner's key (Standard Webhooks)",
    })
    webhook: string | null,
    @Arg('webhookEventsFilter', () => [String], {
      nullable: true,
      description: `Which events to POST: ${WEBHOOK_EVENTS.join(', ')} (default [${DEFAULT_WEBHOOK_EVENTS.join(', ')}])`,
    })
    webhookEventsFilter: string[] | null,
    @Arg('deadlineSeconds', () => Int, {
      nullable: true,
      description:
        'The run ends EXCEPTION DeadlineExceeded this many seconds after it was created, or after its delayed start (1–3600; default and ceiling RUN_DEADLINE_SECONDS)',
    })
    deadlineSeconds: number | null,
    @Arg('waitSeconds', () => Int, {
      nullable: true,
      description:
        'Answer once the run is terminal or after this many seconds (1–60), with the run as circuitRun shows it (REST: Prefer: wait=N)',
    })
    waitSeconds: number | null | undefined,
    @Arg('alias', () => String, {
      nullable: true,
      description: 'Same as context.alias: draw the version from this alias of the circuit, by its weights',
    })
    alias: string | null | undefined,
    @Arg('cache', () => String, {
      nullable: true,
      description: '"bypass": the step cache is not read for this run; its results are still stored',
    })
    cache: string | null | undefined,
    @Arg('tags', () => [String], {
      nullable: true,
      description: 'At most 10 tags, each ^[a-z0-9][a-z0-9_.:-]{0,63}$; the owner filters viewer.runs by them',
    })
    tags: string[] | null | undefined,
    @Arg('metadata', () => JSONObjectScalar, {
      nullable: true,
      validate: false,
      description: 'An object of string values, at most 4 KiB as JSON; the owner filters viewer.runs by its pairs',
    })
    metadata: Record<string, unknown> | null | undefined,
    @Arg('maxCredits', () => Int, {
      nullable: true,
      description:
        'The most the run may cost: a step whose hold would pass it does not start and the run ends EXCEPTION BudgetExceeded',
    })
    maxCredits: number | null | undefined,
    @Arg('startAt', () => String, {
      nullable: true,
      description:
        'Start the run at this ISO 8601 instant (with its offset), at most a year ahead, instead of at once: it is created now and stays PROVISIONED until then (REST start_at). Not with delaySeconds',
    })
    startAt: string | null | undefined,
    @Arg('delaySeconds', () => Int, {
      nullable: true,
      description: `Start the run this many seconds from now (1–${MAX_START_DELAY_SECONDS}, a year) instead of at once (REST delay_s). Not with startAt`,
    })
    delaySeconds: number | null | undefined,
    @Arg('priority', () => Int, {
      nullable: true,
      description: `${RUN_PRIORITY_MIN}–${RUN_PRIORITY_MAX}, default ${RUN_PRIORITY_DEFAULT}: among your runs waiting for a slot, higher priorities are claimed first; it never moves your runs ahead of another user's`,
    })
    priority: number | null | undefined,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunType> {
    if (waitSeconds !== null && waitSeconds !== undefined && (waitSeconds < 1 || waitSeconds > MAX_WAIT_SECONDS)) {
      throw badInput(`waitSeconds must be from 1 to ${MAX_WAIT_SECONDS}`, { field: 'waitSeconds' });
    }
    await limitRunCreation(ctx.services.runRateLimiter, ctx.viewer!, ctx.responseHeaders);
    const { run, circuit } = await ctx.services.runs.create(ctx.viewer!, {
      adaptorUid,
      versionUid: runContext?.version ?? null,
      alias: aliasOf(alias, runContext?.alias),
      input,
      isPublic,
      idempotencyKey,
      webhook,
      webhookEventsFilter,
      deadlineSeconds,
      cache,
      traceparent: ctx.traceparent ?? null,
      tags,
      metadata,
      maxCredits,
      startAt,
      delaySeconds,
      priority,
    });
    // The presenter looks the circuit up for its notices; createRun has just read it.
    ctx.loaders.circuit.prime(circuit.uid, circuit);
    if (waitSeconds === null || waitSeconds === undefined) return presentRun(ctx, run);
    await ctx.services.runs.waitForEnd(run.uid, waitSeconds * 1000);
    ctx.responseHeaders['Preference-Applied'] = `wait=${waitSeconds}`;
    return presentRun(ctx, (await readRunAgain(run.uid)) ?? run);
  }

  @Authorized()
  @Mutation(() => CircuitRunType, {
    description:
      'Stops a run (its owner only): PROVISIONED ends at once, RUNNING has its steps aborted; it ends EXCEPTION with error.code Canceled. A terminal run is answered as it is',
  })
  async cancelCircuitRun(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<CircuitRunType> {
    const run = await findRunFor(ctx, uid, 'cancel');
    if (isTerminal(run.state)) return presentRun(ctx, run);
    await ctx.services.runs.cancel(run.uid);
    return presentRun(ctx, (await readRunAgain(run.uid)) ?? run);
  }

  @Authorized()
  @Mutation(() => CircuitRunType, {
    description:
      "Decides an approval step of a run (its owner only; POST /circuit-runs/{uid}/approvals/{step_id}): approved, the run goes on with {approved, comment, data, resolved_at} as the step's output; rejected, it ends EXCEPTION Rejected. The same decision again answers the run as it is; a different one, or a step that is not waiting, is Conflict",
  })
  async resolveApproval(
    @Arg('runUid', () => ID) runUid: string,
    @Arg('stepId', () => String, { description: 'The id of the approval step (waitingFor.stepId)' }) stepId: string,
    @Arg('approved', () => Boolean) approved: boolean,
    @Arg('comment', () => String, { nullable: true, description: 'At most 2000 characters' }) comment: string | null,
    // JSON literals have no prototype and class-validator rejects them; resolveApproval checks the value.
    @Arg('data', () => JSONScalar, { nullable: true, description: 'A JSON object of at most 64 KiB', validate: false })
    data: unknown,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunType> {
    // As at the REST edge: a bad comment or data is 400 whatever the run.
    const decision = { approved, comment, data: (data ?? null) as Record<string, unknown> | null };
    checkApprovalDecision(decision);
    const run = await findRunFor(ctx, runUid, 'approve');
    await ctx.services.runs.approve(run.uid, stepId, decision);
    return presentRun(ctx, (await readRunAgain(run.uid)) ?? run);
  }

  @Authorized()
  @Mutation(() => CircuitRunType, {
    description:
      "Sends a signal to a wait step of a run (its owner only; POST /circuit-runs/{uid}/signals/{step_id}): the step's output is `data` and the run goes on. The same data again answers the run as it is; other data once the step has its signal, a step that is not a signal wait or no longer waits, or an ended run is Conflict; data that fails the step's schema is BadClientData (the step keeps waiting)",
  })
  async signalCircuitRun(
    @Arg('runUid', () => ID) runUid: string,
    @Arg('stepId', () => String, { description: 'The id of the wait step (waitingFor.stepId)' }) stepId: string,
    // JSON literals have no prototype and class-validator rejects them; the step's schema checks the value.
    @Arg('data', () => JSONScalar, {
      nullable: true,
      description: "The signal: any JSON (the step's output)",
      validate: false,
    })
    data: unknown,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunType> {
    const run = await findRunFor(ctx, runUid, 'approve');
    await ctx.services.runs.signal(run.uid, stepId, data ?? null, run.circuit_version_uid);
    return presentRun(ctx, (await readRunAgain(run.uid)) ?? run);
  }

  @Mutation(() => SignedUrlType, {
    description:
      "A signed URL of the run's event stream (GET /circuit-runs/{uid}/events) that a browser's EventSource can open without headers, as the caller, for at most 5 minutes. Same read rules as circuitRun",
  })
  async circuitRunEventsUrl(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<SignedUrlType> {
    const run = await findRunFor(ctx, uid, 'read');
    const { query, expiresAt } = signedEventsQuery(
      resolveSecret(ctx.services.config),
      run.uid,
      ctx.viewer?.uid ?? null,
      Date.now(),
      ctx.viewer?.tokenGrant?.tokenUid ?? null,
    );
    return Object.assign(new SignedUrlType(), {
      url: `${ctx.baseUrl}/api/v1/circuit-runs/${run.uid}/events?${query}`,
      expiresAt,
    });
  }

  @Query(() => CircuitRunType, {
    nullable: true,
    description: 'A run; public runs to anyone, private runs to the user who started them',
  })
  async circuitRun(
    @Arg('uid', () => ID) uid: string,
    @Arg('waitSeconds', () => Int, {
      nullable: true,
      description: `1–${MAX_WAIT_SECONDS}: hold the answer until the run is COMPLETED or EXCEPTION, or this many seconds pass (REST: Prefer: wait=N); ask again to wait longer`,
    })
    waitSeconds: number | null | undefined,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunType> {
    if (waitSeconds !== null && waitSeconds !== undefined && (waitSeconds < 1 || waitSeconds > MAX_WAIT_SECONDS)) {
      throw badInput(`waitSeconds must be from 1 to ${MAX_WAIT_SECONDS}`, { field: 'waitSeconds' });
    }
    const run = await findRunToAnswer(ctx, uid);
    if (waitSeconds === null || waitSeconds === undefined) return presentRun(ctx, run);
    ctx.responseHeaders['Preference-Applied'] = `wait=${waitSeconds}`;
    if (isTerminal(run.state)) return presentRun(ctx, run);
    await ctx.services.runs.waitForEnd(run.uid, waitSeconds * 1000);
    // The answer is the run as it is now, not the copy read before the wait: nothing of it is shared.
    ctx.sharedAnswers = undefined;
    return presentRun(ctx, (await readRunAgain(run.uid)) ?? run);
  }

  @Query(() => CircuitRunPage, {
    description: 'The completed public runs of a version, newest first (limit default 10, max 100)',
  })
  async circuitVersionRuns(
    @Arg('versionUid', () => ID) versionUid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunPage> {
    const version: CircuitVersion | null = isUid(versionUid) ? await ctx.loaders.version.load(versionUid) : null;
    if (!version) throw notFound('Circuit version');
    await findCircuitFor(ctx, version.circuit_uid, 'list');
    return publicCompletedRuns(ctx, { circuit_version_uid: version.uid }, pageWindow(args));
  }

  @Query(() => CircuitRunPage, {
    description: 'The completed public runs of a circuit across its versions, newest first (limit default 10, max 100)',
  })
  async circuitRuns(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunPage> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'list');
    return publicCompletedRuns(ctx, { circuit_uid: circuit.uid }, pageWindow(args));
  }

  @FieldResolver(() => [WaitingStepType], {
    nullable: true,
    description:
      "The steps the run waits on (approvals, signals, times), oldest first; for the run's owner only, null for others and when nothing waits",
  })
  async waitingFor(@Root() root: CircuitRunType, @Ctx() ctx: AppContext): Promise<WaitingStepType[] | null> {
    return presentWaitingFor(ctx, root);
  }

  @FieldResolver(() => [CircuitRunEventType], {
    description: "The run's event log after `after` (default 0), oldest first (limit default 100, max 500)",
  })
  async events(
    @Root() root: CircuitRunType,
    @Arg('after', () => Int, { nullable: true }) after: number | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunEventType[]> {
    if (after !== null && after < 0) throw badInput('after must be ≥ 0', { field: 'after' });
    if (limit !== null && (limit < 1 || limit > MAX_EVENTS_PAGE))
      throw badInput(`limit must be from 1 to ${MAX_EVENTS_PAGE}`, { field: 'limit' });
    const read = await ctx.services.runs.events(root.uid, after ?? 0, RUN_EVENT_KINDS, limit ?? 100);
    if (read.events.length === 0) return [];
    const run = await CircuitRun.findByPk(root.uid);
    if (!run) return [];
    return Promise.all(read.events.map((event) => presentRunEvent(ctx, run, event)));
  }

  @Directive('@cost(weight: 10)')
  @Subscription(() => CircuitRunEventType, {
    description:
      "The run's events after `after` (default: from its current state), then live until its terminal state; same read rules as circuitRun",
    subscribe: (({
      args,
      context,
    }: SubscribeResolverData<unknown, { uid: string; after?: number | null; kinds?: string[] | null }, AppContext>) =>
      subscribeToRunEvents(
        context,
        args.uid,
        args.after ?? null,
        kindsOf(args.kinds, ['state', 'step', 'output']),
      )) as never,
  })
  async circuitRunEvents(
    @Root() root: RunEventRoot,
    @Arg('uid', () => ID) _uid: string,
    @Arg('after', () => Int, { nullable: true, description: 'Replay events after this seq (0: all)' })
    _after: number | null,
    @Arg('kinds', () => [RunEventKindEnum], { nullable: true, description: 'Default: all kinds' })
    _kinds: string[] | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunEventType> {
    return presentRunEvent(ctx, root.run, root.event);
  }

  @Directive('@cost(weight: 10)')
  @Subscription(() => CircuitRunType, {
    description:
      'The run now, then on every state change until it is COMPLETED or EXCEPTION; same read rules as circuitRun',
    subscribe: (({ args, context }: SubscribeResolverData<unknown, { uid: string }, AppContext>) =>
      subscribeToRunEvents(context, args.uid, null, ['state'])) as never,
  })
  async circuitRunUpdated(
    @Root() root: RunEventRoot,
    @Arg('uid', () => ID) _uid: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunType> {
    return presentRun(ctx, runAsOf(root.run, root.event.data.state as RunState));
  }
}
