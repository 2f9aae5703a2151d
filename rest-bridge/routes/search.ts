import type { Route } from '../route';
import { RATE_LIMIT_HEADERS } from '../headers';
import { pageQuery } from '../schemas';
import { SEARCH_MATCH_BOUND } from '../../src/graphql/search/search.query';

const BOUND = SEARCH_MATCH_BOUND.toLocaleString('en-US');

export const searchRoutes: Route[] = [
  {
    method: 'GET',
    path: '/search',
    operation: 'Search',
    summary: 'Search public circuits and public user profiles (rate limited per client)',
    description:
      'Public circuits and public user profiles, best match first (an exact name match first of all). ' +
      `\`meta.total_count\` is exact up to ${BOUND}; beyond, it is ${BOUND} (at least that many match) and pages end there. ` +
      `When more than ${BOUND} circuits (or users) match, the ranking considers ${BOUND} of them plus every exact name match: refine the query to see others.`,
    auth: 'none',
    tag: 'Search',
    query: {
      search: { schema: { type: 'string' }, required: true, description: 'Query text; every word matches as a prefix' },
      type: {
        schema: { type: 'string', enum: ['all', 'circuits', 'users'], default: 'all' },
        description: 'all (default), circuits or users',
      },
      ...pageQuery(),
    },
    responseHeaders: [...RATE_LIMIT_HEADERS],
    errors: { RateLimited: "Too many searches from this client (the token's user, else the IP); see Retry-After" },
    variables: ({ query }) => ({ search: query.search, type: query.type, limit: query.limit, page: query.page }),
    result: 'search',
    shape: 'page',
  },
];
