import type { Route } from '../route';

const tag = 'Runs';

/** Fields of a run that are absent, not null, until they exist (spec 2.1). */
const RUN_OPTIONAL_FIELDS = ['ended_at', 'result_blob', 'metrics'];

const page = { limit: { type: 'int' as const, description: 'Items per page (default 10, max 100)' }, page: { type: 'int' as const, description: '1-based page' } };

export const runRoutes: Route[] = [
  {
    method: 'POST',
    path: '/circuit-adaptors/:adaptor_uid/query',
    operation: 'QueryCircuitAdaptor',
    summary: "Start a run of the adaptor's circuit; returns {uid, state: PROVISIONED, is_public}. Send Idempotency-Key to make retries safe",
    auth: 'required',
    tag,
    body: {
      context: { type: 'object', description: '{version}: the circuit version to run; the primary version when absent' },
      input: { type: 'object', required: true, description: "Key/value pairs matching the version's query schema" },
      is_public: { type: 'boolean', description: 'Default false; only the circuit owner may set it' },
    },
    variables: ({ params, body, headers }) => ({
      adaptorUid: params.adaptor_uid,
      input: body.input,
      context: body.context,
      isPublic: body.is_public,
      idempotencyKey: headers?.['idempotency-key'],
    }),
    result: 'queryCircuitAdaptor',
  },
  {
    method: 'GET',
    path: '/circuit-runs/:uid',
    operation: 'GetCircuitRun',
    summary: 'Fetch a run; private runs need the token of the user who started them',
    auth: 'optional',
    tag,
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'circuitRun',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'GET',
    path: '/circuit-versions/:version_uid/circuit-runs',
    operation: 'ListCircuitVersionRuns',
    summary: 'List the completed public runs of a version, newest first',
    auth: 'optional',
    tag,
    query: page,
    variables: ({ params, query }) => ({ versionUid: params.version_uid, limit: query.limit, page: query.page }),
    result: 'circuitVersionRuns',
    shape: 'page',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'GET',
    path: '/circuits/:circuit_uid/circuit-runs',
    operation: 'ListCircuitRuns',
    summary: 'List the completed public runs of a circuit across its versions, newest first',
    auth: 'optional',
    tag,
    query: page,
    variables: ({ params, query }) => ({ circuitUid: params.circuit_uid, limit: query.limit, page: query.page }),
    result: 'circuitRuns',
    shape: 'page',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
];
