import type { Route } from '../route';
import { RATE_LIMIT_HEADERS } from '../headers';
import { BODY_UID, pageQuery, uidParam } from '../schemas';
import {
  MAX_APPROVAL_COMMENT_CHARS,
  MAX_APPROVAL_DATA_BYTES,
  MAX_START_DELAY_SECONDS,
  RUN_OPTIONAL_FIELDS,
  RUN_PRIORITY_DEFAULT,
  RUN_PRIORITY_MAX,
  RUN_PRIORITY_MIN,
} from '../../src/domain/runs';
import { DEFAULT_WEBHOOK_EVENTS, WEBHOOK_EVENTS } from '../../src/domain/webhook-events';

const tag = 'Runs';

/**
 * `tags` and `metadata` of a query or batch (docs/batches-and-budgets.md). The bounds are checked by the service
 * (src/runs/run-labels.ts) so that GraphQL and REST answer them alike, naming the field.
 */
export const RUN_LABEL_FIELDS = {
  tags: {
    type: 'array',
    items: { type: 'string' },
    description:
      'At most 10 tags, each ^[a-z0-9][a-z0-9_.:-]{0,63}$; shown to the owner and filter GET /users/circuit-runs?tag=',
  },
  metadata: {
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      'String values only, at most 4 KiB as JSON; shown to the owner and filter GET /users/circuit-runs?metadata.<key>=',
  },
};

/**
 * A delayed start of a query or batch (docs/runs.md, Delayed start): one of the two. The service checks
 * them (src/runs/delayed-start.ts: not both, not in the past, at most a year ahead), naming the field.
 */
export const RUN_START_FIELDS = {
  start_at: {
    type: 'string',
    format: 'date-time',
    description:
      'Start the run at this ISO 8601 instant (with its offset), at most a year ahead, instead of at once: it is created now (its credit held) and stays PROVISIONED until then. Not with delay_s',
  },
  delay_s: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_START_DELAY_SECONDS,
    description: `Start the run this many seconds from now (at most ${MAX_START_DELAY_SECONDS}, a year) instead of at once. Not with start_at`,
  },
};

/** `priority` of a query or batch (docs/runs.md, Priority); the service checks it too, for GraphQL. */
export const RUN_PRIORITY_FIELD = {
  priority: {
    type: 'integer',
    minimum: RUN_PRIORITY_MIN,
    maximum: RUN_PRIORITY_MAX,
    description: `${RUN_PRIORITY_MIN}–${RUN_PRIORITY_MAX}, default ${RUN_PRIORITY_DEFAULT}: among your runs waiting for a slot (USER_MAX_CONCURRENT_RUNS, a worker's share), higher priorities are claimed first; it never moves your runs ahead of another user's`,
  },
};

/** `webhook_events_filter` of a query or batch: some of the events (src/domain/webhook-events.ts). */
export const WEBHOOK_EVENTS_FILTER = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length,
  uniqueItems: true,
  items: { enum: [...WEBHOOK_EVENTS] },
  description: `Which events to POST (default ${JSON.stringify(DEFAULT_WEBHOOK_EVENTS)}); needs webhook`,
};

/**
 * RFC 7240 `Prefer: wait` / `wait=N` → seconds (N 1–60; bare `wait`: 60). Other preferences, and a
 * malformed wait, are ignored as the RFC asks; N over 60 is taken as 60.
 */
export function preferredWait(header: string | undefined): number | undefined {
  for (const preference of (header ?? '').split(',')) {
    const match = /^\s*wait\s*(?:=\s*"?(\d{1,6})"?)?\s*(?:;.*)?$/i.exec(preference);
    if (!match) continue;
    if (match[1] === undefined) return 60;
    const seconds = Number(match[1]);
    if (seconds >= 1) return Math.min(seconds, 60);
  }
  return undefined;
}

const page = pageQuery();

