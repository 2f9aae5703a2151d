import type { Route } from '../route';
import { RATE_LIMIT_HEADERS } from '../headers';
import { BODY_UID, pageQuery, uidParam } from '../schemas';
import { RUN_OPTIONAL_FIELDS } from '../../src/domain/runs';
import { RUN_LABEL_FIELDS, RUN_PRIORITY_FIELD, RUN_START_FIELDS, WEBHOOK_EVENTS_FILTER } from './runs';

const tag = 'Batches';

const RUN_CONTEXT = {
  type: 'object',
  properties: {
    version: {
      ...BODY_UID,
      description: "The circuit version to run (one of this adaptor's circuit); the primary version when absent",
    },
    alias: {
      type: 'string',
      description:
        'Instead of version: an alias of the circuit; one version is drawn for the whole batch. Not with version',
    },
  },
  additionalProperties: false,
};

/** Batches and estimates (docs/batches-and-budgets.md). */
export const batchRoutes: Route[] = [
  {
    method: 'POST',
    path: '/circuit-adaptors/:adaptor_uid/batches',
    operation: 'CreateCircuitBatch',
    summary:
      'Submit 1–1000 inputs at once; each becomes an ordinary run carrying batch_uid. Returns {uid, total, counts}',
    description:
      "Every input is checked against the version's query schema first: one invalid input refuses the whole batch (400 naming `inputs[i]`) and nothing is created. The runs are admitted in input order while the balance covers their base credit; the rest end at once EXCEPTION with error.code InsufficientCredits (charged nothing).",
    auth: 'required',
    tag,
    params: { adaptor_uid: uidParam('Circuit adaptor') },
    body: {
      properties: {
        context: RUN_CONTEXT,
        inputs: {
          type: 'array',
          items: { type: 'object', additionalProperties: true },
          description: "1–1000 objects, each matching the version's query schema",
        },
        is_public: { type: 'boolean', description: 'Default false; only the circuit owner may set it' },
        ...RUN_LABEL_FIELDS,
        webhook: {
          type: 'string',
          maxLength: 2048,
          description: 'An https URL to POST signed events of every run to (see the Webhooks section)',
        },
        webhook_events_filter: WEBHOOK_EVENTS_FILTER,
        max_credits: {
          type: 'integer',
          minimum: 1,
          maximum: 1_000_000_000,
          description: 'The most each run may cost (EXCEPTION BudgetExceeded past it)',
        },
        ...RUN_START_FIELDS,
        ...RUN_PRIORITY_FIELD,
      },
      required: ['inputs'],
    },
    responseHeaders: [...RATE_LIMIT_HEADERS],
    errors: {
      NotFound: 'No such adaptor, context.version of its circuit, or context.alias of its circuit',
      RateLimited: 'More queries than RUN_RATE_LIMIT_PER_MINUTE from this token in the window (a batch counts as one)',
      NotAllowed:
        'The caller may not run the circuit, or the token lacks runs:write, the circuit, or has a daily credit cap',
    },
    variables: ({ params, body }) => ({
      adaptorUid: params.adaptor_uid,
      inputs: body.inputs,
      context: body.context,
      isPublic: body.is_public,
      tags: body.tags,
      metadata: body.metadata,
      webhook: body.webhook,
      webhookEventsFilter: body.webhook_events_filter,
      maxCredits: body.max_credits,
      startAt: body.start_at,
      delaySeconds: body.delay_s,
      priority: body.priority,
    }),
    result: 'createCircuitBatch',
    omitWhenNull: ['canceled_at', 'circuit_uid'],
  },
  {
    method: 'POST',
    path: '/circuit-adaptors/:adaptor_uid/estimate',
    operation: 'EstimateCircuitAdaptor',
    summary:
      'What a run of this input may cost: {min, max, steps: {<id>: {min, max}}}, base credit included; nothing runs',
    description:
      "A sound bound for a run that completes: an llm step counts its rendered prompt's tokens plus max_tokens for every attempt its retry policy allows (a prompt that reads other steps' outputs counts RUN_MAX_RESULT_BYTES); an embedded circuit counts its own bound. A query whose max_credits is at least `max` never ends BudgetExceeded.",
    auth: 'required',
    tag: 'Runs',
    params: { adaptor_uid: uidParam('Circuit adaptor') },
    body: {
      properties: {
        context: {
          type: 'object',
          properties: {
            version: {
              ...BODY_UID,
              description: "The circuit version (one of this adaptor's circuit); the primary version when absent",
            },
          },
          additionalProperties: false,
        },
        input: {
          type: 'object',
          additionalProperties: true,
          description: "Key/value pairs matching the version's query schema",
        },
      },
      required: ['input'],
    },
    variables: ({ params, body }) => ({ adaptorUid: params.adaptor_uid, input: body.input, context: body.context }),
    result: 'estimateCircuitAdaptor',
  },
  {
    method: 'GET',
    path: '/batches/:uid',
    operation: 'GetCircuitBatch',
    summary:
      'A batch (its submitter only): {uid, circuit_uid? (absent for the replays of runs of several circuits), total, counts: {PROVISIONED, RUNNING, COMPLETED, EXCEPTION}, created_at, canceled_at?}',
    auth: 'required',
    tag,
    params: { uid: uidParam('Batch') },
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'circuitBatch',
    omitWhenNull: ['canceled_at', 'circuit_uid'],
  },
  {
    method: 'GET',
    path: '/batches/:uid/runs',
    operation: 'ListCircuitBatchRuns',
    summary: "List a batch's runs in submission order (its submitter only)",
    auth: 'required',
    tag,
    params: { uid: uidParam('Batch') },
    query: pageQuery(),
    variables: ({ params, query }) => ({ uid: params.uid, limit: query.limit, page: query.page }),
    result: 'circuitBatchRuns',
    shape: 'page',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'POST',
    path: '/batches/:uid/cancel',
    operation: 'CancelCircuitBatch',
    summary:
      'Cancel a batch (its submitter only): every run not yet ended is canceled as POST /circuit-runs/{uid}/cancel does; answers the batch',
    auth: 'required',
    tag,
    params: { uid: uidParam('Batch') },
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'cancelCircuitBatch',
    omitWhenNull: ['canceled_at', 'circuit_uid'],
  },
];
