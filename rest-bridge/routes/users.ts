import type { Route } from '../route';
import { pageQuery } from '../schemas';
import { RUN_OPTIONAL_FIELDS, RUN_STATES } from '../../src/domain/runs';
import { TOKEN_SCOPES } from '../../src/domain/token-scopes';

const tag = 'Users';

/** The caller's own profile, runs, credits and API tokens. */
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
      tag: {
        schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9_.:-]{0,63}$' },
        description: 'Only runs carrying this tag',
      },
      created_after: {
        schema: { type: 'string', format: 'date-time' },
        description: 'Only runs created after this instant (RFC 3339)',
      },
      created_before: {
        schema: { type: 'string', format: 'date-time' },
        description: 'Only runs created before this instant (RFC 3339)',
      },
      ...pageQuery(),
    },
    queryPrefix: {
      name: 'metadata',
      description:
        'Filter by metadata with `metadata.<key>=<value>` query parameters (any number; the key URL-encoded as needed): only runs whose metadata has every pair.',
    },
    variables: ({ query }) => ({
      state: query.state,
      circuitUid: query.circuit_uid,
      tag: query.tag,
      metadata: query.metadata,
      createdAfter: query.created_after,
      createdBefore: query.created_before,
      limit: query.limit,
      page: query.page,
    }),
    result: 'viewerRuns',
    shape: 'page',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'GET',
    path: '/users/credit-ledger',
    operation: 'ListMyCreditLedger',
    summary: 'List every change of your credit balance (grants and run charges), newest first',
    description:
      'Grants have a positive amount, run charges zero or less; for every user the amounts add up to the balance.',
    auth: 'required',
    tag,
    query: pageQuery(),
    variables: ({ query }) => ({ limit: query.limit, page: query.page }),
    result: 'viewerCreditLedger',
    shape: 'page',
    omitWhenNull: ['run_uid'],
  },
  {
    method: 'GET',
    path: '/users/tokens',
    operation: 'ListMyApiTokens',
    summary: 'List your active API tokens, newest first, with their limits; never the tokens themselves',
    auth: 'required',
    tag,
    query: pageQuery(),
    variables: ({ query }) => ({ limit: query.limit, page: query.page }),
    result: 'viewerApiTokenPage',
    shape: 'page',
  },
  {
    method: 'POST',
    path: '/users/tokens',
    operation: 'CreateApiToken',
    summary: 'Create an API token for yourself, optionally limited; the token is in this answer only',
    description:
      'A token with any limit may not create tokens (403). Each limit left out is none: every scope, no expiry, any circuit, no daily credit cap.',
    auth: 'required',
    tag,
    body: {
      properties: {
        label: { type: 'string', maxLength: 100 },
        scopes: {
          type: 'array',
          minItems: 1,
          maxItems: TOKEN_SCOPES.length,
          uniqueItems: true,
          items: { enum: [...TOKEN_SCOPES] },
          description: 'What it may do; every scope when absent',
        },
        expires_at: {
          type: 'string',
          format: 'date-time',
          description: 'When it stops working (401 after); never when absent',
        },
        circuit_uids: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          uniqueItems: true,
          items: { type: 'string', format: 'uuid' },
          description: 'The only circuits it may run',
        },
        max_credits_per_day: {
          type: 'integer',
          minimum: 1,
          maximum: 2147483647,
          description: 'Credits its runs may take per UTC day (429 RateLimited beyond, until 00:00 UTC)',
        },
      },
    },
    variables: ({ body }) => ({
      label: body.label,
      scopes: body.scopes,
      expiresAt: body.expires_at,
      circuitUids: body.circuit_uids,
      maxCreditsPerDay: body.max_credits_per_day,
    }),
    result: 'createApiToken',
  },
];
