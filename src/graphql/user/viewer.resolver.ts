import { Args, Authorized, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { unauthorized } from '../../errors';
import { ledgerPage } from '../../credits/ledger';
import { PageArgs, paged, pageWindow } from '../common/pagination';
import type { AppContext } from '../context';
import { presentRun } from '../run/run.presenter';
import { CircuitRunFilterInput, runsFilterOf } from '../run/run-filter.input';
import { CircuitRunPage } from '../run/run.type';
import { CreditLedgerEntryType, CreditLedgerPage } from './credit-ledger.type';
import { Viewer } from './user.type';

/** The caller's own runs in any state, newest first: the list is scoped to the caller, so every run in it is theirs to read. */
async function viewerRuns(ctx: AppContext, page: PageArgs, filter: CircuitRunFilterInput): Promise<CircuitRunPage> {
  const viewer = ctx.viewer;
  if (!viewer) throw unauthorized();
  const window = pageWindow(page);
  const { rows, count } = await ctx.services.runs.myRuns(viewer.uid, runsFilterOf(filter), window);
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
    @Args(() => PageArgs) page: PageArgs,
    @Args(() => CircuitRunFilterInput) filter: CircuitRunFilterInput,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunPage> {
    if (ctx.viewer?.uid !== root.uid) throw unauthorized();
    return viewerRuns(ctx, page, filter);
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
  async viewerRuns(
    @Args(() => PageArgs) page: PageArgs,
    @Args(() => CircuitRunFilterInput) filter: CircuitRunFilterInput,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitRunPage> {
    return viewerRuns(ctx, page, filter);
  }

  @Authorized()
  @Query(() => CreditLedgerPage, { description: 'viewer.creditLedger (GET /users/credit-ledger)' })
  async viewerCreditLedger(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: AppContext): Promise<CreditLedgerPage> {
    return viewerCreditLedger(ctx, args);
  }
}
