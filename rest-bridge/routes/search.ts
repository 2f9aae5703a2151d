import type { Route } from '../route';

export const searchRoutes: Route[] = [
  {
    method: 'GET',
    path: '/search',
    operation: 'Search',
    summary: 'Search public circuits and public user profiles (rate limited per client)',
    auth: 'none',
    tag: 'Search',
    query: {
      search: { type: 'string', required: true, description: 'Query text; every word matches as a prefix' },
      type: { type: 'string', oneOf: ['all', 'circuits', 'users'], description: 'all (default), circuits or users' },
      limit: { type: 'int', description: 'Items per page (default 10, max 100)' },
      page: { type: 'int', description: '1-based page (default 1)' },
    },
    variables: ({ query }) => ({ search: query.search, type: query.type, limit: query.limit, page: query.page }),
    result: 'search',
    shape: 'page',
  },
];
