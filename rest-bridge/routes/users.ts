import type { Route } from '../route';

const tag = 'Users';

const page = { limit: { type: 'int' as const, description: 'Items per page (default 10, max 100)' }, page: { type: 'int' as const, description: '1-based page' } };

/** The caller's own runs and credits (DESIGN §7.7). */
export const userRoutes: Route[] = [
  {
    method: 'GET',
    path: '/users/circuit-runs',
    operation: 'ListMyCircuitRuns',
    summary: 'List your runs in any state (private and failed ones too), newest first',
    auth: 'required',
    tag,
    query: {
      state: { type: 'string', oneOf: ['PROVISIONED', 'RUNNING', 'COMPLETED', 'EXCEPTION'], description: 'Only runs in this state' },
      circuit_uid: { type: 'string', description: 'Only runs of this circuit' },
      ...page,
    },
    variables: ({ query }) => ({ state: query.state, circuitUid: query.circuit_uid, limit: query.limit, page: query.page }),
    result: 'viewerRuns',
    shape: 'page',
    omitWhenNull: ['ended_at', 'result_blob', 'metrics', 'error'],
  },
  {
    method: 'GET',
    path: '/users/credit-ledger',
    operation: 'ListMyCreditLedger',
    summary: 'List every change of your credit balance (grants and run charges), newest first',
    auth: 'required',
    tag,
    query: page,
    variables: ({ query }) => ({ limit: query.limit, page: query.page }),
    result: 'viewerCreditLedger',
    shape: 'page',
    omitWhenNull: ['run_uid'],
  },
];
