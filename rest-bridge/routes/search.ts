import type { Route } from '../route';
import { pageQuery } from '../schemas';

export const searchRoutes: Route[] = [
  {
    method: 'GET',
    path: '/search',
    operation: 'Search',
    summary: 'Search public circuits and public user profiles (rate limited per client)',
    auth: 'none',
    tag: 'Search',
    query: {
      search: { schema: { type: 'string' }, required: true, description: 'Query text; every word matches as a prefix' },
      type: { schema: { type: 'string', enum: ['all', 'circuits', 'users'], default: 'all' }, description: 'all (default), circuits or users' },
      ...pageQuery(),
    },
    responseHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    errors: { RateLimited: 'Too many searches from this client (the token\'s user, else the IP); see Retry-After' },
    variables: ({ query }) => ({ search: query.search, type: query.type, limit: query.limit, page: query.page }),
    result: 'search',
    shape: 'page',
  },
];
