import { Arg, Args, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { ApiToken } from '../../models';
import { createApiToken } from '../../commands/create-api-token';
import { apiTokenViews } from '../../views/api-token.view';
import { authorize } from '../../policies/authorize';
import { tokenMayCreateTokens } from '../../policies/token.policy';
import type { AppContext } from '../context';
import { PageArgs, paged, pageWindow } from '../common/pagination';
import { ApiTokenPage, ApiTokenType, NewApiTokenType } from './api-token.type';

const TOKEN_ORDER: [string, string][] = [
  ['created_at', 'DESC'],
  ['uid', 'ASC'],
];

/** Each token with the credits its runs took today (counted only for a capped token). */
async function presentTokens(ctx: AppContext, rows: ApiToken[]): Promise<ApiTokenType[]> {
  return (await apiTokenViews(ctx.services.sequelize, rows)).map((view) => Object.assign(new ApiTokenType(), view));
}

/** The caller's API tokens: list them (no secrets) and create one. Revoking stays in /settings and the CLI. */
@Resolver()
export class ApiTokenResolver {
  @Authorized()
  @Query(() => [ApiTokenType], {
    description: "The caller's active API tokens, newest first, without their secrets, all at once",
    deprecationReason: 'Use viewerApiTokenPage, paged like every other list',
  })
  async viewerApiTokens(@Ctx() ctx: AppContext): Promise<ApiTokenType[]> {
    const rows = await ApiToken.findAll({ where: { user_uid: ctx.viewer!.uid, revoked_at: null }, order: TOKEN_ORDER });
    return presentTokens(ctx, rows);
  }

  @Authorized()
  @Query(() => ApiTokenPage, {
    description:
      "The caller's active API tokens, newest first, without their secrets (GET /users/tokens; limit default 10, max 100)",
  })
  async viewerApiTokenPage(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: AppContext): Promise<ApiTokenPage> {
    const window = pageWindow(args);
    const { rows, count } = await ApiToken.findAndCountAll({
      where: { user_uid: ctx.viewer!.uid, revoked_at: null },
      order: TOKEN_ORDER,
      limit: window.limit,
      offset: window.offset,
    });
    return paged(await presentTokens(ctx, rows), count, window);
  }

  @Authorized()
  @Mutation(() => NewApiTokenType, {
    description:
      'Creates an API token for the caller, optionally limited (POST /users/tokens); the token is in this answer only',
  })
  async createApiToken(
    @Arg('label', () => String, { nullable: true, description: 'At most 100 characters' }) label: string | null,
    @Arg('scopes', () => [String], { nullable: true, description: 'What it may do; every scope when absent' })
    scopes: string[] | null,
    @Arg('expiresAt', () => Date, { nullable: true, description: 'When it stops working; never when absent' })
    expiresAt: Date | null,
    @Arg('circuitUids', () => [ID], {
      nullable: true,
      description: 'The only circuits it may run (at most 100); any when absent',
    })
    circuitUids: string[] | null,
    @Arg('maxCreditsPerDay', () => Int, {
      nullable: true,
      description: 'Credits its runs may take per UTC day; no cap when absent',
    })
    maxCreditsPerDay: number | null,
    @Ctx() ctx: AppContext,
  ): Promise<NewApiTokenType> {
    const permit = tokenMayCreateTokens(ctx.viewer);
    authorize(ctx.viewer, permit.allowed, permit.message);
    const { token, record } = await createApiToken(ctx.viewer!, label ?? '', {
      scopes,
      expiresAt,
      circuitUids,
      maxCreditsPerDay,
    });
    return NewApiTokenType.created(record, token);
  }
}
