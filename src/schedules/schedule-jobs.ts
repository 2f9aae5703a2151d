import type { JobDefinition, QueueJob } from '../queue/agenda';
import { isUid } from '../ids';
import type { Services } from '../services';
import { scheduledInstant } from './cron';
import { fireSchedule } from './fire';
import { activeScheduleUids, findSchedule, schedulesMissingJobs } from './schedule-store';
import type { ScheduleRow } from '../domain/schedule-row';

export const FIRE_SCHEDULE = 'fireSchedule';
interface FireScheduleData { scheduleUid: string }

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === '23505';
}

/**
 * Makes the schedule's Agenda repeating job match the row: one job per active schedule (cron and
 * timezone as Agenda's repeatInterval/repeatTimezone, first fire after now), none while paused.
 */
export async function syncScheduleJob(services: Services, schedule: ScheduleRow): Promise<void> {
  const { agenda } = services.runQueue;
  if (schedule.is_paused) {
    await agenda.cancel({ name: FIRE_SCHEDULE, data: { scheduleUid: schedule.uid } });
    return;
  }
  const job = agenda.create<FireScheduleData>(FIRE_SCHEDULE, { scheduleUid: schedule.uid })
    .repeatEvery(schedule.cron, { timezone: schedule.timezone, skipImmediate: true })
    .unique({ 'data.scheduleUid': schedule.uid });
  try {
    await job.save();
  } catch (error) {
    // Another process created the job at the same moment (migration 0007's unique index); theirs stands.
    if (!isUniqueViolation(error)) throw error;
  }
}

export async function removeScheduleJob(services: Services, scheduleUid: string): Promise<void> {
  await services.runQueue.agenda.cancel({ name: FIRE_SCHEDULE, data: { scheduleUid } });
}

/**
 * The `fireSchedule` job: Agenda runs it at each fire time of the cron (and has already moved it to
 * the next one). A deleted schedule's job removes itself, so it never fires again.
 */
export function fireScheduleJob(services: Promise<Services>): JobDefinition {
  return {
    name: FIRE_SCHEDULE,
    concurrency: 10,
    handler: async (job: QueueJob<FireScheduleData>) => {
      const ready = await services;
      const uid = job.attrs.data?.scheduleUid;
      const schedule = isUid(uid) ? await findSchedule(ready.sequelize, uid) : null;
      if (!schedule || schedule.is_paused) {
        await job.remove();
        return;
      }
      const instant = scheduledInstant(schedule.cron, schedule.timezone, job.attrs.lastRunAt ?? new Date());
      await fireSchedule(ready, schedule, instant);
    },
  };
}

/**
 * Gives every active schedule its job: one whose process died between saving the row and the job,
 * or whose job was removed. With the PostgreSQL job store it looks for missing jobs every minute;
 * with MongoDB it saves every active schedule's job once at start (saving is idempotent).
 */
export function startScheduleReconciler(services: Services): () => Promise<void> {
  const postgres = !services.config.mongodbUrl;
  let running: Promise<void> | undefined;
  const reconcile = async (all: boolean) => {
    try {
      const uids = all ? await activeScheduleUids(services.sequelize) : await schedulesMissingJobs(services.sequelize, FIRE_SCHEDULE);
      for (const uid of uids) {
        const schedule = await findSchedule(services.sequelize, uid);
        if (schedule) await syncScheduleJob(services, schedule);
      }
      if (!all && uids.length > 0) services.log.warn({ schedules: uids.length }, 'gave schedules their missing jobs');
    } catch (error) {
      services.log.warn({ err: error }, 'schedule reconciler failed');
    }
  };
  running = reconcile(!postgres).finally(() => { running = undefined; });
  const timer = postgres ? setInterval(() => { running ??= reconcile(false).finally(() => { running = undefined; }); }, 60_000) : undefined;
  timer?.unref();
  return async () => {
    if (timer) clearInterval(timer);
    await running;
  };
}
