import crypto from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';
import { insertWithinLimit } from '../db/count-limit';
import type { ScheduleRow } from '../domain/schedule-row';

export type ScheduleFields = Pick<
  ScheduleRow,
  'cron' | 'timezone' | 'input' | 'version_uid' | 'is_public' | 'is_paused'
>;

export async function findSchedule(sequelize: Sequelize, uid: string): Promise<ScheduleRow | null> {
  const [row] = await preparedQuery<ScheduleRow>(sequelize, 'SELECT * FROM circuit_schedules WHERE uid = $1', [uid]);
  return row ?? null;
}

/** Inserts a schedule unless its owner already has `limit`; null then (see insertWithinLimit). */
export async function insertScheduleWithinLimit(
  sequelize: Sequelize,
  owner: { user_uid: string; circuit_uid: string; token_uid?: string | null },
  fields: ScheduleFields,
  limit: number,
): Promise<ScheduleRow | null> {
  return insertWithinLimit<ScheduleRow>(
    sequelize,
    `schedules:${owner.user_uid}`,
    `INSERT INTO circuit_schedules (uid, user_uid, circuit_uid, cron, timezone, input, version_uid, is_public, is_paused, token_uid)
     SELECT $1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $11
      WHERE (SELECT count(*) FROM circuit_schedules WHERE user_uid = $2) < $10
     RETURNING *`,
    [
      crypto.randomUUID(),
      owner.user_uid,
      owner.circuit_uid,
      fields.cron,
      fields.timezone,
      JSON.stringify(fields.input),
      fields.version_uid,
      fields.is_public,
      fields.is_paused,
      limit,
      owner.token_uid ?? null,
    ],
  );
}

export async function updateScheduleRow(
  sequelize: Sequelize,
  uid: string,
  fields: ScheduleFields,
): Promise<ScheduleRow | null> {
  const [row] = await sequelize.query<ScheduleRow>(
    `UPDATE circuit_schedules
        SET cron = $2, timezone = $3, input = $4::jsonb, version_uid = $5, is_public = $6, is_paused = $7, updated_at = now()
      WHERE uid = $1 RETURNING *`,
    {
      bind: [
        uid,
        fields.cron,
        fields.timezone,
        JSON.stringify(fields.input),
        fields.version_uid,
        fields.is_public,
        fields.is_paused,
      ],
      type: QueryTypes.SELECT,
    },
  );
  return row ?? null;
}

export async function deleteScheduleRow(sequelize: Sequelize, uid: string): Promise<boolean> {
  const rows = await sequelize.query(`DELETE FROM circuit_schedules WHERE uid = $1 RETURNING uid`, {
    bind: [uid],
    type: QueryTypes.SELECT,
  });
  return rows.length === 1;
}

/** How many schedules a user has (the operator's view; creating one checks its limit in the insert). */
export async function countSchedulesOf(sequelize: Sequelize, userUid: string): Promise<number> {
  const [{ n }] = await sequelize.query<{ n: string }>(
    'SELECT count(*) AS n FROM circuit_schedules WHERE user_uid = $1',
    { bind: [userUid], type: QueryTypes.SELECT },
  );
  return Number(n);
}

export async function schedulesOfCircuit(
  sequelize: Sequelize,
  circuitUid: string,
  limit: number,
  offset: number,
): Promise<{ rows: ScheduleRow[]; total: number }> {
  const rows = await sequelize.query<ScheduleRow & { total: string }>(
    `SELECT *, count(*) OVER () AS total FROM circuit_schedules WHERE circuit_uid = $1 ORDER BY created_at, uid LIMIT $2 OFFSET $3`,
    { bind: [circuitUid, limit, offset], type: QueryTypes.SELECT },
  );
  if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
  const [{ n }] = await sequelize.query<{ n: string }>(
    'SELECT count(*) AS n FROM circuit_schedules WHERE circuit_uid = $1',
    { bind: [circuitUid], type: QueryTypes.SELECT },
  );
  return { rows: [], total: Number(n) };
}

/** Records what a fire did: the run it started (clearing an earlier error), or why it started none. */
export async function recordFire(
  sequelize: Sequelize,
  uid: string,
  instant: Date,
  outcome: { runUid: string } | { error: string },
): Promise<void> {
  await preparedQuery(
    sequelize,
    `UPDATE circuit_schedules
        SET last_fired_at = GREATEST(last_fired_at, $2), last_run_uid = COALESCE($3, last_run_uid), last_error = $4
      WHERE uid = $1 AND (last_fired_at IS NULL OR last_fired_at <= $2)`,
    [uid, instant, 'runUid' in outcome ? outcome.runUid : null, 'error' in outcome ? outcome.error : null],
  );
}

/** Active schedules that should have a job by now (the queue looks for theirs: RunQueue.withoutJob). */
export const RECONCILABLE_SCHEDULES_SQL = `SELECT s.uid FROM circuit_schedules s WHERE NOT s.is_paused AND s.updated_at < now() - interval '5 seconds'`;

export async function activeScheduleUids(sequelize: Sequelize): Promise<string[]> {
  const rows = await sequelize.query<{ uid: string }>(`SELECT uid FROM circuit_schedules WHERE NOT is_paused`, {
    type: QueryTypes.SELECT,
  });
  return rows.map((row) => row.uid);
}
