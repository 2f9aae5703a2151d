import { QueryTypes } from 'sequelize';
import { CircuitScheduleType } from '../../graphql/schedule/schedule.type';
import type { ScheduleRow } from '../../domain/schedule-row';
import { snakeKeys } from '../../views/snake-keys';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findCircuitArg, findUser } from '../present';
import { pageWindow } from '../options';
import { CliError, type ListOutput } from '../output';

export interface ScheduleListOptions {
  username?: string;
  circuit?: string;
  paused?: boolean;
  active?: boolean;
  limit: number;
  page: number;
}

/** What `schedule list --table` shows of each schedule. */
export const SCHEDULE_COLUMNS = [
  'uid',
  'username',
  'circuit_name',
  'cron',
  'timezone',
  'is_paused',
  'next_run_at',
  'last_fired_at',
  'last_error',
] as const;

/**
 * Schedules of every user, oldest first: each as the API shows it to its owner (the schedule type's
 * own presenter, snake_case as over REST), plus whose it is and when it last fired.
 */
export async function scheduleList(io: CliIo, options: ScheduleListOptions): Promise<ListOutput> {
  const window = pageWindow(options, 1000);
  if (options.paused && options.active) throw new CliError('--paused and --active exclude each other');
  const paused = options.paused ? true : options.active ? false : null;
  return withDatabase(io, async ({ sequelize }) => {
    const user = options.username === undefined ? null : await findUser(options.username);
    const circuit = options.circuit === undefined ? null : await findCircuitArg(options.circuit, options.username);
    const filter = `($1::uuid IS NULL OR s.user_uid = $1) AND ($2::uuid IS NULL OR s.circuit_uid = $2) AND ($3::boolean IS NULL OR s.is_paused = $3)`;
    const bind = [user?.uid ?? null, circuit?.uid ?? null, paused];
    const [rows, [{ n }]] = await Promise.all([
      sequelize.query<ScheduleRow & { username: string; circuit_name: string }>(
        `SELECT s.*, u.username, c.name AS circuit_name
           FROM circuit_schedules s JOIN users u ON u.uid = s.user_uid JOIN circuits c ON c.uid = s.circuit_uid
          WHERE ${filter} ORDER BY s.created_at, s.uid LIMIT $4 OFFSET $5`,
        { bind: [...bind, window.limit, window.offset], type: QueryTypes.SELECT },
      ),
      sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM circuit_schedules s WHERE ${filter}`, {
        bind,
        type: QueryTypes.SELECT,
      }),
    ]);
    const data = rows.map((row) => ({
      ...snakeKeys(CircuitScheduleType.from(row)),
      username: row.username,
      circuit_name: row.circuit_name,
      last_fired_at: row.last_fired_at,
    }));
    return { meta: { total_count: Number(n), limit: window.limit, page: options.page }, data };
  });
}
