import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { ApiToken } from '../../models';
import { createApiToken } from '../../commands/create-api-token';
import { spentToday } from '../../credits/token-spend';
import { authorize } from '../../policies/authorize';
import { tokenMayCreateTokens } from '../../policies/token.policy';
import type { AppContext } from '../context';
import { ApiTokenType, NewApiTokenType } from './api-token.type';

/** The caller's API tokens (docs/tokens.md): list them (no secrets) and create one. Revoking stays in /settings and the CLI. */
@Resolver()
export class ApiTokenResolver {
  @Authorized()
  @Query(() => [ApiTokenType], { description: "The caller's active API tokens, newest first, without their secrets (GET /users/tokens)" })
  async viewerApiTokens(@Ctx() ctx: AppContext): Promise<ApiTokenType[]> {
    const rows = await ApiToken.findAll({ where: { user_uid: ctx.viewer!.uid, revoked_at: null }, order: [['created_at', 'DESC'], ['uid', 'ASC']] });
    const spent = await spentToday(ctx.services.sequelize, rows.filter((row) => row.max_credits_per_day !== null).map((row) => row.uid));
    return rows.map((row) => ApiTokenType.from(row, spent.get(row.uid) ?? 0));
  }

  @Authorized()
  @Mutation(() => NewApiTokenType, { description: 'Creates an API token for the caller, optionally limited (POST /users/tokens); the token is in this answer only' })
  async createApiToken(
    @Arg('label', () => String, { nullable: true, description: 'At most 100 characters' }) label: string | null,
    @Arg('scopes', () => [String], { nullable: true, description: 'What it may do; every scope when absent' }) scopes: string[] | null,
    @Arg('expiresAt', () => Date, { nullable: true, description: 'When it stops working; never when absent' }) expiresAt: Date | null,
    @Arg('circuitUids', () => [ID], { nullable: true, description: 'The only circuits it may run (at most 100); any when absent' }) circuitUids: string[] | null,
    @Arg('maxCreditsPerDay', () => Int, { nullable: true, description: "Credits its runs may take per UTC day; no cap when absent" }) maxCreditsPerDay: number | null,
    @Ctx() ctx: AppContext,
  ): Promise<NewApiTokenType> {
    const permit = tokenMayCreateTokens(ctx.viewer);
    authorize(ctx.viewer, permit.allowed, permit.message);
    const { token, record } = await createApiToken(ctx.viewer!, label ?? '', { scopes, expiresAt, circuitUids, maxCreditsPerDay });
    return NewApiTokenType.created(record, token);
  }
}
