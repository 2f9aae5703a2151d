import type { JobDefinition, QueueJob } from '../queue/agenda';
import { isUid } from '../ids';
import type { ScheduleDeps } from './ports';
import { scheduledInstant } from './cron';
import { fireSchedule } from './fire';
import { activeScheduleUids, findSchedule, RECONCILABLE_SCHEDULES_SQL } from './schedule-store';
import type { ScheduleRow } from '../domain/schedule-row';

export const FIRE_SCHEDULE = 'fireSchedule';
interface FireScheduleData {
  scheduleUid: string;
}
/** A worker's slots for schedule fires (jobs in flight at once). */
export const SCHEDULE_FIRE_SLOTS = 10;

/**
 * Makes the schedule's repeating job match the row: one job per active schedule (cron and timezone,
 * first fire after now), none while paused.
 */
export async function syncScheduleJob(deps: Pick<ScheduleDeps, 'queue'>, schedule: ScheduleRow): Promise<void> {
  if (schedule.is_paused) return removeScheduleJob(deps, schedule.uid);
  await deps.queue.repeat(FIRE_SCHEDULE, { scheduleUid: schedule.uid }, 'scheduleUid', {
    cron: schedule.cron,
    timezone: schedule.timezone,
  });
}

export async function removeScheduleJob(deps: Pick<ScheduleDeps, 'queue'>, scheduleUid: string): Promise<void> {
  await deps.queue.cancel(FIRE_SCHEDULE, { scheduleUid });
}

/**
 * The `fireSchedule` job: Agenda runs it at each fire time of the cron (and has already moved it to
 * the next one). A deleted schedule's job removes itself, so it never fires again.
 */
export function fireScheduleJob(deps: ScheduleDeps): JobDefinition {
  return {
    name: FIRE_SCHEDULE,
    concurrency: SCHEDULE_FIRE_SLOTS,
    handler: async (job: QueueJob<FireScheduleData>) => {
      const uid = job.attrs.data?.scheduleUid;
      const schedule = isUid(uid) ? await findSchedule(deps.sequelize, uid) : null;
      if (!schedule || schedule.is_paused) {
        await job.remove();
        return;
      }
      const instant = scheduledInstant(schedule.cron, schedule.timezone, job.attrs.lastRunAt ?? new Date());
      await fireSchedule(deps, schedule, instant);
    },
  };
}

/** How often the composition's sweeper looks for active schedules without a job. */
export const SCHEDULE_RECONCILE_EVERY_MS = 60_000;

/**
 * Gives every active schedule its job: one whose process died between saving the row and the job, or
 * whose job was removed. With a job store that can be asked in SQL (PostgreSQL) only the schedules
 * missing one are saved (the composition's sweeper calls this every minute); with MongoDB `all` saves
 * every active schedule's job (idempotent), which the composition does once at start.
 */
export async function reconcileSchedules(deps: ScheduleDeps, all: boolean): Promise<void> {
  const uids = all
    ? await activeScheduleUids(deps.sequelize)
    : await deps.queue.withoutJob(FIRE_SCHEDULE, 'scheduleUid', RECONCILABLE_SCHEDULES_SQL, 500);
  if (uids === null) return;
  for (const uid of uids) {
    const schedule = await findSchedule(deps.sequelize, uid);
    if (schedule) await syncScheduleJob(deps, schedule);
  }
  if (!all && uids.length > 0) deps.log.warn({ schedules: uids.length }, 'gave schedules their missing jobs');
}
