import { Args, ArgsType, Authorized, Ctx, Field, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import type { RunState } from '../../domain/runs';
import { badInput, unauthorized } from '../../errors';
import { ledgerPage } from '../../credits/ledger';
import { JSONObjectScalar } from '../common/scalars';
import { PageArgs, paged, pageWindow } from '../common/pagination';
import { isUid } from '../../ids';
import type { AppContext } from '../context';
import { presentRun } from '../run/run.presenter';
import { CircuitRunPage, CircuitRunState } from '../run/run.type';
import { CreditLedgerEntryType, CreditLedgerPage } from './credit-ledger.type';
import { Viewer } from './user.type';

@ArgsType()
export class ViewerRunsArgs extends PageArgs {
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

/** The caller's own runs in any state, newest first: the list is scoped to the caller, so every run in it is theirs to read. */
async function viewerRuns(ctx: AppContext, args: ViewerRunsArgs): Promise<CircuitRunPage> {
  const viewer = ctx.viewer;
  if (!viewer) throw unauthorized();
  if (args.circuitUid != null && !isUid(args.circuitUid))
    throw badInput('circuit_uid must be a circuit uid', { field: 'circuit_uid' });
  const window = pageWindow(args);
  const { rows, count } = await ctx.services.runs.myRuns(
    viewer.uid,
    { ...args, state: args.state as RunState | null | undefined },
    window,
  );
  return paged(await Promise.all(rows.map((run) => presentRun(ctx, run))), count, window);
}

/** The caller's ledger, newest first. */
async function viewerCreditLedger(ctx: AppContext, args: PageArgs): Promise<CreditLedgerPage> {
  const viewer = ctx.viewer;
  if (!viewer) throw unauthorized();
  const window = pageWindow(args);
  const { rows, count } = await ledgerPage(viewer.uid, window);
  return paged(
    rows.map((row) => CreditLedgerEntryType.from(row)),
    count,
    window,
  );
}

/**
 * What only the caller sees about themselves (docs/runs.md, My runs and my credits): `viewer.runs`, `viewer.creditLedger`, and
 * the same lists as top-level fields (`viewerRuns`, `viewerCreditLedger`) for the REST bridge, whose
 * routes map onto top-level fields.
 */
@Resolver(() => Viewer)
export class ViewerResolver {
  @FieldResolver(() => CircuitRunPage, {
    description: 'Your runs in any state, newest first (limit default 10, max 100)',
  })
  async runs(
    @Root() root: Viewer,
    @Args(() => ViewerRunsArgs) args: ViewerRunsArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunPage> {
    if (ctx.viewer?.uid !== root.uid) throw unauthorized();
    return viewerRuns(ctx, args);
  }

  @FieldResolver(() => CreditLedgerPage, {
    description: 'Every change of your balance (grants and run charges), newest first (limit default 10, max 100)',
  })
  async creditLedger(
    @Root() root: Viewer,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CreditLedgerPage> {
    if (ctx.viewer?.uid !== root.uid) throw unauthorized();
    return viewerCreditLedger(ctx, args);
  }

  @Authorized()
  @Query(() => CircuitRunPage, { description: 'viewer.runs (GET /users/circuit-runs)' })
  async viewerRuns(@Args(() => ViewerRunsArgs) args: ViewerRunsArgs, @Ctx() ctx: AppContext): Promise<CircuitRunPage> {
    return viewerRuns(ctx, args);
  }

  @Authorized()
  @Query(() => CreditLedgerPage, { description: 'viewer.creditLedger (GET /users/credit-ledger)' })
  async viewerCreditLedger(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: AppContext): Promise<CreditLedgerPage> {
    return viewerCreditLedger(ctx, args);
  }
}