export const runRoutes: Route[] = [
  {
    method: 'POST',
    path: '/circuit-adaptors/:adaptor_uid/query',
    operation: 'QueryCircuitAdaptor',
    summary:
      "Start a run of the adaptor's circuit; returns {uid, state: PROVISIONED, is_public}. Send Idempotency-Key to make retries safe",
    auth: 'required',
    tag,
    params: { adaptor_uid: uidParam('Circuit adaptor') },
    body: {
      properties: {
        context: {
          type: 'object',
          properties: {
            version: {
              ...BODY_UID,
              description:
                "The circuit version to run (one of this adaptor's circuit); the primary version when absent",
            },
            alias: {
              type: 'string',
              description:
                "Instead of version: an alias of the circuit; the version is drawn by the alias's weights (from the Idempotency-Key when one is sent). Not with version",
            },
          },
          additionalProperties: false,
        },
        input: {
          type: 'object',
          additionalProperties: true,
          description: "Key/value pairs matching the version's query schema",
        },
        is_public: { type: 'boolean', description: 'Default false; only the circuit owner may set it' },
        webhook: {
          type: 'string',
          maxLength: 2048,
          description: 'An https URL to POST signed run events to (Standard Webhooks; see the Webhooks section)',
        },
        webhook_events_filter: WEBHOOK_EVENTS_FILTER,
        deadline_s: {
          type: 'integer',
          minimum: 1,
          maximum: 3600,
          description:
            'The run ends EXCEPTION DeadlineExceeded this many seconds after it was created, or after its delayed start (default and ceiling RUN_DEADLINE_SECONDS, 600)',
        },
        cache: {
          type: 'string',
          enum: ['bypass'],
          description:
            '"bypass": steps with a cache field do not read the step cache for this run; their results are still stored',
        },
        ...RUN_LABEL_FIELDS,
        max_credits: {
          type: 'integer',
          minimum: 1,
          maximum: 1_000_000_000,
          description:
            'The most the run may cost: a step whose credit hold would pass it does not start and the run ends EXCEPTION BudgetExceeded (see POST /circuit-adaptors/{uid}/estimate)',
        },
        ...RUN_START_FIELDS,
        ...RUN_PRIORITY_FIELD,
      },
      required: ['input'],
    },
    requestHeaders: ['Idempotency-Key', 'Prefer'],
    responseHeaders: ['Preference-Applied', ...RATE_LIMIT_HEADERS],
    errors: {
      InsufficientCredits: 'The balance cannot cover the base credit of a run',
      RateLimited:
        "More runs than RUN_RATE_LIMIT_PER_MINUTE from this token in the window, or the token's max_credits_per_day reached (Retry-After: the next UTC day)",
      IdempotencyKeyReused: 'The Idempotency-Key was already used by the caller with a different request',
      NotFound: 'No such adaptor, context.version of its circuit, or context.alias of its circuit',
    },
    variables: ({ params, body, headers }) => {
      // `Prefer: wait[=N]` (RFC 7240): the answer is then the run as GET shows it.
      const wait = preferredWait(headers?.prefer);
      return {
        adaptorUid: params.adaptor_uid,
        input: body.input,
        context: body.context,
        isPublic: body.is_public,
        idempotencyKey: headers?.['idempotency-key'],
        webhook: body.webhook,
        webhookEventsFilter: body.webhook_events_filter,
        deadlineSeconds: body.deadline_s,
        cache: body.cache,
        tags: body.tags,
        metadata: body.metadata,
        maxCredits: body.max_credits,
        startAt: body.start_at,
        delaySeconds: body.delay_s,
        priority: body.priority,
        waitSeconds: wait,
        waiting: wait !== undefined,
      };
    },
    result: 'queryCircuitAdaptor',
    // Without `Prefer: wait` the answer is only {uid, state, is_public}: the other run fields are optional here.
    omitWhenNull: [
      ...RUN_OPTIONAL_FIELDS,
      'user_uid',
      'circuit_uid',
      'circuit_version_uid',
      'created_at',
      'document_type',
    ],
  },
  {
    method: 'POST',
    path: '/circuit-runs/:uid/cancel',
    operation: 'CancelCircuitRun',
    summary:
      'Cancel a run (its owner only): PROVISIONED ends at once, RUNNING has its steps aborted; it ends EXCEPTION with error.code Canceled. A terminal run is answered as it is',
    auth: 'required',
    tag,
    params: { uid: uidParam('Circuit run') },
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'cancelCircuitRun',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'POST',
    path: '/circuit-runs/:uid/replay',
    operation: 'ReplayCircuitRun',
    summary:
      "Replay a terminal run (its owner only): a new run of its circuit, answered like a query (PROVISIONED) with replay_of. mode recorded (default) reuses the original's output for every llm, http, blob and circuit step whose rendered request is unchanged; live executes every step",
    description:
      "The new run runs the original's version unless `version_uid` (a version of the same circuit) and the original's input unless `input` (checked against the version's query schema). It is charged like any run (reused steps cost 0 credits). 409 when the run is not COMPLETED or EXCEPTION. Compare the two with GET /circuit-runs/{a}/compare/{b}.",
    auth: 'required',
    responseHeaders: [...RATE_LIMIT_HEADERS],
    tag,
    params: { uid: uidParam('Circuit run') },
    body: {
      properties: {
        mode: {
          type: 'string',
          enum: ['recorded', 'live'],
          description: "recorded (default): unchanged requests reuse the original's outputs; live: every step executes",
        },
        version_uid: { ...BODY_UID, description: "A version of the run's circuit; the original's version when absent" },
        input: {
          type: 'object',
          additionalProperties: true,
          description: "The run's input; the original's when absent",
        },
      },
    },
    errors: {
      Conflict: 'The run is not terminal (PROVISIONED or RUNNING)',
      NotFound: 'No such run, or no such version_uid',
      BadClientData: "version_uid is a version of another circuit, or input does not match the version's query schema",
      RateLimited:
        'The token started more runs in the last minute than RUN_RATE_LIMIT_PER_MINUTE allows (a replay counts as a run)',
      InsufficientCredits: 'The balance cannot cover the base credit of a run',
    },
    variables: ({ params, body }) => ({
      uid: params.uid,
      mode: body.mode,
      versionUid: body.version_uid,
      input: body.input,
    }),
    result: 'replayCircuitRun',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'GET',
    path: '/circuit-runs/:a/compare/:b',
    operation: 'CompareCircuitRuns',
    summary:
      'Compare two runs: {output: {status: same | changed, a, b}, steps: {<id>: {status: same | changed | added | removed, a, b}}}; both runs must be readable by the caller',
    auth: 'optional',
    tag,
    params: { a: uidParam('Circuit run'), b: uidParam('Circuit run') },
    variables: ({ params }) => ({ a: params.a, b: params.b }),
    result: 'compareCircuitRuns',
  },
  {
    method: 'POST',
    path: '/circuit-runs/:uid/approvals/:step_id',
    operation: 'ResolveApproval',
    summary:
      "Decide an approval step of a run (its owner only): approved, the run goes on with {approved, comment, data, resolved_at} as the step's output; rejected, it ends EXCEPTION with error.code Rejected",
    description:
      'The steps a run waits on are its `waiting_for` (owner only). The answer is the run as GET /circuit-runs/{uid} shows it. The same decision again (the same `approved`) answers the run as it is and changes nothing.',
    auth: 'required',
    tag,
    params: {
      uid: uidParam('Circuit run'),
      step_id: { type: 'string', minLength: 1, description: 'The id of the approval step (waiting_for[].step_id)' },
    },
    body: {
      properties: {
        approved: { type: 'boolean', description: 'true goes on with the run; false ends it EXCEPTION Rejected' },
        comment: {
          type: 'string',
          maxLength: MAX_APPROVAL_COMMENT_CHARS,
          description: `Why, at most ${MAX_APPROVAL_COMMENT_CHARS} characters`,
        },
        data: {
          type: 'object',
          description: `Anything later steps should read (steps.<id>.output.data): a JSON object of at most ${MAX_APPROVAL_DATA_BYTES / 1024} KiB`,
        },
      },
      required: ['approved'],
    },
    errors: {
      Conflict:
        'The step is not an approval waiting for a decision (unknown, decided otherwise, expired), or the run is not RUNNING',
    },
    variables: ({ params, body }) => ({
      runUid: params.uid,
      stepId: params.step_id,
      approved: body.approved,
      comment: body.comment,
      data: body.data,
    }),
    result: 'resolveApproval',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'POST',
    path: '/circuit-runs/:uid/signals/:step_id',
    operation: 'SignalCircuitRun',
    summary: "Send a signal to a wait step of a run (its owner only): the step's output is `data` and the run goes on",
    description:
      'The steps a run waits on are its `waiting_for` (owner only); a signal step there also has a `callback_url` that takes the same signal without a token. The answer is the run as GET /circuit-runs/{uid} shows it. The same data again answers the run as it is and changes nothing.',
    auth: 'required',
    tag,
    params: {
      uid: uidParam('Circuit run'),
      step_id: { type: 'string', minLength: 1, description: 'The id of the wait step (waiting_for[].step_id)' },
    },
    body: {
      properties: {
        data: { description: "The signal: any JSON, checked against the step's schema when it has one" },
      },
    },
    errors: {
      Conflict:
        'The step is not a signal wait, already has another signal, no longer waits (timed out), or the run has ended',
      BadClientData: "data does not match the step's schema (the step keeps waiting)",
    },
    variables: ({ params, body }) => ({ runUid: params.uid, stepId: params.step_id, data: body.data ?? null }),
    result: 'signalCircuitRun',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
  {
    method: 'GET',
    path: '/circuit-runs/:uid',
    operation: 'GetCircuitRun',
    summary: 'Fetch a run; private runs need the token of the user who started them',
    description:
      'With `Prefer: wait=N` (1–60; bare `wait`: 60) the answer waits until the run is COMPLETED or EXCEPTION or N seconds pass, holding no database connection, and says `Preference-Applied: wait=N`: a client waits for a run by asking again until it is terminal, never by polling.',
    auth: 'optional',
    tag,
    params: { uid: uidParam('Circuit run') },
    requestHeaders: ['If-None-Match', 'Prefer'],
    responseHeaders: ['ETag', 'Preference-Applied'],
    variables: ({ params, headers }) => ({ uid: params.uid, waitSeconds: preferredWait(headers?.prefer) }),
    result: 'circuitRun',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
    sharesAnswer: true,
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
    method: 'POST',
    path: '/circuit-runs/:uid/events/url',
    operation: 'CreateCircuitRunEventsUrl',
    summary:
      "A signed URL of the run's event stream that a browser's EventSource can open without an Authorization header: {url, expires_at} (at most 5 minutes)",
    description:
      'Same read rules as GET /circuit-runs/{uid}; the URL reads the stream as the caller (its signature covers the run, the expiry and the caller). An expired signature is 401, a tampered one 403.',
    auth: 'optional',
    tag,
    params: { uid: uidParam('Circuit run') },
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'circuitRunEventsUrl',
  },
  {
    method: 'GET',
    path: '/circuit-runs/:uid/events',
    operation: 'GetCircuitRun',
    operationId: 'StreamCircuitRunEvents',
    summary: 'Live updates of a run (server-sent events)',
    description:
      "A `text/event-stream` of the run's event log: `id:` is the event's seq (1, 2, … without gaps), `event:` its kind. `state` events carry the same JSON as the payload of GET /circuit-runs/{uid}; `step` events `{step_id, kind, status, started_at, ended_at?, credits?, error? (owner only)}`; `output` events `{step_id, delta}`. Without `Last-Event-ID` the first event is the current run; `Last-Event-ID: N` replays every event after N, then follows live (a state name is accepted too). The stream closes after a terminal state; 204 when everything was seen. Same authentication as the GET. Served by src/http/run-events.sse.ts.",
    auth: 'optional',
    tag,
    params: { uid: uidParam('Circuit run') },
    requestHeaders: ['Last-Event-ID'],
    query: {
      events: {
        schema: { type: 'string', pattern: '^(state|step|output)(,(state|step|output))*$', default: 'state' },
        description: 'Comma-separated kinds: state, step, output (default state)',
      },
      expires: {
        schema: { type: 'string', pattern: '^[0-9]{1,12}$' },
        description: 'Of a signed URL (POST /circuit-runs/{uid}/events/url): its expiry, epoch seconds',
      },
      reader: {
        schema: { type: 'string', format: 'uuid' },
        description: 'Of a signed URL: the user it reads as (absent: anonymous)',
      },
      signature: {
        schema: { type: 'string' },
        description: 'Of a signed URL: instead of a bearer token. Expired: 401; tampered: 403',
      },
    },
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'circuitRun',
    shape: 'event-stream',
    omitWhenNull: RUN_OPTIONAL_FIELDS,
  },
];
