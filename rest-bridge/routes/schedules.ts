import type { Route } from '../route';
import { BODY_UID, pageQuery, uidParam } from '../schemas';

const tag = 'Schedules';

const circuitUid = { circuit_uid: uidParam('Circuit') };
const scheduleUid = { uid: uidParam('Schedule') };

const scheduleFields = {
  cron: {
    type: 'string',
    maxLength: 200,
    description: 'Cron expression: 5 fields, or 6 with a leading seconds field; fires at most every 10 s',
  },
  timezone: { type: 'string', maxLength: 64, description: 'IANA time zone the cron is read in (default UTC)' },
  input: {
    type: 'object',
    additionalProperties: true,
    description: "The input of every run; must match the version's query schema",
  },
  version_uid: {
    anyOf: [BODY_UID, { type: 'null' }],
    description: "The version to run; absent or null: the circuit's primary version at each fire",
  },
  is_public: { type: 'boolean', description: 'Whether its runs are public (default false)' },
};

export const scheduleRoutes: Route[] = [
  {
    method: 'POST',
    path: '/circuits/:circuit_uid/schedules',
    operation: 'CreateCircuitSchedule',
    summary: 'Run the circuit on a cron schedule, as you (owner only); each fire is an ordinary, charged run',
    auth: 'required',
    tag,
    params: circuitUid,
    body: { properties: scheduleFields, required: ['cron', 'input'] },
    errors: { Conflict: 'The caller already has the most schedules a user may keep (100)' },
    variables: ({ params, body }) => ({
      circuitUid: params.circuit_uid,
      cron: body.cron,
      timezone: body.timezone,
      input: body.input,
      versionUid: body.version_uid,
      isPublic: body.is_public,
    }),
    result: 'createCircuitSchedule',
  },
  {
    method: 'GET',
    path: '/circuits/:circuit_uid/schedules',
    operation: 'ListCircuitSchedules',
    summary: "The circuit's schedules, oldest first (owner only)",
    auth: 'required',
    tag,
    params: circuitUid,
    query: pageQuery(),
    variables: ({ params, query }) => ({ circuitUid: params.circuit_uid, limit: query.limit, page: query.page }),
    result: 'circuitSchedules',
    shape: 'page',
  },
  {
    method: 'GET',
    path: '/schedules/:uid',
    operation: 'GetCircuitSchedule',
    summary: 'A schedule (its creator only)',
    auth: 'required',
    tag,
    params: scheduleUid,
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'circuitSchedule',
  },
  {
    method: 'PUT',
    path: '/schedules/:uid',
    operation: 'UpdateCircuitSchedule',
    summary:
      'Pause or resume a schedule ({is_paused}), or change its cron, timezone, input, version or visibility; absent fields keep their value',
    auth: 'required',
    tag,
    params: scheduleUid,
    body: {
      properties: {
        ...scheduleFields,
        version_uid: {
          ...scheduleFields.version_uid,
          description:
            "The version to run; null: back to the circuit's primary version at each fire; absent: unchanged",
        },
        is_paused: { type: 'boolean', description: 'true pauses (no fires), false resumes' },
      },
    },
    variables: ({ params, body }) => ({
      uid: params.uid,
      cron: body.cron,
      timezone: body.timezone,
      input: body.input,
      versionUid: body.version_uid,
      isPublic: body.is_public,
      isPaused: body.is_paused,
    }),
    result: 'updateCircuitSchedule',
  },
  {
    method: 'DELETE',
    path: '/schedules/:uid',
    operation: 'DeleteCircuitSchedule',
    summary: 'Delete a schedule; it never fires again (its runs stay)',
    auth: 'required',
    tag,
    params: scheduleUid,
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'deleteCircuitSchedule',
  },
];
