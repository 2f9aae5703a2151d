import { Arg, Args, Ctx, Directive, Query, Resolver } from 'type-graphql';
import { badInput } from '../../errors';
import { enforceRateLimit, rateLimitKey } from '../../ratelimit';
import type { AppContext } from '../context';
import { PageArgs, paged, pageWindow } from '../common/pagination';
import { searchPublic } from './search.query';
import { SearchPage, SearchType } from './search.type';

const MAX_SEARCH_LENGTH = 200;

@Resolver()
export class SearchResolver {
  @Directive('@cost(weight: 10)')
  @Query(() => SearchPage, {
    description:
      'Full-text search of public circuits and public user profiles, best match first (limit default 10, max 100). ' +
      'Rate limited per client (token owner, else IP): RateLimited with Retry-After when exceeded',
  })
  async search(
    @Arg('search', () => String) search: string,
    @Arg('type', () => SearchType, { nullable: true }) type: SearchType | null,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<SearchPage> {
    await enforceRateLimit(ctx.services.searchRateLimiter, rateLimitKey(ctx.viewer, ctx.clientIp), ctx.responseHeaders);
    if (search.trim() === '') throw badInput('search must not be empty', { field: 'search' });
    if (search.length > MAX_SEARCH_LENGTH)
      throw badInput(`search must be at most ${MAX_SEARCH_LENGTH} characters`, { field: 'search' });
    const window = pageWindow(args, { maxLimit: 100 });
    const { items, totalCount } = await searchPublic(ctx.services, search, type ?? SearchType.all, window);
    return paged(items, totalCount, window);
  }
}
