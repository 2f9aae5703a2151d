import type { Route } from '../route';
import { pageQuery } from '../schemas';
import { RUN_OPTIONAL_FIELDS, RUN_STATES } from '../../src/models/CircuitRun';

const tag = 'Users';

/** The caller's own runs and credits (DESIGN §7.7). */
export const userRoutes: Route[] = [
  {
    method: 'GET',
    path: '/users/me',
    operation: 'GetMe',
    summary: 'Your profile, with your credit balance and the credits your runs in progress hold',
    auth: 'required',
    tag,
    variables: () => ({}),
    result: 'me',
  },
  {
    method: 'GET',
    path: '/users/circuit-runs',
    operation: 'ListMyCircuitRuns',
    summary: 'List your runs in any state (private and failed ones too), newest first',
    auth: 'required',
    tag,
    query: {
      state: { schema: { type: 'string', enum: [...RUN_STATES] }, description: 'Only runs in this state' },
      circuit_uid: { schema: { type: 'string', format: 'uuid' }, description: 'Only runs of this circuit' },
      ...pageQuery(),
    },
    variables: ({ query }) => ({ state: query.state, circuitUid: query.circuit_uid, limit: query.limit, page: query.page }),
    result: 'viewerRuns',
    shape: 'page',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'GET',
    path: '/users/credit-ledger',
    operation: 'ListMyCreditLedger',
    summary: 'List every change of your credit balance (grants and run charges), newest first',
    description: 'Grants have a positive amount, run charges zero or less; for every user the amounts add up to the balance.',
    auth: 'required',
    tag,
    query: pageQuery(),
    variables: ({ query }) => ({ limit: query.limit, page: query.page }),
    result: 'viewerCreditLedger',
    shape: 'page',
    omitWhenNull: ['run_uid'],
  },
];
