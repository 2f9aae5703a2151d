import type { Route } from '../route';
import { RATE_LIMIT_HEADERS } from '../headers';
import { pageQuery } from '../schemas';
import { MAX_BULK_RUNS, RUN_OPTIONAL_FIELDS, RUN_STATES } from '../../src/domain/runs';
import { TOKEN_SCOPES } from '../../src/domain/token-scopes';

const tag = 'Users';

/** The `filter` of a bulk action: the query filters of GET /users/circuit-runs, as one object. */
const RUN_FILTER = {
  type: 'object',
  description:
    'Which of your runs: every condition sent must hold; {} is all your runs. The filters of GET /users/circuit-runs',
  properties: {
    state: { type: 'string', enum: [...RUN_STATES], description: 'Only runs in this state' },
    circuit_uid: { type: 'string', format: 'uuid', description: 'Only runs of this circuit' },
    tag: { type: 'string', pattern: '^[a-z0-9][a-z0-9_.:-]{0,63}$', description: 'Only runs carrying this tag' },
    metadata: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'Only runs whose metadata has every one of these key/value pairs',
    },
    created_after: { type: 'string', format: 'date-time', description: 'Only runs created after this instant' },
    created_before: { type: 'string', format: 'date-time', description: 'Only runs created before this instant' },
    batch_uid: { type: 'string', format: 'uuid', description: 'Only runs of this batch' },
  },
  additionalProperties: false,
};

/** A REST filter as the GraphQL CircuitRunFilter input. */
const filterVariables = (filter: Record<string, unknown> = {}) => ({
  state: filter.state,
  circuitUid: filter.circuit_uid,
  tag: filter.tag,
  metadata: filter.metadata,
  createdAfter: filter.created_after,
  createdBefore: filter.created_before,
  batchUid: filter.batch_uid,
});

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
      batch_uid: { schema: { type: 'string', format: 'uuid' }, description: 'Only runs of this batch' },
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
      batchUid: query.batch_uid,
      limit: query.limit,
      page: query.page,
    }),
    result: 'viewerRuns',
    shape: 'page',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'POST',
    path: '/users/circuit-runs/cancel',
    operation: 'CancelMyCircuitRuns',
    summary: `Cancel your runs of a filter still PROVISIONED or RUNNING, as POST /circuit-runs/{uid}/cancel does each: {matched, canceled, truncated}; at most ${MAX_BULK_RUNS} a call`,
    description: `\`matched\` counts every run of the filter still in flight; the call acts on the oldest ${MAX_BULK_RUNS} of them (\`truncated\` is true when more matched: call again for the rest). \`canceled\` counts those this call asked to stop: a PROVISIONED run ends EXCEPTION Canceled at once, a RUNNING one is told to stop and ends Canceled within a second or so; a run asked before is not counted again. Only your own runs are touched, whatever the filter; a filter matching nothing answers 0s. Send Idempotency-Key to make retries safe.`,
    auth: 'required',
    tag,
    body: { properties: { filter: RUN_FILTER }, required: ['filter'] },
    requestHeaders: ['Idempotency-Key'],
    errors: {
      Conflict: 'The first request with this Idempotency-Key is still being processed: retry once it has been answered',
      IdempotencyKeyReused: 'The Idempotency-Key was already used by the caller with a different request',
    },
    variables: ({ body, headers }) => ({
      filter: filterVariables(body.filter as Record<string, unknown>),
      idempotencyKey: headers?.['idempotency-key'],
    }),
    result: 'cancelCircuitRuns',
  },
  {
    method: 'POST',
    path: '/users/circuit-runs/replay',
    operation: 'ReplayMyCircuitRuns',
    summary: `Replay your ended runs of a filter as one batch, as POST /circuit-runs/{uid}/replay does each: {matched, replayed, batch_uid, truncated}; at most ${MAX_BULK_RUNS} a call`,
    description: `\`matched\` counts every COMPLETED or EXCEPTION run of the filter; the call replays the oldest ${MAX_BULK_RUNS} of them (\`truncated\` is true when more matched: narrow the filter with created_after for the rest). Each replay runs its original's version and input; together they form the batch \`batch_uid\` (GET /batches/{uid}), charged and admitted as a batch's runs are (replays the balance cannot cover end InsufficientCredits). Only your own runs are read, whatever the filter; a filter matching nothing answers 0 and no batch. Send Idempotency-Key to make retries safe.`,
    auth: 'required',
    tag,
    body: {
      properties: {
        filter: RUN_FILTER,
        mode: {
          type: 'string',
          enum: ['recorded', 'live'],
          description: "recorded (default): unchanged requests reuse the original's outputs; live: every step executes",
        },
      },
      required: ['filter'],
    },
    requestHeaders: ['Idempotency-Key'],
    responseHeaders: [...RATE_LIMIT_HEADERS],
    errors: {
      Conflict: 'The first request with this Idempotency-Key is still being processed: retry once it has been answered',
      IdempotencyKeyReused: 'The Idempotency-Key was already used by the caller with a different request',
      RateLimited: 'More runs than RUN_RATE_LIMIT_PER_MINUTE from this token in the window (the call counts as one)',
      NotAllowed:
        'The token lacks runs:write, has a daily credit cap, or the caller may no longer run a circuit of the matched runs',
    },
    variables: ({ body, headers }) => ({
      filter: filterVariables(body.filter as Record<string, unknown>),
      mode: body.mode,
      idempotencyKey: headers?.['idempotency-key'],
    }),
    result: 'replayCircuitRuns',
    omitWhenNull: ['batch_uid'],
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
