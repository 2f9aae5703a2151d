import type { Circuit, User } from '../models';
import { CircuitVersion } from '../models';
import { badInput, conflict, notFound } from '../errors';
import { authorize } from '../policies/authorize';
import { tokenMayStartRun } from '../policies/token.policy';
import { isUid } from '../ids';
import { checkInput, type CompiledSchemas } from '../engine/input-schema';
import type { ScheduleDeps } from './ports';
import { checkSchedule } from './cron';
import { deleteScheduleRow, insertScheduleWithinLimit, updateScheduleRow, type ScheduleFields } from './schedule-store';
import type { ScheduleRow } from '../domain/schedule-row';
import { removeScheduleJob, syncScheduleJob } from './schedule-jobs';

/** Schedules one user may keep: each fire costs a worker's time even when it has no credits to run. */
export const MAX_SCHEDULES_PER_USER = 100;

export interface ScheduleChanges {
  cron?: string;
  timezone?: string | null;
  input?: Record<string, unknown>;
  /** null: the circuit's primary version at each fire. */
  versionUid?: string | null;
  isPublic?: boolean | null;
  isPaused?: boolean | null;
}

/** Checks fields as they will be stored: cron and timezone, and the input against the version it will run (the primary now, if none is named). */
async function checkFields(schemas: CompiledSchemas, circuit: Circuit, fields: ScheduleFields): Promise<void> {
  checkSchedule(fields.cron, fields.timezone);
  if (typeof fields.input !== 'object' || fields.input === null || Array.isArray(fields.input))
    throw badInput('input must be a JSON object', { field: 'input' });
  const versionUid = fields.version_uid ?? circuit.primary_version_uid;
  const version =
    versionUid && isUid(versionUid)
      ? await CircuitVersion.findByPk(versionUid, { attributes: ['uid', 'circuit_uid', 'definition'] })
      : null;
  if (fields.version_uid !== null && (!version || version.circuit_uid !== circuit.uid))
    throw notFound('Circuit version');
  if (!version) throw notFound('Circuit version (the circuit has no published version)');
  const invalid = checkInput(schemas, version.uid, version.definition.query_schema, fields.input);
  if (invalid) throw badInput(invalid.message, { field: invalid.field });
}

function merged(base: ScheduleFields, changes: ScheduleChanges): ScheduleFields {
  return {
    cron: changes.cron ?? base.cron,
    timezone: changes.timezone ?? base.timezone,
    input: changes.input ?? base.input,
    version_uid: changes.versionUid === undefined ? base.version_uid : changes.versionUid,
    is_public: changes.isPublic ?? base.is_public,
    is_paused: changes.isPaused ?? base.is_paused,
  };
}

/** POST /circuits/{uid}/schedules (the caller may manage the circuit: checked by the resolver). */
export async function createSchedule(
  deps: ScheduleDeps,
  owner: User,
  circuit: Circuit,
  changes: ScheduleChanges & { cron: string; input: Record<string, unknown> },
): Promise<ScheduleRow> {
  const fields = merged(
    {
      cron: changes.cron,
      timezone: 'UTC',
      input: changes.input,
      version_uid: null,
      is_public: false,
      is_paused: false,
    },
    changes,
  );
  // Its fires will run under the token's limits: a token that could not start the run now may not schedule it.
  const permit = tokenMayStartRun(owner, circuit.uid, { webhook: false });
  authorize(owner, permit.allowed, permit.message);
  await checkFields(deps.schemas.inputs, circuit, fields);
  const schedule = await insertScheduleWithinLimit(
    deps.sequelize,
    { user_uid: owner.uid, circuit_uid: circuit.uid, token_uid: owner.tokenGrant?.tokenUid ?? null },
    fields,
    MAX_SCHEDULES_PER_USER,
  );
  if (!schedule) throw conflict(`You already have ${MAX_SCHEDULES_PER_USER} schedules; delete one first`);
  // A process dying here leaves the row without its job: the workers' reconciler adds it.
  await syncScheduleJob(deps, schedule);
  return schedule;
}

/** PUT /schedules/{uid}: pause, resume, or change cron, timezone, input, version, visibility. */
export async function updateSchedule(
  deps: ScheduleDeps,
  circuit: Circuit,
  schedule: ScheduleRow,
  changes: ScheduleChanges,
): Promise<ScheduleRow> {
  const fields = merged(schedule, changes);
  await checkFields(deps.schemas.inputs, circuit, fields);
  const updated = await updateScheduleRow(deps.sequelize, schedule.uid, fields);
  if (!updated) throw notFound('Schedule');
  const timing =
    updated.cron !== schedule.cron ||
    updated.timezone !== schedule.timezone ||
    updated.is_paused !== schedule.is_paused;
  if (timing) await syncScheduleJob(deps, updated);
  return updated;
}

/** DELETE /schedules/{uid}: the row first, so a fire that races the job's removal finds nothing to run. */
export async function deleteSchedule(deps: ScheduleDeps, schedule: ScheduleRow): Promise<boolean> {
  const deleted = await deleteScheduleRow(deps.sequelize, schedule.uid);
  await removeScheduleJob(deps, schedule.uid).catch((error: unknown) =>
    deps.log.warn(
      { err: error, schedule: schedule.uid },
      "could not remove a deleted schedule's job; it removes itself when it fires",
    ),
  );
  return deleted;
}
