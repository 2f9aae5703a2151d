import type { Route } from '../route';
import { BODY_UID, pageQuery, uidParam } from '../schemas';

const tag = 'Runs';

/** Fields of a run that are absent, not null, until they exist (spec 2.1). */
const RUN_OPTIONAL_FIELDS = ['ended_at', 'result_blob', 'metrics'];

const page = pageQuery();

export const runRoutes: Route[] = [
  {
    method: 'POST',
    path: '/circuit-adaptors/:adaptor_uid/query',
    operation: 'QueryCircuitAdaptor',
    summary: "Start a run of the adaptor's circuit; returns {uid, state: PROVISIONED, is_public}. Send Idempotency-Key to make retries safe",
    auth: 'required',
    tag,
    params: { adaptor_uid: uidParam('Circuit adaptor') },
    body: {
      properties: {
        context: {
          type: 'object',
          properties: { version: { ...BODY_UID, description: "The circuit version to run (one of this adaptor's circuit); the primary version when absent" } },
          additionalProperties: false,
        },
        input: { type: 'object', description: "Key/value pairs matching the version's query schema" },
        is_public: { type: 'boolean', description: 'Default false; only the circuit owner may set it' },
        webhook: { type: 'string', maxLength: 2048, description: 'An https URL to POST signed run events to (Standard Webhooks; see the Webhooks section)' },
        webhook_events_filter: {
          type: 'array', minItems: 1, maxItems: 3, uniqueItems: true, items: { enum: ['start', 'step', 'completed'] },
          description: 'Which events to POST (default ["completed"]); needs webhook',
        },
      },
      required: ['input'],
    },
    requestHeaders: ['Idempotency-Key'],
    errors: {
      InsufficientCredits: 'The balance cannot cover the base credit of a run',
      Conflict: 'The Idempotency-Key was already used by the caller with a different request',
    },
    variables: ({ params, body, headers }) => ({
      adaptorUid: params.adaptor_uid,
      input: body.input,
      context: body.context,
      isPublic: body.is_public,
      idempotencyKey: headers?.['idempotency-key'],
      webhook: body.webhook,
      webhookEventsFilter: body.webhook_events_filter,
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
    params: { uid: uidParam('Circuit run') },
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'circuitRun',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'GET',
    path: '/circuit-versions/:version_uid/circuit-runs',
    params: { version_uid: uidParam('Circuit version') },
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
    params: { circuit_uid: uidParam('Circuit') },
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
  {
    method: 'GET',
    path: '/circuit-runs/:uid/events',
    operation: 'GetCircuitRun',
    summary: 'Live updates of a run (server-sent events)',
    description:
      'A `text/event-stream`: the first event is the current run, then one `event: state` per state change whose `data:` is the same JSON as the payload of GET /circuit-runs/{uid}; `id:` lets a reconnecting client resume with `Last-Event-ID`. The stream closes after a terminal state. Same authentication as the GET. Served by src/http (see the route table\'s `event-stream` shape).',
    auth: 'optional',
    tag,
    params: { uid: uidParam('Circuit run') },
    requestHeaders: ['Last-Event-ID'],
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'circuitRun',
    shape: 'event-stream',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
];
