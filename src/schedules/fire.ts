import { CircuitAdaptor, User } from '../models';
import { AppError } from '../errors';
import { readTokenGrant } from '../auth/token-grant';
import type { ScheduleDeps } from './ports';
import { MIN_FIRE_INTERVAL_MS } from './cron';
import { recordFire } from './schedule-store';
import type { ScheduleRow } from '../domain/schedule-row';

/**
 * One fire of a schedule for its scheduled `instant`: an ordinary run as the owner (charged,
 * listed, evented). The run's idempotency key is the (schedule, instant) pair, so however many
 * workers fire the same instant, one run exists; a fire that cannot start a run (no credits, the
 * circuit no longer runnable) starts none and leaves the reason in `last_error`.
 */
export async function fireSchedule(deps: ScheduleDeps, schedule: ScheduleRow, instant: Date): Promise<void> {
  // cron expressions with rare close pairs pass the check at creation; the 10 s floor holds here.
  if (
    schedule.last_fired_at &&
    instant.getTime() > schedule.last_fired_at.getTime() &&
    instant.getTime() - schedule.last_fired_at.getTime() < MIN_FIRE_INTERVAL_MS
  )
    return;
  const owner = await User.findByPk(schedule.user_uid);
  const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: schedule.circuit_uid, kind: 'query' } });
  if (!owner || !adaptor) return;
  // A schedule made with an API token fires under that token's limits (docs/tokens.md, Schedules), and not at all once it is revoked or expired.
  if (schedule.token_uid) {
    const grant = await readTokenGrant(deps.sequelize, schedule.token_uid);
    if (typeof grant === 'string')
      return recordFire(deps.sequelize, schedule.uid, instant, { error: `Unauthorized: ${grant}` });
    owner.tokenGrant = grant;
  }
  try {
    const { run, replayed } = await deps.runs.create(owner, {
      adaptorUid: adaptor.uid,
      versionUid: schedule.version_uid,
      input: schedule.input,
      isPublic: schedule.is_public,
      idempotencyKey: `schedule:${schedule.uid}@${instant.toISOString()}`,
    });
    if (!replayed) await recordFire(deps.sequelize, schedule.uid, instant, { runUid: run.uid });
  } catch (error) {
    // Conflict: this instant already fired, with the input the schedule had then.
    if (error instanceof AppError && error.code === 'Conflict') return;
    const message =
      error instanceof AppError ? `${error.code}: ${error.message}` : 'Internal: the run could not be started';
    if (!(error instanceof AppError)) deps.log.error({ err: error, schedule: schedule.uid }, 'schedule fire failed');
    await recordFire(deps.sequelize, schedule.uid, instant, { error: message });
  }
}
